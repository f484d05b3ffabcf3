"""Cutting plane / SILP (Sonnenburg et al. 2006; tutorial Part II; thesis App. D).

Oracle: the SVM at the master's weights adds the cut
:math:`\\eta \\ge D(\\alpha^r) - \\tfrac12\\sum_m\\mu_m s_m(\\alpha^r)` (:math:`D` the loss's
dual gain, :math:`1^\\top\\alpha` for the hinge). Master:

.. math:: \\min_{\\mu\\in\\Theta,\\,\\eta}\\ \\eta \\quad\\text{s.t.}\\quad
          \\eta \\ge D(\\alpha^r) - \\tfrac12 \\mu^\\top s(\\alpha^r),\\ r=1..t,

an LP for a polyhedral Θ (the simplex, the box, the DC subproblem's weighted
simplex: solved incrementally by HiGHS through highspy, one row per cut,
:mod:`mklopt.drivers.lp_master`) and the exact convex master (Clarabel) for any
other Θ. The master value is a lower bound on OPT (each cut is the SVM dual
at a feasible :math:`\\alpha^r`); the certified primal value of the SVM
iterates is an upper bound. The CVXPY master is its readable statement,
compiled once with ``cp.Parameter`` cut storage of fixed capacity (with the
cuts as constants, compiled at each solve, where capacity x M exceeds
:data:`PARAMETRIC_ENTRIES`); beyond the capacity, inactive cuts are dropped (in both).

For the binary hinge loss on a dense stack and a polyhedral Θ the next weights are the
second-order step's (:mod:`~mklopt.drivers._newton_step`, HessianMKL: the minimizer over Θ
of the quadratic model of the SVM's optimum in μ, made at the SVM solution the oracle just
returned) while it keeps improving the certified gap, the master's otherwise
(``second_order=False``: the master's always); the cuts and the master's lower bound are
kept either way.

``master="taylor"`` (teaching option, Lp balls only) replaces
:math:`\\|\\mu\\|_p^p\\le1` by the thesis' sequence of second-order Taylor
expansions with projection onto the sphere; its master value is then not a
bound, so only the certificate's dual value is used as the lower bound.
"""

from __future__ import annotations

import math
import time
import warnings

import cvxpy as cp
import numpy as np

from .._options import Choice, Flag, Integer
from .. import backends as bk
from ..exceptions import InvalidInputError, SolverError
from ..formulations import MKLData
from ..regularizers import L1, LpBall
from .base import Driver, Step
from .inner import make_inner
from ._newton_step import SecondOrder
from .lp_master import LPMaster, polyhedral_set


#: Largest capacity x M of the master compiled once with parameters.
PARAMETRIC_ENTRIES = 50_000


class CuttingPlane(Driver):

    method = ("SILP (Sonnenburg et al., JMLR 2006): an SVM oracle adds a cut, an exact master over Θ "
              "(an LP for the simplex) picks the next weights")
    notes = 'the choice for p = 1; `master="taylor"` teaches the thesis\' second-order variant'
    name = "cutting_plane"
    options = {"max_cuts": Integer(1), "master": Choice(("exact", "taylor")), "second_order": Flag()}

    def __init__(self, data: MKLData, *, inner="smo", tol: float = 1e-4, backend=None,
                 max_cuts: int = 200, master: str = "exact", master_backend=None,
                 init_weights=None, second_order: bool = True) -> None:
        super().__init__(data)
        self.tol = tol
        if master not in ("exact", "taylor"):
            raise InvalidInputError(f"master must be 'exact' or 'taylor', got {master!r}.")
        reg = data.regularizer
        if master == "taylor" and not (isinstance(reg, LpBall) and 1 < reg.p < math.inf):
            raise InvalidInputError("master='taylor' needs an Lp ball with 1 < p < inf.")
        self.inner = make_inner(inner, data, tol, backend)
        self.master_kind = master
        self.cap = int(max_cuts)
        self.init_weights = init_weights
        self.offsets = np.zeros((0,))          # D(alpha^r)
        self.terms = np.zeros((0, data.M))     # s(alpha^r)
        self.alphas: list[np.ndarray] = []     # alpha^r (re-used by warm starts)
        self.ages = np.zeros((0,), dtype=int)
        self._build_master(master_backend)
        self.lp = self._fast_master() if master == "exact" and master_backend is None else None
        self.second = SecondOrder.of(data) if self.lp is not None and second_order else None
        self.master_seconds: list[float] = []

    # ------------------------------------------------------------- master
    def _fast_master(self):
        """HiGHS for a polyhedral Θ, the set's own master when it has one, else None (CVXPY)."""
        theta = polyhedral_set(self.data.regularizer, self.data.M)
        if theta is not None:
            return LPMaster(theta)
        own = getattr(self.data.regularizer, "cut_master", None)
        return own() if own is not None else None

    def _build_master(self, master_backend) -> None:
        M, reg = self.data.M, self.data.regularizer
        self.mu, self.eta = cp.Variable(M), cp.Variable()
        # Parameters compile once, but CVXPY's parameter tensor grows with capacity x M
        # (200 cuts x 2,000 kernels: 21 s to compile); past that the cuts are constants.
        self.parametric = self.cap * M <= PARAMETRIC_ENTRIES
        self.A = cp.Parameter(self.cap) if self.parametric else None
        self.S = cp.Parameter((self.cap, M)) if self.parametric else None
        if self.master_kind == "taylor":
            self.hess, self.lin = cp.Parameter(M, nonneg=True), cp.Parameter(M)
            q = reg.p  # thesis App. D, eq. for the expansion at ||anchor||_q = 1
            set_cons = [self.mu >= 0, self.mu <= 1,
                        cp.sum(cp.multiply(self.hess, cp.square(self.mu))) + self.lin @ self.mu
                        <= q * (3 - q) / 2]
            cone = "SOCP"
        else:
            set_cons = reg.constraints(self.mu)
            cone = "LP" if isinstance(reg, L1) or (isinstance(reg, LpBall) and reg.p in (1, math.inf)) else "SOCP"
        self.set_cons = set_cons
        self.master = self._master_problem(self.A, self.S) if self.parametric else None
        self.master_backend, self.master_solver = bk.select_backend(master_backend, cone, "cutting-plane master")
        self.master_options = bk.solver_options(self.master_backend, 1e-10)

    def _add_cut(self, alpha: np.ndarray, gain: float, s: np.ndarray) -> None:
        self.alphas.append(alpha)
        self.offsets = np.append(self.offsets, gain)
        self.terms = np.vstack([self.terms, s])
        self.ages = np.append(self.ages, 0)
        if self.lp is not None:
            self.lp.add_cut(gain, s)
        if self.offsets.size > self.cap:
            self._drop_inactive()

    def _drop_inactive(self) -> None:
        """Drop the most inactive cut at the last master solution (oldest among ties)."""
        slack = self._last_eta - (self.offsets - 0.5 * self.terms @ self._last_mu)
        drop = int(np.argmax(slack + 1e-12 * self.ages))
        keep = np.delete(np.arange(self.offsets.size), drop)
        self.offsets, self.terms, self.ages = self.offsets[keep], self.terms[keep], self.ages[keep]
        del self.alphas[drop]
        if self.lp is not None:
            self.lp.drop_cut(drop)

    def _master_problem(self, offsets, terms) -> cp.Problem:
        cuts = self.eta >= offsets - 0.5 * (terms @ self.mu)
        return cp.Problem(cp.Minimize(self.eta), [cuts, *self.set_cons])

    def _solve_master(self) -> tuple[np.ndarray, float]:
        start = time.perf_counter()
        try:
            return self._solve_lp() if self.lp is not None else self._solve_cvxpy()
        finally:
            self.master_seconds.append(time.perf_counter() - start)

    def _solve_lp(self) -> tuple[np.ndarray, float]:
        mu, eta = self.lp.solve()
        mu = self.data.regularizer.into_set(mu)
        self._last_mu, self._last_eta = mu, eta
        return mu, eta

    def _solve_cvxpy(self) -> tuple[np.ndarray, float]:
        if self.parametric:
            t = self.offsets.size
            A = np.empty(self.cap)
            S = np.empty((self.cap, self.data.M))
            A[:t], S[:t] = self.offsets, self.terms
            A[t:], S[t:] = self.offsets[0], self.terms[0]  # padding duplicates cut 0 (harmless)
            self.A.value, self.S.value = A, S
        else:
            self.master = self._master_problem(self.offsets, self.terms)
        if self.master_kind == "taylor":
            return self._solve_taylor()
        self._run_master()
        mu = self.data.regularizer.into_set(self.mu.value)
        self._last_mu, self._last_eta = mu, float(self.eta.value)
        return mu, float(self.master.value)

    def _solve_taylor(self) -> tuple[np.ndarray, float]:
        p = self.data.regularizer.p
        anchor = getattr(self, "_last_mu", None)
        anchor = np.full(self.data.M, self.data.M ** (-1 / p)) if anchor is None else anchor
        for _ in range(50):
            a = np.maximum(anchor, 1e-8)
            self.hess.value = 0.5 * p * (p - 1) * a ** (p - 2)
            self.lin.value = -p * (p - 2) * a ** (p - 1)
            self._run_master()
            mu = np.clip(self.mu.value, 0, None)
            mu = mu / max(np.linalg.norm(mu, ord=p), 1e-300)  # projection onto the sphere (line 18)
            done = np.max(np.abs(mu - anchor)) <= 1e-9
            anchor = mu
            if done:
                break
        self._last_mu = anchor
        self._last_eta = float(np.max(self.offsets - 0.5 * self.terms @ anchor))
        return anchor, -math.inf

    def _run_master(self) -> None:
        # Cold solves: HiGHS 1.14 warm-started from CVXPY's cached basis skips presolve and
        # can end "Unknown" at a 1e-7 primal residual (seen on a 39-cut master); cold, it is
        # optimal. The master is small (cuts x M), a cold solve costs about a millisecond.
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the status is checked below
                self.master.solve(solver=self.master_solver, warm_start=False, **self.master_options)
        except (cp.error.SolverError, ValueError) as exc:  # ValueError: CVXPY cannot unpack the answer
            raise SolverError(f"cutting-plane master on {self.master_backend} failed: {exc}") from None
        if self.master.status not in ("optimal", "optimal_inaccurate"):
            raise SolverError(f"cutting-plane master on {self.master_backend} ended with status {self.master.status!r}.")

    def warm_start(self, previous: Driver, result) -> None:
        """The previous optimum's weights, and every previous cut still valid here.

        A cut is valid when its :math:`\\alpha^r` lies in this problem's dual set
        (always, when C grew); its offset is :math:`D(\\alpha^r)` at this C and its
        :math:`s(\\alpha^r)` is unchanged (same kernels).
        """
        super().warm_start(previous, result)
        d = self.data
        kept = [(alpha, s) for alpha, s in zip(getattr(previous, "alphas", []), getattr(previous, "terms", []))
                if np.max(np.abs(d.loss.project(alpha, d.y, d.C) - alpha), initial=0.0)
                <= 1e-12 * max(1.0, d.C)][-self.cap:]  # the newest, at most the capacity
        self.alphas = [alpha for alpha, _ in kept]
        self.offsets = np.array([d.loss.gain(alpha, d.y, d.C) for alpha in self.alphas])
        self.terms = np.array([s for _, s in kept]).reshape(len(kept), d.M)
        self.ages = np.zeros(len(kept), dtype=int)
        if self.lp is not None:  # a fresh model holding exactly the kept cuts
            self.lp = self._fast_master()
            for offset, s in zip(self.offsets, self.terms):
                self.lp.add_cut(offset, s)

    # -------------------------------------------------------------- loop
    def step(self, weights: np.ndarray) -> Step:
        """SVM at ``weights`` (the oracle), its cut, then the master for the next weights.

        When the iterate's own certificate already meets the target gap the
        loop stops here, so the master is not solved (its value would only
        tighten a bound nobody reads).
        """
        alpha, cert = self.svm_step(weights)
        self.ages += 1
        self._add_cut(cert.alpha, cert.gain, cert.s)
        if cert.consistent() and cert.rel_gap <= self.tol:
            return Step(alpha, cert, weights, extra={"master": -math.inf, "cuts": int(self.offsets.size)})
        mu_next, master_value = self._solve_master()
        second = None if self.second is None else self.second(weights, cert)
        mu_next = mu_next if second is None else self.data.regularizer.into_set(second)
        return Step(alpha, cert, mu_next, lower=master_value,
                    extra={"master": master_value, "cuts": int(self.offsets.size),
                           "master_time": self.master_seconds[-1]})
