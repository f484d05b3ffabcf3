"""scikit-learn estimator for multiple kernel learning regression: :class:`MKLRegressor`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from sklearn.base import RegressorMixin

from .._validation import check_C
from ..exceptions import InvalidInputError
from ..losses import as_loss
from ..regularizers import Regularizer
from ._base import AUTO, MKLEstimatorBase

__all__ = ["MKLRegressor"]

_LOSSES = ("epsilon_insensitive", "squared_error")


class MKLRegressor(RegressorMixin, MKLEstimatorBase):
    """Multiple kernel learning regression (ℓp-MKL or any weight set Θ), certified.

    Learns kernel weights :math:`\\mu\\in\\Theta` and a kernel regressor on
    :math:`K_\\mu=\\sum_m\\mu_m K_m`,

    .. math:: \\min_{\\mu\\in\\Theta,\\,w,\\,b}\\ \\tfrac12\\sum_m\\frac{\\|w_m\\|^2}{\\mu_m}
              + C\\sum_i \\ell(y_i, f(x_i)),

    with the ε-insensitive loss (MKL support vector regression) or the
    squared loss (MKL kernel ridge regression with an offset). Every fitted
    model carries mklopt's duality-gap certificate in ``result_``.

    Parameters
    ----------
    kernels : list of kernel specs or "precomputed", optional
        As in :class:`MKLClassifier` (default: :func:`default_kernels`).
    normalization : {"multiplicative", "trace", "spherical", "tail_sum"} or None, default="multiplicative"
        As in :class:`MKLClassifier`.
    theta : int, default=2
        Eigenvalue cutoff of ``normalization="tail_sum"``.
    p : float, default=1.0
        **Weight norm** of :math:`\\Theta=\\{\\mu\\ge0:\\|\\mu\\|_p\\le1\\}`, p in [1, inf].
    regularizer : mklopt.Regularizer or callable, optional
        Any convex weight set Θ (overrides ``p``).
    C : float, default=1.0
        Loss weight, > 0.
    loss : {"epsilon_insensitive", "squared_error"}, default="epsilon_insensitive"
    epsilon : float, default=0.1
        Width of the insensitive tube (``loss="epsilon_insensitive"`` only), >= 0.
    driver : str, default="auto"
        ``"auto"``: an outer loop to the certified gap ``tol`` — the interleaved
        ``"chunking"`` for the ε-insensitive (and one-class) loss where it is estimated
        faster (:mod:`mklopt.estimators.cost`), on low-rank factors or where the dense
        stack would exceed 2 GB, otherwise the cutting plane for p = 1 and the wrapper for every other weight
        set; never the exact interior-point solve (10 to 100 times slower than
        these loops already at 150 points).
        Or ``"exact"``, ``"wrapper"``, ``"cutting_plane"``, ``"chunking"`` (not for
        ``"squared_error"``).
    backend : str, optional
        CVXPY backend of the exact solve.
    tol : float, optional
        Backend tolerance of the exact solve (default 1e-8), or the certified
        relative gap of an outer loop (default 1e-4).
    max_iter : int, optional
        Iteration cap of an outer loop.
    rank, approximation, random_state :
        Low-rank kernel factors for large ``n``, as in :class:`MKLClassifier`.

    Attributes
    ----------
    weights_ : ndarray of shape (M,)
        Kernel weights μ.
    dual_coef_ : ndarray of shape (n_SV,)
        Signed coefficients :math:`\\alpha_i` of the support vectors.
    intercept_ : float
        Offset ``b``.
    support_, support_vectors_, kernel_specs_, kernel_names_, driver_, n_iter_, rank_ :
        As in :class:`MKLClassifier`.
    result_ : MKLResult
        The full certified result.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> X, y = load_diabetes(return_X_y=True)
    >>> reg = make_pipeline(StandardScaler(), MKLRegressor(p=2, C=10.0, epsilon=5.0))
    >>> reg.fit(X[:150], y[:150]).score(X[300:], y[300:]) > 0.3
    True
    """

    def __init__(self, kernels: Sequence[Any] | None = None, normalization: str | None = "multiplicative",
                 theta: int = 2, p: float = 1.0, regularizer: Regularizer | Callable | None = None,
                 C: float = 1.0, loss: str = "epsilon_insensitive", epsilon: float = 0.1,
                 driver: str = AUTO, backend: str | None = None, tol: float | None = None,
                 max_iter: int | None = None, rank: int | None = None,
                 approximation: str = "nystroem", random_state: int = 0) -> None:
        self._keep_params(locals())

    def _loss_name(self) -> str:
        return self.loss

    def _make_loss(self):
        if self.loss not in _LOSSES:
            raise InvalidInputError(f"loss must be one of {_LOSSES}, got {self.loss!r}.")
        return as_loss(self.loss, epsilon=self.epsilon if self.loss == "epsilon_insensitive" else None)

    def fit(self, X, y) -> "MKLRegressor":
        """Learn the kernel weights and the regressor.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Real targets.

        Returns
        -------
        self
        """
        X, y = self._fit_inputs(X, y, y_numeric=True)
        loss = self._make_loss()
        check_C(self.C)
        result, = self._fit_problems(X, lambda kernel_set: [self._solve(kernel_set, y, loss, self.C)])
        self.intercept_ = float(result.bias)
        return self

    def predict(self, X) -> np.ndarray:
        """Predicted targets :math:`f(x) = \\sum_m\\mu_m K_m(x, X_{SV})\\alpha + b`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return self._decision(X)
