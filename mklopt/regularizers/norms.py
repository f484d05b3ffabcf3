"""Norm exponents: the weight norm ``p``, its conjugate, and the thesis' block norm ``b``.

**p is the weight norm** (:math:`\\|\\mu\\|_p \\le 1`); the Kloft-thesis block norm
:math:`\\|w\\|_{2,b}` is equivalent for :math:`b = 2p/(p+1) \\in [1, 2]`.
"""

from __future__ import annotations

import math
import numbers

from ..exceptions import InvalidInputError

__all__ = ["check_p", "conjugate_exponent", "block_from_weight_norm", "weight_from_block_norm"]


#: Exponents CVXPY's rational power cones represent to the certificate's precision: beyond
#: them its approximation divides by zero (q = 10001), is not DCP, or leaves a gap of 1e-4.
CONIC_EXPONENTS = (1.0005, 1002.0)


def conic_norm(x, q: float, what: str):
    """``cp.pnorm(x, q)`` for an exponent CVXPY represents (:data:`CONIC_EXPONENTS`), else an
    :class:`InvalidInputError` saying what takes any p."""
    import cvxpy as cp

    low, high = CONIC_EXPONENTS
    if not (q in (1.0, math.inf) or low <= q <= high):
        raise InvalidInputError(
            f"{what}: the exact solve states a norm of exponent {q:.6g} with CVXPY's power cones, "
            f"which represent exponents in [{low:g}, {high:g}] (and 1, inf) only. Use p = 1, p in "
            "[1.001, 1000] or p = inf, or an outer loop (mklopt.fit with driver='wrapper' or "
            "'chunking'), whose closed forms take any p.")
    return cp.pnorm(x, q)


def check_p(p) -> float:
    """Validate a weight norm ``p`` in :math:`[1, \\infty]`."""
    if isinstance(p, bool) or not isinstance(p, numbers.Real):
        raise InvalidInputError(f"p must be a number in [1, inf], got {p!r}.")
    p = float(p)
    if not p >= 1:
        raise InvalidInputError(
            f"p must be >= 1 (p is the weight norm ||mu||_p <= 1), got {p}. "
            "For a block norm b in [1, 2] use p = weight_from_block_norm(b).")
    if 1.0 < p < 1.0 + 1e-6:
        raise InvalidInputError(
            f"p = {p!r} is within 1e-6 of 1, where the conjugate exponent p* = p/(p-1) "
            "overflows; use p = 1 (l1-MKL) or p >= 1 + 1e-6.")
    return p


def conjugate_exponent(p: float) -> float:
    """:math:`p^* = p/(p-1)` with :math:`1^* = \\infty` and :math:`\\infty^* = 1`."""
    if p == 1:
        return math.inf
    if math.isinf(p):
        return 1.0
    return p / (p - 1.0)


def block_from_weight_norm(p: float) -> float:
    """Block norm :math:`b = 2p/(p+1)` equivalent to the weight norm ``p``.

    ``p`` is mklopt's weight norm (:math:`\\|\\mu\\|_p\\le 1`); the result is
    the Kloft-thesis block norm (:math:`\\|w\\|_{2,b}`), in :math:`[1, 2]`.
    """
    p = check_p(p)
    return 2.0 if math.isinf(p) else 2.0 * p / (p + 1.0)


def weight_from_block_norm(b: float) -> float:
    """Weight norm :math:`p = b/(2-b)` equivalent to the block norm ``b``.

    ``b`` is the thesis' block norm. Only :math:`1 \\le b \\le 2` has a
    weight-norm form (``b = 2`` gives ``p = inf``); for ``b > 2`` use the
    ``lp_block_primal`` formulation directly.
    """
    if isinstance(b, bool) or not isinstance(b, numbers.Real) or not (b >= 1):
        raise InvalidInputError(f"block norm b must be >= 1 (a real number), got {b!r}.")
    if b > 2:
        raise InvalidInputError(
            f"block norm b = {b} > 2 has no weight-norm form (p would be negative); "
            "solve it with formulation='lp_block_primal', b=...")
    return math.inf if b == 2 else b / (2.0 - b)
