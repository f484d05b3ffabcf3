"""Cross-validated model selection that outgrows one process, and survives losing workers.

:func:`sweep` scores every (candidate, fold) of a grid exactly as scikit-learn's
``GridSearchCV`` does, each fit one task on a ``dask.distributed`` cluster: a
``LocalCluster`` of worker processes started and closed here, or a running scheduler
that is only connected to. The data are on every worker, so losing one loses nothing
(Dask reruns its fits elsewhere); each finished fit is appended to a log
(``log=``) at once, and a stopped sweep resumes from it (``resume=``), running only
the fits it lacks (:mod:`mklopt.model_selection.sweep_log`, :mod:`mklopt.model_selection.sweep_run`).
``search="halving"`` runs scikit-learn's successive halving instead. Needs the
``dask`` extra (``pip install -e ".[dask]"``); the dashboard needs ``bokeh>=3.1``.

Recipes
-------
One machine, four worker processes; a kernel set is a list of kernel specs::

    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler
    from mklopt.model_selection import sweep

    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    grid = {"C": [0.1, 1, 10], "p": [1, 4 / 3, 2],
            "kernels": [["linear", ("rbf", {"gamma": 0.03})], ["linear", ("poly", {"degree": 2})]]}
    if __name__ == "__main__":  # the worker processes re-import the main script
        res = sweep(X, y, grid, cv=5, n_workers=4, log="sweep.fits.csv")
        print(res.best_params_, res.best_score_)
        res.to_csv("sweep.csv")

Interrupted (Ctrl-C, a crash, every worker gone)? The same call with
``resume="sweep.fits.csv"`` runs only the missing fits; the table is the same.

A cluster: ``dask scheduler`` on one host, ``dask worker tcp://HOST:8786 --nthreads 1``
on the others (same environment, mklopt installed), then the same call with
``scheduler="tcp://HOST:8786"``, or ``mklopt sweep --data Xy.npz --scheduler tcp://HOST:8786``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
import sys
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._version import install_hint
from ..exceptions import BackendNotInstalledError, InvalidInputError, MKLWarning, SolverError
from .sweep_log import FitsLog, params_key, sweep_fingerprint
from .sweep_cluster import cluster_client
from .sweep_result import SweepResult, cv_rows
from .sweep_run import aggregate, halving, progress_bar, run_fits
from .sweep_tasks import fit_and_score

#: The install command named when ``dask.distributed`` is missing.
DASK_EXTRA = install_hint("dask")


def _distributed():
    """``dask.distributed``, or :class:`BackendNotInstalledError` naming the extra."""
    try:
        return importlib.import_module("dask.distributed")
    except ImportError as exc:
        raise BackendNotInstalledError(
            f"mklopt.model_selection.search runs on dask.distributed, which is not installed ({exc}); install "
            f"the 'dask' extra: {DASK_EXTRA} (or pip install \"dask[distributed]\").") from None


def sweep(X, y, param_grid: Mapping[str, Sequence] | Sequence[Mapping[str, Sequence]], *,
          estimator=None, cv: Any = 5, scheduler: str | None = None, n_workers: int = 2,
          progress: bool = True, scoring: str | Callable | None = None,
          connect_timeout: float = 10.0, log: str | Path | None = None,
          resume: str | Path | None = None, search: str = "grid", refit: bool = True) -> SweepResult:
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
        Worker processes of the local cluster. ``1`` (without ``scheduler``): no cluster, the
        fits run in this process one after another (a script then needs no
        ``if __name__ == "__main__":`` guard, which Dask's worker processes do).
    progress : bool, default=True
        A progress bar of fits done / total with its ETA, and the dashboard link while
        the cluster runs, on stderr.
    scoring : str or callable, optional
        One scikit-learn scorer (default: the estimator's ``score``).
    connect_timeout : float, default=10
        Seconds to wait for ``scheduler``, and for a worker when there is none.
    log : path, optional
        Append one row per finished (candidate, fold) fit to this CSV as it finishes
        (:mod:`mklopt.model_selection.sweep_log`): nothing finished is lost if the sweep stops.
    resume : path, optional
        A log of an earlier, unfinished run of the same sweep: its fits are kept, only the
        others run, and new ones are appended to it. The data, grid, estimator, scorer and
        folds must be the same (checked by a fingerprint; a mismatch is an error), and the log
        must exist.
    search : {"grid", "halving"}
        ``"halving"``: scikit-learn's ``HalvingGridSearchCV`` (successive halving, for large
        grids) on joblib's Dask backend; no log or resume.
    refit : bool, default=True
        Refit the best candidate on all of X (``best_estimator``).

    Returns
    -------
    SweepResult
        Its table equals ``GridSearchCV``'s on the same folds, interrupted or not.

    Raises
    ------
    BackendNotInstalledError
        No ``dask.distributed`` (the message names ``pip install -e ".[dask]"``).
    BackendError
        ``scheduler`` unreachable within ``connect_timeout``; no worker left (the message
        says how many fits finished and where they are logged).
    InvalidInputError
        Bad ``param_grid``, ``n_workers``, ``connect_timeout``, ``search``, several
        ``scoring`` metrics, or a ``resume`` log of another sweep.

    Examples
    --------
    In a script (see the module's recipes): ``res = sweep(X, y, {"C": [0.1, 1], "p": [1, 2]},
    log="fits.csv")``; after an interruption the same call with ``resume="fits.csv"``.
    """
    distributed = _distributed()
    from sklearn.base import clone
    from sklearn.model_selection import ParameterGrid

    _check_options(n_workers, connect_timeout, scoring, search, log, resume)
    try:
        candidates = list(ParameterGrid(param_grid))
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"bad param_grid: {exc}") from None
    if estimator is None:
        from ..estimators import MKLClassifier
        estimator = MKLClassifier()
    X, y = np.asarray(X), np.asarray(y)
    _check_data(X, y, estimator)
    unknown = sorted({key for c in candidates for key in c} - set(estimator.get_params(deep=True)))
    if unknown:
        raise InvalidInputError(f"param_grid names {unknown}, which {type(estimator).__name__} does not "
                                f"take; its parameters: {sorted(estimator.get_params(deep=False))}.")
    splits = _splits(cv, X, y, estimator)
    _check_scoring(estimator, scoring)
    total = len(candidates) * len(splits)
    start = time.perf_counter()
    # the log (a resume of another sweep is refused here) and what is left, before any cluster
    fits = None if (log or resume) is None or search == "halving" else FitsLog(
        resume or log, sweep_fingerprint(X, y, candidates, estimator, scoring, splits,
                                         resume=resume is not None),
        total, [params_key(c) for c in candidates], len(splits))
    results = fits.start(resume is not None) if fits is not None else {}
    pending = [(c, f) for c in range(len(candidates)) for f in range(len(splits)) if (c, f) not in results]
    here = scheduler is None and n_workers == 1 and search == "grid"  # no Dask: in this process
    cluster = (cluster_client(distributed, scheduler, n_workers, connect_timeout)
               if (pending or search == "halving") and not here else _no_cluster())
    with cluster as (client, link, address, workers):
        if progress:
            note = "" if scheduler or importlib.util.find_spec("bokeh") else " (needs bokeh>=3.1)"
            where = (" in this process (n_workers=1)" if here else
                     f" on {workers} Dask workers; dashboard (while it runs): {link}{note}")
            print(f"sweep: {len(candidates)} candidates x {len(splits)} folds = {total} fits"
                  + (where if pending else f": all {total} in {fits.path} already, no cluster started"),
                  file=sys.stderr, flush=True)
        if search == "halving":
            search_cv = halving(client, distributed, estimator, param_grid, cv, scoring, X, y, refit,
                                address, connect_timeout, progress)
            return _halving_result(search_cv, refit, link, address, workers, start)
        bar = progress_bar(progress, total, len(results))

        def record(key: tuple[int, int], out: dict) -> None:
            results[key] = out
            if fits is not None:
                fits.append({"candidate": key[0], "fold": key[1],
                             "params": params_key(candidates[key[0]]), **out})
            if bar is not None:
                bar.update(1)

        try:
            if here:
                for c, f in pending:
                    record((c, f), fit_and_score(estimator, candidates[c], X, y, *splits[f], scoring))
            else:
                run_fits(client, distributed, estimator, candidates, splits, X, y, scoring, pending,
                         record, fits, connect_timeout, lambda: len(results))
        except KeyboardInterrupt:
            kept = (f"{len(results)} of {total} fits kept in {fits.path}; resume with --resume "
                    f"(in Python: resume='{fits.path}')" if fits is not None else
                    f"{len(results)} of {total} fits done, none kept (pass log= to keep them)")
            raise KeyboardInterrupt(kept) from None
        finally:
            if bar is not None:
                bar.close()
    _check_failures(results)
    cv_results, best = aggregate(candidates, len(splits), results)
    best_estimator = clone(estimator).set_params(**candidates[best]).fit(X, y) if refit else None
    elapsed = time.perf_counter() - start
    if progress:
        print(f"sweep: {total} fits done ({len(pending)} run now) in {elapsed:.1f} s",
              file=sys.stderr, flush=True)
    return SweepResult(cv_results, cv_rows(cv_results), best, best_estimator, link, address,
                       workers, total, len(pending), elapsed, None if fits is None else fits.path)


@contextlib.contextmanager
def _no_cluster():
    """Nothing left to fit (a resumed log holds every fit): no cluster, no dashboard."""
    yield None, None, None, 0


def _check_data(X: np.ndarray, y: np.ndarray, estimator) -> None:
    """NaN or infinite features or labels, refused before a cluster starts, for mklopt's own
    estimators (a pipeline of yours may impute them: its fits then say what went wrong)."""
    if not type(estimator).__module__.startswith("mklopt"):
        return
    for name, values in (("X", X), ("y", y)):
        if values.dtype.kind in "fc" and not np.all(np.isfinite(values)):
            where = np.argwhere(~np.isfinite(values))[0].tolist()
            raise InvalidInputError(f"{name} contains NaN or infinite values (the first at index {where}); "
                                    "impute or drop them before the sweep.")


def _splits(cv: Any, X: np.ndarray, y: np.ndarray, estimator) -> list:
    """The (train, test) folds of ``cv``; scikit-learn's error for a bad ``cv`` as mklopt's."""
    from sklearn.base import is_classifier
    from sklearn.model_selection import check_cv

    try:
        return list(check_cv(cv, y, classifier=is_classifier(estimator)).split(X, y))
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"bad cv={cv!r}: {' '.join(str(exc).split())}") from None


def _check_scoring(estimator, scoring) -> None:
    """An unknown scorer refused before the cluster starts (each fit would fail with it)."""
    from sklearn.metrics import check_scoring, get_scorer_names

    if isinstance(scoring, str) and scoring not in get_scorer_names():
        raise InvalidInputError(f"scoring={scoring!r} is not a scikit-learn scorer name (the names: "
                                "sklearn.metrics.get_scorer_names()); pass a name, a callable or None.")
    try:
        check_scoring(estimator, scoring=scoring)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"bad scoring={scoring!r}: {' '.join(str(exc).split())}") from None


def _check_failures(results: Mapping[tuple[int, int], Mapping[str, Any]]) -> None:
    """Fits that raised are scored NaN, as ``GridSearchCV`` does: a :class:`SolverError` where
    every fit failed (no candidate to choose), an :class:`MKLWarning` where some did."""
    failed = [row["status"] for row in results.values() if str(row.get("status")).startswith("error:")]
    if failed and len(failed) == len(results):
        raise SolverError(f"all {len(results)} fits failed; the first {failed[0]}")
    if failed:
        warnings.warn(f"{len(failed)} of {len(results)} fits failed and are scored NaN; the first "
                      f"{failed[0]}", MKLWarning, stacklevel=3)


def _check_options(n_workers, connect_timeout, scoring, search, log, resume) -> None:
    if isinstance(n_workers, bool) or not isinstance(n_workers, (int, np.integer)) or n_workers < 1:
        raise InvalidInputError(f"n_workers must be an integer >= 1, got {n_workers!r}.")
    if not (isinstance(connect_timeout, (int, float)) and 0 < connect_timeout < math.inf):
        raise InvalidInputError(f"connect_timeout must be a positive number of seconds, "
                                f"got {connect_timeout!r}.")
    if isinstance(scoring, (list, tuple, set, dict)):
        raise InvalidInputError("scoring must be one scorer (a name or a callable), not several.")
    if search not in ("grid", "halving"):
        raise InvalidInputError(f"search must be 'grid' or 'halving', got {search!r}.")
    if search == "halving" and (log is not None or resume is not None):
        raise InvalidInputError("log= and resume= work with search='grid' (successive halving "
                                "chooses its fits as it goes).")
    if log is not None and resume is not None and Path(log) != Path(resume):
        raise InvalidInputError("resume= continues its own log: pass log= or resume=, not both.")


def _halving_result(search, refit: bool, link, address, workers, start) -> SweepResult:
    results = dict(search.cv_results_)
    rows = [{"iter": int(i), "n_resources": int(r), **row} for i, r, row in
            zip(results["iter"], results["n_resources"], cv_rows(results))]
    fits = len(rows) * search.n_splits_
    return SweepResult(results, rows, int(search.best_index_),
                       search.best_estimator_ if refit else None, link, address, workers, fits,
                       fits, time.perf_counter() - start, None, search)
