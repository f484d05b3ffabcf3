"""Running a scikit-learn libsvm estimator on a precomputed :math:`K_\\mu` for a loss's inner solver."""

from __future__ import annotations

import warnings

import numpy as np

from ..exceptions import SolverError

__all__ = ["run_libsvm", "NOT_FINITE"]

NOT_FINITE = ("libsvm returned non-finite dual coefficients on K_mu: the kernels' entries are "
              "too large or too small for double precision; rescale them, e.g. "
              "KernelSet(K).normalized('trace')")


def run_libsvm(estimator, K: np.ndarray, y: np.ndarray | None) -> bool:
    """``estimator.fit(K, y)``; True when libsvm stopped at its iteration budget.

    libsvm's budget warning is returned (the caller reports it once per run),
    its ValueErrors and non-finite coefficients become :class:`SolverError`.
    """
    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        try:
            estimator.fit(K, y)
        except ValueError as exc:
            raise SolverError(f"{NOT_FINITE} (libsvm: {exc})") from None
    for w in caught:
        if not issubclass(w.category, ConvergenceWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if not np.all(np.isfinite(estimator.dual_coef_)):
        raise SolverError(NOT_FINITE)
    return any(issubclass(w.category, ConvergenceWarning) for w in caught)
