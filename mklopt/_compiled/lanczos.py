"""The Lanczos screen's recurrence in one compiled call: products, full reorthogonalization.

The PSD screen of a large kernel (:func:`~mklopt.kernels._psd.lanczos_extremes`) runs 40
Lanczos steps on it while it is in cache. Written with NumPy, each step was a handful of
short calls holding the GIL between them: the kernels' screens on two threads took as long
as one after the other. Here the whole recurrence runs with the GIL released; only the
tridiagonal's eigenvalues are left to SciPy (:func:`scipy.linalg.eigvalsh_tridiagonal`).
The product with an exactly symmetric kernel is BLAS's ``dsymv``, SciPy's
(:mod:`~mklopt._compiled.scipy_routines`), called from the compiled loop: one triangle
read, half the memory of a full product (SciPy's Python wrapper of it holds the GIL).

With :math:`\\alpha_j = v_j^\\top K v_j` and :math:`\\beta_j` the norm of
:math:`K v_j` made orthogonal to :math:`v_0, \\dots, v_j` (twice, Kahan-Parlett), the
Ritz values of the tridiagonal :math:`T = \\operatorname{tridiag}(\\beta, \\alpha, \\beta)`
lie in :math:`[\\lambda_{\\min}(K), \\lambda_{\\max}(K)]`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .cache import locked_cache
from .scipy_routines import scipy_routine

__all__ = ["lanczos_tridiagonal"]

_dsymv = scipy_routine("blas", "dsymv", 10)

#: Sums in any order (SIMD lanes; one running sum waits on each addition, 4x slower here):
#: a screen's Ritz values move by rounding only. No assumption about NaN or infinity.
_SUMS = {"reassoc", "contract"}


@locked_cache
@njit(cache=True, nogil=True, fastmath=_SUMS, inline="always")
def _dot(a, b):
    total = 0.0
    for i in range(a.shape[0]):
        total += a[i] * b[i]
    return total


@locked_cache
@njit(cache=True, nogil=True)
def _dsymv_arguments(n):
    """``dsymv``'s scalar arguments by reference (made once per screen, not per product):
    the lower triangle, the order and leading dimension n, unit strides, alpha 1, beta 0."""
    return (np.array([ord("L")], dtype=np.uint8), np.array([n], dtype=np.int32),
            np.ones(1, dtype=np.int32), np.ones(1), np.zeros(1))


@locked_cache
@njit(cache=True, nogil=True, fastmath=_SUMS)
def kernel_product(K, v, symmetric, blas, out):
    """``out = K @ v``: row by row, or for a K equal to its transpose bit for bit (``symmetric``)
    BLAS's ``dsymv`` (SciPy's; ``blas`` its :func:`_dsymv_arguments`), which reads one triangle:
    half the memory (0.11 against 0.17 ms at n = 1,257 in cache here). C order is the
    transpose in BLAS's eyes: the same matrix."""
    if symmetric:
        uplo, order, step, one, zero = blas
        _dsymv(uplo.ctypes, order.ctypes, one.ctypes, K.ctypes, order.ctypes, v.ctypes, step.ctypes,
               zero.ctypes, out.ctypes, step.ctypes)
        return
    for i in range(K.shape[0]):
        out[i] = _dot(K[i], v)


@locked_cache
@njit(cache=True, nogil=True, fastmath=_SUMS)
def _orthogonalize(V, count, w):
    """``w -= V[:count].T @ (V[:count] @ w)``, twice."""
    n = w.shape[0]
    for _ in range(2):
        for k in range(count):
            basis = V[k]
            dot = _dot(basis, w)
            for i in range(n):
                w[i] -= dot * basis[i]


@locked_cache
@njit(cache=True, nogil=True, fastmath=_SUMS)
def lanczos_tridiagonal(K, v, w, symmetric, given, V, diag, off):
    """Up to ``V.shape[0]`` Lanczos steps on K from ``v`` (``w = K v`` when ``given``, else made
    here; both overwritten); the tridiagonal in ``diag``, ``off``; returns how many diagonal
    entries were made. ``symmetric``: K equals its transpose bit for bit (:func:`kernel_product`).

    Stops early when the new residual's norm falls below 1e-13 of :math:`|\\alpha_0|`
    (an invariant subspace: the Ritz values found are eigenvalues)."""
    n, steps = K.shape[0], V.shape[0]
    blas = _dsymv_arguments(n)
    if not given:
        kernel_product(K, v, symmetric, blas, w)
    norm = np.sqrt(_dot(v, v))
    for i in range(n):
        v[i] /= norm
        w[i] /= norm
    made = 0
    for j in range(steps):
        basis = V[j]
        for i in range(n):
            basis[i] = v[i]
        if j:
            kernel_product(K, v, symmetric, blas, w)
        diag[j] = _dot(v, w)
        made = j + 1
        _orthogonalize(V, j + 1, w)
        beta = np.sqrt(_dot(w, w))
        if j == steps - 1 or beta <= 1e-13 * max(abs(diag[0]), 1e-300):
            break
        off[j] = beta
        for i in range(n):
            v[i] = w[i] / beta
    return made
