"""A primal-dual interior point for one linear matrix inequality in a few variables.

.. math::

    \\min_x\\ f^\\top x\\quad\\text{s.t.}\\quad S=A_0+\\sum_{i=1}^kx_iB_i\\succeq0,\\qquad s=h-Gx\\ge0,

with :math:`k` small (the kernel weights of a spectrahedron, less one for the trace)
and :math:`S` of order :math:`r` (the kernels' joint rank). Its dual is

.. math::

    \\max_{Z\\succeq0,\\,y\\ge0}\\ -\\langle A_0,Z\\rangle-h^\\top y\\quad\\text{s.t.}\\quad
    \\langle B_i,Z\\rangle-(G^\\top y)_i=f_i,

and :math:`f^\\top x` exceeds the dual objective by :math:`\\langle S,Z\\rangle+s^\\top y\\ge0`.
The iterates keep :math:`x` strictly feasible (the start is) and follow the HKM direction
with Mehrotra's predictor-corrector (Helmberg, Rendl, Vanderbei & Wolkowicz, "An
interior-point method for semidefinite programming", SIAM J. Optim. 6(2), 1996;
Todd, "Semidefinite optimization", Acta Numerica 10, 2001, §5): each step solves the
:math:`k\\times k` system :math:`H_{ij}=\\operatorname{tr}(B_iS^{-1}B_jZ)+(G^\\top\\operatorname{diag}(y/s)G)_{ij}`,
so it costs :math:`O(kr^3)` and never forms a block of order :math:`r^2` (what an
interior point on the SDP statement does). Unlike a pure barrier method the dual
:math:`Z` converges with the primal, to the accuracy of the arithmetic; callers still
turn it into bounds that hold whatever the accuracy (the dual residual is returned).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from ..kernels._blas import single_blas_thread

__all__ = ["LMISolution", "lmi_minimize"]

#: Interior-point iterations, at most (they take 15-30 on the spectrahedra measured).
MAX_ITER = 80
#: Dual residual accepted, relative to 1 + max|f| (callers' bounds include it).
RESIDUAL = 1e-10
#: Fraction of the step to the boundary taken.
STEP_FRACTION = 0.98
#: Above this order BLAS keeps its threads (the products dominate; below, threads wait).
THREADED_ORDER = 200


@dataclass
class LMISolution:
    """The last iterate: the point ``x`` (strictly feasible), the dual ``Z`` (PD) and ``y`` (> 0),
    the complementarity ``gap`` :math:`\\langle S,Z\\rangle+s^\\top y` and the dual residual
    :math:`f-\\langle B,Z\\rangle+G^\\top y` (``residual``)."""

    x: np.ndarray
    Z: np.ndarray
    y: np.ndarray
    gap: float
    residual: np.ndarray


def lmi_minimize(f: np.ndarray, A0: np.ndarray, B: np.ndarray, G: np.ndarray | None = None,
                 h: np.ndarray | None = None, x0: np.ndarray | None = None,
                 gap: float = 1e-10) -> LMISolution:
    """Minimize from the strictly feasible ``x0`` (default 0) to complementarity ``gap``.

    Parameters
    ----------
    f : array (k,)
    A0 : array (r, r)
    B : array (k, r, r)
        Symmetric.
    G, h : arrays (p, k) and (p,), optional
    x0 : array (k,), optional
        Must satisfy :math:`A(x_0)\\succ0`, :math:`Gx_0<h`.
    gap : float
        Absolute :math:`\\langle S,Z\\rangle+s^\\top y` at which to stop, with a dual
        residual at most :data:`RESIDUAL` times :math:`1+\\max|f_i|` (else the best iterate).

    Raises
    ------
    ValueError
        When ``x0`` is not strictly feasible.
    """
    order = A0.shape[0]
    if order >= THREADED_ORDER:
        return _solve(f, A0, B, G, h, x0, gap)
    with single_blas_thread():
        return _solve(f, A0, B, G, h, x0, gap)


class _Iterate:
    """Primal point with its slacks and factor, dual point; the HKM step between them."""

    def __init__(self, f, A0, B, G, h, x):
        self.f, self.A0, self.B, self.G, self.h = f, A0, B, G, h
        self.x = x
        self.S, self.s, self.L = _slacks(x, A0, B, G, h)
        if self.L is None:
            raise ValueError("lmi_minimize needs a strictly feasible start")
        r, p = A0.shape[0], G.shape[0]
        # a dual start of the primal's scale: <S, Z> + s'y about (r + p) * zeta
        zeta = max(1.0, float(np.abs(f).max(initial=0.0)))
        self.Z, self.y = zeta * np.eye(r), zeta * np.ones(p)
        self.LZ = np.sqrt(zeta) * np.eye(r)
        self.weight = r + p

    @property
    def complementarity(self) -> float:
        return float(np.einsum("ij,ij->", self.S, self.Z) + self.s @ self.y)

    def solution(self) -> LMISolution:
        return LMISolution(self.x.copy(), self.Z.copy(), self.y.copy(), self.complementarity, self.residual())

    def merit(self, gap: float, scale: float) -> float:
        """Above 1 while the complementarity exceeds ``gap`` or the dual residual :data:`RESIDUAL`."""
        return max(self.complementarity / gap, float(np.abs(self.residual()).max()) / (RESIDUAL * scale))

    def predictor_corrector(self) -> bool:
        """One of Mehrotra's steps: the affine direction sets the centring
        :math:`\\sigma=(\\mu_{\\text{aff}}/\\mu)^3` and the second-order term; False when no step could be taken."""
        mu = self.complementarity / self.weight
        self.factor()
        _, dS, dZ, ds, dy = self.direction(0.0)
        primal, dual = self.steps(dS, dZ, ds, dy)
        predicted = (np.einsum("ij,ij->", self.S + primal * dS, self.Z + dual * dZ)
                     + (self.s + primal * ds) @ (self.y + dual * dy)) / self.weight
        sigma = min(1.0, max(predicted / mu, 0.0)) ** 3
        dx, dS, dZ, ds, dy = self.direction(sigma * mu, corrector=(dS, dZ, ds, dy))
        primal, dual = self.steps(dS, dZ, ds, dy)
        return self.move(dx, dZ, dy, primal, dual)

    def residual(self) -> np.ndarray:
        return self.f - np.einsum("kij,ij->k", self.B, self.Z) + self.G.T @ self.y

    def factor(self) -> None:
        """:math:`S^{-1}`, :math:`S^{-1}B_iZ` and the Schur matrix :math:`H` at this iterate
        (shared by the predictor and the corrector)."""
        self.inverse = scipy.linalg.cho_solve((self.L, True), np.eye(self.S.shape[0]), check_finite=False)
        self.SBZ = (self.inverse @ self.B) @ self.Z
        self.ratio = self.y / self.s
        H = np.einsum("iab,jab->ij", self.B, self.SBZ, optimize=True) + (self.G.T * self.ratio) @ self.G
        self.H = (H + H.T) / 2

    def direction(self, target: float, corrector=None):
        """The HKM step to the point of complementarity ``target`` (with Mehrotra's
        second-order term of the predictor ``corrector``); :meth:`factor` first."""
        right_Z = target * self.inverse
        right_y = target / self.s
        if corrector is not None:
            dS, dZ, ds, dy = corrector
            right_Z = right_Z - self.inverse @ dS @ dZ
            right_y = right_y - ds * dy / self.s
        rhs = np.einsum("kab,ab->k", self.B, right_Z) - self.G.T @ right_y - self.f
        dx = np.linalg.lstsq(self.H, rhs, rcond=1e-14)[0]
        dS = np.tensordot(dx, self.B, axes=1)
        dZ = right_Z - self.Z - np.tensordot(dx, self.SBZ, axes=1)
        dZ = (dZ + dZ.T) / 2
        ds = -self.G @ dx
        dy = right_y - self.y - self.ratio * ds
        return dx, dS, dZ, ds, dy

    def steps(self, dS, dZ, ds, dy) -> tuple[float, float]:
        """The largest primal and dual step lengths (at most 1) that stay inside, times
        :data:`STEP_FRACTION`."""
        primal = min(_lmi_step(self.L, dS), _ray_step(self.s, ds))
        dual = min(_lmi_step(self.LZ, dZ), _ray_step(self.y, dy))
        return min(1.0, STEP_FRACTION * primal), min(1.0, STEP_FRACTION * dual)

    def move(self, dx, dZ, dy, primal: float, dual: float) -> bool:
        """Take the steps; the primal one is halved while rounding leaves ``S`` not PD."""
        while primal > 1e-14:
            S, s, L = _slacks(self.x + primal * dx, self.A0, self.B, self.G, self.h)
            if L is not None:
                self.x, self.S, self.s, self.L = self.x + primal * dx, S, s, L
                break
            primal /= 2
        Z = self.Z + dual * dZ
        LZ = _cholesky(Z)
        if LZ is None:
            return primal > 1e-14
        self.Z, self.LZ, self.y = (Z + Z.T) / 2, LZ, self.y + dual * dy
        return True


def _solve(f, A0, B, G, h, x0, gap) -> LMISolution:
    f = np.asarray(f, dtype=float)
    k, r = f.size, A0.shape[0]
    G = np.zeros((0, k)) if G is None else np.asarray(G, dtype=float)
    h = np.zeros(0) if h is None else np.asarray(h, dtype=float)
    x = np.zeros(k) if x0 is None else np.asarray(x0, dtype=float).copy()
    it = _Iterate(f, A0, B, G, h, x)
    if k == 0:  # nothing to choose: the start is the answer, with the zero dual
        return LMISolution(x, np.zeros((r, r)), np.zeros(G.shape[0]), 0.0, np.zeros(0))
    scale = 1.0 + float(np.abs(f).max())
    best, best_merit, stale, steps = None, np.inf, 0, 0
    while True:
        # near the end Z is nearly singular and the residual grows again: keep the best iterate
        merit = it.merit(gap, scale)
        if merit < best_merit:
            best, best_merit, stale = it.solution(), merit, 0
        else:
            stale += 1
        if merit <= 1.0 or (stale >= 3 and it.complementarity <= gap) or steps == MAX_ITER \
                or not it.predictor_corrector():
            return best
        steps += 1


def _cholesky(A: np.ndarray) -> np.ndarray | None:
    try:
        return scipy.linalg.cholesky((A + A.T) / 2, lower=True, check_finite=False)
    except scipy.linalg.LinAlgError:
        return None


def _slacks(x, A0, B, G, h):
    S = A0 + np.tensordot(x, B, axes=1)
    S = (S + S.T) / 2
    s = h - G @ x
    return S, s, _cholesky(S) if np.all(s > 0) else None


def _lmi_step(L: np.ndarray | None, dA: np.ndarray) -> float:
    """The largest :math:`t` with :math:`LL^\\top+t\\,dA\\succeq0` (inf when any)."""
    if L is None:
        return 0.0
    solve = scipy.linalg.solve_triangular
    whitened = solve(L, solve(L, dA, lower=True, check_finite=False).T, lower=True, check_finite=False)
    low = float(scipy.linalg.eigvalsh((whitened + whitened.T) / 2, subset_by_index=[0, 0],
                                      check_finite=False)[0])
    return -1.0 / low if low < 0 else np.inf


def _ray_step(v: np.ndarray, dv: np.ndarray) -> float:
    falling = dv < 0
    return float(np.min(-v[falling] / dv[falling])) if np.any(falling) else np.inf
