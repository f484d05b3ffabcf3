"""Issue 36 point 2: kernels on views (groups of columns), in every representation that has them.

References: ``kernel_stack`` on the column subsets by hand, the dense stack for the
factors, the same estimator given integer columns, and ``mklopt.fit`` on the same stack.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from sklearn.base import clone

import mklopt
from mklopt import MKLClassifier, ViewKernel, views
from mklopt.exceptions import KernelError
from mklopt.kernels import kernel_stack

RNG = np.random.default_rng(0)
X = RNG.standard_normal((60, 7)) * np.array([1, 1, 1, 5, 5, 5, 0.1]) + 40.0  # far from the origin
y = np.where(X[:, 0] - X[:, 1] + 0.2 * (X[:, 3] - 40) > 0, 1, -1)
SPECS = ["linear", ("rbf", {"gamma": 0.2}), ("poly", {"degree": 2, "gamma": 0.1, "coef0": 1.0})]


@pytest.mark.parametrize("columns", [[0, 1, 2], slice(0, 3), np.arange(7) < 3, np.array([0, 1, 2])],
                         ids=["indices", "slice", "mask", "array"])
def test_a_view_kernel_is_the_kernel_on_its_columns(columns):
    stack = kernel_stack(X, [ViewKernel(s, columns, "a") for s in SPECS])
    by_hand = kernel_stack(X[:, :3], SPECS)
    np.testing.assert_allclose(stack, by_hand, rtol=1e-12, atol=1e-9)


def test_views_builds_views_times_specs_with_readable_names():
    ks = mklopt.KernelSet.from_data(X, views({"first": [0, 1, 2], "second": [3, 4, 5, 6]}, SPECS))
    assert ks.M == 6 and ks.names[0] == "first:linear" and ks.names[4].startswith("second:rbf")


def test_scale_uses_the_views_own_variance():
    specs = MKLClassifier(kernels=views({"a": [0, 1, 2], "b": [3, 4, 5]}, [("rbf", {"gamma": "scale"})]))
    specs.fit(X, y)
    gammas = [spec.spec[1]["gamma"] for spec in specs.kernel_specs_]
    assert gammas[0] == pytest.approx(1 / (3 * X[:, :3].var())) and gammas[1] == pytest.approx(1 / (3 * X[:, 3:6].var()))
    assert gammas[1] < gammas[0] / 10  # the second view is 5x wider


def test_factors_on_views_equal_the_dense_views():
    specs = views({"a": [0, 1, 2], "b": slice(3, 7)}, SPECS[:2])
    factors = mklopt.KernelSet.from_data(X, specs, rank=60)
    dense = mklopt.KernelSet.from_data(X, specs)
    np.testing.assert_allclose(factors.dense().K, dense.K, atol=1e-8 * np.abs(dense.K).max())


def test_dataframe_column_names_equal_integer_columns():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(7)])
    named = MKLClassifier(kernels=views({"a": ["f0", "f1", "f2"], "b": ["f3", "f4", "f5", "f6"]}, SPECS[:2]))
    plain = MKLClassifier(kernels=views({"a": [0, 1, 2], "b": [3, 4, 5, 6]}, SPECS[:2]))
    np.testing.assert_allclose(named.fit(frame, y).decision_function(frame),
                               plain.fit(X, y).decision_function(X), rtol=1e-9, atol=1e-9)
    assert named.kernel_names_ == plain.kernel_names_


def test_the_estimator_on_views_solves_the_problem_fit_solves_on_the_same_stack():
    specs = views({"a": [0, 1, 2], "b": [3, 4, 5, 6]}, SPECS[:2])
    clf = MKLClassifier(kernels=specs, normalization=None, driver="cutting_plane", p=1.0, C=1.0, tol=1e-6).fit(X, y)
    direct = mklopt.fit(mklopt.KernelSet.from_data(X, specs), y, "cutting_plane", p=1.0, C=1.0, tol=1e-6)
    assert clf.result_.primal == pytest.approx(direct.primal, rel=2e-6)
    np.testing.assert_allclose(clf.weights_, direct.weights, atol=1e-3)


def test_an_estimator_with_views_clones_and_pickles():
    clf = MKLClassifier(kernels=views({"a": [0, 1, 2]}, "linear")).fit(X, y)
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(again.predict(X), clf.predict(X))
    assert clone(clf).get_params()["kernels"] == clf.get_params()["kernels"]


@pytest.mark.parametrize("columns, match", [
    ([0, 9], "names column 9, but X has 7 columns"),
    ([], "selects no column"),
    (np.array([True, False]), "boolean mask needs 7 entries"),
    (["f0"], "column names need a pandas DataFrame"),
    ([0.5, 1.5], "columns must be integers"),
])
def test_bad_views_are_one_line_kernel_errors(columns, match):
    with pytest.raises(KernelError, match=match) as caught:
        mklopt.KernelSet.from_data(X, [ViewKernel("linear", columns, "v")])
    assert "\n" not in str(caught.value)


def test_unknown_column_name_and_callable_views_on_the_fly_are_refused():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(7)])
    with pytest.raises(KernelError, match="no column named 'g1'"):
        MKLClassifier(kernels=views({"a": ["f0", "g1"]}, "linear")).fit(frame, y)
    with pytest.raises(KernelError, match="cannot be computed on the fly"):
        mklopt.KernelSet.from_data(X, views({"a": [0, 1]}, lambda A, B: A @ B.T), lazy=True)
    with pytest.raises(KernelError, match="non-empty mapping"):
        views({}, "linear")


#: Views of different widths, overlapping, far from the origin; RBF kernels on two views
#: and a plain spec over all columns (its own view) beside them.
LAZY_SPECS = views({"a": [0, 1, 2], "b": slice(3, 7), "ab": [1, 2, 3]},
                   ["linear", ("rbf", {"gamma": 0.2}), ("rbf", {"gamma": "scale"})]) + [("rbf", {"gamma": 0.05})]


def _dense_twin(lazy):
    return mklopt.KernelSet.from_data(X, lazy.specs, normalization=lazy.normalization)


@pytest.mark.parametrize("normalization", [None, "trace", "spherical"])
def test_views_on_the_fly_equal_the_dense_views(normalization):
    from mklopt._compiled.column_cache import new_cache
    from mklopt._compiled.columns import kernel_entries, oracle_of, product_length

    lazy = mklopt.KernelSet.from_data(X, LAZY_SPECS, lazy=True, normalization=normalization)
    dense = _dense_twin(lazy)
    assert lazy.names == dense.names
    oracle = oracle_of(lazy)
    dots, out = new_cache(product_length(oracle), 2), np.empty((lazy.M, lazy.n))
    scale = np.abs(dense.K).max(axis=(1, 2))
    for i in (0, 13, lazy.n - 1):
        kernel_entries(oracle, dots, np.arange(lazy.n), i, out)
        np.testing.assert_array_less(np.abs(out - dense.K[:, :, i]).max(axis=1), 1e-12 * scale)
    np.testing.assert_allclose(lazy.diagonals(), np.einsum("mii->mi", dense.K), rtol=1e-12)
    coef = RNG.standard_normal(lazy.n)
    np.testing.assert_allclose(lazy.products(coef)[1], np.einsum("mij,j->mi", dense.K, coef),
                               rtol=1e-10, atol=1e-10 * scale.max() * np.abs(coef).sum())
    T = RNG.standard_normal((5, 7)) + 40.0
    raw, train = kernel_stack(T, lazy.specs, X), kernel_stack(X, lazy.specs)
    if normalization == "trace":
        raw /= np.einsum("mii->m", train)[:, None, None]
    elif normalization == "spherical":
        test_diag = np.einsum("mii->mi", kernel_stack(T, lazy.specs))
        raw /= np.sqrt(test_diag[:, :, None] * np.einsum("mii->mi", train)[:, None, :])
    np.testing.assert_allclose(lazy.test_kernels(T), raw, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("p", [1.0, 4 / 3])
def test_chunking_on_views_on_the_fly_certifies_the_dense_views_optimum(p):
    lazy = mklopt.KernelSet.from_data(X, LAZY_SPECS, lazy=True, normalization="trace")
    on_the_fly = mklopt.fit(lazy, y, "chunking", C=10.0, p=p, tol=1e-6)
    dense = mklopt.fit(_dense_twin(lazy), y, "chunking", C=10.0, p=p, tol=1e-6)
    assert on_the_fly.status == dense.status == "converged"
    assert max(on_the_fly.dual, dense.dual) <= min(on_the_fly.primal, dense.primal) * (1 + 1e-12)
    assert abs(on_the_fly.primal - dense.primal) <= 1e-6 * dense.primal


def test_an_estimator_computes_views_on_the_fly_at_scale(monkeypatch):
    import mklopt.estimators._base as base

    built = []
    from_data = base.KernelSet.from_data
    monkeypatch.setattr(base.KernelSet, "from_data",
                        lambda *a, **k: built.append(k.get("lazy", False)) or from_data(*a, **k))
    specs = views({"a": [0, 1, 2], "b": [3, 4, 5, 6]}, [("rbf", {"gamma": "scale"}), "linear"])
    monkeypatch.setattr(base, "LAZY_STACK_BYTES", 0)  # every stack counts as too large
    clf = MKLClassifier(kernels=specs, driver="chunking", normalization="trace", C=10.0).fit(X, y)
    monkeypatch.setattr(base, "LAZY_STACK_BYTES", 2**62)
    reference = clone(clf).fit(X, y)
    assert built == [True, False]
    np.testing.assert_allclose(clf.decision_function(X), reference.decision_function(X),
                               rtol=1e-4, atol=1e-4)
