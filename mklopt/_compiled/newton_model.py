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
    :math:`L^{-1}z` (contiguous dot products along the rows of L)."""
    k = L.shape[0]
    for col in range(Z.shape[0]):
        z = Z[col]
        for i in range(k):
            total = z[i]
            row = L[i]
            for j in range(i):
                total -= row[j] * z[j]
            z[i] = total / row[i]


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
