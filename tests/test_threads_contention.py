"""Issue 57: threads that yield. A fit under a busy process gives the same answer on 1 and 2
threads; the compiled loops wait passively; a fit takes the threads its caller grants.

(Speed under contention is measured by ``mklopt bench threads``, never timed here.)
"""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import nullcontext

import numba
import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import mklopt
from mklopt._compiled.splitting import split_small
from mklopt.kernels._threads import granted_threads, numba_threads

BUSY = "import time\nend = time.time() + 120\nwhile time.time() < end:\n    pass\n"


@pytest.fixture
def busy_process():
    """One other process spinning on a core (bounded: it stops by itself after 2 minutes)."""
    process = subprocess.Popen([sys.executable, "-c", BUSY])
    try:
        yield process
    finally:
        process.kill()
        process.wait()


def _fit(threads: int):
    """The fit on ``threads`` threads; the threads it ran on are in ``info["seen_threads"]``.
    On more than one thread it runs the threaded variants of the compiled code (a problem
    this small would otherwise run the serial ones)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((600, 6))
    y = np.sign(X[:, 0] + 0.5 * rng.standard_normal(600))
    ks = mklopt.KernelSet.from_data(X, [("rbf", {"gamma": 0.05 * 1.5**k}) for k in range(6)], lazy=True)
    seen = []
    with numba_threads(threads), (split_small() if threads > 1 else nullcontext()):
        result = mklopt.fit(ks, y, "chunking", p=4 / 3, tol=1e-4,
                            callback=lambda record: seen.append(numba.get_num_threads()))
    result.info["seen_threads"] = set(seen)
    return result


def test_one_and_two_threads_give_the_same_answer_under_a_busy_process(busy_process, all_cores):
    one, two = _fit(1), _fit(2)
    assert busy_process.poll() is None  # it was busy throughout
    assert one.info["seen_threads"] == {1} and two.info["seen_threads"] == {min(2, all_cores)}
    assert one.status == two.status == "converged"
    np.testing.assert_array_equal(one.weights, two.weights)
    np.testing.assert_array_equal(one.alpha, two.alpha)
    assert one.primal == two.primal and one.dual == two.dual


def test_the_compiled_loops_wait_passively():
    out = subprocess.run([sys.executable, "-c", "import os, mklopt; print(os.environ['OMP_WAIT_POLICY'])"],
                         capture_output=True, text=True, env={k: v for k, v in os.environ.items()
                                                               if k != "OMP_WAIT_POLICY"})
    assert out.stdout.strip() == "PASSIVE"
    kept = subprocess.run([sys.executable, "-c", "import os, mklopt; print(os.environ['OMP_WAIT_POLICY'])"],
                          capture_output=True, text=True, env={**os.environ, "OMP_WAIT_POLICY": "ACTIVE"})
    assert kept.stdout.strip() == "ACTIVE"  # a choice made before the import stands


def test_a_fit_takes_the_threads_its_caller_grants(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert granted_threads() == 1
    with numba_threads() as threads:
        assert threads == 1 and numba.get_num_threads() == 1
    monkeypatch.delenv("OMP_NUM_THREADS")
    with threadpool_limits(limits=1, user_api="openmp"):
        assert granted_threads() == 1
    assert granted_threads() == min(os.cpu_count() or 1, granted_threads())


def test_a_joblib_worker_fit_uses_its_share_of_the_cores(all_cores):
    from joblib import Parallel, delayed

    def threads_in_a_fit() -> int:
        seen = []
        X = np.random.default_rng(0).standard_normal((40, 3))
        mklopt.fit(mklopt.KernelSet.from_data(X, ["linear", "rbf"]), np.sign(X[:, 0]), "chunking",
                   callback=lambda record: seen.append(numba.get_num_threads()))
        return max(seen)

    jobs = os.cpu_count() or 1
    counts = Parallel(n_jobs=jobs, backend="loky")(delayed(threads_in_a_fit)() for _ in range(jobs))
    assert all(count <= max(1, (os.cpu_count() or 1) // jobs) for count in counts), counts
