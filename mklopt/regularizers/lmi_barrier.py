"""A small barrier method for one linear matrix inequality in a few variables.

.. math::

    \\min_x\\ f^\\top x\\quad\\text{s.t.}\\quad A(x)=A_0+\\sum_{i=1}^kx_iB_i\\succ0,\\qquad Gx<h,

with :math:`k` small (the kernel weights of a spectrahedron, less one for the trace)
and :math:`A` of order :math:`r` (the kernels' joint rank). Newton's method on
:math:`\\varphi_s(x)=s\\,f^\\top x-\\log\\det A(x)-\\sum_j\\log(h-Gx)_j` along the central
path (Boyd & Vandenberghe, *Convex Optimization*, Cambridge 2004, §11.2–11.6): with
the Cholesky factor :math:`A=LL^\\top` and :math:`C_i=L^{-1}B_iL^{-\\top}`, the gradient
has :math:`-\\operatorname{tr}C_i` and the Hessian :math:`\\langle C_i,C_j\\rangle_F`, so one
step costs :math:`k` triangular solves of order :math:`r` and no :math:`(r^2)^2` scaling
block (what an interior point on the SDP statement forms). At the centre of
:math:`s`, :math:`Z=A^{-1}/s\\succeq0` and :math:`y=1/(s(h-Gx))>0` are dual feasible with
duality gap :math:`(r+p)/s`; callers turn them into bounds that hold whatever the
accuracy of the steps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from ..kernels._stack import single_blas_thread

__all__ = ["Center", "barrier_minimize"]

#: Growth of s between centres.
GROWTH = 30.0
#: Newton steps per centre, at most.
MAX_NEWTON = 60


@dataclass
class Center:
    """The last centre: its point, the LMI's dual block :math:`A^{-1}/s` and the rows' multipliers."""

    x: np.ndarray
    Z: np.ndarray
    y: np.ndarray
    gap: float


def _cholesky(A: np.ndarray) -> np.ndarray | None:
    try:
        return scipy.linalg.cholesky(A, lower=True, check_finite=False)
    except scipy.linalg.LinAlgError:
        return None


def _feasible(x, A0, B, G, h) -> tuple[np.ndarray | None, np.ndarray]:
    A = A0 + np.tensordot(x, B, axes=1)
    slack = h - G @ x
    L = _cholesky((A + A.T) / 2) if np.all(slack > 0) else None
    return L, slack


def _change(s, f, step, L, slack, L_new, slack_new) -> float:
    """:math:`\\varphi_s(x+\\text{step})-\\varphi_s(x)` summed term by term: near the end
    :math:`s f^\\top x` is ~1e12 and its decrease ~1e-7, lost if the two values are subtracted."""
    logdet = 2.0 * float(np.log(np.diag(L_new) / np.diag(L)).sum())
    return s * float(f @ step) - logdet - float(np.log(slack_new / slack).sum())


def _newton_direction(s, f, B, G, L, slack, active) -> tuple[np.ndarray, np.ndarray]:
    """Newton's step and the gradient; ``active`` marks the nonzero :math:`B_i` (one batched
    pair of triangular solves for all of them)."""
    solve = scipy.linalg.solve_triangular
    r, k = L.shape[0], int(active.sum())
    C = np.zeros((f.size, r, r))
    if k:
        left = solve(L, B[active].transpose(1, 0, 2).reshape(r, k * r), lower=True, check_finite=False)
        mirrored = left.reshape(r, k, r).transpose(2, 1, 0).reshape(r, k * r)
        C[active] = solve(L, mirrored, lower=True, check_finite=False).reshape(r, k, r).transpose(1, 0, 2)
    grad = s * f - np.einsum("kii->k", C) + G.T @ (1.0 / slack)
    hess = np.einsum("kij,lij->kl", C, C) + (G.T / slack ** 2) @ G
    return -np.linalg.lstsq(hess, grad, rcond=1e-14)[0], grad


def barrier_minimize(f: np.ndarray, A0: np.ndarray, B: np.ndarray, G: np.ndarray | None = None,
                     h: np.ndarray | None = None, x0: np.ndarray | None = None,
                     gap: float = 1e-10) -> Center:
    """Follow the central path from the strictly feasible ``x0`` (default 0) to duality gap ``gap``.

    Parameters
    ----------
    f : array (k,)
    A0 : array (r, r)
    B : array (k, r, r)
    G, h : arrays (p, k) and (p,), optional
    x0 : array (k,), optional
        Must satisfy :math:`A(x_0)\\succ0`, :math:`Gx_0<h`.
    gap : float
        Absolute duality gap :math:`(r+p)/s` at which to stop.

    BLAS runs on one thread meanwhile (the matrices are small).
    """
    with single_blas_thread():
        return _central_path(f, A0, B, G, h, x0, gap)


def _central_path(f, A0, B, G, h, x0, gap) -> Center:
    k, r = f.size, A0.shape[0]
    G = np.zeros((0, k)) if G is None else G
    h = np.zeros(0) if h is None else h
    x = np.zeros(k) if x0 is None else np.asarray(x0, dtype=float).copy()
    L, slack = _feasible(x, A0, B, G, h)
    if L is None:
        raise ValueError("barrier_minimize needs a strictly feasible start")
    if k == 0:  # nothing to choose: the start is the answer, with the zero dual
        return Center(x, np.zeros((r, r)), np.zeros(G.shape[0]), 0.0)
    s = (r + G.shape[0]) / max(abs(float(f @ x)), 1.0)
    active = np.array([bool(np.any(Bi)) for Bi in B])
    final = (r + G.shape[0]) / gap
    while True:
        last = s >= final
        for _ in range(MAX_NEWTON):
            step, grad = _newton_direction(s, f, B, G, L, slack, active)
            decrement = -float(grad @ step)
            if decrement <= (1e-12 if last else 1e-3):
                break
            t = 1.0
            while t > 1e-12:
                L_new, slack_new = _feasible(x + t * step, A0, B, G, h)
                if L_new is not None and _change(s, f, t * step, L, slack, L_new, slack_new) \
                        <= -0.25 * t * decrement:
                    break
                t *= 0.5
            if t <= 1e-12:
                break
            x, L, slack = x + t * step, L_new, slack_new
        if last:
            break
        s = min(s * GROWTH, final)
    inverse = scipy.linalg.cho_solve((L, True), np.eye(r), check_finite=False)
    y = 1.0 / (s * slack)
    Z = _dual_feasible((inverse + inverse.T) / (2 * s), B, f + G.T @ y)
    return Center(x, Z, y, (r + G.shape[0]) / s)


def _dual_feasible(Z: np.ndarray, B: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Move the centre's :math:`Z` to :math:`\\langle Z,B_i\\rangle=\\text{target}_i` (stationarity), PSD kept.

    Near the end the centre is exact in Newton's metric but its Euclidean residual
    can be ~1e-4 (the Hessian is huge); the dual Newton correction
    :math:`Z\\leftarrow Z+Z\\tilde BZ`, :math:`\\tilde B=\\sum_i\\delta_iB_i`, is small in :math:`Z`'s own
    metric, so it stays PSD (any rounding below zero is clipped).
    """
    for _ in range(3):
        residual = target - np.einsum("kij,ij->k", B, Z)
        ZBZ = np.stack([Z @ Bi @ Z for Bi in B])
        hess = np.einsum("kij,lij->kl", ZBZ, B)
        delta = np.linalg.lstsq(hess, residual, rcond=1e-14)[0]
        vals, vecs = np.linalg.eigh(Z + np.tensordot(delta, (ZBZ + ZBZ.transpose(0, 2, 1)) / 2, axes=1))
        Z = (vecs * np.clip(vals, 0, None)) @ vecs.T
    return Z
