"""The inner SVM for kernels given as factors: a linear SVM with an unregularized bias.

With :math:`K_m = G_m G_m^\\top`, :math:`K_\\mu = ZZ^\\top` for the scaled,
concatenated features :math:`Z = [\\sqrt{\\mu_1}G_1, \\dots, \\sqrt{\\mu_M}G_M]`
(n, R), and the inner problem is the linear SVM dual

.. math::

    \\max_{\\alpha}\\ 1^\\top\\alpha - \\tfrac12\\|Z^\\top(y\\circ\\alpha)\\|^2
    \\quad\\text{s.t.}\\quad 0\\le\\alpha\\le C,\\ y^\\top\\alpha = 0 .

Why not liblinear alone: liblinear (scikit-learn's ``LinearSVC``) treats the
bias as one more feature, so it *regularizes* it (:math:`\\tfrac12 b^2/B^2`,
``intercept_scaling`` = B) and its answer misses :math:`y^\\top\\alpha = 0`;
raising B to approach the unregularized problem slows it by orders of
magnitude (measured at n = 10⁴, R = 1000: B = 1 in 1 s, B = 10 not converged
after 8 s, B = 100 after 200 s), and scikit-learn does not return its dual
coefficients. mklopt therefore uses liblinear (B = 1, loose tolerance) only to
find which points sit on the margin, then solves the exact problem above
restricted to them (an **active set**): the points with :math:`y_if_i<1` are
fixed at :math:`\\alpha_i = C`, those with :math:`y_if_i>1` at 0, and the
margin points' :math:`\\alpha_S` solve the small QP

.. math::

    \\max_{0\\le\\alpha_S\\le C}\\ 1^\\top\\alpha_S - \\tfrac12\\|A_S^\\top\\alpha_S + v_F\\|^2
    \\quad\\text{s.t.}\\quad y_S^\\top\\alpha_S = -y_F^\\top\\alpha_F,

:math:`A_S = \\operatorname{diag}(y_S)Z_S`, :math:`v_F = Z_F^\\top(y_F\\circ\\alpha_F)`,
on an interior-point backend. Points that violate their fixed side at the new
solution join S and the QP is solved again, until the SVM's own duality gap
(computed exactly, with the best bias) is below the accuracy the outer
certificate needs. Across outer iterations the previous :math:`\\alpha` seeds the
partition (a warm start), and liblinear runs again only when too many points
change side. Memory: one reused (n, R) buffer for Z, plus liblinear's copy
when it runs.
"""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np

from .. import backends as bk
from ..exceptions import SolverError
from ..formulations import MKLData
from ..losses import best_bias

__all__ = ["LinearInner"]

#: Half-width of the margin band whose points start free: |y_i f_i - 1| <= MARGIN_BAND.
MARGIN_BAND = 1e-2
#: Rounds of the active-set loop before liblinear re-partitions (or the solve fails).
MAX_ROUNDS = 30
#: Rounds a warm start may take before liblinear re-partitions (measured: when the
#: weights move, a warm partition that has not settled in two QPs rarely beats liblinear).
WARM_ROUNDS = 2


class LinearInner:
    """Hinge-loss SVM on :math:`K_\\mu = ZZ^\\top` for a :class:`~mklopt.kernels.factorset.FactorKernelSet`.

    Parameters
    ----------
    data : MKLData
        Factor kernels and the hinge loss.
    tol : float
        Target relative gap of the outer loop; each inner SVM is solved to a
        relative gap of ``0.01 * tol``.
    backend : str, optional
        QP backend of the active-set QP (default: the first installed one).

    Attributes
    ----------
    liblinear_calls, qp_solves : int
        Work done so far (for benchmarks).
    """

    name = "liblinear"

    def __init__(self, data: MKLData, tol: float, backend=None) -> None:
        self.data, self.tol = data, tol
        self.backend, self.solver = bk.select_backend(backend, "QP", "svm")
        self.options = bk.solver_options(self.backend, min(tol * 1e-3, 1e-9))
        self.Z = np.empty_like(data.kernels.G)
        self.cap = max(2000, 4 * (data.kernels.G.shape[1] + 1))
        self.alpha: np.ndarray | None = None
        self.liblinear_calls = self.qp_solves = 0

    def __call__(self, weights: np.ndarray) -> np.ndarray:
        Z = self.data.kernels.combined_factor(weights, out=self.Z)
        alpha = None
        if self.alpha is not None:  # warm start: the previous partition, if it settles quickly
            alpha = self._active_set(Z, self._margins(Z, self.alpha), self.alpha, WARM_ROUNDS)
        if alpha is None:
            alpha = self._active_set(Z, self._liblinear_margins(Z), None, MAX_ROUNDS)
        if alpha is None:
            raise SolverError(f"the active-set linear SVM did not settle within {self.cap} free "
                              "points; use inner='cvxpy' (small n) or check the kernel scaling.")
        self.alpha = alpha
        return alpha

    def _margins(self, Z: np.ndarray, alpha: np.ndarray) -> np.ndarray:
        y = self.data.y
        f = Z @ (Z.T @ (y * alpha))
        bias, _ = best_bias(f, y)
        return y * (f + bias)

    def _liblinear_margins(self, Z: np.ndarray) -> np.ndarray:
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.svm import LinearSVC

        self.liblinear_calls += 1
        svc = LinearSVC(loss="hinge", C=self.data.C, tol=1e-3, max_iter=10_000, dual=True,
                        random_state=0)  # liblinear shuffles: fixed, so fits are reproducible
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # only the partition is used
            svc.fit(Z, self.data.y)
        return self.data.y * (Z @ svc.coef_[0] + svc.intercept_[0])

    def _active_set(self, Z: np.ndarray, margins: np.ndarray, previous: np.ndarray | None,
                    rounds: int) -> np.ndarray | None:
        """Exact QP on the free points; fixed points on the wrong side are moved, until the SVM gap is small.

        A fixed point on the wrong side of the margin switches bound (0 <-> C);
        one within the margin band, or switching a second time, becomes free.
        """
        C, y = self.data.C, self.data.y
        alpha = np.where(margins < 1.0, C, 0.0)
        free = np.abs(margins - 1.0) <= MARGIN_BAND
        if previous is not None:
            free |= (previous > 0) & (previous < C)
        switched = np.zeros(free.shape, dtype=bool)
        m = margins
        for _ in range(rounds):
            free = self._reachable(free, alpha, m)
            if free.sum() > self.cap:
                return None
            alpha[free] = self._free_qp(Z, alpha, free)
            v = Z.T @ (y * alpha)
            f = Z @ v
            bias, hinge = best_bias(f, y)
            primal, dual = 0.5 * v @ v + C * hinge, alpha.sum() - 0.5 * v @ v
            if primal - dual <= 0.01 * self.tol * max(abs(primal), abs(dual), 1e-300):
                return alpha
            m = y * (f + bias)
            wrong = ~free & (((alpha == 0) & (m < 1)) | ((alpha == C) & (m > 1)))
            if not wrong.any():
                return alpha
            to_free = wrong & ((np.abs(m - 1.0) <= MARGIN_BAND) | switched)
            to_switch = wrong & ~to_free
            alpha[to_switch] = C - alpha[to_switch]
            switched |= to_switch
            free |= to_free
        return None

    def _reachable(self, free: np.ndarray, alpha: np.ndarray, margins: np.ndarray) -> np.ndarray:
        """Free more points until :math:`y_S^\\top x = -\\sum_{i\\notin S} y_i\\alpha_i` has a solution in the box.

        The free points reach :math:`y_S^\\top x \\in [-C\\,|S_-|,\\ C\\,|S_+|]`. When the target
        lies above, a fixed positive point at 0 or a negative one at C is freed (either
        closes the shortfall by C), nearest the margin first; below, the mirror image.
        """
        C, y = self.data.C, self.data.y
        free = free.copy()
        while True:
            target = -float(np.dot(y[~free], alpha[~free]))
            high, low = C * np.sum(free & (y > 0)), -C * np.sum(free & (y < 0))
            slack = 1e-12 * C * max(1, free.size)
            if low - slack <= target <= high + slack:
                return free
            side = 1.0 if target > high else -1.0
            helps = ~free & (((y == side) & (alpha == 0)) | ((y == -side) & (alpha == C)))
            candidates = np.flatnonzero(helps)
            if candidates.size == 0:  # no fixed point can help: the QP reports it
                return free
            free[candidates[np.argmin(np.abs(margins[candidates] - 1.0))]] = True

    def _free_qp(self, Z: np.ndarray, alpha: np.ndarray, free: np.ndarray) -> np.ndarray:
        C, y = self.data.C, self.data.y
        S = np.flatnonzero(free)
        if S.size == 0:
            return alpha[free]
        coef = y * alpha
        coef[S] = 0.0
        v_fixed = Z.T @ coef  # no gather of the fixed rows (most of Z)
        A = Z[S] * y[S, None]
        Q = A @ A.T  # the |S| x |S| Hessian: a small dense QP instead of an R-dimensional cone
        x = cp.Variable(S.size)
        objective = 0.5 * cp.quad_form(x, cp.psd_wrap(Q)) + x @ (A @ v_fixed - 1.0)
        problem = cp.Problem(cp.Minimize(objective),
                             [x >= 0, x <= C, y[S] @ x == -float(np.sum(coef))])
        self.qp_solves += 1
        try:
            problem.solve(solver=self.solver, **self.options)
        except Exception as exc:  # cvxpy.error.SolverError and backend crashes
            raise SolverError(f"active-set QP of the linear SVM on {self.backend} failed: {exc}") from None
        if x.value is None:
            raise SolverError(f"active-set QP of the linear SVM on {self.backend} ended with "
                              f"status {problem.status!r}.")
        return np.clip(x.value, 0.0, C)
