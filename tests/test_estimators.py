"""scikit-learn API of MKLClassifier: estimator checks, model selection, pipelines, OvR."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_iris, make_classification
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

import mklopt
from mklopt import InvalidInputError, KernelSet, MKLClassifier, kernel_stack

# Fast configuration for the ~50 scikit-learn checks: libsvm wrapper, loose gap.
FAST = dict(kernels=[("linear", {}), ("rbf", {"gamma": "scale"})], p=2.0,
            driver="wrapper", tol=1e-3)
SPECS = [("linear", {}), ("rbf", {"gamma": 0.05}), ("poly", {"degree": 2, "gamma": 0.05, "coef0": 1.0})]


@parametrize_with_checks([MKLClassifier(**FAST)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, train_size=120, test_size=200,
                                              random_state=0, stratify=y)
    scaler = StandardScaler().fit(X_tr)
    return scaler.transform(X_tr), scaler.transform(X_te), y_tr, y_te


def test_exact_matches_solve(cancer):
    """The estimator's exact fit is mklopt.solve on the same normalized kernels."""
    X_tr, X_te, y_tr, y_te = cancer
    clf = MKLClassifier(kernels=SPECS, normalization="trace", p=4 / 3, C=50.0, driver="exact").fit(X_tr, y_tr)
    ks = KernelSet.from_data(X_tr, SPECS).normalized("trace")
    ref = mklopt.solve(ks, y_tr, "lp_dual", p=4 / 3, C=50.0)
    assert clf.result_.status == ref.status == "optimal"
    np.testing.assert_allclose(clf.weights_, ref.weights, atol=1e-6)
    np.testing.assert_allclose(clf.result_.primal, ref.primal, rtol=1e-9)
    T = ks.transform_test(kernel_stack(X_te, SPECS, X_tr))
    np.testing.assert_allclose(clf.decision_function(X_te), ref.decision_function(T), atol=1e-9)
    assert np.array_equal(clf.predict(X_te), ref.predict(T))
    assert clf.score(X_te, y_te) > 0.9


def test_driver_matches_exact(cancer):
    X_tr, _, y_tr, _ = cancer
    exact = MKLClassifier(kernels=SPECS, p=2.0, driver="exact").fit(X_tr, y_tr)
    loop = MKLClassifier(kernels=SPECS, p=2.0, driver="wrapper", tol=1e-6).fit(X_tr, y_tr)
    assert loop.result_.rel_gap <= 1e-6
    np.testing.assert_allclose(loop.weights_, exact.weights_, atol=2e-3)
    np.testing.assert_allclose(loop.result_.primal, exact.result_.primal, rtol=1e-5)


def test_fitted_attributes_binary(cancer):
    X_tr, _, y_tr, _ = cancer
    labels = np.where(y_tr == 1, "benign", "malignant")
    clf = MKLClassifier(kernels=SPECS, driver="cutting_plane").fit(X_tr, labels)
    assert list(clf.classes_) == ["benign", "malignant"]
    assert clf.weights_.shape == (3,) and np.isclose(clf.weights_.sum(), 1.0, atol=1e-6)
    assert clf.dual_coef_.shape == clf.support_.shape
    assert clf.intercept_.shape == (1,)
    assert isinstance(clf.result_, mklopt.MKLResult) and clf.result_.rel_gap <= 1e-4
    assert clf.n_features_in_ == X_tr.shape[1] and clf.n_iter_ >= 1
    assert set(clf.predict(X_tr)) <= {"benign", "malignant"}


def test_grid_search_over_C_and_p(cancer):
    X_tr, X_te, y_tr, y_te = cancer
    grid = GridSearchCV(MKLClassifier(kernels=SPECS, driver="wrapper", tol=1e-3),
                        {"C": [0.1, 1.0], "p": [4 / 3, 2.0]}, cv=3)
    grid.fit(X_tr, y_tr)
    assert set(grid.best_params_) == {"C", "p"}
    assert grid.best_estimator_.weights_.shape == (3,)
    assert grid.score(X_te, y_te) > 0.9


def test_pipeline_with_scaler():
    X, y = load_breast_cancer(return_X_y=True)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, train_size=150, test_size=200, random_state=1)
    pipe = make_pipeline(StandardScaler(), MKLClassifier(p=4 / 3, driver="wrapper"))
    pipe.fit(X_tr, y_tr)
    assert pipe.score(X_te, y_te) > 0.9
    assert pipe[-1].weights_.shape == (5,)  # the default kernel set


def test_multiclass_one_vs_rest_iris():
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    clf = MKLClassifier(kernels=SPECS, p=2.0, driver="wrapper", tol=1e-4, multiclass="ovr").fit(X, y)
    assert clf.weights_.shape == (3, 3) and clf.intercept_.shape == (3,)
    assert isinstance(clf.result_, list) and len(clf.result_) == 3
    assert all(r.rel_gap <= 1e-4 for r in clf.result_)
    scores = clf.decision_function(X)
    assert scores.shape == (150, 3)
    assert np.array_equal(clf.predict(X), clf.classes_[scores.argmax(axis=1)])
    assert clf.score(X, y) > 0.9
    # each column is the binary MKL of "class c against the rest"
    one = MKLClassifier(kernels=SPECS, p=2.0, driver="wrapper", tol=1e-4).fit(X, y == 2)
    np.testing.assert_allclose(one.weights_, clf.weights_[2], atol=1e-8)


@pytest.mark.parametrize("normalization", [None, "trace", "multiplicative", "spherical", "tail_sum"])
def test_normalizations_predict_like_solve(cancer, normalization):
    X_tr, X_te, y_tr, _ = cancer
    C = 100.0 if normalization in ("trace", "tail_sum") else 1.0
    # both to a gap far below the comparison's 1e-8: the estimator's divisors (the feature-space
    # variance from centred data) and the kernel set's (from its entries) differ in the last bits
    clf = MKLClassifier(kernels=SPECS, normalization=normalization, C=C, p=2.0,
                        driver="wrapper", tol=1e-10).fit(X_tr, y_tr)
    ks = KernelSet.from_data(X_tr, SPECS)
    T = kernel_stack(X_te, SPECS, X_tr)
    if normalization is not None:
        diag = np.array([kernel_stack(x[None], SPECS)[:, 0, 0] for x in X_te]).T
        ks = ks.normalized(normalization, theta=2 if normalization == "tail_sum" else None)
        T = ks.transform_test(T, test_diag=diag if normalization == "spherical" else None)
    ref = mklopt.fit(ks, y_tr, "wrapper", C=C, p=2.0, tol=1e-10)
    np.testing.assert_allclose(clf.decision_function(X_te), ref.decision_function(T), atol=1e-8)


def test_user_regularizer_uses_primal():
    X, y = make_classification(n_samples=60, n_features=5, random_state=0)
    enet = mklopt.ElasticNet(a=1.0, b=1.0)
    clf = MKLClassifier(kernels=SPECS, regularizer=enet, driver="exact").fit(X, y)
    assert clf.result_.formulation == "lp_primal" and clf.result_.status == "optimal"
    assert enet.violation(clf.weights_) <= 1e-9


@pytest.mark.parametrize("params, match", [
    (dict(normalization="max"), "normalization"),
    (dict(driver="simplex"), "driver"),
    (dict(p=0.5), "p must be >= 1"),
    (dict(C=-1.0), "C must be positive"),
    (dict(theta=-1), "theta"),
    (dict(kernels=[]), "kernels is empty"),
])
def test_bad_hyperparameters(params, match):
    X, y = make_classification(n_samples=30, n_features=4, random_state=0)
    with pytest.raises(InvalidInputError, match=match):
        MKLClassifier(**{"driver": "wrapper", **params}).fit(X, y)


def test_max_iter_warns_convergence():
    from sklearn.exceptions import ConvergenceWarning

    X, y = make_classification(n_samples=60, n_features=5, random_state=0)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        clf = MKLClassifier(kernels=SPECS, p=1.0, driver="wrapper", tol=1e-9, max_iter=2).fit(X, y)
    assert clf.result_.status == "max_iter"


def test_dca_driver(cancer):
    X_tr, X_te, y_tr, y_te = cancer
    clf = MKLClassifier(kernels=SPECS, normalization="trace", C=100.0, driver="dca", theta=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(X_tr, y_tr)
    assert clf.weights_.shape == (3,) and clf.score(X_te, y_te) > 0.9


def test_vkr_classifier_exported():
    from mklopt.estimators.vkr import VKRClassifier

    assert mklopt.VKRClassifier is VKRClassifier
    assert "VKRClassifier" in mklopt.__all__


# ------------------------------------------------------------------ issue 12: fast default
@pytest.fixture(scope="module")
def digits_odd_even():
    from sklearn.datasets import load_digits

    X, digit = load_digits(return_X_y=True)
    X, y = X[:500] / 16.0, np.where(digit[:500] % 2 == 1, 1, -1)
    return X[:400], X[400:], y[:400], y[400:]


@pytest.mark.parametrize("n, p", [(60, 1.0), (200, 1.0), (60, 4 / 3), (200, 4 / 3)])
def test_auto_driver_is_a_loop_at_every_size(digits_odd_even, n, p):
    """Issue 35: the exact interior-point solve was 10-100x slower than the loops at 150
    points; "auto" never picks it, but the core or the outer loop its estimates name."""
    X_tr, _, y_tr, _ = digits_odd_even
    clf = MKLClassifier(kernels=SPECS, p=p).fit(X_tr[:n], y_tr[:n])
    loops = ("chunking", "cutting_plane" if p == 1.0 else "wrapper")
    assert clf.driver == "auto" and clf.driver_ in loops and clf.driver_ == clf.driver_choice_.driver
    assert clf.result_.rel_gap <= 1e-4 and clf.result_.status == "converged"


def test_auto_matches_the_exact_optimum(digits_odd_even):
    """The loop chosen by "auto" reaches the exact solve's optimum to its certified gap."""
    X_tr, _, y_tr, _ = digits_odd_even
    auto = MKLClassifier(kernels=SPECS, p=4 / 3).fit(X_tr, y_tr)
    exact = MKLClassifier(kernels=SPECS, p=4 / 3, driver="exact").fit(X_tr, y_tr)
    assert auto.result_.dual <= exact.result_.primal + 1e-9 * abs(exact.result_.primal)
    assert exact.result_.dual <= auto.result_.primal + 1e-9 * abs(auto.result_.primal)
    assert abs(auto.result_.primal - exact.result_.primal) <= 1e-4 * abs(exact.result_.primal)


@pytest.mark.parametrize("normalization", ["multiplicative", "trace", "spherical"])
def test_prediction_needs_only_the_support_vectors(digits_odd_even, normalization):
    """No training kernel stack is kept; decisions equal the result's on the full kernels."""
    X_tr, X_te, y_tr, _ = digits_odd_even
    clf = MKLClassifier(kernels=SPECS, p=2.0, normalization=normalization).fit(X_tr, y_tr)
    M, n = len(SPECS), len(y_tr)
    for value in vars(clf).values():
        assert not (isinstance(value, np.ndarray) and value.size >= M * n * n)
    assert clf.support_vectors_.shape == (clf.support_.size, X_tr.shape[1]) and clf.support_.size < n
    ks = KernelSet.from_data(X_tr, SPECS).normalized(normalization)
    diag = np.einsum("mii->mi", kernel_stack(X_te, SPECS)) if normalization == "spherical" else None
    T = ks.transform_test(kernel_stack(X_te, SPECS, X_tr), test_diag=diag)
    np.testing.assert_allclose(clf.decision_function(X_te), clf.result_.decision_function(T),
                               rtol=1e-10, atol=1e-10)
