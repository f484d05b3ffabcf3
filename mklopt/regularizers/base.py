"""The weight-set base class :class:`Regularizer` and its generic CVXPY machinery.

A regularizer is one small class (the skglm model): it says which convex set
:math:`\\Theta \\subset \\mathbb{R}^M_{\\ge 0}` the kernel weights live in, through
CVXPY constraints. Everything else has a generic implementation that works for
any compact convex set, whether or not it contains 0: the support function

.. math:: \\sigma_\\Theta(s) = \\max_{\\mu \\in \\Theta} s^\\top \\mu

(computed as a guaranteed *upper* bound, so the dual value it gives is a
valid lower bound whatever the backend said), the wrapper's weight step
:math:`\\arg\\min_{\\mu\\in\\Theta} \\sum_m \\|w_m\\|^2/\\mu_m`, the violation of
:math:`\\Theta` by a candidate, and the Euclidean projection onto
:math:`\\Theta` (explicit repair). Subclasses override them with closed forms.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import cvxpy as cp
import numpy as np

from ..exceptions import InvalidInputError
from .auxiliary import reported_objective_gap, solve_auxiliary, support_margin

__all__ = ["Regularizer"]


class Regularizer:
    """A convex, compact set :math:`\\Theta \\subset \\mathbb{R}^M_{\\ge 0}` of kernel weights.

    Subclasses implement :meth:`set_constraints` (one constraint or a list);
    ``mu >= 0`` is added for you. The set must be non-empty and bounded; it
    need not contain 0 (then repairs project onto it instead of scaling).
    """

    name = "regularizer"
    #: True when ``support_expr`` gives a DCP expression (the dual formulation).
    has_support_expr = False

    # -- the one method a user must write --------------------------------
    def set_constraints(self, mu: cp.Variable) -> list[cp.Constraint]:
        """Constraints defining Θ on ``mu`` (``mu >= 0`` is added for you)."""
        raise NotImplementedError(f"{type(self).__name__} must implement set_constraints(mu).")

    def constraints(self, mu: cp.Variable) -> list[cp.Constraint]:
        """All constraints of :math:`\\mu\\in\\Theta`, including :math:`\\mu\\ge0`, checked DCP."""
        cons = self.set_constraints(mu)
        cons = [cons] if isinstance(cons, cp.Constraint) else list(cons or [])
        for c in cons:
            if not isinstance(c, cp.Constraint):
                raise InvalidInputError(
                    f"{self.name}: set_constraints(mu) must return CVXPY constraints, got {c!r}.")
            if not c.is_dcp():
                raise InvalidInputError(
                    f"{self.name}: constraint '{c}' is not DCP, so the weight set is not provably "
                    "convex; rewrite it with convex atoms (see CVXPY's DCP rules).")
        return [mu >= 0, *cons]

    # -- validation -------------------------------------------------------
    def check(self, M: int) -> None:
        """Raise :class:`InvalidInputError` unless Θ is DCP, non-empty and bounded in :math:`\\mathbb{R}^M`.

        One small solve, :math:`\\max_{\\mu\\in\\Theta} 1^\\top\\mu` (finite iff Θ is
        bounded, since :math:`\\mu\\ge0`), cached per ``M``.
        """
        checked = self.__dict__.setdefault("_checked", set())
        if M in checked:
            return
        mu = cp.Variable(M)
        prob = cp.Problem(cp.Maximize(cp.sum(mu)), self.constraints(mu))
        solve_auxiliary(prob, self)
        checked.add(M)

    def check_points(self, n: int) -> None:
        """Raise when the set is tied to kernels over another number of points (default: it is not)."""

    def nearby_point(self, mu: np.ndarray) -> np.ndarray:
        """A point of Θ near ``mu`` whose distance bounds the violation (default: the projection;
        a set whose projection is dear gives a cheaper point, never a nearer one)."""
        return self.project(mu)

    def distance_bounds(self, mu: np.ndarray) -> tuple[float, float]:
        """``(low, high)`` around the max-norm distance of ``mu`` to Θ (default: both the
        projection's)."""
        d = float(np.max(np.abs(np.asarray(mu, dtype=float) - self.project(mu))))
        return d, d

    def contains_zero(self, M: int) -> bool:
        """Whether :math:`0 \\in \\Theta` (then a candidate can be scaled into the set)."""
        return self.violation(np.zeros(M)) <= 1e-12

    # -- generic machinery ------------------------------------------------
    def support(self, s: np.ndarray) -> float:
        """Guaranteed upper bound on :math:`\\sigma_\\Theta(s)=\\max_{\\mu\\in\\Theta} s^\\top\\mu`.

        The backend's value is never taken at face value. The problem is solved
        for :math:`u = s/\\|s\\|_\\infty` (:math:`\\sigma` is positively homogeneous;
        well scaled, Clarabel is accurate to about 1e-11 even when it reports
        ``optimal_inaccurate``), and the larger of the reported value and
        :math:`u^\\top\\mu` at its (clipped) point is raised by the backend's own
        primal-dual objective difference where it reports one (ECOS, SCS) and
        at least by a relative margin: the backend's documented accuracy
        (:func:`mklopt.backends.accuracy`) for ``optimal``, 100 times it for
        ``optimal_inaccurate``. So the dual value
        :math:`1^\\top\\alpha - \\tfrac12\\sigma_\\Theta(s)` stays a lower bound.
        Sets with a closed form (or an exact Lagrangian bound) override this.
        """
        s = np.asarray(s, dtype=float)
        size = float(np.max(np.abs(s), initial=0.0))
        if size == 0.0:
            return 0.0
        u = s / size
        mu = cp.Variable(s.size)
        prob = cp.Problem(cp.Maximize(u @ mu), self.constraints(mu))
        status = solve_auxiliary(prob, self)
        value = max(float(u @ mu.value), float(u @ np.clip(mu.value, 0, None)))
        scale = float(np.abs(u).sum()) * max(1.0, float(np.max(np.abs(mu.value))))
        margin = support_margin(prob.solver_stats.solver_name, status)
        slack = max(reported_objective_gap(prob), margin * max(abs(value), 1e-3 * scale))
        return size * (value + slack)

    def support_expr(self, u: cp.Expression) -> cp.Expression:
        """DCP expression of :math:`\\sigma_\\Theta(u)` for a nonnegative convex ``u``.

        Only sets with a closed form provide it (it is what makes the
        ``lp_dual`` formulation possible); others raise.
        """
        raise NotImplementedError(
            f"{self.name}: no closed-form support function, so the dual formulation "
            "is unavailable; use formulation='lp_primal' (the certificate still gives "
            "the exact dual value).")

    def centre(self, M: int) -> np.ndarray:
        """The outer loops' first weights: the wrapper step at equal block norms,
        :math:`\\arg\\min_{\\mu\\in\\Theta}\\sum_m 1/\\mu_m` (inside Θ, every kernel used)."""
        return self.argmin_weights(np.ones(M))

    def argmin_weights(self, wnorm2: np.ndarray) -> np.ndarray:
        """Wrapper step :math:`\\arg\\min_{\\mu\\in\\Theta}\\sum_m \\|w_m\\|^2/\\mu_m`.

        ``wnorm2`` holds :math:`\\|w_m\\|^2 \\ge 0`; kernels with
        :math:`\\|w_m\\| = 0` get the smallest weight Θ allows.
        """
        a = np.clip(np.asarray(wnorm2, dtype=float), 0, None)
        if not np.any(a > 0):
            return self.into_set(np.ones(a.size))
        # Built afresh with numeric data (tiny problem): as quad_over_lin terms it
        # is far better conditioned on interior-point solvers than a_m * inv_pos(mu_m).
        mu = cp.Variable(a.size)
        root = np.sqrt(a / a.max())
        active = np.flatnonzero(root > 1e-7)
        objective = cp.sum(cp.hstack([cp.quad_over_lin(root[m], mu[m]) for m in active]))
        prob = cp.Problem(cp.Minimize(objective), self.constraints(mu))
        solve_auxiliary(prob, self)
        weights = np.clip(mu.value, 0, None)
        if self.contains_zero(a.size):  # inactive kernels carry no weight
            inactive = np.setdiff1d(np.arange(a.size), active)
            weights[inactive] = 0.0
        return self.into_set(weights)

    def violation(self, mu: np.ndarray) -> float:
        """Largest violation of the constraints of Θ at ``mu``, including negativity (0 if inside)."""
        mu = np.asarray(mu, dtype=float)
        cons, var = self._cached("violation", mu.size, self._violation_problem)
        var.value = mu
        return float(max((np.max(np.atleast_1d(c.violation())) for c in cons), default=0.0))

    def _violation_problem(self, M: int):
        var = cp.Variable(M)
        return self.constraints(var), var

    def project(self, mu: np.ndarray) -> np.ndarray:
        """Euclidean projection :math:`\\arg\\min_{\\nu\\in\\Theta}\\|\\nu-\\mu\\|_2` (a small CVXPY solve)."""
        mu = np.asarray(mu, dtype=float)
        if self.violation(mu) <= 0:
            return mu.copy()
        scale = max(1.0, float(np.max(np.abs(mu))))  # keeps the objective O(1)
        nu = cp.Variable(mu.size)
        prob = cp.Problem(cp.Minimize(cp.sum_squares((nu - mu) / scale)), self.constraints(nu))
        solve_auxiliary(prob, self)
        return self._feasible(np.clip(nu.value, 0, None))

    def _feasible(self, mu: np.ndarray) -> np.ndarray:
        """Remove the solver's residual violation of a point that is inside Θ up to noise."""
        if self.violation(mu) <= 1e-12 or not self.contains_zero(mu.size):
            return mu
        return self._scale_into(mu)

    def _scale_into(self, mu: np.ndarray, tol: float = 1e-12) -> np.ndarray:
        """The largest :math:`c\\le1` with :math:`c\\mu\\in\\Theta` (bisection; needs 0 in Θ)."""
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if self.violation(mid * mu) <= tol else (lo, mid)
        return lo * mu

    def into_set(self, mu: np.ndarray, tol: float = 1e-12) -> np.ndarray:
        """A point of Θ near a candidate that is at most slightly outside (solver noise).

        Negative entries are clipped; then, when 0 is in Θ, the candidate is
        scaled by the largest :math:`c \\le 1` that makes it feasible, otherwise
        it is projected onto Θ (:meth:`project`).
        """
        mu = np.clip(np.asarray(mu, dtype=float), 0, None)
        if self.violation(mu) <= tol:
            return mu
        if self.contains_zero(mu.size):
            return self._scale_into(mu, tol)
        return self.project(mu)

    # -- certificate pieces (override for penalties that are not sets) ----
    def primal_penalty(self, mu: np.ndarray, s: np.ndarray) -> float:
        """:math:`\\tfrac12\\sum_m \\mu_m s_m(\\alpha)` for :math:`\\mu\\in\\Theta`."""
        return 0.5 * float(np.dot(mu, s))

    def dual_penalty(self, s: np.ndarray) -> float:
        """:math:`\\tfrac12\\sigma_\\Theta(s)`."""
        return 0.5 * self.support(s)

    # -- persistence: mklopt.regularizers.spec_of(reg) (the registry imports the sets) --
    def _cached(self, key: str, M: int, build: Callable):
        # One CVXPY problem per thread: a shared Variable's value is mutable state.
        cache = self.__dict__.setdefault("_problem_cache", {})
        slot = (key, M, threading.get_ident())
        if slot not in cache:
            cache[slot] = build(M)
        return cache[slot]

    def __getstate__(self):  # CVXPY objects are rebuilt after unpickling/cloning
        state = dict(self.__dict__)
        state.pop("_problem_cache", None)
        state.pop("_checked", None)
        return state

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
