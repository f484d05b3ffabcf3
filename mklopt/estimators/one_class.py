"""scikit-learn estimator for multiple kernel one-class novelty detection: :class:`MKLOneClass`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from sklearn.base import OutlierMixin

from ..losses import as_loss
from ..regularizers import Regularizer
from ._base import AUTO, MKLEstimatorBase

__all__ = ["MKLOneClass"]


class MKLOneClass(OutlierMixin, MKLEstimatorBase):
    """Multiple kernel one-class ν-SVM (novelty / outlier detection), certified.

    .. math:: \\min_{\\mu\\in\\Theta,\\,w,\\,\\rho}\\ \\tfrac12\\sum_m\\frac{\\|w_m\\|^2}{\\mu_m} - \\rho
              + \\frac{1}{\\nu n}\\sum_i \\bigl(\\rho - f(x_i)\\bigr)_+

    ν ∈ (0, 1] is an upper bound on the fraction of training outliers and a
    lower bound on the fraction of support vectors (as in
    :class:`sklearn.svm.OneClassSVM`, which this is for one kernel).

    Parameters
    ----------
    kernels : list of kernel specs or "precomputed", optional
        As in :class:`MKLClassifier` (default: :func:`default_kernels`).
    normalization : {"multiplicative", "trace", "spherical", "tail_sum"} or None, default="multiplicative"
    theta : int, default=2
        Eigenvalue cutoff of ``normalization="tail_sum"``.
    p : float, default=1.0
        **Weight norm** of :math:`\\Theta=\\{\\mu\\ge0:\\|\\mu\\|_p\\le1\\}`.
    regularizer : mklopt.Regularizer or callable, optional
        Any convex weight set Θ (overrides ``p``).
    nu : float, default=0.5
        In (0, 1].
    driver : str, default="auto"
        As in :class:`MKLRegressor`.
    backend : str, optional
    tol : float, optional
    max_iter : int, optional
    rank, approximation, random_state :
        Low-rank kernel factors for large ``n``, as in :class:`MKLClassifier`.

    Attributes
    ----------
    weights_ : ndarray of shape (M,)
    dual_coef_ : ndarray of shape (n_SV,)
        :math:`\\alpha_i` of the support vectors (they sum to 1).
    offset_ : float
        :math:`\\rho`; ``decision_function = score_samples - offset_``.
    support_, support_vectors_, kernel_specs_, kernel_names_, driver_, n_iter_, result_, rank_ :
        As in :class:`MKLClassifier`.
    """

    def __init__(self, kernels: Sequence[Any] | None = None, normalization: str | None = "multiplicative",
                 theta: int = 2, p: float = 1.0, regularizer: Regularizer | Callable | None = None,
                 nu: float = 0.5, driver: str = AUTO, backend: str | None = None,
                 tol: float | None = None, max_iter: int | None = None, rank: int | None = None,
                 approximation: str = "nystroem", random_state: int = 0) -> None:
        self._keep_params(locals())

    def _loss_name(self) -> str:
        return "one_class"

    def fit(self, X, y=None) -> "MKLOneClass":
        """Learn the kernel weights and the support of the data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        X, _ = self._fit_inputs(X, needs_y=False)
        loss = as_loss("one_class", nu=self.nu)
        result, = self._fit_problems(X, lambda kernel_set: [self._solve(kernel_set, None, loss)])
        self.offset_ = -float(result.bias)
        return self

    def decision_function(self, X) -> np.ndarray:
        """:math:`f(x) - \\rho`: positive for inliers, negative for outliers."""
        return self._decision(X)

    def score_samples(self, X) -> np.ndarray:
        """:math:`f(x) = \\sum_m\\mu_m K_m(x, X_{SV})\\alpha` (higher: more normal)."""
        return self._decision(X) + self.offset_

    def predict(self, X) -> np.ndarray:
        """+1 for inliers, -1 for outliers."""
        return np.where(self.decision_function(X) >= 0, 1, -1)
