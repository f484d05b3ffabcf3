"""Cross-validated model selection that outgrows one process: GridSearchCV on Dask.

:func:`sweep` runs scikit-learn's ``GridSearchCV`` inside ``joblib.parallel_config(
backend="dask")``: each (candidate, fold) fit is a task on a ``dask.distributed``
cluster, a ``LocalCluster`` of worker processes started and closed here or a running
scheduler that is only connected to. joblib and Dask do all the scheduling. Needs
the ``dask`` extra (``pip install -e ".[dask]"``); the dashboard needs ``bokeh>=3.1``.

Recipes
-------
One machine, four worker processes; a kernel set is a list of kernel specs::

    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler
    from mklopt.sweep import sweep

    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    grid = {"C": [0.1, 1, 10], "p": [1, 4 / 3, 2],
            "kernels": [["linear", ("rbf", {"gamma": 0.03})], ["linear", ("poly", {"degree": 2})]]}
    if __name__ == "__main__":  # the worker processes re-import the main script
        res = sweep(X, y, grid, cv=5, n_workers=4)
        print(res.best_params_, res.best_score_, res.dashboard_link)
        res.to_csv("sweep.csv")

A cluster: ``dask scheduler`` on one host, ``dask worker tcp://HOST:8786 --nthreads 1``
on the others (same environment, mklopt installed), then the same call with
``scheduler="tcp://HOST:8786"``, or ``mklopt sweep --data Xy.npz --scheduler tcp://HOST:8786``.
"""

from __future__ import annotations

import csv
import importlib.util
import io
import math
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .exceptions import BackendError, BackendNotInstalledError, InvalidInputError

#: The install command named when ``dask.distributed`` is missing.
DASK_EXTRA = 'pip install -e ".[dask]"'
#: Columns of :func:`cv_rows` after the ``param_<name>`` ones.
STAT_COLUMNS = ("mean_test_score", "std_test_score", "rank_test_score", "mean_fit_time")


def _distributed():
    """``dask.distributed``, or :class:`BackendNotInstalledError` naming the extra."""
    try:
        return importlib.import_module("dask.distributed")
    except ImportError as exc:
        raise BackendNotInstalledError(
            f"mklopt.sweep runs on dask.distributed, which is not installed ({exc}); install "
            f"the 'dask' extra: {DASK_EXTRA} (or pip install \"dask[distributed]\").") from None


@dataclass
class SweepResult:
    """What :func:`sweep` returns: the fitted ``GridSearchCV`` (``search``, its
    ``best_estimator_`` refitted on all of ``X``), one row per grid point (``rows``, see
    :func:`cv_rows`), the Dask ``dashboard_link`` and ``scheduler`` address of the cluster
    that ran the fits, its number of ``workers`` when the search started, ``n_fits`` and
    the wall-clock seconds ``elapsed`` (start-up included).
    """

    search: Any
    rows: list[dict[str, Any]]
    dashboard_link: str | None
    scheduler: str
    workers: int
    n_fits: int
    elapsed: float

    @property
    def best_params_(self) -> dict[str, Any]:
        """``search.best_params_``."""
        return self.search.best_params_

    @property
    def best_score_(self) -> float:
        """``search.best_score_``: mean cross-validated score of the best candidate."""
        return float(self.search.best_score_)

    def to_csv(self, path: str | Path) -> Path:
        """Write :attr:`rows` to ``path`` (:func:`write_csv`)."""
        return write_csv(self.rows, path)


def _spec(spec: Any) -> str:
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[1], Mapping):
        return f"{spec[0]}:{','.join(f'{k}={v}' for k, v in spec[1].items())}".rstrip(":")
    return getattr(spec, "__name__", None) or str(spec)


def format_param(name: str, value: Any) -> Any:
    """A CSV cell for a grid value; kernel sets as ``"linear;rbf:gamma=0.1"`` (the CLI syntax)."""
    if name.endswith("kernels") and isinstance(value, (list, tuple)):
        return ";".join(_spec(s) for s in value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return "" if value is None else value
    return _spec(value)


def cv_rows(cv_results: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One dict per grid point of a single-metric ``cv_results_``: ``param_<name>``, STAT_COLUMNS."""
    if any(c not in cv_results for c in STAT_COLUMNS):
        raise InvalidInputError(f"cv_results_ lacks some of {STAT_COLUMNS}: use one scoring metric.")
    params = list(cv_results["params"])
    names = sorted({name for point in params for name in point})
    return [{**{f"param_{n}": format_param(n, point.get(n)) for n in names},
             **{c: np.asarray(cv_results[c][i]).item() for c in STAT_COLUMNS}}
            for i, point in enumerate(params)]


def write_csv(rows: Sequence[Mapping[str, Any]] | Mapping[str, Any], path: str | Path) -> Path:
    """Write :attr:`SweepResult.rows` (or a ``cv_results_``) to the ``.csv`` ``path``; the path.

    Uses the stdlib ``csv`` module; written atomically (nothing is written on failure).
    """
    from .result_io import atomic_write

    rows = cv_rows(rows) if isinstance(rows, Mapping) else list(rows)
    text = io.StringIO()
    writer = csv.DictWriter(text, list(rows[0]) if rows else list(STAT_COLUMNS), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    atomic_write(path, lambda handle: handle.write(text.getvalue().encode("utf-8")), (".csv",))
    return Path(path)


def sweep(X, y, param_grid: Mapping[str, Sequence] | Sequence[Mapping[str, Sequence]], *,
          estimator=None, cv: Any = 5, scheduler: str | None = None, n_workers: int = 2,
          progress: bool = True, scoring: str | Callable | None = None,
          connect_timeout: float = 10.0) -> SweepResult:
    """Cross-validated grid search over C, p, kernel sets, ... on a Dask cluster.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    param_grid : dict or list of dicts
        As for ``GridSearchCV``, e.g. ``{"C": [0.1, 1, 10], "p": [1, 4/3, 2]}``. A kernel
        set is a list of kernel specs (:class:`mklopt.MKLClassifier`), so ``{"kernels":
        [["linear", "rbf"], ["linear", ("rbf", {"gamma": 0.1})]]}`` compares two sets.
    estimator : scikit-learn estimator, default ``mklopt.MKLClassifier()``
    cv : int or cross-validation splitter, default=5
    scheduler : str, optional
        A running scheduler (``"tcp://host:8786"``), left running. Default: a ``LocalCluster``
        of ``n_workers`` single-threaded worker processes, started and closed here.
    n_workers : int, default=2
    progress : bool, default=True
        Print the number of fits and the dashboard link (live progress) to stderr.
    scoring : str or callable, optional
        One scikit-learn scorer (default: the estimator's ``score``).
    connect_timeout : float, default=10
        Seconds to wait for ``scheduler``, and for its first worker.

    Returns
    -------
    SweepResult

    Raises
    ------
    BackendNotInstalledError
        No ``dask.distributed`` (the message names ``pip install -e ".[dask]"``).
    BackendError
        ``scheduler`` unreachable within ``connect_timeout``, or without workers.
    InvalidInputError
        Bad ``param_grid``, ``n_workers``, ``connect_timeout`` or several ``scoring`` metrics.

    Examples
    --------
    In a script (see the module's recipes): ``res = sweep(X, y, {"C": [0.1, 1], "p": [1, 2]})``,
    then ``res.best_params_``, ``res.dashboard_link``, ``res.to_csv("sweep.csv")``.
    """
    distributed = _distributed()
    try:
        from joblib import parallel_config
    except ImportError:  # joblib < 1.3 (scikit-learn 1.4 allows 1.2)
        from joblib import parallel_backend as parallel_config
    from sklearn.base import is_classifier
    from sklearn.model_selection import GridSearchCV, ParameterGrid, check_cv

    if isinstance(n_workers, bool) or not isinstance(n_workers, (int, np.integer)) or n_workers < 1:
        raise InvalidInputError(f"n_workers must be an integer >= 1, got {n_workers!r}.")
    if not (isinstance(connect_timeout, (int, float)) and 0 < connect_timeout < math.inf):
        raise InvalidInputError(f"connect_timeout must be a positive number of seconds, "
                                f"got {connect_timeout!r}.")
    if isinstance(scoring, (list, tuple, set, dict)):
        raise InvalidInputError("scoring must be one scorer (a name or a callable), not several.")
    try:
        n_candidates = len(ParameterGrid(param_grid))
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"bad param_grid: {exc}") from None
    if estimator is None:
        from .estimators import MKLClassifier
        estimator = MKLClassifier()
    X, y = np.asarray(X), np.asarray(y)  # the very objects scattered to the workers and fitted
    n_fits = n_candidates * check_cv(cv, y, classifier=is_classifier(estimator)).get_n_splits(X, y)

    start, cluster, address = time.perf_counter(), None, scheduler
    try:
        if scheduler is None:
            cluster = distributed.LocalCluster(n_workers=int(n_workers), threads_per_worker=1,
                                               processes=True)
        client = distributed.Client(scheduler if cluster is None else cluster,
                                    timeout=connect_timeout)
    except (OSError, TimeoutError, ValueError) as exc:
        if cluster is not None:
            cluster.close()
        where = f"the Dask scheduler at {scheduler!r}" if scheduler else "a local Dask cluster"
        raise BackendError(f"cannot connect to {where} ({exc}); start one with 'dask scheduler' "
                           "and 'dask worker ADDRESS', or leave out the scheduler.") from None
    try:
        link, address = client.dashboard_link, client.scheduler.address
        workers = len(client.scheduler_info().get("workers", {}))
        if progress:
            note = "" if scheduler or importlib.util.find_spec("bokeh") else " (needs bokeh>=3.1)"
            print(f"sweep: {n_candidates} candidates x {n_fits // n_candidates} folds = {n_fits} fits"
                  f" on {workers} Dask workers; dashboard: {link}{note}", file=sys.stderr, flush=True)
        search = GridSearchCV(estimator, param_grid, cv=cv, scoring=scoring, n_jobs=-1)
        with parallel_config(backend="dask", client=client, scatter=[X, y],
                             wait_for_workers_timeout=connect_timeout):
            search.fit(X, y)
    except TimeoutError as exc:  # joblib: no worker joined within connect_timeout
        raise BackendError(f"the Dask scheduler at {address} has no workers ({exc}); start "
                           f"some with 'dask worker {address}'.") from None
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    elapsed = time.perf_counter() - start
    if progress:
        print(f"sweep: {n_fits} fits done in {elapsed:.1f} s", file=sys.stderr, flush=True)
    return SweepResult(search, cv_rows(search.cv_results_), link, address, workers, n_fits,
                       elapsed)
