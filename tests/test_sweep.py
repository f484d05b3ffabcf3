"""mklopt.model_selection.search and ``mklopt sweep``: GridSearchCV on a real dask.distributed cluster.

The distributed run (a LocalCluster of two worker processes, started and closed
by :func:`mklopt.model_selection.search.sweep` itself) must give the sequential GridSearchCV's
``best_params_`` and ``mean_test_score`` exactly. The CLI runs end to end
against a running scheduler (an in-process LocalCluster over TCP, which
``sweep`` must leave running). No mocks, except hiding ``dask.distributed``
to check the missing-extra error.
"""

from __future__ import annotations

import csv
import importlib.util
import sys
import time

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import GridSearchCV
from sklearn.preprocessing import StandardScaler

from mklopt import MKLClassifier
from mklopt.cli import main
from mklopt.exceptions import (BackendError, BackendNotInstalledError, InvalidInputError, MKLWarning,
                               SolverError)
from mklopt.model_selection.search import sweep
from mklopt.model_selection.sweep_result import STAT_COLUMNS, cv_rows, format_param, write_csv

needs_dask = pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                                reason='needs the dask extra: pip install -e ".[dask]"')

GRID = {"C": [0.1, 1, 10], "p": [1, 2]}
COLUMNS = ["param_C", "param_p", *STAT_COLUMNS]


def _estimator() -> MKLClassifier:
    return MKLClassifier(kernels=["linear", "rbf"], driver="wrapper", tol=1e-3)


def _spawned_children() -> set[int]:
    """PIDs of this process's multiprocessing-spawned descendants (Dask nannies and workers)."""
    import psutil

    pids = set()
    for child in psutil.Process().children(recursive=True):
        try:
            if "spawn_main" in " ".join(child.cmdline()):
                pids.add(child.pid)
        except psutil.Error:
            continue
    return pids


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray]:
    X, y = load_breast_cancer(return_X_y=True)
    idx = np.random.default_rng(0).choice(len(y), 96, replace=False)
    return StandardScaler().fit_transform(X[idx]), y[idx]


@pytest.fixture(scope="module")
def npz(data, tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("sweep") / "Xy.npz"
    np.savez(path, X=data[0], y=data[1])
    return str(path)


@pytest.fixture(scope="module")
def distributed_run(data):
    """``sweep`` on the LocalCluster (2 worker processes) it starts and closes itself."""
    before = _spawned_children()
    res = sweep(*data, GRID, estimator=_estimator(), cv=3, n_workers=2, progress=False)
    deadline = time.monotonic() + 10
    while _spawned_children() - before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _spawned_children() - before, "sweep left Dask worker processes running"
    return res


@pytest.fixture(scope="module")
def scheduler():
    """A running scheduler for ``--scheduler`` (one in-process worker thread, over TCP)."""
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  protocol="tcp", dashboard_address=":0") as cluster:
        yield cluster.scheduler_address


@needs_dask
def test_distributed_equals_sequential(data, distributed_run):
    sequential = GridSearchCV(_estimator(), GRID, cv=3).fit(*data)
    results = distributed_run.cv_results
    assert distributed_run.best_params_ == sequential.best_params_
    assert results["params"] == sequential.cv_results_["params"]
    np.testing.assert_allclose(results["mean_test_score"],
                               sequential.cv_results_["mean_test_score"], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(results["rank_test_score"],
                                  sequential.cv_results_["rank_test_score"])
    assert distributed_run.best_index == sequential.best_index_
    assert distributed_run.best_estimator.get_params() == sequential.best_estimator_.get_params()
    assert distributed_run.best_score_ == pytest.approx(sequential.best_score_, abs=1e-12)
    assert distributed_run.n_fits == 6 * 3
    assert distributed_run.workers == 2
    assert distributed_run.scheduler.startswith("tcp://")
    assert distributed_run.dashboard_link.startswith("http")


@needs_dask
def test_csv_one_row_per_grid_point(distributed_run, tmp_path):
    path = distributed_run.to_csv(tmp_path / "cv.csv")
    with open(path, newline="") as handle:
        reader = csv.DictReader(handle)
        rows = list(reader)
    assert reader.fieldnames == COLUMNS
    assert len(rows) == 6
    assert {(float(r["param_C"]), float(r["param_p"])) for r in rows} == {
        (C, p) for C in GRID["C"] for p in GRID["p"]}
    scores = distributed_run.cv_results["mean_test_score"]
    assert [float(r["mean_test_score"]) for r in rows] == scores.tolist()  # repr round trip
    assert sorted(int(r["rank_test_score"]) for r in rows)[0] == 1
    # the helper also takes cv_results_ directly
    again = write_csv(distributed_run.cv_results, tmp_path / "again.csv")
    assert again.read_text() == path.read_text()


def test_kernel_sets_are_one_csv_cell():
    sets = [["linear", ("rbf", {"gamma": 0.1})], ["linear", ("poly", {"degree": 2, "coef0": 1})]]
    assert format_param("kernels", sets[0]) == "linear;rbf:gamma=0.1"
    assert format_param("kernels", sets[1]) == "linear;poly:degree=2,coef0=1"
    fake = {"params": [{"C": 1.0, "kernels": k} for k in sets],
            **{c: np.array([0.5, 0.25]) for c in STAT_COLUMNS}}
    rows = cv_rows(fake)
    assert list(rows[0]) == ["param_C", "param_kernels", *STAT_COLUMNS]
    assert [r["param_kernels"] for r in rows] == ["linear;rbf:gamma=0.1",
                                                  "linear;poly:degree=2,coef0=1"]


@needs_dask
def test_cli_end_to_end_on_a_running_scheduler(npz, scheduler, tmp_path, capsys):
    from dask.distributed import Client

    out = tmp_path / "sweep.csv"
    code = main(["sweep", "--data", npz, "--C", "0.1,10", "--p", "1,4/3",
                 "--kernels-set", "linear;rbf:gamma=0.05", "--kernels-set", "linear",
                 "--cv", "3", "--driver", "wrapper", "--tol", "1e-3",
                 "--scheduler", scheduler, "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    with open(out, newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 2 * 2 * 2
    assert list(rows[0]) == ["param_C", "param_kernels", "param_p", *STAT_COLUMNS]
    assert {r["param_kernels"] for r in rows} == {"linear;rbf:gamma=0.05", "linear"}
    assert {float(r["param_p"]) for r in rows} == {1.0, 4 / 3}
    for needle in ("best params: C=", "best score :", "dashboard  : http", str(out)):
        assert needle in captured.out
    with Client(scheduler, timeout=5) as client:  # sweep left the scheduler running
        assert len(client.scheduler_info()["workers"]) == 1


@needs_dask
def test_unreachable_scheduler_is_a_quick_input_error(npz, data, tmp_path, capsys):
    out = tmp_path / "never.csv"
    start = time.perf_counter()
    code = main(["sweep", "--data", npz, "--scheduler", "tcp://127.0.0.1:1",
                 "--connect-timeout", "1", "--out", str(out)])
    assert code == 2
    assert time.perf_counter() - start < 15
    err = capsys.readouterr().err
    assert "mklopt sweep: error: cannot connect to the Dask scheduler at 'tcp://127.0.0.1:1'" in err
    assert "Traceback" not in err and not out.exists()
    with pytest.raises(BackendError, match="dask scheduler"):
        sweep(*data, GRID, scheduler="tcp://127.0.0.1:1", connect_timeout=0.5, progress=False)


def test_missing_dask_names_the_extra(monkeypatch, data, npz, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "dask.distributed", None)
    with pytest.raises(BackendNotInstalledError, match=r'pip install -e "\.\[dask\]"') as info:
        sweep(*data, GRID, progress=False)
    assert isinstance(info.value, ImportError)
    code = main(["sweep", "--data", npz, "--out", str(tmp_path / "x.csv")])
    assert code == 2
    assert 'pip install -e ".[dask]"' in capsys.readouterr().err


@needs_dask
def test_scheduler_without_workers_is_a_backend_error(data):
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=0, processes=False, protocol="tcp",
                      dashboard_address=":0") as cluster:
        with pytest.raises(BackendError, match="has no workers"):
            sweep(*data, GRID, scheduler=cluster.scheduler_address, connect_timeout=1,
                  progress=False)


@needs_dask
@pytest.mark.parametrize("kwargs, match", [
    ({"n_workers": 0}, "n_workers"),
    ({"connect_timeout": -1}, "connect_timeout"),
    ({"param_grid": {"C": 1.0}}, "param_grid"),
    ({"scoring": ["accuracy", "roc_auc"]}, "one scorer"),
    ({"scoring": "acurracy"}, "not a scikit-learn scorer name"),
    ({"cv": 0}, r"bad cv=0: k-fold"),
    ({"cv": "five"}, "bad cv='five'"),
])
def test_bad_arguments_fail_before_any_cluster(data, kwargs, match):
    grid = kwargs.pop("param_grid", GRID)
    with pytest.raises(InvalidInputError, match=match):
        sweep(*data, grid, progress=False, **kwargs)


@needs_dask
def test_nan_data_is_refused_before_any_cluster(data, monkeypatch):
    from mklopt.model_selection import search

    def no_cluster(*args, **kwargs):
        raise AssertionError("a cluster was started")

    monkeypatch.setattr(search, "cluster_client", no_cluster)
    X = data[0].copy()
    X[4, 2] = np.nan
    with pytest.raises(InvalidInputError, match=r"X contains NaN .*\[4, 2\]"):
        sweep(X, data[1], GRID, progress=False)


@needs_dask
def test_resume_with_nothing_missing_starts_nothing(data, scheduler, tmp_path, monkeypatch):
    from mklopt.model_selection import search

    log = tmp_path / "fits.csv"
    first = sweep(*data, GRID, estimator=_estimator(), scheduler=scheduler, log=log, progress=False)
    monkeypatch.setattr(search, "cluster_client", lambda *a, **k: (_ for _ in ()).throw(
        AssertionError("a cluster was started")))
    again = sweep(*data, GRID, estimator=_estimator(), resume=log, progress=False)
    assert again.n_run == 0
    np.testing.assert_array_equal(again.cv_results["mean_test_score"], first.cv_results["mean_test_score"])


@needs_dask
def test_resume_of_a_log_that_does_not_exist_is_refused_before_any_cluster(data, tmp_path, monkeypatch):
    """As the command line's ``--resume``: a mistyped path would run the whole sweep again."""
    from mklopt.model_selection import search

    monkeypatch.setattr(search, "cluster_client", lambda *a, **k: (_ for _ in ()).throw(
        AssertionError("a cluster was started")))
    with pytest.raises(InvalidInputError, match="there is no log .*fits.csv.* of an earlier run"):
        sweep(*data, GRID, estimator=_estimator(), resume=tmp_path / "fits.csv", progress=False)
    assert not (tmp_path / "fits.csv").exists()


@needs_dask
def test_a_fit_that_fails_deterministically_is_one_error_row(data, scheduler, tmp_path):
    log = tmp_path / "fits.csv"
    with pytest.warns(MKLWarning, match=r"2 of 4 fits failed and are scored NaN; the first error: "
                                        r"InvalidInputError: C must be positive"):
        res = sweep(*data, {"C": [1.0, -1.0]}, estimator=_estimator(), scheduler=scheduler, log=log, cv=2,
                    progress=False)
    rows = [row for row in log.read_text().splitlines() if row[:1].isdigit()]  # the fits, no header
    assert len(rows) == 4  # each fit recorded once, the failing ones included (not resubmitted)
    failed = [row for row in rows if "error:" in row]
    assert len(failed) == 2 and all("C must be positive" in row for row in failed)
    assert np.isnan(res.cv_results["mean_test_score"][1]) and res.best_index == 0


@needs_dask
def test_a_sweep_whose_every_fit_fails_is_an_error_not_a_nan_table(data, scheduler):
    """``GridSearchCV`` raises where all fits failed; a table of NaN scores with a "best"
    candidate refitted would hide it."""
    with pytest.raises(SolverError, match=r"all 2 fits failed; the first error: InvalidInputError: C must be"):
        sweep(*data, {"C": [-1.0]}, estimator=_estimator(), scheduler=scheduler, cv=2, progress=False)


@needs_dask
def test_a_grid_naming_an_unknown_parameter_is_refused_before_any_cluster(data, monkeypatch):
    from mklopt.model_selection import search

    monkeypatch.setattr(search, "cluster_client", lambda *a, **k: (_ for _ in ()).throw(
        AssertionError("a cluster was started")))
    with pytest.raises(InvalidInputError, match="no_such_option"):
        sweep(*data, {"C": [1.0], "no_such_option": [1, 2]}, estimator=_estimator(), progress=False)


def test_every_step_of_a_task_that_raises_is_one_error_row(data):
    from mklopt.model_selection.sweep_tasks import fit_and_score

    def scorer(model, X, y):
        raise ValueError("the scorer\nfailed")

    half = len(data[1]) // 2
    train, test = np.arange(half), np.arange(half, len(data[1]))
    out = fit_and_score(_estimator(), {"C": 1.0}, *data, train, test, scorer)
    assert np.isnan(out["score"]) and out["status"] == "error: ValueError: the scorer failed"
    out = fit_and_score(_estimator(), {"no_such_option": 1}, *data, train, test, "accuracy")
    assert out["status"].startswith("error: ValueError: Invalid parameter")


def test_a_failed_task_is_recorded_once_and_a_lost_one_resubmitted():
    import distributed

    from mklopt.model_selection.sweep_run import _collect

    class Done:
        def __init__(self, exc, status):
            self.exc, self.status = exc, status

        def done(self):
            return True

        def result(self):
            raise self.exc

    failed, lost = Done(ValueError("bad"), "error"), Done(distributed.KilledWorker("t", "w", 3), "error")
    recorded = {}

    class Wait:
        TimeoutError = TimeoutError
        CancelledError = distributed.CancelledError
        KilledWorker = distributed.KilledWorker

        @staticmethod
        def wait(futures, timeout, return_when):
            return set(futures), set()

    again, _ = _collect(None, Wait, {failed: (0, 0), lost: (1, 0)}, recorded.__setitem__, None, 1.0, lambda: 0)
    assert again == [(1, 0)] and list(recorded) == [(0, 0)]
    assert recorded[(0, 0)]["status"] == "error: ValueError: bad"


@needs_dask
def test_one_worker_runs_in_this_process_and_equals_the_cluster(data, distributed_run, monkeypatch):
    from mklopt.model_selection import search

    monkeypatch.setattr(search, "cluster_client", lambda *a, **k: (_ for _ in ()).throw(
        AssertionError("a cluster was started")))
    here = sweep(*data, GRID, estimator=_estimator(), cv=3, n_workers=1, progress=False)
    np.testing.assert_allclose(here.cv_results["mean_test_score"],
                               distributed_run.cv_results["mean_test_score"], atol=1e-12)
    assert here.best_index == distributed_run.best_index
