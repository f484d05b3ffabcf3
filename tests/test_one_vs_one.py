"""Issue 58: one-vs-one multiclass MKL (libsvm's scheme): k(k-1)/2 pair problems, each its own
weights and certificate, predictions by votes as scikit-learn's SVC."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_iris, load_wine
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

import mklopt
from mklopt.estimators.one_vs_one import class_pairs, ovr_shaped, votes

SPECS = ["linear", ("rbf", {"gamma": 0.3})]


@pytest.fixture(scope="module")
def wine():
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    rng = np.random.default_rng(0)
    order = rng.permutation(len(y))
    return X[order[:120]], y[order[:120]], X[order[120:]], y[order[120:]]


@pytest.mark.parametrize("driver", ["wrapper", "chunking"])
def test_ovo_equals_the_separate_binary_fits(wine, driver):
    X, y, X_test, _ = wine
    params = dict(kernels=SPECS, normalization=None, p=2.0, driver=driver, tol=1e-7)
    ovo = mklopt.MKLClassifier(multiclass="ovo", decision_function_shape="ovo", **params).fit(X, y)
    pairs = class_pairs(3)
    assert ovo.weights_.shape == (len(pairs), 2) and len(ovo.result_) == len(pairs)
    scores = ovo.decision_function(X_test)
    for p, (a, b) in enumerate(pairs):
        keep = (y == a) | (y == b)
        alone = mklopt.MKLClassifier(**params).fit(X[keep], np.where(y[keep] == a, 1, 0))  # a positive
        np.testing.assert_allclose(ovo.weights_[p], alone.weights_, atol=1e-5)
        np.testing.assert_allclose(scores[:, p], alone.decision_function(X_test), atol=1e-4)


def test_every_pair_is_certified_on_its_own_points(wine):
    X, y, _, _ = wine
    ovo = mklopt.MKLClassifier(kernels=SPECS, multiclass="ovo", driver="cutting_plane", tol=1e-6).fit(X, y)
    full = mklopt.KernelSet.from_data(X, SPECS, normalization="multiplicative")
    for result, (a, b) in zip(ovo.result_, class_pairs(3)):
        points = result.info["points"]
        assert set(y[points]) == {a, b} and result.status == "converged" and result.rel_gap <= 1e-6
        y_pm = np.where(y[points] == a, 1.0, -1.0)
        cert = mklopt.certify(full.points(points), y_pm, result.weights, result.alpha, C=1.0)
        assert cert.certified(1e-6)
        assert cert.primal == pytest.approx(result.primal, rel=1e-9)


def test_votes_and_ovr_shape_are_scikit_learns():
    X, y = load_iris(return_X_y=True)
    K = rbf_kernel(X, gamma=0.5)
    svc_ovo = SVC(kernel="precomputed", decision_function_shape="ovo").fit(K, y)
    svc_ovr = SVC(kernel="precomputed", decision_function_shape="ovr").fit(K, y)
    scores = svc_ovo.decision_function(K)
    assert np.array_equal(np.argmax(votes(scores, 3), axis=1), svc_ovo.predict(K))
    np.testing.assert_allclose(ovr_shaped(scores, 3), svc_ovr.decision_function(K), atol=1e-12)
    tie = np.array([[1.0, -1.0, 1.0]])  # 0 beats 1, 2 beats 0, 1 beats 2: one vote each
    assert np.argmax(votes(tie, 3), axis=1)[0] == 0  # libsvm: the smallest class index


def test_ovo_predicts_like_an_svc_on_the_combined_kernel_when_the_weights_are_fixed(wine):
    X, y, X_test, _ = wine
    ovo = mklopt.MKLClassifier(kernels=[("rbf", {"gamma": 0.1})], normalization=None, multiclass="ovo",
                               decision_function_shape="ovo", driver="wrapper", tol=1e-8).fit(X, y)  # plain SVMs
    svc = SVC(kernel="rbf", gamma=0.1, decision_function_shape="ovo", tol=1e-10).fit(X, y)
    agree = np.mean(ovo.predict(X_test) == svc.predict(X_test))
    assert agree >= 0.98
    np.testing.assert_allclose(ovo.weights_, 1.0)  # one kernel: mu = 1, the SVM on it
    np.testing.assert_allclose(ovo.decision_function(X_test), svc.decision_function(X_test), atol=5e-3)


def test_pairs_spread_over_a_dask_cluster_through_joblib(wine):
    pytest.importorskip("dask.distributed")
    from dask.distributed import Client, LocalCluster
    from joblib import parallel_backend

    X, y, X_test, _ = wine
    params = dict(kernels=SPECS, multiclass="ovo", driver="wrapper", p=2.0, tol=1e-6)
    here = mklopt.MKLClassifier(**params).fit(X, y)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            Client(cluster), parallel_backend("dask"):
        spread = mklopt.MKLClassifier(n_jobs=2, **params).fit(X, y)
    np.testing.assert_allclose(spread.weights_, here.weights_, atol=1e-9)
    assert np.array_equal(spread.predict(X_test), here.predict(X_test))
    assert all(r.status == "converged" for r in spread.result_)


def test_auto_is_one_vs_rest_on_a_dense_stack(wine):
    X, y, _, _ = wine
    clf = mklopt.MKLClassifier(kernels=SPECS, driver="wrapper", p=2.0).fit(X, y)
    assert clf.multiclass_ == "ovr" and clf.weights_.shape == (3, 2)
    pairs = mklopt.MKLClassifier(kernels=SPECS, driver="wrapper", p=2.0, multiclass="ovo").fit(X, y)
    assert pairs.multiclass_ == "ovo" and pairs.weights_.shape == (3, 2) and len(pairs.result_) == 3
    assert np.mean(pairs.predict(X) == clf.predict(X)) >= 0.95


def test_auto_is_one_vs_one_where_the_kernels_are_computed_on_the_fly(wine, monkeypatch):
    from mklopt.estimators import _base

    X, y, _, _ = wine
    monkeypatch.setattr(_base, "LAZY_STACK_BYTES", 0)  # every stack "too large": kernels on the fly
    auto = mklopt.MKLClassifier(kernels=SPECS).fit(X, y)
    assert auto.multiclass_ == "ovo" and auto.driver_ == "chunking" and len(auto.result_) == 3
    assert all(r.status == "converged" for r in auto.result_)
    asked = mklopt.MKLClassifier(kernels=SPECS, multiclass="ovo").fit(X, y)
    # the same pairs, each on its points in the same order; asked for, one-vs-one fits the
    # points class by class, so the normalization's sums over all points run in another order
    np.testing.assert_allclose(auto.weights_, asked.weights_, rtol=0, atol=1e-8)
    np.testing.assert_array_equal(auto.predict(X), asked.predict(X))
    # no kernels on the fly, whatever their size: an outer loop's dense stack, or low-rank factors
    assert mklopt.MKLClassifier(kernels=SPECS, driver="wrapper", p=2.0).fit(X, y).multiclass_ == "ovr"
    assert mklopt.MKLClassifier(kernels=SPECS, rank=20).fit(X, y).multiclass_ == "ovr"


def test_pairs_of_kernels_on_the_fly_are_solved_on_their_own_dense_stacks(wine):
    """On the fly, a pair within the memory budget is solved on its dense stack (built once)
    and reaches the answer of the same pair solved on the fly; over budget it stays on the fly."""
    from mklopt.estimators.one_vs_one import solve_pairs
    from mklopt.kernels import KernelSet
    from mklopt.kernels.lazy import LazyKernelSet

    X, y, _, _ = wine
    lazy = KernelSet.from_data(X, SPECS, lazy=True, normalization="multiplicative")
    seen = {}

    def solve(kernels, y_pm, budget):
        seen.setdefault(budget, []).append(type(kernels))
        return mklopt.fit(kernels, y_pm, driver="chunking", p=2.0, tol=1e-8)

    def run(tasks):
        return [task() for task in tasks]

    def pairs(budget):
        return solve_pairs(lazy, y, np.unique(y), lambda k, t: solve(k, t, budget), run, dense_bytes=budget)

    pair = lazy.points(np.flatnonzero(y != 0)).dense()  # checked while built: no second scan
    scanned = KernelSet(np.array(pair.K))
    assert pair.validated_by == "construction"
    np.testing.assert_allclose(pair.sketch(), scanned.sketch(), rtol=1e-9, atol=1e-9 * np.abs(scanned.sketch()).max())
    dense, on_the_fly = pairs(1e9), pairs(0.0)
    assert seen[1e9] == [KernelSet] * 3 and seen[0.0] == [LazyKernelSet] * 3
    for a, b in zip(dense, on_the_fly):
        assert a.status == b.status == "converged" and a.rel_gap <= 1e-8
        np.testing.assert_allclose(a.weights, b.weights, atol=1e-6)
        np.testing.assert_allclose(a.dual_coef, b.dual_coef, atol=1e-5)
        assert np.array_equal(a.info["points"], b.info["points"])


def test_pairs_on_the_fly_run_in_worker_processes_and_answer_as_on_threads(wine, monkeypatch):
    """One-vs-one on kernels on the fly runs its pairs in worker processes (their Python
    steps would take turns under the GIL on threads): the pairs reach the answer of the same
    pairs on threads, each certified, with the same predictions."""
    from mklopt.estimators import _base, multiclass

    X, y, X_test, _ = wine
    monkeypatch.setattr(_base, "LAZY_STACK_BYTES", 0)  # kernels on the fly: auto is one-vs-one
    monkeypatch.setattr(multiclass, "core_threads", lambda problems: 2)  # two workers whatever the cores
    workers, run_in_processes = [], multiclass.in_processes
    monkeypatch.setattr(multiclass, "in_processes",
                        lambda tasks, jobs: workers.append(jobs) or run_in_processes(tasks, jobs))
    processes = mklopt.MKLClassifier(kernels=SPECS, p=2.0, tol=1e-8).fit(X, y)
    assert workers == [2] and processes.multiclass_ == "ovo"
    monkeypatch.setattr(multiclass, "in_processes", lambda tasks, jobs: [task() for task in tasks])
    threads = mklopt.MKLClassifier(kernels=SPECS, p=2.0, tol=1e-8).fit(X, y)
    for a, b in zip(processes.result_, threads.result_):
        assert a.status == b.status == "converged" and a.rel_gap <= 1e-8
        np.testing.assert_allclose(a.weights, b.weights, atol=1e-6)
        assert a.info["pair"] == b.info["pair"]
    np.testing.assert_array_equal(processes.predict(X_test), threads.predict(X_test))


def test_a_worker_process_warning_reaches_the_caller():
    """A pair that stops short in a worker warns in the caller (a process's warnings stay there)."""
    from sklearn.exceptions import ConvergenceWarning

    from mklopt.estimators.multiclass import in_processes

    def warns() -> int:
        import warnings

        warnings.warn("pair (0, 1) stopped on max_iter", ConvergenceWarning)
        return 7

    with pytest.warns(ConvergenceWarning, match="stopped on max_iter"):
        assert in_processes([warns, warns], 2) == [7, 7]


def test_pairs_run_in_processes_only_for_large_kernels_on_the_fly_outside_daemons(wine, monkeypatch):
    """Processes for the pairs where the kernels are on the fly because they are large, never
    in a daemonic process (a Dask worker's may start no children): there threads run them."""
    import multiprocessing

    from mklopt.estimators import _base
    from mklopt.estimators.multiclass import pairs_in_processes
    from mklopt.kernels import KernelSet

    X, _, _, _ = wine
    lazy = KernelSet.from_data(X, SPECS, lazy=True)
    assert not pairs_in_processes(KernelSet.from_data(X, SPECS)) and not pairs_in_processes(lazy)
    monkeypatch.setattr(_base, "LAZY_STACK_BYTES", 0)
    assert pairs_in_processes(lazy)
    monkeypatch.setitem(multiprocessing.current_process()._config, "daemon", True)
    assert not pairs_in_processes(lazy)


def test_a_worker_process_that_dies_is_an_mklopt_error():
    """A worker killed under a fit (out of memory, a signal) ends in mklopt's own error that
    says what to do, not in joblib's."""
    from mklopt.estimators.multiclass import in_processes
    from mklopt.exceptions import SolverError

    def dies() -> None:
        import os

        os._exit(1)

    with pytest.raises(SolverError, match="n_jobs=1"):
        in_processes([dies, dies], 2)


@pytest.mark.parametrize("form", ["dense", "lazy", "factors"])
def test_a_subset_of_points_is_a_mask_or_distinct_positions_and_nothing_else(wine, form):
    """``points`` takes a boolean mask of the n points or distinct positions; a mask read as
    positions 0 and 1 (what NumPy's int conversion does) picked the wrong points silently."""
    from mklopt.exceptions import KernelError
    from mklopt.kernels import KernelSet

    X, _, _, _ = wine
    options = {"dense": {}, "lazy": {"lazy": True}, "factors": {"rank": 10}}[form]
    ks = KernelSet.from_data(X[:30], SPECS, **options)
    mask = np.arange(30) % 3 == 0
    by_mask, by_position = ks.points(mask), ks.points(np.flatnonzero(mask))
    assert by_mask.n == by_position.n == 10
    def entries(kernels):
        return {"dense": lambda: kernels.K, "lazy": lambda: kernels.diagonals(),
                "factors": lambda: kernels.dense().K}[form]()

    np.testing.assert_array_equal(entries(by_mask), entries(by_position))
    for bad, message in ((mask[:20], "shape"), (np.array([0.5, 2.0]), "integer"), (np.array([[0, 1]]), "1-D"),
                         ([], "no point"), (np.zeros(30, dtype=bool), "no point"), ([0, 30], r"\[0, 30\)"),
                         ([-1, 2], r"\[0, 30\)"), ([3, 3], "repeats")):
        with pytest.raises(KernelError, match=message):
            ks.points(bad)


def test_a_subset_keeps_the_entries_and_the_sketch_of_its_points(wine):
    """A dense set's subset is NumPy's fancy index of its stack bit for bit, with the sketch and the
    largest entries a set of that stack computes; positions out of order are the same points in that order (checked
    without the sort sorted positions skip), and a repeat among them is refused."""
    from mklopt.exceptions import KernelError
    from mklopt.kernels import KernelSet

    X, _, _, _ = wine
    ks = KernelSet.from_data(X[:40], SPECS)
    index = np.flatnonzero(np.arange(40) % 3 != 1)
    sub = ks.points(index)
    np.testing.assert_array_equal(sub.K, ks.K[:, index[:, None], index])
    fresh = KernelSet(sub.K.copy(), names=sub.names)
    np.testing.assert_allclose(sub.sketch(), fresh.sketch(), rtol=1e-12, atol=1e-12 * np.abs(fresh.sketch()).max())
    # the largest entries come from the copy's own pass: exactly those of the block
    np.testing.assert_array_equal(sub.max_abs(), np.abs(ks.K[:, index[:, None], index]).reshape(ks.M, -1).max(axis=1))
    shuffled = index[::-1].copy()
    np.testing.assert_array_equal(ks.points(shuffled).K, ks.K[:, shuffled[:, None], shuffled])
    with pytest.raises(KernelError, match="repeats"):
        ks.points(np.array([5, 2, 9, 2]))


@pytest.mark.parametrize("multiclass", ["ovo", "ovr"])
@pytest.mark.parametrize("precomputed", [False, True])
def test_all_problems_decide_in_one_product_as_each_alone(wine, multiclass, precomputed):
    """The decision values of every class or pair at once (one pass over the test kernels)
    are each problem's own :math:`\\sum_m \\mu_m T_m c + b`, from its result."""
    from mklopt.kernels import kernel_stack

    X, y, Xt, _ = wine
    if precomputed:
        train = np.moveaxis(mklopt.KernelSet.from_data(X, SPECS).K, 0, 2)
        test = np.moveaxis(kernel_stack(Xt, SPECS, X), 0, 2)
        clf = mklopt.MKLClassifier(kernels="precomputed", multiclass=multiclass,
                                   decision_function_shape="ovo").fit(train, y)
        T = clf._scales[:, None, None] * np.moveaxis(test, 2, 0)
    else:
        clf = mklopt.MKLClassifier(kernels=SPECS, multiclass=multiclass, decision_function_shape="ovo").fit(X, y)
        T = clf._scales[:, None, None] * kernel_stack(Xt, clf.kernel_specs_, X)
    alone = np.column_stack([np.einsum("m,mij,j->i", r.weights, T, r.dual_coef) + r.bias for r in clf.result_])
    np.testing.assert_allclose(clf.decision_function(test if precomputed else Xt), alone, rtol=1e-12, atol=1e-12)
