"""Kernel-weight sets :math:`\\Theta` (the MKL regularizers).

A regularizer is one small class (the skglm model): it says which convex set
the weights :math:`\\mu \\in \\mathbb{R}^M_{\\ge 0}` live in, through CVXPY
constraints. Everything else has a generic implementation that works for any
set: the support function

.. math:: \\sigma_\\Theta(s) = \\max_{\\mu \\in \\Theta} s^\\top \\mu

(which gives the exact MKL dual value), the wrapper's weight step
:math:`\\arg\\min_{\\mu\\in\\Theta} \\sum_m \\|w_m\\|^2/\\mu_m`, and the scaling of a
slightly infeasible candidate back into :math:`\\Theta`. Subclasses override
them with closed forms where the math allows.

Throughout, **p is the weight norm**: ``LpBall(p)`` is
:math:`\\{\\mu \\ge 0 : \\|\\mu\\|_p \\le 1\\}`, equivalent to the block norm
:math:`\\|w\\|_{2,b}` with :math:`b = 2p/(p+1)` (see :func:`block_from_weight_norm`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import cvxpy as cp
import numpy as np

from .exceptions import InvalidInputError, SolverError

__all__ = [
    "Regularizer", "LpBall", "L1", "WeightedL1", "ElasticNet", "NonIsotropic",
    "ConstraintSet", "Fixed", "BlockNorm", "as_regularizer", "conjugate_exponent",
    "block_from_weight_norm", "weight_from_block_norm",
]


def conjugate_exponent(p: float) -> float:
    """:math:`p^* = p/(p-1)` with :math:`1^* = \\infty` and :math:`\\infty^* = 1`."""
    if p == 1:
        return math.inf
    if math.isinf(p):
        return 1.0
    return p / (p - 1.0)


def block_from_weight_norm(p: float) -> float:
    """Block norm :math:`b = 2p/(p+1)` equivalent to the weight norm ``p``.

    ``p`` is mklopt's weight norm (:math:`\\|\\mu\\|_p\\le 1`); the result is
    the Kloft-thesis block norm (:math:`\\|w\\|_{2,b}`), in :math:`[1, 2]`.
    """
    p = check_p(p)
    return 2.0 if math.isinf(p) else 2.0 * p / (p + 1.0)


def weight_from_block_norm(b: float) -> float:
    """Weight norm :math:`p = b/(2-b)` equivalent to the block norm ``b``.

    ``b`` is the thesis' block norm. Only :math:`1 \\le b \\le 2` has a
    weight-norm form (``b = 2`` gives ``p = inf``); for ``b > 2`` use the
    ``lp_block_primal`` formulation directly.
    """
    if not (b >= 1):
        raise InvalidInputError(f"block norm b must be >= 1, got {b}.")
    if b > 2:
        raise InvalidInputError(
            f"block norm b = {b} > 2 has no weight-norm form (p would be negative); "
            "solve it with formulation='lp_block_primal', b=...")
    return math.inf if b == 2 else b / (2.0 - b)


def check_p(p: float) -> float:
    """Validate a weight norm ``p`` in :math:`[1, \\infty]`."""
    try:
        p = float(p)
    except (TypeError, ValueError):
        raise InvalidInputError(f"p must be a number in [1, inf], got {p!r}.") from None
    if not p >= 1:
        raise InvalidInputError(
            f"p must be >= 1 (p is the weight norm ||mu||_p <= 1), got {p}. "
            "For a block norm b in [1, 2] use p = weight_from_block_norm(b).")
    return p


class Regularizer:
    """A convex, compact set :math:`\\Theta \\subset \\mathbb{R}^M_{\\ge 0}` of kernel weights.

    Subclasses implement :meth:`set_constraints`. The set must contain 0 and be
    bounded; it need not be closed-form: every method below has a generic
    CVXPY implementation.
    """

    name = "regularizer"
    #: True when ``support_expr`` gives a DCP expression (the dual formulation).
    has_support_expr = False

    # -- the one method a user must write --------------------------------
    def set_constraints(self, mu: cp.Variable) -> list[cp.Constraint]:
        """Constraints defining Θ on ``mu`` (``mu >= 0`` is added for you)."""
        raise NotImplementedError

    def constraints(self, mu: cp.Variable) -> list[cp.Constraint]:
        """All constraints of :math:`\\mu\\in\\Theta`, including :math:`\\mu\\ge0`."""
        return [mu >= 0, *self.set_constraints(mu)]

    # -- generic machinery ------------------------------------------------
    def support(self, s: np.ndarray) -> float:
        """:math:`\\sigma_\\Theta(s)=\\max_{\\mu\\in\\Theta} s^\\top\\mu` (small CVXPY solve)."""
        s = np.asarray(s, dtype=float)
        mu = cp.Variable(s.size)
        prob = cp.Problem(cp.Maximize(s @ mu), self.constraints(mu))
        _solve_aux(prob, self)
        # Rounding the solver's point can only lose: keep the larger (safer) estimate.
        return max(float(prob.value), float(s @ np.clip(mu.value, 0, None)))

    def support_expr(self, u: cp.Expression) -> cp.Expression:
        """DCP expression of :math:`\\sigma_\\Theta(u)` for a nonnegative convex ``u``.

        Only sets with a closed form provide it (it is what makes the
        ``lp_dual`` formulation possible); others raise.
        """
        raise NotImplementedError(
            f"{self.name}: no closed-form support function, so the dual formulation "
            "is unavailable; use formulation='lp_primal' (the certificate still gives "
            "the exact dual value).")

    def argmin_weights(self, wnorm2: np.ndarray) -> np.ndarray:
        """Wrapper step :math:`\\arg\\min_{\\mu\\in\\Theta}\\sum_m \\|w_m\\|^2/\\mu_m`.

        ``wnorm2`` holds :math:`\\|w_m\\|^2 \\ge 0`; kernels with
        :math:`\\|w_m\\| = 0` get weight 0.
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
        _solve_aux(prob, self)
        weights = np.zeros(a.size)
        weights[active] = np.clip(mu.value[active], 0, None)
        return self.into_set(weights)

    def violation(self, mu: np.ndarray) -> float:
        """Largest violation of the constraints of Θ at ``mu`` (0 if inside)."""
        mu = np.asarray(mu, dtype=float)
        cons, _, var = self._cached("violation", mu.size, self._violation_problem)
        var.value = mu
        return float(max((np.max(np.atleast_1d(c.violation())) for c in cons), default=0.0))

    def _violation_problem(self, M: int):
        var = cp.Variable(M)
        return self.constraints(var), None, var

    def into_set(self, mu: np.ndarray, tol: float = 1e-12) -> np.ndarray:
        """Scale a nonnegative ``mu`` into Θ: the largest :math:`c\\le1` with :math:`c\\mu\\in\\Theta`.

        Negative entries (solver noise) are clipped first. Works for any
        convex Θ containing 0 (bisection on the constraint violation).
        """
        mu = np.clip(np.asarray(mu, dtype=float), 0, None)
        if self.violation(mu) <= tol:
            return mu
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if self.violation(mid * mu) <= tol else (lo, mid)
        return lo * mu

    # -- certificate pieces (override for penalties that are not sets) ----
    def primal_penalty(self, mu: np.ndarray, s: np.ndarray) -> float:
        """:math:`\\tfrac12\\sum_m \\mu_m s_m(\\alpha)` for :math:`\\mu\\in\\Theta`."""
        return 0.5 * float(np.dot(mu, s))

    def dual_penalty(self, s: np.ndarray) -> float:
        """:math:`\\tfrac12\\sigma_\\Theta(s)`."""
        return 0.5 * self.support(s)

    def _cached(self, key: str, M: int, build: Callable):
        cache = self.__dict__.setdefault("_problem_cache", {})
        if (key, M) not in cache:
            cache[(key, M)] = build(M)
        return cache[(key, M)]

    def __getstate__(self):  # CVXPY objects are rebuilt after unpickling/cloning
        state = dict(self.__dict__)
        state.pop("_problem_cache", None)
        return state

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _solve_aux(prob: cp.Problem, reg: Regularizer) -> None:
    """Solve a small auxiliary problem (support function, weight step) robustly.

    Tight interior-point tolerances first; Clarabel's defaults if that stalls.
    """
    status = "not solved"
    attempts = [("CLARABEL", dict(tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)),
                ("CLARABEL", {}), ("ECOS", {}), ("SCS", dict(eps_abs=1e-9, eps_rel=1e-9))]
    for solver, options in attempts:
        if solver not in cp.installed_solvers():
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the status is checked below
                prob.solve(solver=solver, **options)
        except cp.error.SolverError:
            continue
        status = prob.status
        if status in ("unbounded", "unbounded_inaccurate"):
            raise InvalidInputError(
                f"the weight set of {reg.name} is unbounded; a regularizer must bound mu "
                "(e.g. add cp.norm(mu, 1) <= 1).")
        if status in ("optimal", "optimal_inaccurate"):
            return
    raise SolverError(f"auxiliary problem of {reg.name} ended with status {status!r}; "
                      "check that the weight set is convex, bounded and contains 0.")


class LpBall(Regularizer):
    """:math:`\\Theta = \\{\\mu\\ge0 : \\|\\mu\\|_p \\le 1\\}`, ``p`` the weight norm in :math:`[1,\\infty]`.

    Closed forms: :math:`\\sigma_\\Theta(s) = \\|s\\|_{p^*}` and the wrapper step
    :math:`\\mu_m = \\|w_m\\|^{2/(p+1)} / (\\sum_k \\|w_k\\|^{2p/(p+1)})^{1/p}`.
    """

    has_support_expr = True

    def __init__(self, p: float = 1.0) -> None:
        self.p = check_p(p)
        self.name = f"lp(p={self.p:g})"

    def __repr__(self) -> str:
        return f"LpBall(p={self.p:g})"

    def set_constraints(self, mu):
        if math.isinf(self.p):
            return [mu <= 1]
        if self.p == 1:
            return [cp.sum(mu) <= 1]
        return [cp.pnorm(mu, self.p) <= 1]

    def norm(self, mu: np.ndarray) -> float:
        return float(np.linalg.norm(np.clip(mu, 0, None), ord=self.p))

    def support(self, s):
        return float(np.linalg.norm(np.clip(np.asarray(s, float), 0, None),
                                    ord=conjugate_exponent(self.p)))

    def support_expr(self, u):
        q = conjugate_exponent(self.p)
        if math.isinf(q):
            return cp.max(u)
        if q == 1:
            return cp.sum(u)
        return cp.pnorm(u, q)

    def argmin_weights(self, wnorm2):
        a = np.clip(np.asarray(wnorm2, dtype=float), 0, None)
        if math.isinf(self.p):
            return np.ones(a.size)
        if not np.any(a > 0):
            return np.full(a.size, a.size ** (-1.0 / self.p))
        w = np.sqrt(a / a.max())  # scale-free: avoids under/overflow of powers
        num = w ** (2.0 / (self.p + 1.0))
        return num / np.sum(w ** (2.0 * self.p / (self.p + 1.0))) ** (1.0 / self.p)

    def violation(self, mu):
        mu = np.asarray(mu, dtype=float)
        return max(self.norm(mu) - 1.0, float(np.max(-mu, initial=0.0)), 0.0)

    def into_set(self, mu, tol=1e-12):
        mu = np.clip(np.asarray(mu, dtype=float), 0, None)
        return mu / max(1.0, self.norm(mu))


class L1(LpBall):
    """The simplex :math:`\\{\\mu\\ge0 : \\sum_m\\mu_m\\le1\\}` (ℓ1-MKL)."""

    def __init__(self) -> None:
        super().__init__(1.0)
        self.name = "l1"

    def __repr__(self) -> str:
        return "L1()"


class WeightedL1(Regularizer):
    """:math:`\\Theta_v = \\{\\mu\\ge0 : \\langle v,\\mu\\rangle\\le1\\}` with :math:`v>0`.

    ℓ1-MKL on the kernels :math:`K_m/v_m`; the DC subproblem's set.
    :math:`\\sigma(s) = \\max_m s_m/v_m`; the wrapper step is
    :math:`\\mu_m \\propto \\|w_m\\|/\\sqrt{v_m}` normalized to :math:`\\langle v,\\mu\\rangle=1`.
    """

    has_support_expr = True

    def __init__(self, v: np.ndarray) -> None:
        v = np.asarray(v, dtype=float).ravel()
        if v.size == 0 or not np.all(np.isfinite(v)) or np.any(v <= 0):
            raise InvalidInputError(f"WeightedL1 needs finite, strictly positive weights v, got {v}.")
        self.v = v
        self.name = "weighted_l1"

    def __repr__(self) -> str:
        return f"WeightedL1(v={np.array2string(self.v, precision=4)})"

    def _check(self, M: int) -> None:
        if M != self.v.size:
            raise InvalidInputError(f"WeightedL1 has {self.v.size} weights v but there are {M} kernels.")

    def set_constraints(self, mu):
        self._check(mu.shape[0])
        return [self.v @ mu <= 1]

    def support(self, s):
        s = np.asarray(s, dtype=float)
        self._check(s.size)
        return max(float(np.max(s / self.v)), 0.0)

    def support_expr(self, u):
        return cp.max(cp.multiply(1.0 / self.v, u))

    def argmin_weights(self, wnorm2):
        a = np.clip(np.asarray(wnorm2, dtype=float), 0, None)
        self._check(a.size)
        if not np.any(a > 0):
            return 1.0 / (self.v * a.size)
        w = np.sqrt(a / a.max())
        mu = w / np.sqrt(self.v)
        return mu / float(self.v @ mu)

    def violation(self, mu):
        mu = np.asarray(mu, dtype=float)
        return max(float(self.v @ mu) - 1.0, float(np.max(-mu, initial=0.0)), 0.0)

    def into_set(self, mu, tol=1e-12):
        mu = np.clip(np.asarray(mu, dtype=float), 0, None)
        return mu / max(1.0, float(self.v @ mu))


class ConstraintSet(Regularizer):
    """A user-defined weight set given by CVXPY constraints.

    Parameters
    ----------
    constraints : callable
        ``constraints(mu) -> list[cp.Constraint]`` for a ``cp.Variable(M)``;
        ``mu >= 0`` is added automatically. The set must be bounded and
        contain 0.
    name : str

    Examples
    --------
    >>> enet = ConstraintSet(lambda mu: [cp.norm1(mu) + cp.sum_squares(mu) <= 1],
    ...                      name="enet")
    """

    def __init__(self, constraints: Callable[[cp.Variable], list], name: str = "user") -> None:
        if not callable(constraints):
            raise InvalidInputError("ConstraintSet needs a callable constraints(mu) -> list of CVXPY constraints.")
        self._fn = constraints
        self.name = name

    def __repr__(self) -> str:
        return f"ConstraintSet(name={self.name!r})"

    def set_constraints(self, mu):
        cons = self._fn(mu)
        if isinstance(cons, cp.Constraint):
            cons = [cons]
        cons = list(cons)
        if not all(isinstance(c, cp.Constraint) for c in cons):
            raise InvalidInputError(f"{self.name}: constraints(mu) must return CVXPY constraints.")
        if not all(c.is_dcp() for c in cons):
            raise InvalidInputError(f"{self.name}: the constraints are not DCP, so the set is not provably convex.")
        return cons


class ElasticNet(ConstraintSet):
    """:math:`\\{\\mu\\ge0 : a\\|\\mu\\|_1 + b\\|\\mu\\|_2^2 \\le 1\\}` (generic machinery, no closed form)."""

    def __init__(self, a: float = 1.0, b: float = 1.0) -> None:
        if not (a >= 0 and b >= 0 and a + b > 0):
            raise InvalidInputError(f"ElasticNet needs a, b >= 0 with a + b > 0, got a={a}, b={b}.")
        self.a, self.b = float(a), float(b)
        super().__init__(lambda mu: [self.a * cp.sum(mu) + self.b * cp.sum_squares(mu) <= 1],
                         name="elastic_net")

    def __repr__(self) -> str:
        return f"ElasticNet(a={self.a:g}, b={self.b:g})"


class NonIsotropic(ConstraintSet):
    """:math:`\\{\\mu\\ge0 : \\mu^\\top \\Sigma^{-1}\\mu \\le 1\\}` for a positive definite Σ (thesis §2)."""

    def __init__(self, sigma: np.ndarray) -> None:
        sigma = np.asarray(sigma, dtype=float)
        try:
            inv_chol = np.linalg.cholesky(np.linalg.inv(sigma))
        except np.linalg.LinAlgError:
            raise InvalidInputError("NonIsotropic needs a symmetric positive definite Sigma.") from None
        self.sigma = sigma
        super().__init__(lambda mu: [cp.sum_squares(inv_chol.T @ mu) <= 1], name="non_isotropic")


class Fixed(Regularizer):
    """The single point :math:`\\Theta=\\{\\mu^0\\}`: an SVM with a fixed kernel combination."""

    has_support_expr = True

    def __init__(self, weights: np.ndarray) -> None:
        w = np.asarray(weights, dtype=float).ravel()
        if w.size == 0 or not np.all(np.isfinite(w)) or np.any(w < 0):
            raise InvalidInputError(f"fixed kernel weights must be finite and >= 0, got {w}.")
        self.weights = w
        self.name = "fixed"

    def __repr__(self) -> str:
        return f"Fixed(weights={np.array2string(self.weights, precision=4)})"

    def set_constraints(self, mu):
        return [mu == self.weights]

    def support(self, s):
        return float(self.weights @ np.asarray(s, dtype=float))

    def support_expr(self, u):
        return self.weights @ u

    def argmin_weights(self, wnorm2):
        return self.weights.copy()

    def violation(self, mu):
        return float(np.max(np.abs(np.asarray(mu, float) - self.weights)))

    def into_set(self, mu, tol=1e-12):
        return self.weights.copy()


class BlockNorm(Regularizer):
    """Block-norm penalty :math:`\\tfrac12\\|w\\|_{2,b}^2` (thesis convention), any :math:`b\\ge1`.

    Not a weight set: it supplies the certificate of ``lp_block_primal``.
    With effective weights :math:`\\mu` (so :math:`w_m=\\mu_m L_m^\\top(y\\circ\\alpha)`),

    .. math:: P_{\\text{pen}} = \\tfrac12\\Big(\\sum_m (\\mu_m\\sqrt{s_m})^b\\Big)^{2/b},\\qquad
              D_{\\text{pen}} = \\tfrac12\\Big(\\sum_m s_m^{b^*/2}\\Big)^{2/b^*}.

    The dual is a valid (Lagrange) lower bound for every ``b``; for ``b <= 2``
    it equals the weight-norm dual with :math:`p = b/(2-b)`.
    """

    def __init__(self, b: float) -> None:
        if not b >= 1:
            raise InvalidInputError(f"block norm b must be >= 1, got {b}.")
        self.b = float(b)
        self.name = f"block(b={self.b:g})"

    def set_constraints(self, mu):
        return []

    def primal_penalty(self, mu, s):
        norms = np.asarray(mu) * np.sqrt(np.clip(s, 0, None))
        return 0.5 * float(np.linalg.norm(norms, ord=self.b)) ** 2

    def dual_penalty(self, s):
        q = conjugate_exponent(self.b)
        return 0.5 * float(np.linalg.norm(np.sqrt(np.clip(s, 0, None)), ord=q)) ** 2

    def violation(self, mu):
        return float(np.max(-np.asarray(mu, float), initial=0.0))

    def into_set(self, mu, tol=1e-12):
        return np.clip(np.asarray(mu, dtype=float), 0, None)


def as_regularizer(regularizer: Regularizer | Callable | None, p: float = 1.0) -> Regularizer:
    """The weight set for ``(regularizer, p)``: ``LpBall(p)`` when none is given.

    A plain callable ``constraints(mu)`` is wrapped in :class:`ConstraintSet`.
    """
    if regularizer is None:
        return L1() if check_p(p) == 1 else LpBall(p)
    if isinstance(regularizer, Regularizer):
        return regularizer
    if callable(regularizer):
        return ConstraintSet(regularizer)
    raise InvalidInputError(
        f"regularizer must be a mklopt Regularizer or a callable constraints(mu), got {regularizer!r}.")
