"""A vectorizable :math:`e^v` for :math:`v \\le 0` (kernel maps) and float bit casts, for numba.

libm's ``exp`` is a call LLVM cannot vectorize; kernel columns on the fly
spend most of their time in it.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import intrinsic

from .cache import locked_cache

__all__ = ["exp_nonpositive", "as_float", "as_int"]

_LN2_HI, _LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10  # ln 2 = HI + LO
_INV_LN2 = 1.44269504088896338700e+00
_MAGIC = 6755399441055744.0 + 1023.0  # 2^52 + 2^51 + bias: k + _MAGIC holds k + 1023 in its low bits


@intrinsic
def as_float(typingctx, bits):
    """Reinterpret the bits of an int64 as a float64."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.float64))
    return types.float64(types.int64), codegen


@intrinsic
def as_int(typingctx, value):
    """Reinterpret the bits of a float64 as an int64."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.int64))
    return types.int64(types.float64), codegen


@locked_cache
@njit(cache=True, inline="always")
def _pow2(k):
    """:math:`2^k` for an integral float :math:`k \\in [-1022, 1023]`, from its bits (vectorizes)."""
    return as_float(as_int(k + _MAGIC) << 52)


@locked_cache
@njit(cache=True, inline="always")
def exp_nonpositive(v):
    """:math:`e^v` for :math:`v \\le 0`, within 2.3e-16 relative of libm, and vectorizable.

    Cody–Waite reduction :math:`v = k\\ln 2 + r`, :math:`|r|\\le\\ln2/2`, the degree-14
    Taylor polynomial of :math:`e^r` (truncation error below 4e-18), and
    :math:`2^k` built from its bits in two halves so that subnormal results stay
    right; below :math:`-745` (where :math:`e^v` rounds to 0) the result is the
    smallest subnormal, 4.9e-324. libm's ``exp`` is a call LLVM cannot vectorize:
    over kernel columns this is ~2.5x faster here (`examples/bench_chunking.py`).
    """
    v = max(v, -745.0)
    k = np.floor(v * _INV_LN2 + 0.5)
    r = (v - k * _LN2_HI) - k * _LN2_LO
    p = 1.0 + r * (1.0 + r * (1 / 2 + r * (1 / 6 + r * (1 / 24 + r * (1 / 120 + r * (
        1 / 720 + r * (1 / 5040 + r * (1 / 40320 + r * (1 / 362880 + r * (1 / 3628800 + r * (
            1 / 39916800 + r * (1 / 479001600 + r * (1 / 6227020800)))))))))))))
    half = np.floor(0.5 * k)
    return p * _pow2(half) * _pow2(k - half)
