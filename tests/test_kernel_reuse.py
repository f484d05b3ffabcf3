"""The last fit's training kernels reused by the next fit on the same features (a grid search).

References: the same fits with the kept set forgotten before each (kernels built afresh);
counts of kernel builds.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.model_selection import GridSearchCV

import mklopt
from mklopt import KernelSet
from mklopt.estimators import _kernel_reuse


@pytest.fixture
def builds(monkeypatch):
    """The number of dense kernel sets built from features so far."""
    _kernel_reuse.forget_kernels()
    made = []
    real = KernelSet.from_data.__func__

    def counted(cls, *args, **kwargs):
        made.append(1)
        return real(cls, *args, **kwargs)

    monkeypatch.setattr(KernelSet, "from_data", classmethod(counted))
    yield made
    _kernel_reuse.forget_kernels()


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return X[::2].copy(), y[::2]


def test_a_second_fit_on_the_same_features_reuses_the_kernels_and_agrees(builds, iris):
    X, y = iris
    first = mklopt.MKLClassifier(C=1.0).fit(X, y)
    second = mklopt.MKLClassifier(C=10.0).fit(X, y)
    assert len(builds) == 1
    _kernel_reuse.forget_kernels()
    fresh = mklopt.MKLClassifier(C=10.0).fit(X, y)
    assert len(builds) == 2
    np.testing.assert_allclose(second.weights_, fresh.weights_, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(second.predict(X), fresh.predict(X))
    assert first.weights_.shape == second.weights_.shape


def test_features_changed_in_place_are_built_again(builds, iris):
    X, y = iris
    X = X.copy()
    mklopt.MKLClassifier().fit(X, y)
    X[0, 0] += 1e-9  # one entry, in place: the digest changes
    mklopt.MKLClassifier().fit(X, y)
    assert len(builds) == 2


@pytest.mark.parametrize("change", ["specs", "normalization"])
def test_other_specs_or_normalization_are_built_again(builds, iris, change):
    X, y = iris
    mklopt.MKLClassifier(kernels=[("rbf", {"gamma": 0.1}), "linear"]).fit(X, y)
    other = {"specs": {"kernels": [("rbf", {"gamma": 0.2}), "linear"]},
             "normalization": {"kernels": [("rbf", {"gamma": 0.1}), "linear"], "normalization": "trace"}}[change]
    mklopt.MKLClassifier(**other).fit(X, y)
    assert len(builds) == 2


def test_a_callable_kernel_is_never_reused(builds, iris):
    X, y = iris
    for _ in range(2):
        mklopt.MKLClassifier(kernels=[lambda A, B: A @ B.T, "rbf"]).fit(X, y)
    assert len(builds) == 2


def test_a_set_over_the_size_limit_is_not_kept(builds, iris, monkeypatch):
    monkeypatch.setattr(_kernel_reuse, "REUSE_BYTES", 0)
    X, y = iris
    for _ in range(2):
        mklopt.MKLClassifier().fit(X, y)
    assert len(builds) == 2


def test_a_grid_search_builds_each_folds_kernels_once(builds, iris):
    X, y = iris
    GridSearchCV(mklopt.MKLClassifier(), {"C": [0.1, 1.0, 10.0]}, cv=3).fit(X, y)
    assert len(builds) == 3 + 1  # three folds, then the refit on all points


@pytest.fixture
def checks(monkeypatch):
    """The number of precomputed training arrays checked (scanned) so far."""
    from mklopt.kernels import _checked_stack as checked

    _kernel_reuse.forget_kernels()
    made = []
    real = checked.scan_stack

    def counted(*args, **kwargs):
        made.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(checked, "scan_stack", counted)
    yield made
    _kernel_reuse.forget_kernels()


@pytest.fixture(scope="module")
def precomputed(iris):
    X, y = iris
    return KernelSet.from_data(X, ["linear", ("rbf", {"gamma": 0.5})]).as_precomputed(), y


@pytest.mark.parametrize("normalization", [None, "trace", "multiplicative"])
def test_a_precomputed_array_seen_again_is_not_copied_or_checked_again(checks, precomputed, normalization):
    """Normalized: the first fit on an array only notes a sample of it; the second hashes it and
    keeps the checked set. Without normalization the first keeps it (its stack holds the array's
    values, compared at the next fit). Either way a later fit on a copy (the content counts)
    reuses it, with the answer of a fit from scratch."""
    K, y = precomputed
    first = mklopt.MKLClassifier(kernels="precomputed", normalization=normalization, C=1.0).fit(K, y)
    mklopt.MKLClassifier(kernels="precomputed", normalization=normalization, C=2.0).fit(K, y)
    kept_at = 1 if normalization is None else 2
    assert len(checks) == kept_at
    second = mklopt.MKLClassifier(kernels="precomputed", normalization=normalization, C=10.0).fit(K.copy(), y)
    assert len(checks) == kept_at
    _kernel_reuse.forget_kernels()
    fresh = mklopt.MKLClassifier(kernels="precomputed", normalization=normalization, C=10.0).fit(K, y)
    assert len(checks) == kept_at + 1
    np.testing.assert_allclose(second.weights_, fresh.weights_, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(second.predict(K), fresh.predict(K))
    assert first.predict(K).shape == y.shape


@pytest.mark.parametrize("change", ["next float", "negative zero", "last entry"])
def test_an_unnormalized_array_kept_by_its_sample_is_reused_only_if_equal_bit_for_bit(checks, precomputed, change):
    """Kept under its sample alone, the set is reused only by an array equal to its stack: a
    symmetric pair of entries outside the sample one float away, the sign of a zero there, the
    last entry — each is checked again, and the fit answers as one from scratch."""
    K, y = precomputed
    same_class = (y[:, None] == y[None, :]).astype(float)  # PSD: its kernel has exact zeros
    K = np.ascontiguousarray(np.dstack([K, K[:, :, 1] * same_class]))
    mklopt.MKLClassifier(kernels="precomputed", normalization=None).fit(K, y)
    assert len(checks) == 1
    sampled = set(np.linspace(0, K.size - 1, min(_kernel_reuse.SAMPLE, K.size)).astype(np.int64).tolist())
    n, M = K.shape[1], K.shape[2]
    i, j = next((i, j) for i in range(n) for j in range(i + 1, n) if y[i] != y[j]
                and {(i * n + j) * M + m for m in (1, 2)}.isdisjoint(sampled)
                and {(j * n + i) * M + m for m in (1, 2)}.isdisjoint(sampled))
    changed = K.copy()
    if change == "next float":
        changed[i, j, 1] = changed[j, i, 1] = np.nextafter(K[i, j, 1], np.inf)
    elif change == "negative zero":
        assert K[i, j, 2] == 0.0 and not np.signbit(K[i, j, 2])
        changed[i, j, 2] = changed[j, i, 2] = -0.0
    else:
        changed[-1, -1, -1] = np.nextafter(K[-1, -1, -1], np.inf)
    model = mklopt.MKLClassifier(kernels="precomputed", normalization=None).fit(changed, y)
    assert len(checks) == 2
    mklopt.MKLClassifier(kernels="precomputed", normalization=None).fit(changed.copy(), y)
    assert len(checks) == 2  # the changed array is now the one kept
    _kernel_reuse.forget_kernels()
    fresh = mklopt.MKLClassifier(kernels="precomputed", normalization=None).fit(changed, y)
    np.testing.assert_array_equal(model.weights_, fresh.weights_)


def test_a_precomputed_array_changed_in_place_is_checked_again(checks, precomputed):
    K, y = precomputed
    K = K.copy()
    for _ in range(2):  # noted, then kept
        mklopt.MKLClassifier(kernels="precomputed").fit(K, y)
    sampled = np.linspace(0, K.size - 1, min(_kernel_reuse.SAMPLE, K.size)).astype(np.int64)
    assert 1 not in sampled  # the entry changed below is not in the sample: the digest tells
    K.flat[1] += 1e-9  # K[0, 0, 1], in place
    mklopt.MKLClassifier(kernels="precomputed").fit(K, y)
    assert len(checks) == 3


def test_a_list_of_kernels_is_checked_at_every_fit(checks, precomputed):
    K, y = precomputed
    for _ in range(2):
        mklopt.MKLClassifier(kernels="precomputed").fit([K[:, :, 0], K[:, :, 1]], y)
    assert len(checks) == 2


def test_a_clipped_precomputed_array_warns_at_every_fit(checks, precomputed):
    """A kernel with a small negative eigenvalue is clipped (with a warning) each time: such a
    set is not kept."""
    K, y = precomputed
    K = K.copy()
    w, V = np.linalg.eigh(K[:, :, 1])
    K[:, :, 1] = (V * np.r_[-1e-9 * w.max(), w[1:]]) @ V.T
    K[:, :, 1] = (K[:, :, 1] + K[:, :, 1].T) / 2
    for _ in range(2):
        with pytest.warns(mklopt.exceptions.MKLWarning, match="clipped"):
            mklopt.MKLClassifier(kernels="precomputed").fit(K, y)
    assert len(checks) == 2


@pytest.mark.parametrize("normalization", ["multiplicative", None])
def test_a_precomputed_grid_search_checks_each_fold_once(checks, precomputed, normalization):
    """Normalized: each fold noted at the first C, checked and kept at the second, reused at the
    third; without normalization kept at the first. The refit on all points is checked."""
    K, y = precomputed
    GridSearchCV(mklopt.MKLClassifier(kernels="precomputed", normalization=normalization),
                 {"C": [0.1, 1.0, 10.0]}, cv=3).fit(K, y)
    assert len(checks) == (3 if normalization is None else 3 + 3) + 1
