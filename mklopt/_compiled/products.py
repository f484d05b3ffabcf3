"""Products with the whole kernel stack: the per-iteration passes of the outer loops."""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from .cache import locked_cache
from .gradient_updates import add_rows
from .layout import frozen

__all__ = ["quadratic_terms", "combine"]

#: At most this fraction of non-zero coefficients, only the support rows are read (a pass
#: over the rows in use costs that fraction of a full pass, at the same bandwidth).
SPARSE_SUPPORT = 0.8
#: At most this fraction of non-zero weights: :math:`K_\\mu` is summed from those kernels only.
SPARSE_WEIGHTS = 0.5
#: Entries of :math:`K_\\mu` summed at a time from the kernels in use (a block and its
#: sources stay in the L1/L2 cache).
SUM_BLOCK = 2048
#: Entries of :math:`K_\\mu` from which its blocks are summed on all of numba's threads (a
#: kernel of 2,048 points and up: one pass then takes milliseconds, and memory bandwidth
#: grows with the cores).
PARALLEL_SUM = 2**22


def combine(stack: np.ndarray, weights: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """:math:`K_\\mu = \\sum_{m:\\,\\mu_m \\ne 0} \\mu_m K_m`, reading only the kernels in use.

    With many non-zero weights, one BLAS matrix-vector product over the stack
    seen as an (M, n n) matrix; with at most half of them non-zero (the
    sparse weights of ℓ1-MKL), a compiled sum of the kernels in use, block by block,
    so the cost is the fraction of kernels in use of a full pass (measured at
    n = 1000, M = 50: 16 ms for the full product, 3.8 ms for 10 kernels) and
    :math:`K_\\mu` is written once. It used SciPy's ``daxpy`` before, once per kernel in
    use: SciPy's BLAS is a second OpenBLAS with its own threads, and on 2 cores the
    threads each library left spinning after a call stalled the other's next call by
    several milliseconds, which made the cutting plane and SimpleMKL on 400 points 2-3×
    slower than on one BLAS thread.

    Parameters
    ----------
    stack : ndarray of shape (M, n, n)
    weights : ndarray of shape (M,)
    out : ndarray of shape (n, n), optional
        C-contiguous float64 buffer to write into.

    Returns
    -------
    ndarray of shape (n, n)
    """
    M, n = stack.shape[0], stack.shape[1]
    weights = np.asarray(weights, dtype=float)
    out = np.empty((n, n)) if out is None else out
    flat, buffer = stack.reshape(M, n * n), out.reshape(n * n)
    used = np.flatnonzero(weights)
    if used.size == 0 or used.size > SPARSE_WEIGHTS * M:
        np.dot(weights, flat, out=buffer)
        return out
    add = _weighted_sum_parallel if buffer.size >= PARALLEL_SUM else _weighted_sum
    add(frozen(flat), frozen(used, np.int64), frozen(weights[used]), buffer)
    return out


@locked_cache
@njit(cache=True, nogil=True, inline="always")
def _sum_block(flat, used, weights, out, start, stop):
    first, w = flat[used[0]], weights[0]
    for e in range(start, stop):
        out[e] = w * first[e]
    for k in range(1, used.shape[0]):
        source, w = flat[used[k]], weights[k]
        for e in range(start, stop):
            out[e] += w * source[e]


@locked_cache
@njit(cache=True, nogil=True)
def _weighted_sum(flat, used, weights, out):
    """``out = sum_k weights[k] * flat[used[k]]``, :data:`SUM_BLOCK` entries at a time."""
    size = out.shape[0]
    for start in range(0, size, SUM_BLOCK):
        _sum_block(flat, used, weights, out, start, min(start + SUM_BLOCK, size))


@locked_cache
@njit(cache=True, nogil=True, parallel=True)
def _weighted_sum_parallel(flat, used, weights, out):
    """:func:`_weighted_sum` with the blocks shared by numba's threads."""
    size = out.shape[0]
    for b in prange((size + SUM_BLOCK - 1) // SUM_BLOCK):
        start = b * SUM_BLOCK
        _sum_block(flat, used, weights, out, start, min(start + SUM_BLOCK, size))


def quadratic_terms(stack: np.ndarray, coef: np.ndarray,
                    symmetric: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """All quadratic terms :math:`s_m = c^\\top K_m c` and the products :math:`K_m c`.

    .. math:: (K c)_{m,i} = \\sum_j K_{m,ij}\\, c_j, \\qquad s_m = c^\\top (K c)_m

    For symmetric kernels with at most :data:`SPARSE_SUPPORT` of the coefficients non-zero,
    :math:`K_m c = K_m[S, :]^\\top c_S` reads only the support rows, in the compiled loop of
    the interleaved core's gradient updates
    (:func:`~mklopt._compiled.gradient_updates.add_columns`: four rows per pass, kernels
    over the cores for large stacks). Else one BLAS matrix-vector product over the full
    stack seen as an (M n, n) matrix (a reshape, no copy; ``np.matmul`` on the (M, n, n)
    stack was measured 13x slower: NumPy's batched loop instead of one GEMV). Measured on
    one thread, n = 1,257, M = 5: the full product 2.8 ms for any support, the support rows
    0.32 ms at 20 % support, 1.3 ms at 50 %; n = 1,000, M = 50: 18 ms against 4.1 and 10 ms
    (a gather of the rows into a buffer, then BLAS, took 11 and 27 ms).

    Parameters
    ----------
    stack : ndarray of shape (M, n, n)
    coef : ndarray of shape (n,) or (T, n)
        Signed coefficients, ``y * alpha`` for the hinge loss; one row per
        task for multi-output losses (then :math:`s_m = \\sum_t c_t^\\top K_m c_t`).
    symmetric : bool
        The kernels are symmetric (enables the support-rows path).

    Returns
    -------
    s : ndarray of shape (M,)
    Kc : ndarray of shape (M, n) or (M, T, n)
    """
    coef = np.asarray(coef, dtype=float)
    M, n = stack.shape[0], stack.shape[1]
    if coef.ndim == 2:  # one row per task: one batched product for all of them
        Kc = (stack.reshape(M * n, n) @ coef.T).reshape(M, n, -1).transpose(0, 2, 1)
        return np.einsum("mtj,tj->m", Kc, coef), Kc
    support = np.flatnonzero(coef)
    if support.size == 0:
        return np.zeros(M), np.zeros((M, n))
    if symmetric and support.size <= SPARSE_SUPPORT * n:
        Kc = np.zeros((M, n))
        add_rows(frozen(stack), support.astype(np.int64), coef[support], Kc, numba.get_num_threads())
    else:
        Kc = np.empty((M, n))
        np.dot(stack.reshape(M * n, n), coef, out=Kc.reshape(-1))
    return Kc @ coef, Kc


