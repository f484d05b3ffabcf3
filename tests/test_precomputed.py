"""Issue 36.1: precomputed kernels in every estimator (``kernels="precomputed"``).

X is the kernel stack with the sample axes first: (n, n, M) to fit, (n_test, n_train, M)
to predict, so scikit-learn's cross-validation slices both sample axes (pairwise tag).
References: :func:`mklopt.fit` on the same stack, and the estimator on features.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.metrics import accuracy_score
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.preprocessing import StandardScaler

import mklopt
from mklopt import InvalidInputError, KernelError, KernelSet
from mklopt.kernels import kernel_stack

SPECS = [("linear", {}), ("rbf", {"gamma": 0.01}), ("rbf", {"gamma": 0.1})]


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)[:180]
    return X, y[:180], np.moveaxis(kernel_stack(X, SPECS), 0, 2)  # (n, n, M)


def test_classifier_equals_mklopt_fit_on_the_same_stack(cancer):
    X, y, K = cancer
    clf = mklopt.MKLClassifier(kernels="precomputed", p=4 / 3, C=10.0).fit(K[:120, :120], y[:120])
    # the stack exactly as the estimator receives it (a C-ordered (M, n, n) copy of X)
    ks = KernelSet(np.ascontiguousarray(np.moveaxis(K[:120, :120], 2, 0))).normalized("multiplicative")
    ref = mklopt.fit(ks, np.where(y[:120] == 1, 1, -1), clf.driver_, p=4 / 3, C=10.0, tol=1e-4)
    assert clf.result_.status == "converged" and clf.result_.rel_gap <= 1e-4
    np.testing.assert_allclose(clf.weights_, ref.weights, rtol=0, atol=1e-12)
    T = ks.transform_test(np.moveaxis(K[120:, :120], 2, 0))
    np.testing.assert_allclose(clf.decision_function(K[120:, :120]), ref.decision_function(T), atol=1e-9)
    # and the estimator on the features that built the stack (bit for bit: from_data's training
    # kernels, kernel_stack's test kernels, as the estimator on features computes them)
    # normalized as the estimator normalizes them (the linear kernel by its features' variance),
    # and the test kernels divided alike, given as they are
    built = KernelSet.from_data(X[:120], SPECS, normalization="multiplicative")
    train = np.moveaxis(built.K, 0, 2)
    test = np.moveaxis(built.transform_test(kernel_stack(X[120:], SPECS, X[:120])), 0, 2)
    same = mklopt.MKLClassifier(kernels="precomputed", normalization=None, p=4 / 3, C=10.0).fit(train, y[:120])
    on_features = mklopt.MKLClassifier(kernels=SPECS, p=4 / 3, C=10.0).fit(X[:120], y[:120])
    np.testing.assert_allclose(same.decision_function(test), on_features.decision_function(X[120:]), atol=1e-9)


def test_grid_search_equals_the_same_search_by_hand(cancer):
    """GridSearchCV slices both sample axes of the stack; each fold is mklopt.fit by hand."""
    _, y, K = cancer
    Cs, cv = [0.1, 1.0, 10.0], StratifiedKFold(3)
    search = GridSearchCV(mklopt.MKLClassifier(kernels="precomputed", p=2.0, driver="wrapper", tol=1e-6),
                          {"C": Cs}, cv=cv).fit(K, y)
    by_hand = []
    for C in Cs:
        scores = []
        for train, test in cv.split(K, y):
            ks = KernelSet(np.moveaxis(K[np.ix_(train, train)], 2, 0)).normalized("multiplicative")
            res = mklopt.fit(ks, np.where(y[train] == 1, 1, -1), "wrapper", p=2.0, C=C, tol=1e-6)
            T = ks.transform_test(np.moveaxis(K[np.ix_(test, train)], 2, 0))
            scores.append(accuracy_score(np.where(y[test] == 1, 1, -1), res.predict(T)))
        by_hand.append(np.mean(scores))
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], by_hand, rtol=0, atol=1e-12)
    assert search.best_params_["C"] == Cs[int(np.argmax(by_hand))]


def test_regressor_and_one_class_take_precomputed_stacks():
    X, t = load_diabetes(return_X_y=True)
    X = StandardScaler().fit_transform(X)[:150]
    # the training stack exactly as the estimator on features builds and normalizes it, the
    # test kernels as it does (given as they are: the same kernels bit for bit)
    built = KernelSet.from_data(X[:100], SPECS, normalization="multiplicative")
    K = np.zeros((150, 100, len(SPECS)))
    K[:100] = np.moveaxis(built.K, 0, 2)
    K[100:] = np.moveaxis(built.transform_test(kernel_stack(X[100:], SPECS, X[:100])), 0, 2)
    reg = mklopt.MKLRegressor(kernels="precomputed", normalization=None, p=2.0, C=10.0,
                              epsilon=5.0).fit(K[:100, :100], t[:100])
    on_features = mklopt.MKLRegressor(kernels=SPECS, p=2.0, C=10.0, epsilon=5.0).fit(X[:100], t[:100])
    np.testing.assert_allclose(reg.predict(K[100:, :100]), on_features.predict(X[100:]), rtol=0, atol=1e-8)
    occ = mklopt.MKLOneClass(kernels="precomputed", normalization=None, nu=0.3).fit(
        [K[:100, :100, m] for m in range(3)])
    ref = mklopt.MKLOneClass(kernels=SPECS, nu=0.3).fit(X[:100])
    np.testing.assert_allclose(occ.decision_function(K[100:, :100]), ref.decision_function(X[100:]), atol=1e-8)
    assert occ.support_vectors_.shape == (0, 100)


def test_multiclass_one_vs_rest_on_a_precomputed_stack():
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    K = np.moveaxis(kernel_stack(X, SPECS[:2]), 0, 2)
    clf = mklopt.MKLClassifier(kernels="precomputed", p=2.0).fit(K[::2, ::2], y[::2])
    ref = mklopt.MKLClassifier(kernels=SPECS[:2], p=2.0).fit(X[::2], y[::2])
    np.testing.assert_array_equal(clf.predict(K[1::2, ::2]), ref.predict(X[1::2]))
    assert clf.weights_.shape == (3, 2)


def _bad(K, y):
    asym = K.copy()
    asym[0, 1, 0] += 1.0
    nan = K.copy()
    nan[3, 3, 1] = np.nan
    infinite_last = K.copy()  # checked as the copy reads it: the last value read
    infinite_last[-1, -1, -1] = np.inf
    return [
        (dict(), K[:, :50], y, InvalidInputError, "square in their first two axes"),
        (dict(), K[:, :, :0], y, InvalidInputError, r"shape \(n_samples, n_samples, M\)"),
        (dict(), nan, y, InvalidInputError, "NaN or infinite"),
        (dict(), infinite_last, y, InvalidInputError, "NaN or infinite"),
        (dict(normalization=None), np.ascontiguousarray(nan[:, :, 1:2]), y, InvalidInputError,
         "NaN or infinite"),  # one kernel, used as a view: no copy to check it
        (dict(), asym, y, KernelError, "not symmetric"),
        (dict(), K, y[:-1], ValueError, "inconsistent numbers of samples"),
        (dict(normalization="spherical"), K, y, InvalidInputError, "k\\(x, x\\) of each test point"),
        (dict(rank=5), K, y, InvalidInputError, "leave rank=None"),
        (dict(), np.array([["a"]]), y[:1], InvalidInputError, "must be numeric"),
    ]


def test_bad_precomputed_input_is_a_clear_error_and_nothing_is_changed(cancer):
    _, y, K = cancer
    for params, X, labels, error, match in _bad(K[:60, :60], y[:60]):
        before = X.copy()
        with pytest.raises(error, match=match):
            mklopt.MKLClassifier(kernels="precomputed", **params).fit(X, labels)
        np.testing.assert_array_equal(X, before)


@pytest.mark.parametrize("shape, match", [((20, 59, 3), r"\(n_test, 60, 3\)"),
                                          ((20, 60, 2), r"\(n_test, 60, 3\)"),
                                          ((20, 60), r"\(n_test, 60, 3\)")])
def test_a_test_stack_that_does_not_match_training_is_refused(cancer, shape, match):
    _, y, K = cancer
    clf = mklopt.MKLClassifier(kernels="precomputed").fit(K[:60, :60], y[:60])
    with pytest.raises(InvalidInputError, match=match):
        clf.predict(np.ones(shape))


def test_pairwise_tag_is_set_only_for_precomputed():
    from sklearn.utils import get_tags

    assert get_tags(mklopt.MKLClassifier(kernels="precomputed")).input_tags.pairwise
    assert not get_tags(mklopt.MKLClassifier()).input_tags.pairwise


def test_a_kernel_set_is_not_screened_again_and_gives_the_answer_of_its_array(cancer, monkeypatch):
    """A dense KernelSet given as the precomputed kernels was validated when it was made: the
    estimator takes its stack as it is (no copy, no second PSD screen); a plain array of the
    same kernels is screened, and both give the same fit."""
    from mklopt.kernels import _checked_stack as checked

    _, y, K = cancer
    ks = KernelSet(np.ascontiguousarray(np.moveaxis(K[:120, :120], 2, 0)))
    screened = []
    real_check = checked.check_psd
    monkeypatch.setattr(checked, "check_psd", lambda *a, **k: screened.append(1) or real_check(*a, **k))
    from_set = mklopt.MKLClassifier(kernels="precomputed", p=4 / 3, C=10.0).fit(ks, y[:120])
    assert screened == [] and "_validated_kernels" not in vars(from_set)
    from_array = mklopt.MKLClassifier(kernels="precomputed", p=4 / 3, C=10.0).fit(ks.as_precomputed(), y[:120])
    assert screened == [1]
    np.testing.assert_array_equal(from_set.weights_, from_array.weights_)
    np.testing.assert_array_equal(from_set.decision_function(K[120:, :120]),
                                  from_array.decision_function(K[120:, :120]))
    assert not ks.K.flags.writeable  # the set's own stack, unchanged and still read-only


@pytest.mark.parametrize("normalization", [None, "trace"])
def test_float32_kernels_refused_as_indefinite_say_why_and_the_way_out_works(normalization):
    """A PSD kernel of low rank rounded to float32 is indefinite in float64 beyond psd_tol: refused
    (as a KernelSet of the same array is), the error naming the float32 input and the way
    through a KernelSet with a larger psd_tol, which then fits."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((90, 2)) * 30.0  # a linear kernel of rank 2
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    K = np.stack([X @ X.T], axis=2).astype(np.float32)
    kernels = mklopt.MKLClassifier(kernels="precomputed", normalization=normalization)
    with pytest.raises(mklopt.exceptions.NotPSDError, match="given as float32.*psd_tol=1e-6"):
        kernels.fit(K, y)
    with pytest.warns(mklopt.exceptions.MKLWarning, match="clipped small negative eigenvalues"):
        clipped = mklopt.KernelSet(np.moveaxis(K, 2, 0), psd_tol=1e-6)
    fitted = mklopt.MKLClassifier(kernels="precomputed", normalization=normalization).fit(clipped, y)
    assert fitted.result_.certificate.certified(1e-4)
    with pytest.raises(mklopt.exceptions.NotPSDError) as plain:  # float64 input: no such hint
        mklopt.MKLClassifier(kernels="precomputed", normalization=normalization).fit(
            K.astype(np.float64) - 1e-3 * np.eye(90)[:, :, None] * np.abs(K).max(), y)
    assert "float32" not in str(plain.value)


@pytest.mark.parametrize("M", [1, 3])
def test_as_precomputed_is_a_copy_the_caller_owns(cancer, M):
    """The (n, n, M) array of a set is a writable copy, one kernel or several: with one kernel
    the moved axes are already contiguous, and it was the set's own read-only stack."""
    _, _, K = cancer
    ks = KernelSet(np.ascontiguousarray(np.moveaxis(K[:60, :60, :M], 2, 0)))
    array = ks.as_precomputed()
    assert array.shape == (60, 60, M) and array.flags.writeable and array.flags.c_contiguous
    assert not np.shares_memory(array, ks.K)
    np.testing.assert_array_equal(array, np.moveaxis(ks.K, 0, 2))
    array[0, 0, 0] = -1.0  # the caller's to change
    assert ks.K[0, 0, 0] != -1.0


@pytest.mark.parametrize("normalization", ["multiplicative", "trace"])
@pytest.mark.parametrize("M", [1, 3])
def test_the_copy_of_an_array_is_normalized_in_place_and_the_array_is_unchanged(cancer, monkeypatch,
                                                                                normalization, M):
    """The estimator's own copy of a precomputed array is divided in place (no second stack),
    to the very set ``KernelSet(...).normalized`` makes; the caller's array is never written,
    also where it is one C-contiguous kernel that the (M, n, n) layout would view as it is."""
    from mklopt.kernels._normalize import _Normalizing

    _, y, K = cancer
    X = np.ascontiguousarray(K[:120, :120, :M])
    before = X.copy()
    reference = KernelSet(np.moveaxis(X, 2, 0)).normalized(normalization)
    monkeypatch.setattr(_Normalizing, "_divided", lambda *a: pytest.fail("a second, divided stack was made"))
    clf = mklopt.MKLClassifier(kernels="precomputed", normalization=normalization, C=10.0).fit(X, y[:120])
    np.testing.assert_array_equal(X, before)
    ks = clf._prepare_kernels(clf._fit_inputs(X, y[:120])[0])
    np.testing.assert_array_equal(ks.K, reference.K)
    np.testing.assert_array_equal(ks.scales, reference.scales)
    assert clf.result_.status == "converged" and not ks.K.flags.writeable


def test_a_kernel_that_cannot_be_normalized_is_named_and_the_array_is_unchanged(cancer):
    _, y, K = cancer
    X = np.ascontiguousarray(K[:60, :60])
    X[:, :, 1] = 0.0
    before = X.copy()
    with pytest.raises(KernelError, match=r"\['K1'\] are all zero"):
        mklopt.MKLClassifier(kernels="precomputed").fit(X, y[:60])
    np.testing.assert_array_equal(X, before)


@pytest.mark.parametrize("M", [1, 3])
@pytest.mark.parametrize("copy", [False, True])
def test_the_training_stack_is_the_arrays_kernels_first(M, copy):
    """(n, n, M) -> (M, n, n) by the compiled copy (rows split over the cores): NumPy's
    moveaxis bit for bit, the caller's array unchanged and, with copy=True or M > 1, not shared."""
    from mklopt.estimators.precomputed import training_stack

    X = np.random.default_rng(M).standard_normal((131, 131, M))
    X.flags.writeable = False  # a read-only array is read, never written
    stack = training_stack(X, copy=copy)
    assert stack.flags["C_CONTIGUOUS"] and np.array_equal(stack, np.moveaxis(X, 2, 0))
    assert np.shares_memory(stack, X) == (M == 1 and not copy)
