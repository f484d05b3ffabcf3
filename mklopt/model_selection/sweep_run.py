"""Running a sweep's fits on Dask so that losing workers loses nothing.

* The data go to **every** worker (``scatter(..., broadcast=True)``): losing any one
  loses no data, and Dask reschedules the fits that were running on it.
* Fits are submitted one task per (candidate, fold) and collected as they finish;
  each finished fit is appended to the log (:mod:`mklopt.model_selection.sweep_log`) at once.
* Fits lost anyway (data lost with the last worker holding it, a task that killed
  its worker three times) are submitted again in a new round, after the data
  are scattered again; a sweep with at least one worker left ends with every
  fit scored.
* With no worker for ``connect_timeout`` seconds the sweep stops with a
  :class:`~mklopt.exceptions.BackendError` saying how many fits finished and where
  they are saved.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..exceptions import BackendError
from .sweep_log import FitsLog
from .sweep_tasks import error_row, fit_and_score

__all__ = ["run_fits", "aggregate", "MAX_ROUNDS", "halving", "progress_bar"]

#: Rounds of resubmission of lost fits before the sweep gives up.
MAX_ROUNDS = 5
_POLL = 0.5


def run_fits(client, distributed, estimator: Any, candidates: Sequence[Mapping[str, Any]],
             splits: Sequence[tuple[np.ndarray, np.ndarray]], X: np.ndarray, y: np.ndarray,
             scoring: Any, pending: list[tuple[int, int]], record: Callable[[tuple[int, int], dict], None],
             log: FitsLog | None, timeout: float, done: Callable[[], int]) -> None:
    """Run the ``pending`` (candidate, fold) fits, calling ``record`` for each as it finishes."""
    last_error: BaseException | None = None
    for _ in range(MAX_ROUNDS):
        if not pending:
            return
        _wait_for_workers(client, timeout, log, done())
        data = client.scatter([X, y], broadcast=True, hash=False)
        futures = {client.submit(fit_and_score, estimator, candidates[c], data[0], data[1],
                                 splits[f][0], splits[f][1], scoring, pure=False): (c, f)
                   for c, f in pending}
        lost, last_error = _collect(client, distributed, futures, record, log, timeout, done)
        pending = lost
    raise BackendError(
        f"{len(pending)} fits were lost in {MAX_ROUNDS} rounds of resubmission (last: {last_error}); "
        f"{done()} fits finished{_saved(log)}.")


def _collect(client, distributed, futures: dict, record, log, timeout: float, done):
    """Record finished fits until none is left; the lost ones and the last loss's error."""
    waiting, lost, error, idle = set(futures), [], None, None
    while waiting:
        try:
            finished, waiting = distributed.wait(waiting, timeout=_POLL, return_when="FIRST_COMPLETED")
        except (TimeoutError, distributed.TimeoutError):
            finished = set()
        except Exception:  # noqa: BLE001 - some were cancelled (their data or worker is gone)
            finished = {future for future in waiting if future.done()}
            waiting = waiting - finished
        for future in finished:
            try:
                out = future.result()
            except Exception as exc:  # noqa: BLE001 - sorted below
                if _lost(distributed, future, exc):  # worker or data lost: resubmit
                    lost.append(futures[future])
                    error = exc
                else:  # the task itself raised: the same again would, so it is recorded once
                    record(futures[future], error_row(exc))
                continue
            record(futures[future], out)
        if finished:
            idle = None
            continue
        if _workers(client):
            idle = None
        elif idle is None:
            idle = time.monotonic()
        elif time.monotonic() - idle > timeout:
            for future in waiting:
                future.cancel()
            raise BackendError(f"all Dask workers are gone (none for {timeout:g} s): "
                               f"{done()} fits finished{_saved(log)}.")
    return lost, error


def _lost(distributed, future, exc: BaseException) -> bool:
    """Whether a fit's future failed because a worker or its data went away (resubmit it), not
    because the task raised (record it once)."""
    gone = (distributed.CancelledError, distributed.KilledWorker, OSError, TimeoutError)
    return isinstance(exc, gone) or getattr(future, "status", "error") != "error"


def _workers(client) -> int:
    try:
        return len(client.scheduler_info().get("workers", {}))
    except (OSError, TimeoutError):
        return 0


def _wait_for_workers(client, timeout: float, log, n_done: int) -> None:
    deadline = time.monotonic() + timeout
    while not _workers(client):
        if time.monotonic() > deadline:
            raise BackendError(f"the Dask scheduler has no workers (none for {timeout:g} s): "
                               f"{n_done} fits finished{_saved(log)}.")
        time.sleep(_POLL)


def _saved(log: FitsLog | None) -> str:
    return f", saved in {log.path} (resume with it)" if log is not None else " (no log: pass log=)"


def aggregate(candidates: Sequence[Mapping[str, Any]], n_splits: int,
              results: Mapping[tuple[int, int], Mapping[str, Any]]) -> tuple[dict[str, Any], int]:
    """``cv_results`` as ``GridSearchCV`` computes them, and the best index."""
    from scipy.stats import rankdata

    scores = np.array([[results[(c, f)]["score"] for f in range(n_splits)]
                       for c in range(len(candidates))], dtype=float)
    times = np.array([[results[(c, f)]["fit_time"] for f in range(n_splits)]
                      for c in range(len(candidates))], dtype=float)
    means = scores.mean(axis=1)
    if np.isnan(means).all():
        rank = np.ones(len(candidates), dtype=np.int32)
    else:  # failed candidates tie with the worst, as scikit-learn ranks them
        rank = rankdata(-np.nan_to_num(means, nan=np.nanmin(means) - 1), method="min").astype(np.int32)
    cv_results: dict[str, Any] = {"params": [dict(c) for c in candidates]}
    for f in range(n_splits):
        cv_results[f"split{f}_test_score"] = scores[:, f]
    cv_results.update(mean_test_score=means, std_test_score=scores.std(axis=1),
                      rank_test_score=rank, mean_fit_time=times.mean(axis=1))
    return cv_results, int(rank.argmin())


def progress_bar(enabled: bool, total: int, initial: int):
    """A tqdm bar of fits done / total with its ETA on stderr (None when disabled)."""
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=initial, unit="fit", desc="mklopt sweep", file=sys.stderr)


def halving(client, distributed, estimator, param_grid, cv, scoring, X, y, refit, address,
            timeout: float, progress: bool):
    """The fitted ``HalvingGridSearchCV`` (successive halving) run with joblib's Dask backend.

    joblib sends the data and the larger fold indices to one worker each (other
    workers fetch copies as their fits need them). When a lost worker took data with it
    that no other worker had, the search is run again on the workers left
    (successive halving chooses its fits as it goes, so it cannot resubmit only the
    lost ones), at most :data:`MAX_ROUNDS` times. joblib scatters again under new
    keys: scattering the same data under its content's key while the previous copy is
    being released can hang (``dask/distributed`` issue 3703).
    """
    from sklearn.experimental import enable_halving_search_cv  # noqa: F401
    from sklearn.model_selection import HalvingGridSearchCV

    try:
        from joblib import parallel_config
    except ImportError:  # joblib < 1.3
        from joblib import parallel_backend as parallel_config
    lost = (distributed.CancelledError, distributed.KilledWorker)  # FutureCancelledError is one
    for attempt in range(1, MAX_ROUNDS + 1):
        search = HalvingGridSearchCV(estimator, param_grid, cv=cv, scoring=scoring, n_jobs=-1,
                                     refit=refit)
        try:
            with parallel_config(backend="dask", client=client, wait_for_workers_timeout=timeout):
                return search.fit(X, y)
        except TimeoutError as exc:
            raise BackendError(f"the Dask scheduler at {address} has no workers ({exc}).") from None
        except lost as exc:
            error = exc
            if progress:
                print(f"sweep: a lost worker took data of the successive halving with it ({exc}); "
                      f"running the search again ({attempt} of {MAX_ROUNDS} runs done)",
                      file=sys.stderr, flush=True)
    raise BackendError(f"the successive halving lost a worker with its data in each of {MAX_ROUNDS} "
                       f"runs (last: {error}); check the workers' logs for what stops them.")
