"""What a sweep returns, and its table as rows and CSV.

:class:`SweepResult` holds scikit-learn's ``cv_results_`` layout; :func:`cv_rows` turns it
into one row per grid point (kernel sets written in the command line's syntax) and
:func:`write_csv` writes those rows.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..exceptions import InvalidInputError

__all__ = ["SweepResult", "STAT_COLUMNS", "cv_rows", "format_param", "write_csv"]

#: Columns of :func:`cv_rows` after the ``param_<name>`` ones.
STAT_COLUMNS = ("mean_test_score", "std_test_score", "rank_test_score", "mean_fit_time")


@dataclass
class SweepResult:
    """What :func:`sweep` returns.

    Attributes
    ----------
    cv_results : dict
        As ``GridSearchCV.cv_results_`` (``params``, ``split<k>_test_score``,
        ``mean_test_score``, ``std_test_score``, ``rank_test_score``, ``mean_fit_time``).
    rows : list of dict
        One row per grid point (:func:`cv_rows`).
    best_index : int
        Row of the best candidate (the first of rank 1, as scikit-learn's).
    best_estimator : estimator or None
        The best candidate refitted on all of X (None with ``refit=False``).
    dashboard_link, scheduler : str
        Of the cluster that ran the fits (a local cluster is closed on return).
    workers, n_fits, n_run, elapsed
        Workers at the start, fits in the sweep, fits run by this call (the others
        came from the log), wall-clock seconds.
    log : Path or None
        The per-fit log (:mod:`mklopt.model_selection.sweep_log`).
    search : object or None
        The fitted ``HalvingGridSearchCV`` of ``search="halving"``.
    """

    cv_results: dict[str, Any]
    rows: list[dict[str, Any]]
    best_index: int
    best_estimator: Any
    dashboard_link: str | None
    scheduler: str
    workers: int
    n_fits: int
    n_run: int
    elapsed: float
    log: Path | None = None
    search: Any = None

    @property
    def best_params_(self) -> dict[str, Any]:
        """The best candidate's parameters."""
        return dict(self.cv_results["params"][self.best_index])

    @property
    def best_score_(self) -> float:
        """Its mean cross-validated score."""
        return float(self.cv_results["mean_test_score"][self.best_index])

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
    from ..results.result_io import atomic_write

    rows = cv_rows(rows) if isinstance(rows, Mapping) else list(rows)
    text = io.StringIO()
    writer = csv.DictWriter(text, list(rows[0]) if rows else list(STAT_COLUMNS), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    atomic_write(path, lambda handle: handle.write(text.getvalue().encode("utf-8")), (".csv",))
    return Path(path)
