"""The second-order step's quadratic model in one compiled call, outside the GIL.

The model of :mod:`~mklopt.drivers._newton_step` needs, at each weight step, the block
:math:`Q_{FF} = (YK_\\mu Y)_{FF}` on the free variables F (with a small ridge), its
Cholesky factor :math:`LL^\\top`, :math:`Z = L^{-1}[B, y_F]` (one forward substitution:
:math:`[B, y_F]^\\top Q^{-1}[B, y_F] = Z^\\top Z`) and

.. math:: H = B^\\top Q^{-1}B - \\frac{(B^\\top Q^{-1}y_F)(B^\\top Q^{-1}y_F)^\\top}{y_F^\\top Q^{-1}y_F},

the Hessian of the SVM's optimum in μ (the Schur complement of the bordered KKT system),
symmetrized and with its eigenvalues floored at ``floor`` times the largest. Made in
NumPy and SciPy, these are a dozen calls that hold the GIL (SciPy's LAPACK wrappers keep
it), so that the one-vs-rest classes side by side on threads took their weight steps one
at a time; here LAPACK's ``potrf`` and ``syevd`` run through numba's own bindings, in a
function that releases the GIL.

:func:`model_hessian` returns a status: :data:`MODELLED` with ``H`` written,
:data:`NOT_DEFINITE` where the Cholesky factorization fails (``Q`` holds the ridged block
for the caller's LU of the bordered matrix), :data:`NO_MODEL` where H is not finite or has
no positive eigenvalue. :func:`floored` is the floor alone (for the caller's LU).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .blocks import weighted_block
from .cache import locked_cache

__all__ = ["model_hessian", "floored", "MODELLED", "NOT_DEFINITE", "NO_MODEL"]

#: :func:`model_hessian` wrote the floored Hessian.
MODELLED = 0
#: :math:`Q_{FF}` is not numerically positive definite (``Q`` holds it, ridged).
NOT_DEFINITE = 1
#: H is not finite, or has no positive eigenvalue: no model.
NO_MODEL = 2


@locked_cache
@njit(cache=True, nogil=True)
def _factor(Q):
    """The lower Cholesky factor of ``Q`` and True, or an empty array and False."""
    try:
        return np.linalg.cholesky(Q), True
    except Exception:  # numba raises LinAlgError for a matrix not positive definite
        return np.empty((0, 0)), False


@locked_cache
@njit(cache=True, inline="always")
def _forward(L, Z):
    """``Z <- Z L^{-T}`` for the rows ``Z`` (c, k): each row the forward substitution
    :math:`L^{-1}z`, four rows at a time (four independent sums per entry, each in the order
    of the row-by-row form: the same bits, ~2.3× faster). A group past the last row repeats
    the last row's sums without storing them."""
    c, k = Z.shape
    last = c - 1
    for g in range(0, c, 4):
        z0, z1, z2, z3 = Z[g], Z[min(g + 1, last)], Z[min(g + 2, last)], Z[min(g + 3, last)]
        for i in range(k):
            row = L[i]
            a0, a1, a2, a3 = z0[i], z1[i], z2[i], z3[i]
            for j in range(i):
                factor = row[j]
                a0 -= factor * z0[j]
                a1 -= factor * z1[j]
                a2 -= factor * z2[j]
                a3 -= factor * z3[j]
            d = row[i]
            z0[i] = a0 / d
            if g + 1 <= last:
                z1[i] = a1 / d
            if g + 2 <= last:
                z2[i] = a2 / d
            if g + 3 <= last:
                z3[i] = a3 / d


@locked_cache
@njit(cache=True, nogil=True)
def floored(H, floor, out):
    """``out`` = the symmetric part of ``H`` with its eigenvalues floored at ``floor`` times
    the largest; False where none is positive. (Loops, not NumPy's array expressions: at
    M × M they cost nothing to run and seconds to compile.)"""
    M = H.shape[0]
    symmetric = np.empty((M, M))
    for i in range(M):
        for j in range(M):
            symmetric[i, j] = 0.5 * (H[i, j] + H[j, i])
    values, vectors = np.linalg.eigh(symmetric)
    top = values[-1]
    if not top > 0.0:
        return False
    for m in range(M):
        values[m] = max(values[m], floor * top)
    for i in range(M):
        for j in range(M):
            total = 0.0
            for m in range(M):
                total += vectors[i, m] * values[m] * vectors[j, m]
            out[i, j] = total
    return True


@locked_cache
@njit(cache=True, nogil=True)
def model_hessian(stack, kernels, weights, rows, yF, B, ridge, floor, Q, H):
    """The floored model Hessian ``H`` (M, M) from the free points ``rows`` (labels ``yF``)
    and the gradient rows ``B`` (|F|, M); the ridged :math:`Q_{FF}` in ``Q``; a status."""
    k, M = rows.size, B.shape[1]
    weighted_block(stack, kernels, weights, rows, Q)
    trace = 0.0
    for a in range(k):
        for b in range(k):
            Q[a, b] *= yF[a] * yF[b]
        trace += Q[a, a]
    shift = ridge * max(trace / k, 1e-300)
    for a in range(k):
        Q[a, a] += shift
    L, definite = _factor(Q)
    if not definite:
        return NOT_DEFINITE
    Z = np.empty((M + 1, k))  # L^{-1}[B, y_F], by rows: [B, y_F]^T Q^{-1} [B, y_F] = Z Z^T
    for a in range(k):
        for m in range(M):
            Z[m, a] = B[a, m]
        Z[M, a] = yF[a]
    _forward(L, Z)
    raw = np.empty((M + 1, M + 1))
    for i in range(M + 1):
        for j in range(i, M + 1):
            total = 0.0
            for a in range(k):
                total += Z[i, a] * Z[j, a]
            raw[i, j] = raw[j, i] = total
    schur = np.empty((M, M))
    for i in range(M):
        for j in range(M):
            schur[i, j] = raw[i, j] - raw[i, M] * raw[j, M] / raw[M, M]
            if not np.isfinite(schur[i, j]):
                return NO_MODEL
    return MODELLED if floored(schur, floor, H) else NO_MODEL
