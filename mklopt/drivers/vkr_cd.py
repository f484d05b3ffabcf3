"""Coordinate descent for Voted Kernel Regularization (Cortes et al., Voted Kernel Regularization, 2015, §5.2, Appendix C).

Objective (no bias), with margins :math:`z_i=\\sum_{k,j}\\alpha_{k,j}a_{i,(k,j)}`,
:math:`a_{i,(k,j)}=y_iy_jK_k(x_i,x_j)` and :math:`\\Lambda_k=\\lambda r_k+\\beta`:

.. math:: F(\\alpha)=\\frac1m\\sum_i\\max(0,1-z_i)+\\sum_{k,j}\\Lambda_k|\\alpha_{k,j}|.

**Coordinate step (Appendix C).** With :math:`u_i=\\tfrac1m\\mathbb 1[z_i<1]` and
:math:`g=A^\\top u`, the subgradient of Appendix C in direction :math:`(k,j)` has size
:math:`|g_c-\\Lambda_k\\operatorname{sgn}\\alpha_c|` if :math:`\\alpha_c\\ne0` and
:math:`\\max(0,|g_c|-\\Lambda_k)` otherwise. Coordinates are visited greedily by this
violation; along coordinate c,

.. math:: \\varphi(\\eta)=\\frac1m\\sum_i\\max(0,1-z_i-\\eta a_{ic})+\\Lambda_k|\\alpha_c+\\eta|

is convex piecewise linear with breakpoints :math:`(1-z_i)/a_{ic}` and :math:`-\\alpha_c`.
Its slope starts at :math:`-\\tfrac1m\\sum_{a_{ic}>0}a_{ic}-\\Lambda_k` and jumps by
:math:`|a_{ic}|/m` (and :math:`2\\Lambda_k`) at each breakpoint, so the exact minimizer is
the first breakpoint where the cumulative slope is :math:`\\ge0` (one sort and one
cumulative sum, :class:`ExactLineSearch`). Margins are updated in place; only nonzero
:math:`\\alpha` are stored.

**Why a corrective step.** :math:`F` is nonsmooth *and* non-separable, so coordinate
descent can stop at points that are not optimal: when several margins sit exactly at
1, every single-coordinate move increases the hinge of one of them, although a joint
move decreases :math:`F`. LP optima are such points. (Breast cancer, first 200 points
scaled to :math:`\\|x\\|\\le1`, kernels :math:`(x^\\top x'+1)^d`, d = 1..5, λ = 1e-2, β = 1e-3:
Appendix C alone stalls after 99 sweeps at F = 0.1729 with 77 nonzeros; the optimum is
0.1215 with 6. Smoothing the hinge instead converges, but needs hundreds of sweeps on
such strongly correlated kernel columns.) By default (``corrective=True``) each iteration therefore ends with a
*totally corrective* step, as in LPBoost: the LP of :mod:`mklopt.formulations.vkr_lp`
restricted to the working set (every coordinate the greedy rule has selected so far)
is solved exactly, and its multipliers :math:`u` replace the indicator in the next
greedy selection (they are the subgradient of Appendix C with the ties at
:math:`z_i=1` resolved). The restricted LPs have m rows and a few hundred columns;
the algorithm stops when no coordinate violates :math:`|g_c|\\le\\Lambda_k`, i.e. at the
LP optimum. ``corrective=False`` runs Appendix C alone and reports ``"stalled"``
when a sweep makes no progress.

Every iteration (one sweep, not one coordinate) is certified with
:func:`mklopt.formulations.vkr_lp.vkr_certificate` and recorded in the history.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from .._options import Integer, Real
from .. import backends as bk
from ..exceptions import InvalidInputError, SolverError
from ..formulations import MKLData
from ..formulations.vkr_lp import lp_problem, vkr_certificate, vkr_lambda
from ..regularizers import VKRPenalty
from ..results.result import Certificate
from .base import Driver, Step

__all__ = ["ExactLineSearch", "VKRCoordinateDescent", "exact_line_search"]


def exact_line_search(z: np.ndarray, a: np.ndarray, alpha_c: float, lam_c: float) -> float:
    """Exact minimizer :math:`\\eta` of :math:`\\frac1m\\sum_i(1-z_i-\\eta a_i)_+ + \\Lambda|\\alpha_c+\\eta|`.

    Parameters
    ----------
    z : ndarray (m,)
        Current margins.
    a : ndarray (m,)
        Column :math:`a_{\\cdot c}` of :math:`A`.
    alpha_c, lam_c : float
        Current coefficient and its weight :math:`\\Lambda_k\\ge0`.

    Returns
    -------
    float
        A minimizer; 0 whenever the current point already is one (no needless moves).
    """
    m = z.size
    nz = a != 0
    a_nz = a[nz]
    pos = np.append((1.0 - z[nz]) / a_nz, -alpha_c)
    jump = np.append(np.abs(a_nz) / m, 2.0 * lam_c)
    order = np.argsort(pos, kind="stable")
    base = -float(a_nz[a_nz > 0].sum()) / m - lam_c              # slope left of every breakpoint
    slope = np.concatenate(([base], base + np.cumsum(jump[order])))  # slope[k]: right of breakpoint k-1
    knots = np.concatenate(([-np.inf], pos[order]))
    tiny = 1e-13 * (float(jump.sum()) + abs(base))
    up = np.flatnonzero(slope > -tiny)
    if up.size == 0:                                             # cannot happen in exact arithmetic
        return float(knots[-1])
    strict = np.flatnonzero(slope > tiny)
    lo = knots[up[0]]                                            # minimizers: [lo, hi]
    hi = knots[strict[0]] if strict.size else np.inf
    return float(min(max(0.0, lo), hi))


class ExactLineSearch:
    """The inner solver of the driver: exact minimization along one coordinate."""

    name = "exact_line_search"

    def __call__(self, z: np.ndarray, a: np.ndarray, alpha_c: float, lam_c: float) -> float:
        return exact_line_search(z, a, alpha_c, lam_c)


class VKRCoordinateDescent(Driver):
    """Greedy coordinate descent with exact line search (+ totally corrective steps).

    Parameters
    ----------
    data : MKLData
        ``C``, ``p`` and ``regularizer`` are unused (VKR has its own penalty).
    inner : ignored
        Accepted for :func:`mklopt.fit`'s signature; the inner solver is the exact
        line search.
    tol : float
        Stop at relative gap ``tol`` (the loop's test).
    backend : str, optional
        LP backend of the corrective steps (default HiGHS).
    lam, beta, penalty, degrees, n_features, r
        :math:`\\Lambda_k=\\lambda r_k+\\beta`, see :func:`mklopt.formulations.vkr_lp.vkr_penalties`.
    corrective : bool
        Re-optimize the working set exactly after each sweep (default); False runs
        Appendix C alone (may stall, see the module docstring).
    n_add : int, optional
        Coordinates added to the working set per iteration (default
        :math:`\\max(10,\\lceil m/20\\rceil)`).
    """

    method = ("coordinate descent for the Voted Kernel Regularization LP (Cortes, Kuznetsov, Mohri & "
              "Yang, Appendix C) with an exact line search")
    notes = ("a totally corrective LP step per sweep by default (plain coordinate descent stalls on "
             "the hinge)")

    stall_rule = "a sweep moved no coordinate or decreased the objective by less than 1e-15 (relative)"

    name = "vkr_cd"
    losses = ("hinge",)
    options = {"lam": Real(0), "beta": Real(0), "n_add": Integer(1, optional=True)}
    needs_dense = True
    needs_psd = False

    def __init__(self, data: MKLData, *, inner=None, tol: float = 1e-4, backend=None,
                 lam: float = 1e-2, beta: float = 1e-3, penalty="trace", degrees=None,
                 n_features=None, r=None, corrective: bool = True, n_add: int | None = None) -> None:
        super().__init__(data)
        self.K, self.y, self.m = data.kernels.K, data.y, data.n
        self.Lam = vkr_lambda(data.kernels, lam, beta, penalty, degrees=degrees,
                              n_features=n_features, r=r)
        self.inner = ExactLineSearch()
        self.corrective = bool(corrective)
        self.n_add = _positive_int(n_add, "n_add") if n_add is not None else max(10, -(-self.m // 20))
        self.coef: dict[int, float] = {}               # flat index k*m + j -> alpha (nonzeros only)
        self.z = np.zeros(self.m)                       # margins, maintained
        self.u = np.full(self.m, 1.0 / self.m)          # dual estimate used by the greedy rule
        self.work = np.zeros(0, dtype=np.int64)         # working set of the corrective steps
        self.stalled = False
        if self.corrective:
            self.backend, self.solver = bk.select_backend(backend, "LP", "vkr_cd corrective step")
            self.options = bk.solver_options(self.backend, min(1e-9, 1e-3 * tol))

    # --------------------------------------------------------------- loop hooks
    def start(self) -> np.ndarray:
        return np.zeros(self.data.M)

    def step(self, weights: np.ndarray) -> Step:
        selected = self._select()
        if self.corrective:
            moved = self._sweep(selected)
            swept = self.objective()
            if selected.size:
                self._correct(selected)
        else:
            before = self.objective()
            moved = self._sweep(np.concatenate([selected, self._support()]))
            swept = self.objective()
            self.u = (self.z < 1).astype(float) / self.m          # Appendix C's subgradient
            self.stalled = moved == 0 or before - swept <= 1e-15 * max(1.0, before)
        cert = self.certify(weights, self.alpha(), [self.u])
        extra = {"nnz": len(self.coef), "working_set": int(self.work.size), "moved": moved,
                 "sweep_objective": swept}
        return Step(cert.alpha, cert, cert.weights, extra=extra)

    def certify(self, weights: np.ndarray, alpha: np.ndarray, duals=()) -> Certificate:
        return vkr_certificate(self.K, self.y, alpha, self.Lam, duals)

    def converged(self, record: dict, history: list, tol: float) -> bool:
        return record["rel_gap"] <= tol or self.stalled

    def finish(self, result) -> None:
        result.info["corrective_backend"] = self.backend if self.corrective else "none"
        result.regularizer = VKRPenalty(self.Lam)  # what a saved result re-certifies with
        if self.stalled and result.status == "converged" and result.rel_gap > 0:
            result.status = "stalled"
            result.message = ("stopped: coordinate descent stalled at a non-differentiable point "
                              f"(rel_gap {result.rel_gap:.2e}); use corrective=True")

    # ------------------------------------------------------------------ state
    def alpha(self) -> np.ndarray:
        """Dense (M, m) coefficients from the stored nonzeros."""
        out = np.zeros(self.data.M * self.m)
        if self.coef:
            idx = np.fromiter(self.coef.keys(), dtype=np.int64, count=len(self.coef))
            out[idx] = np.fromiter(self.coef.values(), dtype=float, count=len(self.coef))
        return out.reshape(self.data.M, self.m)

    def objective(self) -> float:
        l1 = sum(self.Lam[c // self.m] * abs(v) for c, v in self.coef.items())
        return float(np.mean(np.maximum(0.0, 1.0 - self.z)) + l1)

    def _support(self) -> np.ndarray:
        return np.fromiter(self.coef.keys(), dtype=np.int64, count=len(self.coef))

    def _column(self, c: int) -> np.ndarray:
        k, j = divmod(int(c), self.m)
        return self.K[k, :, j] * self.y * self.y[j]

    # ---------------------------------------------------------------- phases
    def _select(self) -> np.ndarray:
        """The ``n_add`` zero coordinates with the largest Appendix-C violation :math:`|g_c|-\\Lambda_k`."""
        g = np.abs(np.matmul(self.y * self.u, self.K)).ravel()   # |A^T u|, one pass over the stack
        price = np.repeat(self.Lam, self.m)
        viol = g - price
        viol[self._support()] = -np.inf
        viol[self.work] = -np.inf                                 # already in the restricted LP
        top = np.argpartition(-viol, min(self.n_add, viol.size - 1))[: self.n_add]
        top = top[viol[top] > 1e-9 * price[top] + 1e-15]
        return top[np.argsort(-viol[top])]

    def _sweep(self, coords: np.ndarray) -> int:
        """Exact line search along each coordinate in turn; returns how many moved."""
        moved = 0
        for c in coords:
            c = int(c)
            a = self._column(c)
            old = self.coef.get(c, 0.0)
            eta = self.inner(self.z, a, old, float(self.Lam[c // self.m]))
            if eta == 0.0:
                continue
            self.z += eta * a
            new = old + eta
            if new == 0.0 or abs(new) <= 1e-15 * abs(old):
                self.coef.pop(c, None)
            else:
                self.coef[c] = new
            moved += 1
        return moved

    def _correct(self, selected: np.ndarray) -> None:
        """Solve the LP restricted to the working set exactly; keep its multipliers in ``u``."""
        self.work = np.union1d(np.union1d(self.work, selected), self._support())
        ks, js = np.divmod(self.work, self.m)
        A = (self.K[ks, :, js] * (self.y[js][:, None] * self.y)).T      # (m, |W|) columns of A
        problem, ap, am, margin = lp_problem(A, self.Lam[ks])
        options = self.options if isinstance(self.solver, str) else {}
        try:
            problem.solve(solver=self.solver, **options)
        except cp.error.SolverError as exc:
            raise SolverError(f"vkr_cd corrective step: backend {self.backend} failed ({exc}); "
                              "try backend='HIGHS' or corrective=False.") from None
        if problem.status not in ("optimal", "optimal_inaccurate") or ap.value is None:
            raise SolverError(f"vkr_cd corrective step: backend {self.backend} returned status "
                              f"'{problem.status}'; try backend='HIGHS' or rescale the kernels.")
        values = ap.value - am.value
        keep = values != 0
        self.coef = dict(zip(self.work[keep].tolist(), values[keep].tolist()))
        self.z = A[:, keep] @ values[keep]
        self.u = np.clip(np.asarray(margin.dual_value, dtype=float), 0.0, 1.0 / self.m)


def _positive_int(value, name: str) -> int:
    if not (float(value) == int(value) and int(value) >= 1):
        raise InvalidInputError(f"{name} must be a positive integer, got {value!r}.")
    return int(value)
