"""One-vs-one fits its points class by class, so that each pair's kernels are copied as blocks.

References: the same classifier fitted on the points already ordered by class (the same pair
problems, so the same bits); NumPy's fancy indexing of the precomputed array; fits from scratch
after the kept kernels are forgotten.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_wine
from sklearn.preprocessing import StandardScaler

import mklopt
from mklopt.estimators import forget_kernels
from mklopt.estimators.one_vs_one import class_order
from mklopt.estimators.precomputed import training_stack
from mklopt.exceptions import InvalidInputError
from mklopt.kernels import kernel_stack

SPECS = ["linear", ("rbf", {"gamma": 0.3})]


@pytest.fixture(scope="module")
def wine():
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    shuffled = np.random.default_rng(1).permutation(len(y))
    return X[shuffled[:120]], y[shuffled[:120]], X[shuffled[120:]]


def _inputs(X, Xt, precomputed: bool):
    """Training and test inputs: features, or the kernels as precomputed arrays."""
    if not precomputed:
        return X, Xt
    return np.moveaxis(kernel_stack(X, SPECS), 0, 2), np.moveaxis(kernel_stack(Xt, SPECS, X), 0, 2)


@pytest.mark.parametrize("precomputed", [False, True])
def test_pairs_are_the_same_problems_whatever_the_order_of_the_points(wine, precomputed):
    """Shuffled points and the same points sorted by class give the same pairs bit for bit; the
    fitted model names the points by their given indices (support_, each pair's points and
    spread coefficients), its support vectors class by class as libsvm's."""
    X, y, Xt = wine
    order = class_order(y)
    assert order is not None and np.all(np.diff(y[order]) >= 0)
    params = dict(kernels="precomputed" if precomputed else SPECS, multiclass="ovo", decision_function_shape="ovo")
    train, test = _inputs(X, Xt, precomputed)
    sorted_train = train[np.ix_(order, order)] if precomputed else train[order]
    sorted_test = test[:, order] if precomputed else test
    forget_kernels()
    given = mklopt.MKLClassifier(**params).fit(train, y)
    forget_kernels()
    by_class = mklopt.MKLClassifier(**params).fit(sorted_train, y[order])
    np.testing.assert_array_equal(given.weights_, by_class.weights_)
    np.testing.assert_array_equal(given.dual_coef_, by_class.dual_coef_)
    np.testing.assert_array_equal(given.decision_function(test), by_class.decision_function(sorted_test))
    np.testing.assert_array_equal(given.support_, order[by_class.support_])
    assert np.all(np.diff(y[given.support_]) >= 0)  # class by class
    if not precomputed:
        np.testing.assert_array_equal(X[given.support_], given.support_vectors_)
    for mine, theirs in zip(given.result_, by_class.result_):
        np.testing.assert_array_equal(mine.info["points"], order[theirs.info["points"]])
        np.testing.assert_array_equal(mine.dual_coef[order], theirs.dual_coef)
        a, b = mine.info["pair"]
        assert set(y[mine.info["points"]]) == {a, b} and mine.status == "converged"


def test_points_in_class_order_or_two_classes_are_fitted_as_given(wine):
    X, y, _ = wine
    assert class_order(np.sort(y)) is None
    assert class_order(np.where(y == 0, 0, 1)) is None  # one problem: nothing to copy by pairs
    clf = mklopt.MKLClassifier(kernels=SPECS, multiclass="ovo").fit(X, y)
    ovr = mklopt.MKLClassifier(kernels=SPECS, multiclass="ovr").fit(X, y)
    assert np.all(np.diff(ovr.support_) > 0) and not np.all(np.diff(clf.support_) > 0)


@pytest.mark.parametrize("M", [1, 3])
def test_a_precomputed_array_is_copied_with_its_points_in_order(M):
    X = np.random.default_rng(M).standard_normal((57, 57, M))
    X.flags.writeable = False
    order = np.random.default_rng(0).permutation(57)
    stack = training_stack(X, order=order)
    assert stack.flags["C_CONTIGUOUS"] and not np.shares_memory(stack, X)
    np.testing.assert_array_equal(stack, np.moveaxis(X[np.ix_(order, order)], 2, 0))
    with pytest.raises(InvalidInputError, match="y has 56 labels but the training kernels are over 57 points"):
        training_stack(X, order=order[:-1])


@pytest.mark.parametrize("normalization", [None, "multiplicative"])
def test_kernels_kept_in_one_class_order_serve_only_that_order(wine, normalization):
    """The stack of an array fitted in class order is kept under that order: other labels (another
    order) on the same array copy it again, and each fit answers as one from scratch."""
    X, y, _ = wine
    K, _ = _inputs(X, X, precomputed=True)
    other = np.roll(y, 7)
    params = dict(kernels="precomputed", multiclass="ovo", normalization=normalization)
    forget_kernels()
    for _ in range(3):  # seen, then kept
        mklopt.MKLClassifier(**params).fit(K, y)
    models = [mklopt.MKLClassifier(**params).fit(K, labels) for labels in (other, y)]
    for model, labels in zip(models, (other, y)):
        forget_kernels()
        fresh = mklopt.MKLClassifier(**params).fit(K, labels)
        np.testing.assert_array_equal(model.weights_, fresh.weights_)
        np.testing.assert_array_equal(model.predict(K), fresh.predict(K))
