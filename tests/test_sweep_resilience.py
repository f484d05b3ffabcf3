"""Sweeps that survive a lost worker, keep every finished fit and resume (issue 25).

Real ``dask.distributed`` clusters (worker processes started by the code under test
or by the test), real SIGKILLs; the reference is scikit-learn's sequential
``GridSearchCV`` on the same folds.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import GridSearchCV
from sklearn.preprocessing import StandardScaler

from mklopt import MKLClassifier
from mklopt.cli import main
from mklopt.exceptions import BackendError, InvalidInputError
from mklopt.model_selection.search import sweep
from mklopt.model_selection.sweep_log import FIT_COLUMNS, fits_path

pytestmark = pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                                reason='needs the dask extra: pip install -e ".[dask]"')

GRID = {"C": [0.1, 1, 10], "p": [1, 2]}


def _estimator() -> MKLClassifier:
    return MKLClassifier(kernels=["linear", "rbf"], driver="wrapper", tol=1e-3)


@pytest.fixture(scope="module")
def data():
    X, y = load_breast_cancer(return_X_y=True)
    idx = np.random.default_rng(1).choice(len(y), 120, replace=False)
    return StandardScaler().fit_transform(X[idx]), y[idx]


@pytest.fixture(scope="module")
def scheduler():
    """One running cluster (two single-threaded worker processes) for the tests that do not
    test starting, losing or stopping workers: each sweep connects to it (``scheduler=``)
    and leaves it running. The other tests start their own, as a user's sweep does."""
    import faulthandler

    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        with Client(cluster) as client:
            # a worker silent for minutes is restarted by the scheduler (worker-ttl, 5 min):
            # each worker prints every thread's stack after 4 min, so that a failure shows
            # where it stood (the file's tests take ~80 s in all)
            client.run(faulthandler.dump_traceback_later, 240, repeat=True)
        yield cluster.scheduler_address


def _on(scheduler: str, argv: list[str]) -> list[str]:
    """A CLI argv with ``--workers N`` replaced by ``--scheduler`` (the shared cluster)."""
    at = argv.index("--workers")
    return argv[:at] + ["--scheduler", scheduler] + argv[at + 2:]


@pytest.fixture(scope="module")
def sequential(data):
    return GridSearchCV(_estimator(), GRID, cv=3).fit(*data)


def _rows(log) -> int:
    try:
        return max(0, len(log.read_text().splitlines()) - 2)
    except FileNotFoundError:
        return 0


def _assert_same_table(result, sequential) -> None:
    assert result.best_params_ == sequential.best_params_
    np.testing.assert_allclose(result.cv_results["mean_test_score"],
                               sequential.cv_results_["mean_test_score"], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(result.cv_results["rank_test_score"],
                                  sequential.cv_results_["rank_test_score"])


def _worker_pids() -> list[int]:
    import psutil

    pids = []
    for child in psutil.Process().children(recursive=True):
        try:
            if "spawn_main" in " ".join(child.cmdline()):
                pids.append(child.pid)
        except psutil.Error:
            continue
    return pids


def test_a_worker_killed_mid_sweep_loses_nothing(data, sequential, tmp_path):
    log = tmp_path / "fits.csv"
    killed: list[int] = []
    others = set(_worker_pids())  # workers of a cluster started before this test: not the sweep's

    def kill_one_worker():
        deadline = time.monotonic() + 120
        while _rows(log) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        pids = [pid for pid in _worker_pids() if pid not in others]
        if pids:
            os.kill(pids[0], signal.SIGKILL)
            killed.append(pids[0])

    watcher = threading.Thread(target=kill_one_worker, daemon=True)
    watcher.start()
    result = sweep(*data, GRID, estimator=_estimator(), cv=3, n_workers=2, progress=False, log=log)
    watcher.join(5)
    assert killed, "no worker process was found to kill"
    assert _rows(log) == result.n_fits == 18  # every fit scored and logged once
    _assert_same_table(result, sequential)


def test_resume_runs_only_the_missing_fits(data, sequential, scheduler, tmp_path):
    log = tmp_path / "fits.csv"
    full = sweep(*data, GRID, estimator=_estimator(), cv=3, scheduler=scheduler, progress=False, log=log)
    lines = log.read_text().splitlines(keepends=True)
    assert lines[0].startswith("# mklopt-sweep-fits") and lines[1].strip() == ",".join(FIT_COLUMNS)
    log.write_text("".join(lines[:2 + 7]) + lines[2 + 7][:10])  # 7 fits kept, one cut short
    resumed = sweep(*data, GRID, estimator=_estimator(), cv=3, scheduler=scheduler, progress=False,
                    resume=log)
    assert resumed.n_run == 18 - 7
    assert resumed.cv_results["params"] == full.cv_results["params"]
    for key in ("mean_test_score", "std_test_score", "rank_test_score"):
        np.testing.assert_array_equal(resumed.cv_results[key], full.cv_results[key])
    _assert_same_table(resumed, sequential)
    statuses = [line.rsplit(",", 1)[-1].strip() for line in log.read_text().splitlines()[2:]]
    assert len(statuses) == 18 and set(statuses) <= {"converged", "optimal"}


def test_resume_refuses_the_log_of_another_sweep(data, scheduler, tmp_path):
    log = tmp_path / "fits.csv"
    on = dict(scheduler=scheduler, progress=False)
    sweep(*data, {"C": [1.0]}, estimator=_estimator(), cv=2, log=log, **on)
    for grid, cv in (({"C": [10.0]}, 2), ({"C": [1.0]}, 3)):
        with pytest.raises(InvalidInputError, match="another sweep"):
            sweep(*data, grid, estimator=_estimator(), cv=cv, resume=log, **on)
    X, y = data
    with pytest.raises(InvalidInputError, match="another sweep"):
        sweep(X[:100], y[:100], {"C": [1.0]}, estimator=_estimator(), cv=2, resume=log, **on)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def _separate_cluster(n_workers: int):
    """A scheduler and ``n_workers`` single-threaded workers, each its own process with no
    nanny (a killed worker stays dead): ``(address, worker processes)``."""
    address = f"tcp://127.0.0.1:{_free_port()}"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    scheduler = subprocess.Popen([sys.executable, "-m", "dask", "scheduler", "--host", "127.0.0.1",
                                  "--port", address.rsplit(":", 1)[1], "--dashboard-address", ":0"],
                                 **quiet)
    workers = [subprocess.Popen([sys.executable, "-m", "dask", "worker", address, "--nthreads", "1",
                                 "--no-nanny", "--no-dashboard"], **quiet) for _ in range(n_workers)]
    try:
        yield address, workers
    finally:
        for process in [*workers, scheduler]:
            process.kill()


def test_all_workers_gone_says_what_is_saved(data, tmp_path):
    """A scheduler and one worker as separate processes (no nanny); the worker is SIGKILLed."""
    from dask.distributed import Client

    log = tmp_path / "fits.csv"
    with _separate_cluster(1) as (address, (worker,)):
        with Client(address, timeout=30) as client:
            client.wait_for_workers(1, timeout=60)

        def kill_the_worker():
            deadline = time.monotonic() + 120
            while _rows(log) < 2 and time.monotonic() < deadline:
                time.sleep(0.02)
            worker.kill()

        watcher = threading.Thread(target=kill_the_worker, daemon=True)
        watcher.start()
        with pytest.raises(BackendError, match=r"(workers are gone|has no workers) .*fits finished, "
                                               r"saved in") as info:
            sweep(*data, {"C": list(np.logspace(-2, 3, 16)), "p": [1, 4 / 3, 2]},
                  estimator=_estimator(), cv=3, scheduler=address, connect_timeout=3,
                  progress=False, log=log)
        watcher.join(5)
    assert 2 <= _rows(log) < 144
    assert f": {_rows(log)} fits finished, saved in {log}" in str(info.value)


def test_successive_halving(data, scheduler):
    result = sweep(*data, {"C": [0.1, 1, 10, 100], "p": [1, 2]}, estimator=_estimator(), cv=3,
                   scheduler=scheduler, progress=False, search="halving")
    assert result.search is not None and result.best_params_ == result.search.best_params_
    assert {"iter", "n_resources", "param_C", "mean_test_score"} <= set(result.rows[0])
    with pytest.raises(InvalidInputError, match="search"):
        sweep(*data, GRID, search="random", progress=False)


def test_successive_halving_survives_losing_a_worker_with_data_only_it_held(capsys):
    """A scheduler and two workers as separate processes (no nanny). joblib sends the data
    to one worker; that worker is SIGKILLed while no other holds a copy: the search runs
    again on the worker left."""
    from dask.distributed import Client

    X, y = load_breast_cancer(return_X_y=True)
    idx = np.random.default_rng(1).choice(len(y), 300, replace=False)
    X, y = StandardScaler().fit_transform(X[idx]), y[idx]
    killed: list[str] = []
    with _separate_cluster(2) as (address, _):
        with Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=60)
            pids = client.run(os.getpid)

            def kill_a_sole_holder():
                deadline = time.monotonic() + 120
                while not killed and time.monotonic() < deadline:
                    for key, holders in client.who_has().items():
                        if "ndarray" in str(key) and len(holders) == 1:
                            os.kill(pids[holders[0]], signal.SIGKILL)
                            killed.append(str(key))
                            return
                    time.sleep(0.01)

            watcher = threading.Thread(target=kill_a_sole_holder, daemon=True)
            watcher.start()
            result = sweep(X, y, {"C": [0.1, 1, 10, 100], "p": [1, 2]}, estimator=_estimator(), cv=3,
                           scheduler=address, connect_timeout=10, progress=True, search="halving")
            watcher.join(5)
    assert killed, "no data held by one worker only was seen"
    assert "running the search again (1 of" in capsys.readouterr().err
    assert list(result.search.n_candidates_) == [8, 3] and list(result.search.n_resources_) == [100, 300]
    assert result.best_params_ == result.search.best_params_
    assert np.isfinite(result.cv_results["mean_test_score"]).all()


def test_cli_resume(data, scheduler, tmp_path, capsys):
    npz = tmp_path / "Xy.npz"
    np.savez(npz, X=data[0], y=data[1])
    out = tmp_path / "sweep.csv"
    argv = ["sweep", "--data", str(npz), "--C", "0.1,10", "--p", "1", "--cv", "2",
            "--driver", "wrapper", "--tol", "1e-3", "--workers", "1", "--quiet", "--out", str(out)]
    argv = _on(scheduler, argv)
    assert main(argv) == 0
    first = out.read_text()
    log = fits_path(out)
    lines = log.read_text().splitlines(keepends=True)
    log.write_text("".join(lines[:3]))
    assert main(argv + ["--resume"]) == 0
    captured = capsys.readouterr()
    assert "3 of 4 fits" in captured.out

    def scores(text):  # every column but the fit times, which differ between runs
        return [line.rsplit(",", 1)[0] for line in text.splitlines()]

    assert scores(out.read_text()) == scores(first)
    assert main(["sweep", "--data", str(npz), "--resume", "--out", str(tmp_path / "none.csv")]) == 2
    assert "no log" in capsys.readouterr().err


FITS = 3 * 2 * 3  # the grid of _sweep_argv times its folds


def _sweep_argv(npz, out) -> list[str]:
    return ["sweep", "--data", str(npz), "--C", "0.1,1,10", "--p", "1,2", "--cv", "3",
            "--driver", "wrapper", "--tol", "1e-3", "--workers", "1", "--quiet", "--out", str(out)]


def test_own_local_cluster_workers_drop_only_the_heartbeat_failure_record():
    """A sweep's own workers keep quiet when their heartbeat meets the scheduler closing (a race in
    Dask's shutdown that once printed a traceback after "mklopt sweep: interrupted"); every other
    record of theirs still reaches the user."""
    import logging

    import distributed

    from mklopt.model_selection.sweep_cluster import cluster_client

    def records_kept(*messages):
        records = [logging.LogRecord("distributed.worker", logging.ERROR, __file__, 1, message,
                                     None, None) for message in messages]
        return [client.run(logging.getLogger("distributed.worker").filter, record)
                for record in records]

    heartbeat = "Failed to communicate with scheduler during heartbeat."
    with cluster_client(distributed, None, 2, 60) as (client, _, _, _):
        client.wait_for_workers(2, timeout=60)
        kept = records_kept(heartbeat, "Compute Failed", "Worker is at 95% memory usage.")
    assert [sorted(map(bool, per_worker.values())) for per_worker in kept] == [
        [False, False], [True, True], [True, True]]


def test_cli_interrupted_by_sigint_then_resumed(data, scheduler, tmp_path, sigint_as_in_a_terminal):
    """SIGINT to a CLI child after some fits: exit 130, one line; --resume runs only the rest."""
    npz = tmp_path / "Xy.npz"
    np.savez(npz, X=data[0], y=data[1])
    out, full = tmp_path / "cut.csv", tmp_path / "full.csv"
    argv = _sweep_argv(npz, out)
    argv[argv.index("--workers") + 1] = "2"  # a Dask cluster (one worker runs in the process itself)
    command = [sys.executable, "-m", "mklopt.cli", *argv]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=sigint_as_in_a_terminal)
    log = fits_path(out)
    deadline = time.monotonic() + 180
    while _rows(log) < 3 and time.monotonic() < deadline and child.poll() is None:
        time.sleep(0.05)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=120)
    assert child.returncode == 130, err
    # issue 59: the interrupt line says how many fits were kept and how to resume
    last = err.strip().splitlines()[-1]
    assert "Traceback" not in err and last.startswith("mklopt sweep: interrupted; ") and "--resume" in last
    kept = _rows(log)
    assert 3 <= kept < FITS and not out.exists()
    assert f"{kept} of {FITS} fits kept in {log}" in last
    resumed = subprocess.run(command + ["--resume"], capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0 and "Traceback" not in resumed.stderr, resumed.stderr
    assert f"{FITS - kept} of {FITS} fits" in resumed.stdout  # the finished fits were not redone
    assert _rows(log) == FITS
    assert main(_on(scheduler, _sweep_argv(npz, full))) == 0

    def scores(path):  # every column but the fit times
        return [line.rsplit(",", 1)[0] for line in path.read_text().splitlines()]

    assert scores(out) == scores(full)


@pytest.mark.parametrize("content, match", [
    ("not a log at all\n", "not an mklopt sweep log"),
    ("# mklopt-sweep-fits fingerprint=abc fits=4\ncandidate,fold\n", "another format"),
    (None, "damaged at line 3"),
])
def test_resume_of_a_bad_log_is_a_clear_error(data, scheduler, tmp_path, capsys, content, match):
    npz = tmp_path / "Xy.npz"
    np.savez(npz, X=data[0], y=data[1])
    out = tmp_path / "s.csv"
    argv = ["sweep", "--data", str(npz), "--C", "1", "--p", "1", "--cv", "2", "--driver", "wrapper",
            "--tol", "1e-3", "--workers", "1", "--quiet", "--out", str(out)]
    argv = _on(scheduler, argv)
    log = fits_path(out)
    if content is None:  # a log of this very sweep whose first row was overwritten
        assert main(argv) == 0
        lines = log.read_text().splitlines(keepends=True)
        log.write_text("".join(lines[:2]) + "0,zero,{},x,y,,\n")
    else:
        log.write_text(content)
    capsys.readouterr()
    assert main(argv + ["--resume"]) == 2
    err = capsys.readouterr().err
    assert match in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
