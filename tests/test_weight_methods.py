"""The peers' weight methods (EasyMKL, R-MKL, GRAM, MEMO, PWMK, FHeuristic) against
independent references written here: SciPy's SLSQP on the same QPs, closed forms,
grids over the weights, another mklopt formulation, scikit-learn's cross-validation.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.datasets import load_breast_cancer
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

import mklopt
from mklopt import datasets
from mklopt import InvalidInputError, KernelSet, MKLClassifier
from mklopt.backends import capable_backends
from mklopt.weight_methods import METHODS
from mklopt.weight_methods._simplex_qp import (
    class_margin,
    enclosing_radius,
    project_simplex,
)

QP_BACKENDS = [b for b in capable_backends("QP") if b not in ("SCS", "OSQP")]  # accurate ones
SIMPLEX_SOLVERS = [None] + QP_BACKENDS  # None: mklopt's compiled pairwise solver


def _subsample(X, y, n: int = 60):
    rng = np.random.default_rng(0)
    idx = rng.choice(len(y), n, replace=False)
    X = (X - X.mean(0)) / X.std(0)
    X, y = X[idx], np.where(y[idx] == 1, 1, -1)
    return np.stack([rbf_kernel(X, gamma=g) for g in (0.003, 0.03, 0.3)]), y


def raw(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Features (constant ones dropped) and labels of one of the two data sets."""
    X, y = load_breast_cancer(return_X_y=True) if name == "breast_cancer" else \
        datasets.load("ionosphere", return_X_y=True)
    return X[:, X.std(0) > 0], y


@pytest.fixture(scope="module", params=["breast_cancer", "ionosphere"])
def data(request):
    """Two data sets, 60 points each, three RBF kernels."""
    return _subsample(*raw(request.param))


def slsqp_margin(K, y, lam):
    """min (1-lam) g'YKYg + lam |g|^2 over one simplex per class, by SLSQP (no CVXPY)."""
    pos, neg = (y > 0).astype(float), (y < 0).astype(float)
    Q = (1 - lam) * (y[:, None] * K * y[None, :]) + lam * np.eye(y.size)
    start = pos / pos.sum() + neg / neg.sum()
    res = minimize(lambda g: g @ Q @ g, start, jac=lambda g: 2 * Q @ g, method="SLSQP",
                   bounds=[(0, None)] * y.size, options={"ftol": 1e-14, "maxiter": 500},
                   constraints=[{"type": "eq", "fun": lambda g, s=s: s @ g - 1} for s in (pos, neg)])
    return res.fun


@pytest.mark.parametrize("backend", SIMPLEX_SOLVERS)
@pytest.mark.parametrize("lam", [0.0, 0.1, 1.0])
def test_class_margin_matches_slsqp_and_its_gap_holds(data, backend, lam):
    K, y = data
    qp = class_margin(K.sum(0), y, lam, backend)
    reference = slsqp_margin(K.sum(0), y, lam)
    assert qp.value - qp.gap <= reference + 1e-9 * abs(reference)  # certified lower bound
    assert abs(qp.value - reference) <= 1e-6 * abs(reference)


@pytest.mark.parametrize("backend", SIMPLEX_SOLVERS)
def test_enclosing_radius_closed_form(backend):
    """Points on a circle of radius 3 (and inside it), linear kernel: R^2 = 9 exactly."""
    angles = np.linspace(0, 2 * np.pi, 12, endpoint=False)
    X = np.vstack([3 * np.c_[np.cos(angles), np.sin(angles)], [[0.5, -1.0], [1.0, 1.0]]]) + [4.0, -2.0]
    ball = enclosing_radius(X @ X.T, backend)
    assert ball.value <= 9.0 + 1e-9 and abs(ball.value - 9.0) <= 1e-6 and ball.rel_gap <= 1e-6


def test_easymkl_weights_are_the_margin_terms_of_the_slsqp_solution(data):
    K, y = data
    mu, info = mklopt.learn_weights(K, y, "easymkl", lam=0.2, return_info=True)
    assert info["qp_rel_gap"] <= 1e-7
    # independent: SLSQP's gamma, then MKLpy's formula d_m = (y g)' K_m (y g), l1-normalized
    pos, neg = (y > 0).astype(float), (y < 0).astype(float)
    Q = 0.8 * (y[:, None] * K.sum(0) * y[None, :]) + 0.2 * np.eye(y.size)
    g = minimize(lambda g: g @ Q @ g, pos / pos.sum() + neg / neg.sum(), jac=lambda g: 2 * Q @ g,
                 method="SLSQP", bounds=[(0, None)] * y.size, options={"ftol": 1e-15, "maxiter": 500},
                 constraints=[{"type": "eq", "fun": lambda g, s=s: s @ g - 1} for s in (pos, neg)]).x
    d = np.array([(y * g) @ Km @ (y * g) for Km in K])
    np.testing.assert_allclose(mu, d / d.sum(), atol=1e-6)
    mu2 = mklopt.learn_weights(K, y, "easymkl", lam=0.2, norm=2)
    np.testing.assert_allclose(mu2, mu / np.linalg.norm(mu), rtol=1e-10)


def test_rmkl_is_radius_weighted_l1_mkl_solved_exactly(data):
    K, y = data
    mu, info = mklopt.learn_weights(K, y, "rmkl", C=2.0, tol=1e-6, return_info=True)
    radii2 = info["radii2"]
    # the radii: unit-diagonal RBF kernels, R^2 = 1 - min_beta beta'K beta <= 1
    assert np.all(radii2 <= 1 + 1e-9) and np.all(info["radii2_gap"] <= 1e-6 * radii2)
    exact = mklopt.solve(K, y, "qcqp_l1", C=2.0, regularizer=mklopt.WeightedL1(radii2))
    at_weights = mklopt.solve(K, y, "svm", C=2.0, weights=mu)
    assert info["mkl_rel_gap"] <= 1e-6
    assert abs(at_weights.primal - exact.primal) <= 1e-5 * abs(exact.primal)
    assert radii2 @ mu <= 1 + 1e-8


def ratio(K, y, mu, lam=0.0):
    combined = np.tensordot(mu, K, axes=1)
    return enclosing_radius(combined).value / class_margin(combined, y, lam).value


def test_gram_certified_interval_contains_the_grid_minimum(data):
    K, y = data
    K2 = K[[0, 2]]
    mu, info = mklopt.learn_weights(K2, y, "gram", tol=1e-4, return_info=True)
    assert info["status"] == "certified" and info["rel_gap"] <= 1e-4
    grid = min(ratio(K2, y, np.array([t, 1 - t])) for t in np.linspace(0, 1, 41))
    assert info["lower"] <= grid * (1 + 1e-7)  # the lower bound is global
    assert info["ratio"] <= grid * (1 + 1e-4)  # and the weights are at least as good as the grid
    assert abs(ratio(K2, y, mu) - info["ratio"]) <= 1e-6 * info["ratio"]


def test_memo_theta0_is_the_certified_maximum_margin(data):
    K, y = data
    K2 = K[[0, 2]]
    _, info = mklopt.learn_weights(K2, y, "memo", theta=0.0, return_info=True)
    assert info["status"] == "certified"
    grid = max(class_margin(np.tensordot([t, 1 - t], K2, axes=1), y).value
               for t in np.linspace(0, 1, 41))
    assert info["upper"] >= grid * (1 - 1e-9) and info["objective"] >= grid * (1 - 1e-4)


def test_memo_theta_positive_is_a_stationary_point_with_a_valid_bound(data):
    K, y = data
    mu, info = mklopt.learn_weights(K, y, "memo", theta=1.0, return_info=True)
    assert info["upper"] >= info["objective"] > 0
    assert info["status"] in ("certified", "stationary")
    Q = K.reshape(3, -1) @ K.reshape(3, -1).T
    Q /= np.trace(Q) / 3
    hull = class_margin(np.tensordot(mu, K, axes=1), y)
    grad = np.array([(y * hull.point) @ Km @ (y * hull.point) for Km in K]) + Q @ mu
    # no ascent direction along the simplex beyond solver noise
    assert np.linalg.norm(project_simplex(mu + 1e-3 * grad / np.abs(grad).max()) - mu) <= 1e-4


def test_pwmk_and_fheuristic_follow_their_formulas(data):
    K, y = data
    folds = StratifiedKFold(3)
    acc = np.array([cross_val_score(SVC(C=3.0, kernel="precomputed"), Km, y, cv=folds).mean() for Km in K])
    mu = mklopt.learn_weights(K, y, "pwmk", C=3.0, delta=0.5)
    np.testing.assert_allclose(mu, (acc - 0.5 * acc.min()) / (acc - 0.5 * acc.min()).sum(), rtol=1e-12)
    align = np.array([y @ Km @ y / (y.size * np.linalg.norm(Km)) for Km in K])
    np.testing.assert_allclose(mklopt.learn_weights(K, y, "fheuristic"), align / align.sum(), rtol=1e-12)


def test_label_recoding_does_not_change_weights(data):
    K, y = data
    for method in ("easymkl", "fheuristic"):
        np.testing.assert_allclose(mklopt.learn_weights(K, y, method),
                                   mklopt.learn_weights(K, np.where(y > 0, "yes", "no"), method), atol=1e-7)


@pytest.mark.parametrize("call, match", [
    (lambda K, y: mklopt.learn_weights(K, y, "nope"), "unknown weight method"),
    (lambda K, y: mklopt.learn_weights(K, y, "easymkl", lam=1.5), "lam"),
    (lambda K, y: mklopt.learn_weights(K, y, "easymkl", gamma=1), "options"),
    (lambda K, y: mklopt.learn_weights(K, y, "memo", theta=-1), "theta"),
    (lambda K, y: mklopt.learn_weights(K, y, "pwmk", delta=2), "delta"),
    (lambda K, y: mklopt.learn_weights(K, y, "pwmk", cv=1), "cv"),
    (lambda K, y: mklopt.learn_weights(K, np.ones_like(y), "gram"), "class"),
    (lambda K, y: mklopt.learn_weights(K[:, :5], y, "easymkl"), "square"),
])
def test_bad_input_is_refused_and_nothing_is_mutated(data, call, match):
    K, y = data
    K0, y0 = K.copy(), y.copy()
    with pytest.raises(InvalidInputError, match=match):
        call(K, y)
    assert np.array_equal(K, K0) and np.array_equal(y, y0)


def test_lazy_kernels_are_refused_with_the_way_out():
    X = np.random.default_rng(1).standard_normal((30, 2))
    ks = KernelSet.from_data(X, [("rbf", {"gamma": 1.0})], lazy=True)
    with pytest.raises(InvalidInputError, match="lazy=False"):
        mklopt.learn_weights(ks, np.sign(X[:, 0]), "easymkl")


@pytest.mark.parametrize("name", ["breast_cancer", "ionosphere"])
@pytest.mark.parametrize("method", [m for m in METHODS if m not in ("align", "alignf")])
def test_estimator_fits_the_certified_svm_at_the_method_weights(name, method):
    X, y = raw(name)
    X = (X - X.mean(0)) / X.std(0)
    specs = [("rbf", {"gamma": g}) for g in (0.003, 0.03, 0.3)]
    clf = MKLClassifier(kernels=specs, driver=method, C=2.0, normalization=None).fit(X[:80], y[:80])
    options = {"C": 2.0} if METHODS[method].uses_C else {}
    expected = mklopt.learn_weights(KernelSet.from_data(X[:80], specs), np.where(y[:80] == 1, 1, -1),
                                    method, **options)
    np.testing.assert_allclose(clf.weights_, expected, atol=1e-6)
    assert clf.result_.rel_gap <= 1e-4 and clf.result_.info["weights_method"] == method
    # the same predictions as scikit-learn's SVC on K_mu at these weights (libsvm, precomputed)
    train, test = (np.tensordot(clf.weights_, KernelSet.from_data(X[:80], specs).K, axes=1),
                   np.tensordot(clf.weights_, mklopt.kernel_stack(X[80:200], specs, X[:80]), axes=1))
    svc = SVC(C=2.0, kernel="precomputed", tol=1e-8).fit(train, y[:80])
    assert np.mean(clf.predict(X[80:200]) == svc.predict(test)) >= 0.99
    if name == "breast_cancer":
        assert clf.score(X[80:200], y[80:200]) >= 0.85


@parametrize_with_checks([MKLClassifier(kernels=[("linear", {}), ("rbf", {"gamma": "scale"})],
                                        driver="easymkl", tol=1e-3)])
def test_sklearn_compatible(estimator, check):
    check(estimator)
