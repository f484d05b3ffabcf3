"""scikit-learn estimator for Voted Kernel Regularization (Cortes et al., Voted Kernel Regularization, 2015): :class:`VKRClassifier`.

The hypothesis is :math:`f(x)=\\sum_{k,j}\\alpha_{k,j}\\,y_jK_k(x,x_j)` with one coefficient per
(kernel, training point), fitted by the VKR LP (``solver="lp"``, :mod:`mklopt.formulations.vkr_lp`)
or by coordinate descent (``solver="cd"``, :mod:`mklopt.drivers.vkr_cd`), both certified by
mklopt's duality gap. Kernels are hyperparameters (specs for :func:`mklopt.kernel_stack`),
so ``X`` stays a 2-D feature array and the estimator works in ``GridSearchCV``. Only
the training points with a nonzero coefficient (``support_vectors_``) are kept for
prediction.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ..api import fit as _fit_loop
from ..api import solve as _solve_exact
from ..exceptions import InvalidInputError, UncertifiedWarning
from ..formulations.vkr_lp import vkr_penalties
from ..kernels import kernel_stack
from ..kernels.construct import is_spec_pair, spec_list
from ..results.result import MKLResult
from ._checked import checked_targets

__all__ = ["VKRClassifier", "default_vkr_kernels"]

SOLVERS = ("lp", "cd")


def default_vkr_kernels(n_features: int, degrees: Sequence[int] = (1, 2, 3, 4)) -> list[tuple[str, dict]]:
    """Polynomial kernels :math:`(x^\\top x'/N + 1)^d` for ``degrees`` (N = ``n_features``)."""
    return [("poly", {"degree": int(d), "gamma": 1.0 / n_features, "coef0": 1.0}) for d in degrees]


class VKRClassifier(ClassifierMixin, BaseEstimator):
    """Voted Kernel Regularization classifier (Cortes, Goyal, Kuznetsov, Mohri).

    Minimizes

    .. math:: \\frac1m\\sum_i\\max\\Bigl(0,1-y_i\\sum_{k,j}\\alpha_{k,j}y_jK_k(x_i,x_j)\\Bigr)
              +\\sum_{k,j}(\\lambda r_k+\\beta)|\\alpha_{k,j}|.

    Parameters
    ----------
    kernels : list of kernel specs, optional
        Specs for :func:`mklopt.kernel_stack`, e.g.
        ``[("poly", {"degree": 2, "gamma": 1, "coef0": 1})]``. Default: polynomial
        kernels of degrees 1–4 with ``gamma = 1/n_features``, ``coef0 = 1``.
        High-degree polynomial kernels need scaled features (e.g. ``MinMaxScaler``).
    lam : float
        :math:`\\lambda\\ge0`, weight of the complexity penalties (0: norm-1 SVM).
    beta : float
        :math:`\\beta\\ge0`, plain ℓ1 weight.
    penalty : {"trace", "polynomial", "local"} or array (M,)
        Complexity penalties :math:`r_k` (:func:`mklopt.formulations.vkr_lp.vkr_penalties`);
        "polynomial" reads the degrees from ``("poly", {"degree": d})`` specs
        (scikit-learn's default degree 3) and N from ``X``.
    solver : {"lp", "cd"}
        The LP (:func:`mklopt.solve`, formulation ``"vkr_lp"``) or coordinate descent
        with corrective steps (:func:`mklopt.fit`, driver ``"vkr_cd"``); same optimum.
    backend : str, optional
        LP backend (default HiGHS).
    tol : float, optional
        Backend tolerance of the LP (``"lp"``, default 1e-8: at 1e-6 HiGHS's
        answers at the small end of the paper's grid, λ = β = 1e-6, were
        uncertified with objectives up to 32 % above the optimum, at the same
        speed) or the certified relative gap of coordinate descent (``"cd"``,
        default 1e-6).
    r : float, optional
        Radius of the ``"local"`` penalty.
    max_iter : int
        Iteration cap of ``"cd"``.

    Attributes
    ----------
    classes_ : ndarray (2,)
    result_ : MKLResult
        The certified solve (``alpha`` is the (M, n) coefficient array).
    support_ : ndarray
        Indices of training points with some nonzero :math:`\\alpha_{k,j}`.
    support_vectors_ : ndarray (``n_support_points_``, n_features)
    dual_coef_ : ndarray (M, ``n_support_points_``)
        :math:`y_j\\alpha_{k,j}` on the support points.
    n_nonzero_ : int
        Number of nonzero :math:`\\alpha_{k,j}`.
    n_support_points_ : int
        Number of distinct training points used by :math:`f`.
    penalties_ : ndarray (M,)
        The :math:`r_k` used.
    kernel_specs_ : list
        The kernel specs used.
    """

    def __init__(self, kernels: Sequence[Any] | None = None, lam: float = 1e-2, beta: float = 1e-3,
                 penalty: Any = "trace", solver: str = "lp", backend: str | None = None,
                 tol: float | None = None, r: float | None = None, max_iter: int = 1000) -> None:
        self.kernels = kernels
        self.lam = lam
        self.beta = beta
        self.penalty = penalty
        self.solver = solver
        self.backend = backend
        self.tol = tol
        self.r = r
        self.max_iter = max_iter

    # ------------------------------------------------------------------- fit
    def fit(self, X, y) -> VKRClassifier:
        """Fit on features ``X`` (n, N) and two-class labels ``y`` (any two values)."""
        X, y = _check_Xy(self, X, y)
        if self.solver not in SOLVERS:
            raise InvalidInputError(f"solver must be one of {SOLVERS}, got {self.solver!r}.")
        specs = self._specs(X.shape[1])
        K = kernel_stack(X, specs)
        params = self._penalty_params(specs, X.shape[1])
        result = self._solve(K, y, params)
        self._store(X, specs, result, K, params)
        return self

    def _specs(self, n_features: int) -> list:
        if self.kernels is None:
            return default_vkr_kernels(n_features)
        specs = spec_list(self.kernels)
        if not specs:
            raise InvalidInputError("kernels is empty; give at least one spec, e.g. [('poly', {'degree': 2})].")
        return specs

    def _penalty_params(self, specs: list, n_features: int) -> dict:
        params = {"lam": self.lam, "beta": self.beta, "penalty": self.penalty, "r": self.r}
        if isinstance(self.penalty, str) and self.penalty == "polynomial":
            params.update(degrees=_poly_degrees(specs), n_features=n_features)
        return params

    def _solve(self, K: np.ndarray, y: np.ndarray, params: dict) -> MKLResult:
        if self.solver == "lp":
            tol = 1e-8 if self.tol is None else self.tol
            return _solve_exact(K, y, "vkr_lp", backend=self.backend, tol=tol, **params)
        tol = 1e-6 if self.tol is None else self.tol
        result = _fit_loop(K, y, "vkr_cd", tol=tol, backend=self.backend,
                           max_iter=self.max_iter, **params)
        if result.status != "converged":
            warnings.warn(f"VKRClassifier(solver='cd') stopped with status '{result.status}' at "
                          f"rel_gap {result.rel_gap:.2e} > tol {tol:g}; raise max_iter or use "
                          "solver='lp'.", UncertifiedWarning, stacklevel=3)
        return result

    def _store(self, X: np.ndarray, specs: list, result: MKLResult, K: np.ndarray, params: dict) -> None:
        alpha = np.asarray(result.alpha)
        self.classes_ = result.classes
        self.result_ = result
        self.kernel_specs_ = specs
        self.support_ = np.flatnonzero((alpha != 0).any(axis=0))
        self.support_vectors_ = X[self.support_]
        self.dual_coef_ = np.asarray(result.dual_coef)[:, self.support_]
        self.n_nonzero_ = int(np.count_nonzero(alpha))
        self.n_support_points_ = int(self.support_.size)
        self.n_features_in_ = X.shape[1]
        extra = {k: params[k] for k in ("degrees", "n_features", "r") if params.get(k) is not None}
        self.penalties_ = vkr_penalties(K, self.penalty, **extra)

    # --------------------------------------------------------------- predict
    def decision_function(self, X) -> np.ndarray:
        """:math:`f(x)=\\sum_k K_k(x, X_{sv})\\,(y\\circ\\alpha_k)_{sv}`; positive means ``classes_[1]``."""
        check_is_fitted(self, "result_")
        X = _check_X(X, self.n_features_in_)
        if self.n_support_points_ == 0:
            return np.zeros(X.shape[0])
        T = kernel_stack(X, self.kernel_specs_, self.support_vectors_)
        return np.einsum("kij,kj->i", T, self.dual_coef_)

    def predict(self, X) -> np.ndarray:
        """Predicted labels (in the original label values)."""
        return np.where(self.decision_function(X) >= 0, self.classes_[1], self.classes_[0])


def _poly_degrees(specs: list) -> list[int]:
    degrees = []
    for spec in specs:
        if not (is_spec_pair(spec) and spec[0] in ("poly", "polynomial")):
            raise InvalidInputError(
                f"penalty='polynomial' needs polynomial kernel specs ('poly', {{'degree': d, ...}}), "
                f"got {spec!r}; use penalty='trace' for other kernels.")
        degrees.append(int(spec[1].get("degree", 3)))  # scikit-learn's default degree
    return degrees


def _check_X(X, n_features: int | None = None) -> np.ndarray:
    try:
        X = np.asarray(X, dtype=float)
    except (TypeError, ValueError):
        raise InvalidInputError("X must be a 2-D array of numbers (n_samples, n_features); it holds values "
                                "that are not numbers (text, or missing values: impute or drop them).") from None
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise InvalidInputError(f"X must be a non-empty 2-D array (n_samples, n_features), got shape {X.shape}.")
    if not np.all(np.isfinite(X)):
        raise InvalidInputError("X contains NaN or infinite values; impute or drop them first.")
    if n_features is not None and X.shape[1] != n_features:
        raise InvalidInputError(f"X has {X.shape[1]} features, but the classifier was fitted with {n_features}.")
    return X


def _check_Xy(estimator, X, y) -> tuple[np.ndarray, np.ndarray]:
    X = _check_X(X)
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise InvalidInputError(f"y must be 1-D with one label per row of X ({X.shape[0]}), got shape {y.shape}.")
    if y.dtype.kind == "O" and any(label is None or (isinstance(label, float) and np.isnan(label)) for label in y):
        raise InvalidInputError("y holds missing labels (None or NaN); drop those rows first.")
    checked_targets(estimator, y)
    classes = np.unique(y)
    if classes.size != 2:
        raise InvalidInputError(
            f"VKRClassifier is a binary classifier: y must have exactly two classes, got {classes.size}. "
            "Wrap it in sklearn.multiclass.OneVsRestClassifier for more classes.")
    return X, y
