"""The compiled core on several threads: one-vs-rest classes side by side (issue 35, points 3 and 6).

The reference is the same estimator solving one class at a time (``n_jobs=1``):
threads change nothing in any class's problem, so every number must be equal, and
each class is certified against the dense kernels by :func:`mklopt.certify`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import numpy as np
import pytest

import mklopt
from mklopt.drivers import chunking, core_threads
from mklopt.estimators import _base

SPECS = [("rbf", {"gamma": 0.1}), ("rbf", {"gamma": 1.0}), "linear"]


def _three_classes(n: int = 120, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    y = np.digitize(X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * rng.standard_normal(n), [-0.3, 0.7])
    return X, y


def _spy_cache_mb(monkeypatch) -> list:
    seen = []
    original = chunking.Chunking.__init__

    def init(self, data, **options):
        seen.append(options.get("cache_mb", chunking.CACHE_MB))
        original(self, data, **options)

    monkeypatch.setattr(chunking.Chunking, "__init__", init)
    return seen


@pytest.mark.parametrize("on_the_fly", [False, True])
def test_classes_on_threads_equal_one_at_a_time_and_are_certified(monkeypatch, on_the_fly, all_cores):
    if on_the_fly:
        monkeypatch.setattr(_base, "LAZY_STACK_BYTES", 0)
    X, y = _three_classes()
    common = dict(kernels=SPECS, driver="chunking", p=4 / 3, C=10.0, tol=1e-6, multiclass="ovr")
    seen = _spy_cache_mb(monkeypatch)
    threaded = mklopt.MKLClassifier(**common).fit(X, y)
    jobs = core_threads.core_threads(3)
    assert jobs == (min(numba.get_num_threads(), 3) if core_threads.threadsafe_layer() else 1)
    expected = chunking.CACHE_MB / jobs if jobs > 1 else chunking.CACHE_MB  # the classes at once share it
    assert seen == [expected] * 3
    single = mklopt.MKLClassifier(**common, n_jobs=1).fit(X, y)
    np.testing.assert_array_equal(threaded.weights_, single.weights_)
    np.testing.assert_array_equal(threaded.dual_coef_, single.dual_coef_)
    np.testing.assert_array_equal(threaded.intercept_, single.intercept_)
    dense = mklopt.KernelSet.from_data(X, SPECS).normalized("multiplicative")
    for c, result in zip(threaded.classes_, threaded.result_):
        labels = np.where(y == c, 1.0, -1.0)
        cert = mklopt.certify(dense, labels, result.weights, result.alpha, p=4 / 3, C=10.0)
        assert cert.certified(1e-6) and cert.rel_gap == pytest.approx(result.rel_gap, rel=1e-6, abs=1e-12)


def test_classes_side_by_side_share_the_cores_instead_of_each_taking_all(monkeypatch):
    """T classes at once on a machine of c numba threads: each class's loops on c // T."""
    seen = []
    original = chunking.Chunking.__init__

    def init(self, data, **options):
        seen.append(numba.get_num_threads())
        original(self, data, **options)

    monkeypatch.setattr(chunking.Chunking, "__init__", init)
    before = numba.get_num_threads()
    X, y = _three_classes()
    mklopt.MKLClassifier(kernels=SPECS, driver="chunking").fit(X, y)
    jobs = core_threads.core_threads(3)
    assert seen == [max(1, before // jobs)] * 3
    assert numba.get_num_threads() == before  # the caller's count is untouched


def test_on_threads_restores_the_count_when_the_function_raises():
    before = numba.get_num_threads()

    def probe():
        assert numba.get_num_threads() == 1
        raise ValueError("inside")

    with pytest.raises(ValueError, match="inside"):
        core_threads.on_threads(1, probe)
    assert numba.get_num_threads() == before
    assert core_threads.on_threads(10**6, numba.get_num_threads) == numba.config.NUMBA_NUM_THREADS


def test_one_thread_where_numbas_threading_layer_is_not_thread_safe(monkeypatch):
    monkeypatch.setattr(numba, "threading_layer", lambda: "workqueue")
    assert not core_threads.threadsafe_layer() and core_threads.core_threads(10) == 1


def test_threads_never_exceed_the_problems_or_numbas_thread_count(monkeypatch, all_cores):
    monkeypatch.setattr(core_threads, "threadsafe_layer", lambda: True)
    assert core_threads.core_threads(1) == 1
    assert core_threads.core_threads(10**6) == numba.get_num_threads()


def test_auto_weighs_classes_side_by_side_in_the_cores_estimate(monkeypatch):
    """One-vs-rest classes side by side on T threads lower the core's estimate per class
    (:mod:`mklopt.estimators.cost`); one problem, or classes one at a time (``n_jobs``), do not.
    Each fit runs the driver of the estimates for its own count of problems and threads."""
    from mklopt.estimators.cost import choose_driver

    monkeypatch.setattr(_base, "machine_threads", lambda: 2)
    monkeypatch.setattr(_base, "core_threads", lambda problems: 2 if problems > 1 else 1)
    X, y = _three_classes(n=260, seed=1)
    threaded = mklopt.MKLClassifier(kernels=SPECS).fit(X, y)
    binary = mklopt.MKLClassifier(kernels=SPECS).fit(X, np.where(y == 0, 1.0, -1.0))
    one_at_a_time = mklopt.MKLClassifier(kernels=SPECS, n_jobs=1).fit(X, y)
    shape = dict(polyhedral=True, threads=2)
    assert threaded.driver_choice_ == choose_driver(260, 3, problems=3, core_threads=2, **shape)
    assert binary.driver_choice_ == choose_driver(260, 3, problems=1, core_threads=1, **shape)
    assert one_at_a_time.driver_choice_ == choose_driver(260, 3, problems=1, core_threads=1, **shape)
    per_class = threaded.driver_choice_.core_seconds / 3
    assert per_class < binary.driver_choice_.core_seconds == one_at_a_time.driver_choice_.core_seconds
    assert threaded.driver_choice_.outer_seconds == pytest.approx(3 * binary.driver_choice_.outer_seconds)
    for model in (threaded, binary, one_at_a_time):
        assert model.driver_ == model.driver_choice_.driver
    assert all(r.rel_gap <= 1e-4 for r in threaded.result_ + one_at_a_time.result_)


def _threads_by_library() -> dict:
    """Each loaded BLAS library's thread count, by file."""
    from threadpoolctl import threadpool_info

    return {lib["filepath"]: lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}


def _blas_threads() -> list[int]:
    return list(_threads_by_library().values())


def _run_fresh(code: str, folder) -> dict:
    """The JSON that ``code`` prints last, run in a fresh interpreter on the mklopt under test
    (threadpoolctl's controlling thread is the first one that sets a limit in a process)."""
    package_root = str(Path(mklopt.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([package_root, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env=env, cwd=folder)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_blas_limit_is_restored_and_another_thread_cannot_move_it():
    """threadpoolctl lets one thread control a pthreads OpenBLAS (the first that sets a limit);
    a limit requested by another thread changes nothing, and none is left in place."""
    import threading

    from mklopt.kernels._blas import single_blas_thread

    with single_blas_thread():  # the main thread controls BLAS from here on, in any test order
        pass
    before, seen = _blas_threads(), {}

    def worker():
        with single_blas_thread():
            seen["worker"] = _blas_threads()

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(60)
    with single_blas_thread():
        seen["main"] = _blas_threads()
        with single_blas_thread():  # nested: the limit held stays, and is not restored early
            seen["nested"] = _blas_threads()
        seen["after nested"] = _blas_threads()
    assert seen["worker"] == before
    assert seen["main"] == seen["nested"] == seen["after nested"] == [1] * len(before)
    assert _blas_threads() == before


def test_a_fit_on_a_worker_thread_limits_blas_there(tmp_path):
    """A Dask worker fits on a thread of its own, the first to set a limit in its process:
    the interleaved core's steps run there on one BLAS thread, restored after."""
    code = textwrap.dedent("""
        import json, threading
        import numpy as np
        from threadpoolctl import threadpool_info
        import mklopt
        from mklopt.drivers import chunking

        def counts():
            return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]

        before, seen = counts(), []
        step = chunking.Chunking._step
        chunking.Chunking._step = lambda self, w: (seen.append(counts()), step(self, w))[1]
        rng = np.random.default_rng(0)
        X = rng.standard_normal((80, 3))
        y = np.where(X[:, 0] > 0, 1, -1)
        thread = threading.Thread(target=lambda: mklopt.MKLClassifier(driver="chunking").fit(X, y))
        thread.start()
        thread.join()
        print(json.dumps({"before": before, "inside": seen[0], "after": counts()}))
    """)
    report = _run_fresh(code, tmp_path)
    assert report["inside"] == [1] * len(report["before"])
    assert report["after"] == report["before"]


def test_outer_loops_run_every_blas_library_but_numpys_on_one_thread():
    """NumPy's and SciPy's wheels each bundle an OpenBLAS with its own threads; a loop that
    alternates them (products over the stack, SciPy's Cholesky) stalls. Inside the loop only
    NumPy's keeps its threads; every count is back after it."""
    from mklopt.kernels._blas import _other_blas

    others = _other_blas()
    before, seen = _threads_by_library(), []
    X, labels = _three_classes(80)
    y = np.where(labels == 1, 1.0, -1.0)
    kernels = mklopt.KernelSet.from_data(X, [("rbf", {"gamma": 0.5}), "linear"])
    for driver in ("cutting_plane", "wrapper"):
        result = mklopt.fit(kernels, y, driver, p=1.0, tol=1e-3,
                            callback=lambda record: seen.append(_threads_by_library()))
        assert result.status == "converged"
    limited = set() if others is None else {lib.filepath for lib in others.lib_controllers}
    expected = {path: 1 if path in limited else count for path, count in before.items()}
    assert seen and all(threads == expected for threads in seen)
    assert _threads_by_library() == before
    if others is not None:  # NumPy's is never limited by it
        assert len(limited) == len(before) - 1


def test_an_outer_loop_on_a_worker_thread_limits_the_other_blas_libraries_too(tmp_path):
    """A Dask worker runs its fits on a thread of its own, the first to set BLAS limits in
    that process: the other libraries go to one thread there too, and come back after."""
    code = textwrap.dedent("""
        import json, threading
        import numpy as np
        from threadpoolctl import threadpool_info
        import mklopt
        from mklopt.kernels._blas import _other_blas

        mklopt.fit, mklopt.KernelSet  # load what a fit loads (CVXPY's solvers bring their own BLAS)

        def counts():
            return {lib["filepath"]: lib["num_threads"] for lib in threadpool_info()
                    if lib["user_api"] == "blas"}

        rng = np.random.default_rng(0)
        X = rng.standard_normal((60, 3))
        y = np.where(X[:, 0] > 0, 1.0, -1.0)
        before, seen = counts(), []

        def work():  # everything on the worker's thread, as a Dask task's fit
            kernels = mklopt.KernelSet.from_data(X, [("rbf", {"gamma": 0.5}), "linear"])
            mklopt.fit(kernels, y, "cutting_plane", tol=1e-3, callback=lambda r: seen.append(counts()))

        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
        others = _other_blas()
        limited = [] if others is None else [lib.filepath for lib in others.lib_controllers]
        print(json.dumps({"before": before, "inside": seen[0], "after": counts(), "limited": limited}))
    """)
    report = _run_fresh(code, tmp_path)
    expected = {path: 1 if path in report["limited"] else count for path, count in report["before"].items()}
    assert report["inside"] == expected
    assert report["after"] == report["before"]


def test_overlapping_limits_of_two_worker_threads_leave_nothing_behind(tmp_path):
    """Thread A sets the limit, B runs under it; whichever ends first, the counts are back
    at the end (a restore from a thread that did not set the limit would be ignored)."""
    code = textwrap.dedent("""
        import json, threading
        from threadpoolctl import threadpool_info
        import mklopt
        from mklopt.kernels._blas import numpy_blas_only

        def counts():
            return {lib["filepath"]: lib["num_threads"] for lib in threadpool_info()
                    if lib["user_api"] == "blas"}

        before, out = counts(), {}
        for first_out in ("A", "B"):
            a_in, b_in, a_out, b_out = (threading.Event() for _ in range(4))

            def a():
                with numpy_blas_only():
                    a_in.set()
                    b_in.wait(60)
                    if first_out == "B":
                        b_out.wait(60)
                a_out.set()

            def b():
                a_in.wait(60)
                with numpy_blas_only():
                    b_in.set()
                    if first_out == "A":
                        a_out.wait(60)
                b_out.set()

            threads = [threading.Thread(target=f) for f in (a, b)]
            [t.start() for t in threads]
            [t.join(60) for t in threads]
            out[first_out] = counts()
        print(json.dumps({"before": before, **out}))
    """)
    report = _run_fresh(code, tmp_path)
    assert report["A"] == report["B"] == report["before"]


def test_classes_side_by_side_run_on_one_blas_thread_and_leave_it_as_it_was(monkeypatch):
    """The default multiclass fit on three threads at once (forced, so that they overlap on any
    machine): BLAS is on one thread inside every class, and has its threads back after."""
    from mklopt.estimators import multiclass as classifier  # where the problems are run

    seen = []
    original = chunking.Chunking.__init__

    def init(self, data, **options):
        seen.append(_blas_threads())
        original(self, data, **options)

    monkeypatch.setattr(chunking.Chunking, "__init__", init)
    monkeypatch.setattr(classifier, "core_threads", lambda problems: 3)
    before = _blas_threads()
    X, y = _three_classes()
    mklopt.MKLClassifier(kernels=SPECS, driver="chunking", C=10.0).fit(X, y)
    assert seen == [[1] * len(before)] * 3
    assert _blas_threads() == before
