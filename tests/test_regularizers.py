"""Issue 2 acceptance: user-defined weight sets Θ and the generic machinery behind them.

* A user set written as CVXPY constraints (and :class:`mklopt.ElasticNet`)
  gets an exact primal (``lp_primal``) and a certified dual that match within
  1e-6 relative, on every installed capable backend.
* The generic support function, wrapper weight step and scaling into Θ agree
  with the closed forms of ``LpBall`` and ``WeightedL1`` (the same sets wrapped
  in :class:`mklopt.ConstraintSet`).
* The weight-norm / block-norm conversions: p is the **weight norm**
  (||mu||_p <= 1), b = 2p/(p+1) the block norm.
"""

from __future__ import annotations

import math
import warnings

import cvxpy as cp
import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.preprocessing import StandardScaler

import mklopt
from mklopt.backends import accuracy, capable_backends
from mklopt.exceptions import FormulationError, InvalidInputError
from mklopt.regularizers import (ConstraintSet, ElasticNet, LpBall, WeightedL1,
                                 block_from_weight_norm, weight_from_block_norm)

ISSUE_REL_TOL = 1e-6
P_VALUES = (1.0, 1.25, 4.0 / 3.0, 2.0, 3.0, math.inf)
V = np.array([0.5, 1.0, 2.0, 4.0])


def user_elastic_net() -> ConstraintSet:
    """The issue's example of a user-defined set: ||mu||_1 + ||mu||_2^2 <= 1."""
    return ConstraintSet(lambda mu: [cp.norm1(mu) + cp.sum_squares(mu) <= 1], name="user_enet")


USER_SETS = {"user ConstraintSet": user_elastic_net, "ElasticNet(1, 1)": lambda: ElasticNet(1.0, 1.0)}


@pytest.fixture(scope="module")
def problem():
    """Four kernels (``Tr K_m = n``) on 60 breast-cancer points, and labels."""
    X, y = load_breast_cancer(return_X_y=True)
    idx = np.random.default_rng(4).choice(len(y), 60, replace=False)
    X = StandardScaler().fit_transform(X[idx])
    d = X.shape[1]
    specs = [("rbf", {"gamma": 0.3 / d}), ("rbf", {"gamma": 3.0 / d}),
             ("poly", {"degree": 2, "gamma": 1.0 / d, "coef0": 1.0}), "linear"]
    return mklopt.KernelSet.from_data(X, specs).normalized("trace", target=60), y[idx]


_SOLVES: dict = {}


def solve_user_set(problem, set_name: str, backend: str):
    key = (set_name, backend)
    if key not in _SOLVES:
        ks, y = problem
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mklopt.exceptions.UncertifiedWarning)
            _SOLVES[key] = mklopt.solve(ks, y, "lp_primal", regularizer=USER_SETS[set_name](),
                                        backend=backend)
    return _SOLVES[key]


# ----------------------------------------------------------- user-defined sets
@pytest.mark.parametrize("backend", capable_backends("SOCP"))
@pytest.mark.parametrize("set_name", list(USER_SETS))
def test_user_set_primal_and_certified_dual_match(problem, set_name, backend):
    result = solve_user_set(problem, set_name, backend)
    limit = max(ISSUE_REL_TOL, accuracy(backend, "SOCP"))
    assert result.status == "optimal", result.message
    assert result.dual <= result.primal
    assert result.primal - result.dual <= limit * max(1.0, abs(result.primal))


@pytest.mark.parametrize("backend", capable_backends("SOCP"))
def test_user_set_equals_elastic_net(problem, backend):
    """Both spellings of ||mu||_1 + ||mu||_2^2 <= 1 have the same optimum and weights."""
    user = solve_user_set(problem, "user ConstraintSet", backend)
    enet = solve_user_set(problem, "ElasticNet(1, 1)", backend)
    tolerance = max(ISSUE_REL_TOL, accuracy(backend, "SOCP"))
    assert abs(user.primal - enet.primal) <= tolerance * max(1.0, abs(enet.primal))
    np.testing.assert_allclose(user.weights, enet.weights,
                               atol=math.sqrt(max(1e-8, accuracy(backend, "SOCP"))))


def test_user_set_weights_lie_in_the_set(problem):
    weights = solve_user_set(problem, "user ConstraintSet", "CLARABEL").weights
    assert np.all(weights >= 0)
    assert np.sum(weights) + np.sum(weights**2) <= 1.0 + 1e-9


def test_certified_dual_is_the_support_function_value(problem):
    """The dual value is 1'alpha - 1/2 max_{mu in Theta} s(alpha)'mu, recomputed here independently."""
    ks, y = problem
    result = solve_user_set(problem, "user ConstraintSet", "CLARABEL")
    cert = result.certificate
    alpha = cert.alpha  # one (weights, alpha) pair: the alpha behind `dual`
    coef = np.where(y == result.classes[1], 1.0, -1.0) * alpha
    s = np.einsum("i,mij,j->m", coef, ks.K, coef)
    mu = cp.Variable(ks.M, nonneg=True)
    support = cp.Problem(cp.Maximize(s @ mu), [cp.norm1(mu) + cp.sum_squares(mu) <= 1])
    support.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    expected = float(np.sum(np.abs(coef)) - 0.5 * support.value)
    # The certified dual uses a guaranteed upper bound on the support value: never
    # above the independent value, below it by at most the documented margin.
    assert result.dual <= expected + 1e-12 * abs(expected)
    assert expected - result.dual <= 0.5 * 1e-6 * support.value


def test_user_set_has_no_dual_formulation(problem):
    ks, y = problem
    with pytest.raises(FormulationError, match="lp_primal"):
        mklopt.solve(ks, y, "lp_dual", regularizer=user_elastic_net())


def test_unbounded_user_set_is_rejected():
    unbounded = ConstraintSet(lambda mu: [mu[0] <= 1], name="half_open")
    with pytest.raises(InvalidInputError, match="unbounded"):
        unbounded.support(np.array([1.0, 1.0]))


def test_non_dcp_user_set_is_rejected():
    non_convex = ConstraintSet(lambda mu: [cp.sum_squares(mu) >= 1], name="non_convex")
    with pytest.raises(InvalidInputError, match="not DCP"):
        non_convex.constraints(cp.Variable(3))


# -------------------------------------------- generic machinery vs closed forms
def generic_lp_ball(p: float) -> ConstraintSet:
    """``LpBall(p)`` spelled as plain CVXPY constraints (no closed forms)."""
    if p == 1:
        return ConstraintSet(lambda mu: [cp.sum(mu) <= 1])
    if math.isinf(p):
        return ConstraintSet(lambda mu: [mu <= 1])
    return ConstraintSet(lambda mu: [cp.pnorm(mu, p) <= 1])


CLOSED_AND_GENERIC = [(f"LpBall(p={p:.4g})", LpBall(p), generic_lp_ball(p)) for p in P_VALUES]
CLOSED_AND_GENERIC.append(("WeightedL1", WeightedL1(V), ConstraintSet(lambda mu: [V @ mu <= 1])))
SET_IDS = [case[0] for case in CLOSED_AND_GENERIC]


def random_vectors(seed: int, count: int = 4, M: int = 4):
    """Vectors of length M with entries spread over six orders of magnitude."""
    rng = np.random.default_rng(seed)
    return [rng.exponential(size=M) * 10.0 ** rng.uniform(-3, 3) for _ in range(count)]


@pytest.mark.parametrize("name, closed, generic", CLOSED_AND_GENERIC, ids=SET_IDS)
def test_generic_support_function_matches_closed_form(name, closed, generic):
    rng = np.random.default_rng(5)
    for s in random_vectors(5):
        s = s * rng.choice([-1.0, 1.0], size=s.size)  # negative entries: mu >= 0 ignores them
        expected = closed.support(s)
        bound = generic.support(s)
        # A guaranteed upper bound (DESIGN §13): never below the closed form, and
        # above it by at most its documented margin (support_margin: at most 1e-6
        # relative on Clarabel, for an answer it calls inaccurate).
        assert bound >= expected
        assert bound - expected <= 1e-6 * max(1.0, abs(expected))


def test_elastic_net_support_is_an_exact_upper_bound():
    """The Lagrangian bound of ElasticNet equals the tight conic solve and never undershoots it."""
    for s in random_vectors(7, count=6):
        for a, b in ((1.0, 1.0), (0.3, 2.0), (2.0, 0.1), (0.0, 1.0), (1.0, 0.0)):
            mu = cp.Variable(s.size, nonneg=True)
            prob = cp.Problem(cp.Maximize(s @ mu), [a * cp.sum(mu) + b * cp.sum_squares(mu) <= 1])
            prob.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
            value = ElasticNet(a, b).support(s)
            assert abs(value - prob.value) <= 1e-9 * abs(prob.value)
            # below it: any feasible point (the solver's, scaled into the set exactly)
            point = np.clip(mu.value, 0, None)
            c = (2 / (a * point.sum() + np.sqrt((a * point.sum())**2 + 4 * b * point @ point))
                 if point.any() else 0.0)
            assert value >= float(s @ (min(c, 1.0) * point))


@pytest.mark.parametrize("name, closed, generic", CLOSED_AND_GENERIC, ids=SET_IDS)
def test_generic_weight_step_matches_closed_form(name, closed, generic):
    """argmin_{mu in Theta} sum_m ||w_m||^2 / mu_m: same objective (1e-8) and weights (1e-4).

    The objective is flat to second order at its minimizer, so the auxiliary
    solver's weights are accurate to about the square root of its tolerance.
    """
    for wnorm2 in random_vectors(6):
        ours, reference = generic.argmin_weights(wnorm2), closed.argmin_weights(wnorm2)
        scaled = wnorm2 / wnorm2.max()
        value, expected = np.sum(scaled / ours), np.sum(scaled / reference)
        assert value <= expected * (1 + 1e-8)
        np.testing.assert_allclose(ours, reference, atol=1e-4)
        assert generic.violation(ours) <= 1e-9


@pytest.mark.parametrize("name, closed, generic", CLOSED_AND_GENERIC, ids=SET_IDS)
def test_generic_into_set_matches_closed_form(name, closed, generic):
    """The largest c <= 1 with c * mu in Theta: bisection vs closed-form scaling."""
    for mu in random_vectors(7):
        np.testing.assert_allclose(generic.into_set(mu), closed.into_set(mu),
                                   rtol=1e-9, atol=1e-12 * mu.max())


@pytest.mark.parametrize("name, closed, generic", CLOSED_AND_GENERIC, ids=SET_IDS)
def test_generic_violation_matches_closed_form(name, closed, generic):
    for mu in random_vectors(8):
        assert generic.violation(mu) == pytest.approx(closed.violation(mu), rel=1e-9, abs=1e-12)


def test_lp_weight_step_closed_form_formula():
    """mu_m = ||w_m||^{2/(p+1)} / (sum_k ||w_k||^{2p/(p+1)})^{1/p} (DESIGN §5), on the unit sphere."""
    p, wnorm2 = 2.0, np.array([4.0, 1.0, 0.25])
    w = np.sqrt(wnorm2)
    expected = w ** (2 / (p + 1)) / np.sum(w ** (2 * p / (p + 1))) ** (1 / p)
    np.testing.assert_allclose(LpBall(p).argmin_weights(wnorm2), expected, rtol=1e-12)
    assert np.linalg.norm(expected, ord=p) == pytest.approx(1.0)


# -------------------------------------------------------------- p <-> b conversions
@pytest.mark.parametrize("p, b", [(1.0, 1.0), (2.0, 4.0 / 3.0), (3.0, 1.5), (4.0 / 3.0, 8.0 / 7.0),
                                  (math.inf, 2.0)])
def test_block_norm_of_weight_norm(p, b):
    assert block_from_weight_norm(p) == pytest.approx(b, rel=1e-15)
    assert weight_from_block_norm(b) == pytest.approx(p, rel=1e-12)


@pytest.mark.parametrize("p", [1.0, 1.1, 1.25, 4.0 / 3.0, 2.0, 3.0, 10.0, 1e6])
def test_conversions_are_inverse(p):
    b = block_from_weight_norm(p)
    assert 1.0 <= b <= 2.0
    assert weight_from_block_norm(b) == pytest.approx(p, rel=1e-9)


def test_block_norm_above_two_has_no_weight_norm():
    with pytest.raises(InvalidInputError, match="lp_block_primal"):
        weight_from_block_norm(3.0)


@pytest.mark.parametrize("bad", [0.5, 0.0, -1.0, float("nan")])
def test_block_norm_below_one_is_rejected(bad):
    with pytest.raises(InvalidInputError, match="b must be >= 1"):
        weight_from_block_norm(bad)


def test_weight_norm_below_one_is_rejected():
    with pytest.raises(InvalidInputError, match="p must be >= 1"):
        block_from_weight_norm(0.5)


def test_one_regularizer_shared_by_two_threads_gives_the_same_answers(problem):
    """Cached CVXPY problems are per thread: concurrent fits equal sequential ones."""
    from concurrent.futures import ThreadPoolExecutor

    ks, y = problem
    shared = ConstraintSet(lambda mu: [cp.norm1(mu) + cp.sum_squares(mu) <= 1], name="shared")

    def run(C: float):  # tol 1e-3: ~20 iterations each, every one a CVXPY solve on both threads
        return mklopt.fit(ks, y, "wrapper", regularizer=shared, C=C, tol=1e-3)

    sequential = [run(C) for C in (0.5, 2.0)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        concurrent = list(pool.map(run, (0.5, 2.0)))
    for a, b in zip(sequential, concurrent):
        assert a.iterations == b.iterations
        np.testing.assert_allclose(b.weights, a.weights, rtol=0, atol=1e-12)
        assert b.primal == pytest.approx(a.primal, rel=1e-12)
