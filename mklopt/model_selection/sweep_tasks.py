"""One (candidate, fold) fit of a sweep, as a Dask worker runs it.

The same steps as scikit-learn's ``GridSearchCV`` for one split (clone, set the
candidate's parameters, fit on the training part, score the test part), so a
sweep's table equals ``GridSearchCV``'s. A fit that raises is scored NaN with
its error as status (``GridSearchCV``'s default ``error_score=np.nan``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["fit_and_score", "error_row"]


def fit_and_score(estimator: Any, params: Mapping[str, Any], X: np.ndarray, y: np.ndarray,
                  train: np.ndarray, test: np.ndarray, scoring: Any) -> dict[str, Any]:
    """Fit a clone with ``params`` on ``train``, score it on ``test``.

    Returns
    -------
    dict
        ``score``, ``fit_time`` (seconds) and, when the fitted model carries an
        mklopt result, its certified ``rel_gap`` and ``status``.
    """
    from sklearn.base import clone
    from sklearn.metrics import check_scoring

    start = time.perf_counter()
    try:  # every step of the task: an error is the fit's (deterministic), never a lost worker
        model = clone(estimator).set_params(**params)
        model.fit(X[train], y[train])
        fit_time = time.perf_counter() - start
        score = float(check_scoring(model, scoring=scoring)(model, X[test], y[test]))
    except Exception as exc:  # noqa: BLE001 - recorded like GridSearchCV's error_score=nan
        return error_row(exc, time.perf_counter() - start)
    result = getattr(model, "result_", None)
    return {"score": score, "fit_time": fit_time,
            "rel_gap": None if result is None else float(result.rel_gap),
            "status": None if result is None else str(result.status)}


def error_row(exc: BaseException, seconds: float = 0.0) -> dict[str, Any]:
    """The record of a fit that raised: score NaN, its error (one line) as status."""
    text = " ".join(str(exc).split())
    return {"score": float("nan"), "fit_time": seconds, "rel_gap": None,
            "status": f"error: {type(exc).__name__}: {text}"[:200]}
