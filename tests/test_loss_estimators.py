"""MKLRegressor, MKLOneClass and MKLClassifier(multiclass="shared"): scikit-learn conventions
and agreement with libsvm where MKL reduces to one kernel."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_diabetes, load_digits
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVR, OneClassSVM
from sklearn.utils.estimator_checks import parametrize_with_checks

import mklopt
from mklopt import InvalidInputError, MKLClassifier, MKLOneClass, MKLRegressor

FAST = dict(kernels=[("linear", {}), ("rbf", {"gamma": "scale"})], p=2.0, driver="wrapper", tol=1e-3)


@parametrize_with_checks([MKLRegressor(**FAST), MKLRegressor(loss="squared_error", **FAST),
                          MKLOneClass(**FAST), MKLClassifier(multiclass="shared", **FAST)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_exported_from_the_top_level():
    assert {"MKLRegressor", "MKLOneClass", "Loss"} <= set(mklopt.__all__)


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, train_size=150, test_size=150, random_state=0)
    scaler = StandardScaler().fit(X_tr)
    return scaler.transform(X_tr), scaler.transform(X_te), y_tr, y_te


@pytest.mark.parametrize("driver", ["exact", "wrapper"])
def test_regressor_with_one_kernel_is_svr(diabetes, driver):
    X_tr, X_te, y_tr, _ = diabetes
    gamma = 0.05
    reg = MKLRegressor(kernels=[("rbf", {"gamma": gamma})], normalization=None, C=50.0, epsilon=5.0,
                       driver=driver, tol=1e-10 if driver == "exact" else 1e-9).fit(X_tr, y_tr)
    svr = SVR(kernel="rbf", gamma=gamma, C=50.0, epsilon=5.0, tol=1e-12).fit(X_tr, y_tr)
    np.testing.assert_allclose(reg.predict(X_te), svr.predict(X_te), rtol=0, atol=1e-4 * np.std(y_tr))
    assert reg.result_.rel_gap <= 1e-8


def test_regressor_learns_weights_and_scores(diabetes):
    X_tr, X_te, y_tr, y_te = diabetes
    reg = MKLRegressor(p=4 / 3, C=100.0, epsilon=5.0).fit(X_tr, y_tr)
    assert reg.driver_ == reg.driver_choice_.driver and reg.driver_ in ("chunking", "wrapper")
    assert reg.result_.status == "converged" and reg.result_.rel_gap <= 1e-4
    assert reg.weights_.shape == (5,)
    assert reg.score(X_te, y_te) > 0.3  # R^2 on held-out data (a linear model gets about 0.45)
    ridge = MKLRegressor(loss="squared_error", p=2.0, C=1.0, driver="wrapper", tol=1e-6).fit(X_tr, y_tr)
    assert ridge.result_.rel_gap <= 1e-6 and ridge.score(X_te, y_te) > 0.3


def test_one_class_with_one_kernel_is_one_class_svm(diabetes):
    X_tr, X_te, _, _ = diabetes
    occ = MKLOneClass(kernels=[("rbf", {"gamma": 0.1})], normalization=None, nu=0.2,
                      driver="exact", tol=1e-10).fit(X_tr)
    ref = OneClassSVM(kernel="rbf", gamma=0.1, nu=0.2, tol=1e-12).fit(X_tr)
    scale = 0.2 * X_tr.shape[0]  # libsvm's coefficients sum to nu n, mklopt's to 1
    np.testing.assert_allclose(occ.decision_function(X_te) * scale, ref.decision_function(X_te), atol=1e-5)
    np.testing.assert_array_equal(occ.predict(X_te), ref.predict(X_te))
    np.testing.assert_allclose(occ.score_samples(X_te) * scale, ref.score_samples(X_te), atol=1e-5)


def test_one_class_nu_bounds_the_training_outliers(diabetes):
    X_tr = diabetes[0]
    for nu in (0.05, 0.3):
        occ = MKLOneClass(nu=nu, p=2.0).fit(X_tr)
        assert np.mean(occ.predict(X_tr) == -1) <= nu + 1.0 / X_tr.shape[0]
        assert occ.dual_coef_.sum() == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("driver", ["auto", "cutting_plane", "wrapper", "exact"])
def test_a_one_class_problem_whose_optimum_is_zero_says_so_and_is_not_certified(driver):
    """A linear kernel of centred features puts the points' mean at the origin: the one-class
    optimum is 0 and every weight is optimal; the relative gap then divides rounding (~1e-14)
    by its floor and no tolerance is met. The fit is not certified, and says why instead of
    blaming SMO or C; with an RBF kernel beside it the same points certify."""
    rng = np.random.default_rng(9)
    X = StandardScaler().fit_transform(rng.standard_normal((74, 3)))
    with pytest.warns(UserWarning, match="optimal value is zero up to rounding"):
        occ = MKLOneClass(kernels=["linear"], nu=0.07, driver=driver).fit(X)
    result = occ.result_
    assert result.status not in ("converged", "optimal") and not result.certificate.certified(1e-4)
    assert max(abs(result.primal), abs(result.dual)) < 1e-12 * X.shape[0]
    assert "optimal value is zero up to rounding" in result.message and "smaller C" not in result.message
    both = MKLOneClass(kernels=["linear", ("rbf", {"gamma": 0.5})], nu=0.07, driver=driver).fit(X)
    assert both.result_.certificate.certified(1e-4) and "zero up to rounding" not in both.result_.message


def test_the_zero_optimum_note_only_below_the_floor():
    from mklopt.certificates.bounds import zero_optimum_note

    assert zero_optimum_note(5e-14, -1e-15, 1.0, 74) != ""
    assert zero_optimum_note(1e-9, 0.0, 1.0, 74) == ""  # above 1e-12 n: a relative gap means something
    assert zero_optimum_note(np.nan, 0.0, 1.0, 74) == "" and zero_optimum_note(np.inf, 0.0, 1.0, 74) == ""


def test_shared_weights_multiclass_on_digits():
    X, y = load_digits(return_X_y=True)
    X_tr, X_te, y_tr, y_te = train_test_split(X / 16.0, y, train_size=300, test_size=300, random_state=0)
    kernels = [("rbf", {"gamma": g}) for g in (0.005, 0.02, 0.08)] + ["linear"]
    shared = MKLClassifier(kernels=kernels, multiclass="shared", p=2.0, C=10.0).fit(X_tr, y_tr)
    assert shared.result_.loss == "ovr_hinge" and shared.weights_.shape == (4,)
    assert shared.decision_function(X_te).shape == (300, 10) and shared.intercept_.shape == (10,)
    assert shared.score(X_te, y_te) > 0.9
    ovr = MKLClassifier(kernels=kernels, multiclass="ovr", p=2.0, C=10.0).fit(X_tr, y_tr)
    assert ovr.weights_.shape == (10, 4)
    # the shared problem is the sum of the one-vs-rest problems with one more constraint
    # (equal weights), so its optimum is at least the sum of theirs
    assert shared.result_.primal >= sum(r.dual for r in ovr.result_)


def test_estimator_bad_parameters():
    X, y = np.random.default_rng(0).normal(size=(20, 3)), np.arange(20.0)
    with pytest.raises(InvalidInputError, match="loss must be one of"):
        MKLRegressor(loss="hinge").fit(X, y)
    with pytest.raises(InvalidInputError, match="epsilon must be"):
        MKLRegressor(epsilon=-1.0).fit(X, y)
    with pytest.raises(InvalidInputError, match="nu must be"):
        MKLOneClass(nu=0.0).fit(X)
    with pytest.raises(InvalidInputError, match="multiclass must be"):
        MKLClassifier(multiclass="all-pairs").fit(X, y % 3)
    with pytest.raises(InvalidInputError, match="driver must be one of"):
        MKLRegressor(driver="dca").fit(X, y)


@pytest.mark.parametrize("multiclass, classes", [("ovr", (0, 1)), ("ovr", (0, 1, 2)), ("shared", (0, 1, 2))])
def test_fitted_classifier_pickles_small(multiclass, classes):
    """Issue 15: a fitted estimator keeps what prediction needs, not the training stack."""
    import pickle

    from sklearn.datasets import load_digits

    X, digit = load_digits(return_X_y=True)
    keep = np.isin(digit, classes)
    X, digit = X[keep][:600] / 16.0, digit[keep][:600]
    clf = mklopt.MKLClassifier(multiclass=multiclass).fit(X, digit)
    size = len(pickle.dumps(clf))
    assert size <= 2 * X.nbytes + 64_000, (size, X.nbytes)
    assert np.array_equal(pickle.loads(pickle.dumps(clf)).predict(X[:50]), clf.predict(X[:50]))


@pytest.mark.parametrize("form", ["specs", "rank", "precomputed"])
def test_regressor_with_every_target_in_the_tube_predicts_libsvms_offset(form):
    """Targets that all fit in the ε-tube leave no support vector: the model is its offset alone,
    which any point of a segment attains; like libsvm's, it is the segment's midpoint (the end of
    the segment was kept before, at the edge of every tube), and prediction needs no kernel
    against an empty set of support vectors (it raised scikit-learn's NaN error)."""
    import warnings

    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((30, 2)), 0.2 * rng.random(30)
    svr = SVR(epsilon=1.0).fit(X, y)
    options = {"specs": {}, "rank": {"rank": 10}, "precomputed": {"kernels": "precomputed"}}[form]
    data = X
    if form == "precomputed":
        data = np.moveaxis(mklopt.KernelSet.from_data(X, [("rbf", {}), ("linear", {})]).K, 0, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = MKLRegressor(epsilon=1.0, **options).fit(data, y)
        predicted = model.predict(data[:5])
    assert model.support_.size == 0 and model.result_.status == "converged"
    np.testing.assert_allclose(predicted, np.full(5, svr.intercept_[0]), rtol=1e-12)


def test_kernels_against_no_points_are_empty():
    X = np.random.default_rng(1).standard_normal((4, 3))
    assert mklopt.kernel_stack(X, ["rbf", "linear", ("poly", {"degree": 2})], X[:0]).shape == (3, 4, 0)
