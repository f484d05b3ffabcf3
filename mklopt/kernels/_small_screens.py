"""The validation scan and the exact PSD test of many small kernels, over chunks on every core.

The loops themselves are compiled (:mod:`mklopt._compiled.small_kernels`, where the method
and its measurements are described); here they are handed chunks of :data:`CHUNK` kernels
on a thread per core.
"""

from __future__ import annotations

import numpy as np

from .._compiled.layout import frozen
from .._compiled.small_kernels import CHUNK, SMALL_N, scan_chunk, shifted_cholesky
from ._stack import map_kernels

__all__ = ["cholesky_screen", "scan_small", "SMALL_N", "CHUNK"]


def _over_chunks(work, M: int) -> None:
    """``work(part)`` for consecutive slices of :data:`CHUNK` kernels, one thread per core and
    BLAS on one thread inside (:func:`~mklopt.kernels._stack.map_kernels`; the loops release the GIL)."""
    parts = [slice(start, min(start + CHUNK, M)) for start in range(0, M, CHUNK)]
    map_kernels(lambda i: work(parts[i]), len(parts))


def scan_small(stack: np.ndarray, W: np.ndarray):
    """``(hi, lo, finite, asymmetry, sketch)`` per kernel of ``stack`` (M, n, n), ``W`` (n, 3)."""
    M, k = stack.shape[0], W.shape[1]
    if k != 3:
        raise ValueError(f"the fingerprint sketch has 3 columns, got W with {k}")
    hi, lo, asymmetry = np.empty(M), np.empty(M), np.empty(M)
    finite, sketch = np.empty(M, dtype=np.bool_), np.zeros((M, k, k))
    stack, W = frozen(stack), frozen(W)
    _over_chunks(lambda part: scan_chunk(stack[part], W, hi[part], lo[part], finite[part], asymmetry[part],
                                    sketch[part]), M)
    return hi, lo, finite, asymmetry, sketch


def cholesky_screen(stack: np.ndarray, scale: np.ndarray, noise_per_norm: float
                    ) -> tuple[np.ndarray, np.ndarray]:
    """``(cleared, levels)`` for the symmetric kernels of ``stack`` (M, n, n).

    ``cleared[m]`` is True when :math:`K_m+\\tau_mI` has a Cholesky factor,
    ``levels[m]`` is :math:`\\tau_m` (``noise_per_norm`` times the estimate of
    :math:`\\lambda_{\\max}`).
    """
    M = stack.shape[0]
    levels, info = np.empty(M), np.empty(M, dtype=np.int32)
    stack, scale = frozen(stack), frozen(scale)
    _over_chunks(lambda part: shifted_cholesky(stack[part], scale[part], float(noise_per_norm), levels[part],
                                                info[part]), M)
    return info == 0, levels
