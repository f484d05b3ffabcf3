"""Kernel ridge regression with L2-regularized weights (``krr_l2``) and its drivers.

Problem: min over M = {mu >= 0 : ||mu - mu0||_2 <= Lambda} of F(mu) = y'(K_mu + lam I)^-1 y
(Cortes, Mohri, Rostamizadeh, UAI 2009; tutorial "Learning Kernels", ICML 2011). Checked here:
the exact projection and the support function against CVXPY; the formulation on every
installed SOCP backend against an independent SLSQP reference and a dense grid (M = 2);
the drivers against the formulation within their certified gaps; the interpolated step's
iteration count; the degree-2 driver's stationarity (finite differences) and its labels;
bad input.
"""

from __future__ import annotations

import functools
import warnings

import cvxpy as cp
import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.datasets import load_diabetes
from sklearn.preprocessing import StandardScaler

import mklopt
from mklopt.backends import capable_backends
from mklopt.drivers import DRIVERS
from mklopt.exceptions import InvalidInputError
from mklopt.certificates.krr import krr_certificate
from mklopt.certificates.recertify import certify_result
from mklopt.regularizers import KRRProblem
from mklopt.regularizers.krr import project_ball_orthant

SOCP_BACKENDS = capable_backends("SOCP")
KRR = {"loss": "squared_error"}


@functools.lru_cache(maxsize=None)
def diabetes(n: int) -> tuple[mklopt.KernelSet, np.ndarray]:
    """First ``n`` diabetes points, standardized; 5 kernels with Tr K_m = n; y standardized.

    Cached: the tests must not modify them (the bad-input tests check exactly that)."""
    X, y = load_diabetes(return_X_y=True)
    X, y = StandardScaler().fit_transform(X[:n]), y[:n]
    specs = [("linear", {}), ("poly", {"degree": 2, "gamma": 0.1, "coef0": 1}),
             ("rbf", {"gamma": 0.01}), ("rbf", {"gamma": 0.1}), ("rbf", {"gamma": 1.0})]
    return mklopt.KernelSet.from_data(X, specs).normalized("trace", target=n), (y - y.mean()) / y.std()


def solve_quiet(*args, **kwargs) -> mklopt.MKLResult:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return mklopt.solve(*args, **kwargs)


def objective(K: np.ndarray, y: np.ndarray, mu: np.ndarray, lam: float, degree: int = 1) -> float:
    """Independent F(mu) = y'(K_mu^d + lam I)^-1 y (dense solve)."""
    Kmu = np.tensordot(mu, K, axes=1) ** degree
    return float(y @ np.linalg.solve(Kmu + lam * np.eye(y.size), y))


def into_ball(mu: np.ndarray, mu0: np.ndarray, radius: float) -> np.ndarray:
    mu = np.clip(mu, 0.0, None)
    return mu0 + (mu - mu0) * min(1.0, radius / np.linalg.norm(mu - mu0))


@pytest.fixture(scope="module")
def instance():
    """n = 60, M = 5, lam = 0.1, mu0 = 0.1 * 1, Lambda = 1, and an SLSQP reference optimum."""
    ks, y = diabetes(60)
    lam, radius, mu0 = 0.1, 1.0, np.full(ks.M, 0.1)
    K = ks.K

    def fun(mu):
        a = np.linalg.solve(np.tensordot(mu, K, axes=1) + lam * np.eye(y.size), y)
        return float(y @ a), -np.einsum("i,kij,j->k", a, K, a)

    cons = [{"type": "ineq", "fun": lambda m: radius ** 2 - np.sum((m - mu0) ** 2),
             "jac": lambda m: -2 * (m - mu0)}]
    start = mu0 + radius / np.sqrt(ks.M)
    res = minimize(fun, start, jac=True, method="SLSQP", bounds=[(0, None)] * ks.M,
                   constraints=cons, options={"ftol": 1e-15, "maxiter": 500})
    mu_ref = into_ball(res.x, mu0, radius)  # a feasible point: F(mu_ref) >= OPT
    params = {"lam": lam, "radius": radius, "mu0": mu0}
    return ks, y, params, objective(K, y, mu_ref, lam)


# ------------------------------------------------------------------ the weight set
@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
@pytest.mark.parametrize("seed", range(6))
def test_projection_is_the_cvxpy_projection(seed):
    rng = np.random.default_rng(seed)
    M = 6
    mu0 = np.where(rng.random(M) < 0.3, 0.0, rng.random(M))  # some centers on the boundary mu = 0
    radius = 0.2 + rng.random()
    z = mu0 + rng.standard_normal(M) * (0.3 if seed % 2 else 2.0)  # inside and far outside
    nu = cp.Variable(M)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(nu - z)), [nu >= 0, cp.norm(nu - mu0, 2) <= radius])
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    ours = project_ball_orthant(z, mu0, radius)
    np.testing.assert_allclose(ours, nu.value, atol=1e-7)
    assert np.all(ours >= 0) and np.linalg.norm(ours - mu0) <= radius * (1 + 1e-15)
    np.testing.assert_array_equal(project_ball_orthant(ours, mu0, radius), ours)  # idempotent


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
def test_support_function_closed_form():
    rng = np.random.default_rng(1)
    problem = KRRProblem(lam=1.0, mu0=rng.random(4), radius=0.7)
    for s in (rng.random(4), rng.standard_normal(4)):
        mu = cp.Variable(4)
        prob = cp.Problem(cp.Maximize(s @ mu), [mu >= 0, cp.norm(mu - problem.mu0, 2) <= 0.7])
        prob.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
        assert problem.support(s) >= prob.value - 1e-9  # an upper bound for any s ...
        if np.all(s >= 0):                                # ... and exact for s >= 0
            assert problem.support(s) == pytest.approx(prob.value, rel=1e-8)
            np.testing.assert_allclose(problem.support_point(s), mu.value, atol=1e-6)


# ------------------------------------------------------------------ the formulation
@pytest.mark.parametrize("backend", SOCP_BACKENDS)
def test_formulation_on_every_backend_matches_the_slsqp_reference(instance, backend):
    ks, y, params, reference = instance
    res = solve_quiet(ks, y, "krr_l2", backend=backend, **KRR, **params)
    assert res.status == "optimal", res.message
    assert 0 <= res.gap and res.rel_gap <= 1e-6
    assert res.dual <= reference * (1 + 1e-12)  # weak duality: F at SLSQP's (feasible) point >= OPT
    assert abs(res.primal - reference) <= 1e-6 * reference
    assert res.primal == pytest.approx(objective(ks.K, y, res.weights, params["lam"]), rel=1e-12)
    assert np.linalg.norm(res.weights - params["mu0"]) <= params["radius"] * (1 + 1e-12)
    # the predictor is f = K_mu alpha with alpha = (K_mu + lam I)^-1 y: on the training set y - lam alpha
    np.testing.assert_allclose(res.decision_function(ks.K), y - params["lam"] * res.alpha, atol=1e-9)


def test_formulation_against_a_dense_grid_for_two_kernels():
    """M = 2, mu0 = 0: the optimum is on the arc Lambda (cos t, sin t); a 2001-point grid bounds it."""
    ks, y = diabetes(60)
    K2, lam, radius = ks.K[[0, 4]], 0.1, 1.0
    grid = min(objective(K2, y, radius * np.array([np.cos(t), np.sin(t)]), lam)
               for t in np.linspace(0, np.pi / 2, 2001))
    res = solve_quiet(K2, y, "krr_l2", lam=lam, radius=radius, **KRR)
    assert res.status == "optimal"
    assert res.dual <= grid and res.primal <= grid and grid - res.primal <= 1e-7 * grid


# ------------------------------------------------------------------ the drivers
@pytest.mark.parametrize("driver", ["krr_projected_gradient", "krr_interpolated"])
def test_drivers_agree_with_the_formulation_within_their_gaps(instance, driver):
    ks, y, params, reference = instance
    exact = solve_quiet(ks, y, "krr_l2", **KRR, **params)
    loop = mklopt.fit(ks, y, driver, tol=1e-9, max_iter=200, **KRR, **params)
    assert loop.status == "converged" and loop.rel_gap <= 1e-9
    assert max(loop.dual, exact.dual) <= min(loop.primal, exact.primal) * (1 + 1e-12)
    assert abs(loop.primal - exact.primal) <= loop.gap + exact.gap + 1e-12 * exact.primal
    assert abs(loop.primal - reference) <= 1e-6 * reference
    np.testing.assert_allclose(loop.weights, exact.weights, atol=1e-3)
    history = np.array([r["rel_gap"] for r in loop.history])
    assert np.all(np.diff(history) <= 0)  # the best certified pair never worsens


def ionosphere(n: int) -> tuple[mklopt.KernelSet, np.ndarray]:
    """``n`` ionosphere points (seeded shuffle), standardized, the constant attribute dropped;
    the 5 kernels of :func:`diabetes`; the +-1 labels standardized as targets."""
    from mklopt import datasets

    X, y = datasets.load("ionosphere", return_X_y=True)
    keep = np.random.default_rng(0).permutation(y.size)[:n]
    X = StandardScaler().fit_transform(X[keep][:, X[keep].std(axis=0) > 0])
    specs = [("linear", {}), ("poly", {"degree": 2, "gamma": 0.1, "coef0": 1}),
             ("rbf", {"gamma": 0.01}), ("rbf", {"gamma": 0.1}), ("rbf", {"gamma": 1.0})]
    t = y[keep].astype(float)
    return mklopt.KernelSet.from_data(X, specs).normalized("trace", target=n), (t - t.mean()) / t.std()


@pytest.mark.parametrize("data", [lambda: diabetes(100), lambda: ionosphere(150)], ids=["diabetes", "ionosphere"])
def test_interpolated_step_needs_fewer_than_15_iterations(data):
    """The tutorial: "few iterations (less than 15)". Diabetes n = 100 and ionosphere n = 150,
    5 kernels (Tr K = n), lam = 0.1, Lambda = 1, mu0 = 0, eta = 0.4: certified rel_gap 1e-6
    in 10 iterations on both (projected gradient: 8 and 5)."""
    ks, y = data()
    res = mklopt.fit(ks, y, "krr_interpolated", lam=0.1, radius=1.0, tol=1e-6, max_iter=100, **KRR)
    assert res.status == "converged" and res.rel_gap <= 1e-6
    assert res.iterations < 15, res.iterations
    plain = mklopt.fit(ks, y, "krr_interpolated", lam=0.1, radius=1.0, tol=1e-6, max_iter=30,
                       eta=0.0, **KRR)  # no interpolation: the fixed-point map oscillates
    assert plain.status == "max_iter" and plain.gap >= 0


def test_saved_driver_result_recertifies_and_predicts(instance, tmp_path):
    ks, y, params, _ = instance
    res = mklopt.fit(ks, y, "krr_projected_gradient", tol=1e-7, **KRR, **params)
    res.save(tmp_path / "krr.npz")
    loaded = mklopt.MKLResult.load(tmp_path / "krr.npz")
    cert = certify_result(ks, y, loaded)
    assert cert.rel_gap == pytest.approx(res.rel_gap, rel=1e-6, abs=1e-15)
    np.testing.assert_allclose(loaded.decision_function(ks.K), res.decision_function(ks.K))


def test_certificate_refuses_weights_outside_the_set(instance):
    ks, y, params, _ = instance
    problem = KRRProblem(**params)
    outside = params["mu0"] + 2 * params["radius"] / np.sqrt(ks.M)
    cert = krr_certificate(ks, y, outside, problem)
    assert not cert.feasible and not cert.certified(1.0) and "not certified" in cert.message
    repaired = krr_certificate(ks, y, outside, problem, repair=True)
    assert repaired.feasible and repaired.repaired and repaired.gap >= 0


# ------------------------------------------------------------------ degree 2
def test_polynomial_driver_reaches_a_stationary_point_and_is_not_certified_globally(instance):
    ks, y, params, _ = instance
    K, lam, radius, mu0 = ks.K, params["lam"], params["radius"], params["mu0"]
    assert DRIVERS["polynomial_krr"].certified is False
    res = mklopt.fit(ks, y, "polynomial_krr", tol=1e-8, max_iter=300, **KRR, **params)
    assert res.status == "converged"
    assert res.info["certified_globally"] is False and "no global certificate" in res.message
    mu = res.weights
    assert res.primal == pytest.approx(objective(K, y, mu, lam, degree=2), rel=1e-10)
    start = mu0 + radius / np.sqrt(ks.M)
    assert res.primal < objective(K, y, start, lam, degree=2)
    # independent gradient (central differences) and the projected gradient mapping
    h = 1e-6
    grad = np.array([(objective(K, y, mu + h * e, lam, 2) - objective(K, y, mu - h * e, lam, 2)) / (2 * h)
                     for e in np.eye(ks.M)])
    np.testing.assert_allclose(-res.certificate.s, grad, rtol=1e-5)
    assert np.all(grad < 0)  # F is decreasing (Schur product theorem): the optimum is on the sphere
    step = radius / np.linalg.norm(grad)
    mapping = (mu - project_ball_orthant(mu - step * grad, mu0, radius)) / step
    assert np.linalg.norm(mapping) <= 1e-3 * np.linalg.norm(grad)
    # the predictor of the learned kernel (sum_k mu_k K_k)^2 alpha: on the training set y - lam alpha
    np.testing.assert_allclose(res.decision_function(K), y - lam * res.alpha, atol=1e-8)


# ------------------------------------------------------------------ bad input
BAD = [{"lam": 0.0}, {"lam": -1.0}, {"lam": float("nan")}, {"lam": "big"}, {"radius": 0.0},
       {"radius": -2.0}, {"radius": float("inf")}, {"mu0": np.zeros(3)}, {"mu0": np.full(5, -0.1)},
       {"mu0": np.array([0.1, np.nan, 0, 0, 0])}, {"mu0": np.zeros((5, 1))}, {"C": 2.0},
       {"p": 2.0}, {"regularizer": mklopt.ElasticNet()}, {"loss": "hinge"}]


@pytest.mark.parametrize("kwargs", BAD, ids=lambda kw: ",".join(f"{k}={v!r}"[:24] for k, v in kw.items()))
@pytest.mark.parametrize("method", ["solve", "krr_projected_gradient", "polynomial_krr"])
def test_bad_input_raises_early_and_mutates_nothing(kwargs, method):
    ks, y = diabetes(30)
    K_before, y_before = ks.K.copy(), y.copy()
    args = {**KRR, "lam": 0.1, "radius": 1.0, **kwargs}
    mu0_before = np.copy(args.get("mu0"))
    with pytest.raises(InvalidInputError):
        if method == "solve":
            mklopt.solve(ks, y, "krr_l2", **args)
        else:
            mklopt.fit(ks, y, method, **args)
    np.testing.assert_array_equal(ks.K, K_before)
    np.testing.assert_array_equal(y, y_before)
    np.testing.assert_array_equal(np.copy(args.get("mu0")), mu0_before)


@pytest.mark.parametrize("case", ["nan_y", "nan_kernel", "eta", "interpolate"])
def test_bad_data_and_driver_options(case):
    ks, y = diabetes(30)
    K = ks.K.copy()
    with pytest.raises(InvalidInputError):
        if case == "nan_y":
            mklopt.solve(ks, np.where(np.arange(y.size) == 3, np.nan, y), "krr_l2", **KRR)
        elif case == "nan_kernel":
            K[0, 1, 2] = K[0, 2, 1] = np.nan
            mklopt.fit(K, y, "krr_interpolated", **KRR)
        elif case == "eta":
            mklopt.fit(ks, y, "krr_interpolated", eta=1.0, **KRR)
        else:
            mklopt.fit(ks, y, "krr_interpolated", interpolate="mu", **KRR)


@pytest.mark.parametrize("degree", [1, 3, 2.5, True])
def test_polynomial_family_is_degree_two_only(degree):
    ks, y = diabetes(30)
    with pytest.raises(InvalidInputError, match="degree 2 only"):
        mklopt.fit(ks, y, "polynomial_krr", **{**KRR, "lam": 0.1, "radius": 1.0}, degree=degree)
    mklopt.fit(ks, y, "polynomial_krr", **{**KRR, "lam": 0.1, "radius": 1.0}, degree=2)  # accepted
