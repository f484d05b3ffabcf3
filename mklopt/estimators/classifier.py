"""scikit-learn estimator for multiple kernel learning: :class:`MKLClassifier`.

It takes kernel *specifications* (``("rbf", {"gamma": 0.1})``, ``"linear"``,
a callable ``k(X, Y)``) instead of kernel matrices, so ``X`` stays an
ordinary 2-D feature array and the estimator works in
:class:`~sklearn.model_selection.GridSearchCV` and
:class:`~sklearn.pipeline.Pipeline`. Training kernels are built with
:meth:`mklopt.KernelSet.from_data` and normalized; test kernels are evaluated
against the support vectors only, with the training normalization.

Throughout, **p is the weight norm** :math:`\\|\\mu\\|_p \\le 1` (block norm
:math:`b = 2p/(p+1)`), as in :func:`mklopt.solve`.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..api import fit as _fit_loop
from ..api import solve as _solve_exact
from .._validation import check_C, check_max_iter, check_tol
from ..exceptions import InvalidInputError
from ..kernels import NORMALIZATIONS, KernelSet, kernel_stack
from ..kernels._normalize import normalize_test
from ..regularizers import LpBall, Regularizer, as_regularizer
from ..result import MKLResult, decision_values
from .kernel_specs import diagonals, resolve_kernel_specs

__all__ = ["MKLClassifier"]

#: Drivers run once to the certified optimum (everything else goes to :func:`mklopt.fit`).
EXACT = "exact"
#: The default: the exact solve on small problems, an outer loop otherwise.
AUTO = "auto"
#: Largest number of training points for which ``driver="auto"`` solves exactly.
AUTO_EXACT_MAX_N = 200
#: Registered drivers of other problems (not MKL over a weight set).
_VKR_DRIVERS = ("vkr_cd",)
#: Stop reasons of the outer loops that mean "not converged".
_NOT_CONVERGED = ("max_iter", "time_limit", "callback")


class MKLClassifier(ClassifierMixin, BaseEstimator):
    """Multiple kernel learning classifier (ℓp-MKL or any weight set Θ).

    Learns kernel weights :math:`\\mu\\in\\Theta` and an SVM on
    :math:`K_\\mu=\\sum_m\\mu_m K_m` by solving the MKL problem of
    :func:`mklopt.solve` (``driver="exact"``) or by an outer loop of
    :func:`mklopt.fit`; every fitted model carries mklopt's duality-gap
    certificate in ``result_``.

    Parameters
    ----------
    kernels : list of kernel specs, optional
        Each a metric name of :func:`sklearn.metrics.pairwise.pairwise_kernels`
        (``"linear"``), a pair ``(name, params)`` such as
        ``("rbf", {"gamma": 0.1})`` or ``("poly", {"degree": 3})``, or a
        callable ``k(X, Y) -> (n_x, n_y)`` array. ``"gamma": "scale"``
        means :math:`1/(d\\cdot\\operatorname{Var}(X))`. Default
        (``None``): :func:`default_kernels` (linear, quadratic, three RBF widths).
    normalization : {"multiplicative", "trace", "spherical", "tail_sum"} or None, default="multiplicative"
        Applied to the training kernels with :meth:`KernelSet.normalized`
        and to the test kernels with :meth:`KernelSet.transform_test`.
        ``"multiplicative"`` (unit variance in feature space, Kloft thesis
        §3.3.1) and ``"spherical"`` keep :math:`K(x,x)\\approx1`, so ``C`` has
        its usual SVM meaning. ``"trace"`` (:math:`\\operatorname{Tr}K_m=1`) and
        ``"tail_sum"`` (:math:`\\sum_{j>\\theta}\\lambda_j(K_m)=1`, the
        ``conv`` method) shrink the kernels by about the number of training
        points ``n``: use a ``C`` about ``n`` times larger.
    theta : int, default=2
        Eigenvalue cutoff θ of ``normalization="tail_sum"`` and of
        ``driver="dca"``; ignored otherwise.
    p : float, default=1.0
        **Weight norm**: :math:`\\Theta=\\{\\mu\\ge0:\\|\\mu\\|_p\\le1\\}`,
        :math:`p\\in[1,\\infty]` (``p=1`` sparse ℓ1-MKL, ``p=inf`` the SVM on
        the sum kernel; block norm :math:`b=2p/(p+1)`). Ignored when
        ``regularizer`` is given.
    regularizer : mklopt.Regularizer or callable, optional
        Any convex weight set Θ (overrides ``p``); a callable
        ``constraints(mu)`` becomes a :class:`mklopt.ConstraintSet`.
    C : float, default=1.0
        Soft-margin constant, > 0.
    driver : str, default="auto"
        ``"auto"``: ``"exact"`` for at most 200 training points, otherwise the
        cutting plane for the ℓ1 ball (p = 1) and the wrapper for every other
        weight set (the interior-point solve grows as :math:`n^3` and took
        400 s on 1000 digits where the wrapper takes about a second).
        ``"exact"``: one interior-point solve of formulation ``"lp_dual"``,
        or ``"lp_primal"`` when Θ has no closed-form support function.
        ``"wrapper"``, ``"cutting_plane"``, ``"dca"`` (when installed) or any
        registered driver: an outer loop (:func:`mklopt.fit`) with a libsvm
        inner solver, much faster on large ``n``. ``"dca"`` learns over the
        tail-sum class :math:`H_1` (:math:`\\sum_{j>\\theta}\\lambda_j(K_\\mu)\\le1`,
        cutoff ``theta``), takes no ``p``/``regularizer``, and has no global
        certificate (``result_.rel_gap`` is that of its last convex subproblem).
    backend : str, optional
        CVXPY backend of the exact solve (default: the formulation's
        default); for an outer loop it is passed to :func:`mklopt.fit`
        (used by a CVXPY inner solver and by DCA's exact subproblems).
    tol : float, optional
        Backend tolerance of the exact solve (default 1e-8), or the certified
        relative gap at which an outer loop stops (default 1e-4).
    max_iter : int, optional
        Iteration cap of an outer loop (default: :func:`mklopt.fit`'s).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels (any values; sorted).
    weights_ : ndarray of shape (M,) or (n_classes, M)
        Kernel weights μ; one row per class for one-vs-rest.
    dual_coef_ : ndarray of shape (n_SV,) or (n_classes, n_SV)
        :math:`y_i\\alpha_i` of the support vectors ``support_``.
    support_ : ndarray of shape (n_SV,)
        Indices of training points with :math:`\\alpha_i > 10^{-8} C` in at
        least one of the binary problems.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Bias ``b`` of each binary problem.
    result_ : MKLResult or list of MKLResult
        The full result with its certificate (``primal``, ``dual``,
        ``rel_gap``, ``status``, ``history``); a list, one per class, for
        one-vs-rest.
    n_iter_ : int or ndarray of shape (n_classes,)
        Outer-loop iterations (1 for an exact solve).
    kernel_specs_ : list
        The kernel specs used (defaults and ``"scale"`` resolved).
    kernel_names_ : list of str
    driver_ : str
        The driver that was run (``"auto"`` resolved).
    support_vectors_ : ndarray of shape (n_SV, n_features)
        Training features of ``support_``: test kernels are evaluated against
        them only (the training kernels are not kept).
    n_features_in_ : int
    feature_names_in_ : ndarray
        Only when ``X`` has string column names.

    Notes
    -----
    **Multiclass**: one-vs-rest. For each class ``c`` a binary MKL problem
    (class ``c`` against all others) is solved with its own kernel weights;
    ``decision_function`` returns one column per class and ``predict`` the
    argmax. **Binary**: labels may be any two values; ``classes_[1]`` is
    the positive class (decision value > 0).

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> clf = make_pipeline(StandardScaler(), MKLClassifier(p=4/3, driver="wrapper"))
    >>> clf.fit(X[:200], y[:200]).score(X[200:], y[200:]) > 0.9
    True
    """

    def __init__(self, kernels: Sequence[Any] | None = None, normalization: str | None = "multiplicative",
                 theta: int = 2, p: float = 1.0, regularizer: Regularizer | Callable | None = None,
                 C: float = 1.0, driver: str = AUTO, backend: str | None = None,
                 tol: float | None = None, max_iter: int | None = None) -> None:
        self.kernels = kernels
        self.normalization = normalization
        self.theta = theta
        self.p = p
        self.regularizer = regularizer
        self.C = C
        self.driver = driver
        self.backend = backend
        self.tol = tol
        self.max_iter = max_iter

    # ----------------------------------------------------------------- fit
    def fit(self, X, y) -> "MKLClassifier":
        """Learn the kernel weights and the classifier.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels (two or more classes, any values).

        Returns
        -------
        self
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self._check_params()
        self.classes_ = np.unique(y)
        if self.classes_.size < 2:
            raise InvalidInputError(
                f"MKLClassifier needs at least two classes in y, got 1 class ({self.classes_[0]!r}).")
        self.kernel_specs_ = resolve_kernel_specs(self.kernels, X)
        kernel_set = self._training_kernels(X)
        self.kernel_names_ = list(kernel_set.names)
        self.driver_ = self._resolve_driver(kernel_set.n)
        if self.classes_.size == 2:
            results = [self._fit_binary(kernel_set, y)]
        else:
            results = [self._fit_binary(kernel_set, np.where(y == c, 1.0, -1.0))
                       for c in self.classes_]
        self._store(results, kernel_set, X)
        return self

    def _resolve_driver(self, n: int) -> str:
        if self.driver != AUTO:
            return self.driver
        if n <= AUTO_EXACT_MAX_N:
            return EXACT
        reg = as_regularizer(self.regularizer, self.p)
        return "cutting_plane" if isinstance(reg, LpBall) and reg.p == 1 else "wrapper"

    def _check_params(self) -> None:
        if self.normalization is not None and self.normalization not in NORMALIZATIONS:
            raise InvalidInputError(
                f"normalization must be None or one of {NORMALIZATIONS}, got {self.normalization!r}.")
        drivers = [AUTO, *_driver_names()]
        if self.driver in _VKR_DRIVERS:
            raise InvalidInputError(
                f"driver {self.driver!r} solves Voted Kernel Regularization, not MKL; use "
                f"mklopt.VKRClassifier(solver='cd'), or one of {drivers}.")
        if self.driver not in drivers:
            raise InvalidInputError(f"driver must be one of {drivers}, got {self.driver!r}.")
        if not (isinstance(self.theta, numbers.Integral) and self.theta >= 0):
            raise InvalidInputError(f"theta must be an integer >= 0, got {self.theta!r}.")
        if self.tol is not None:
            check_tol(self.tol)
        if self.max_iter is not None:
            check_max_iter(self.max_iter)
        check_C(self.C)
        as_regularizer(self.regularizer, self.p)  # validates p and the regularizer type

    def _training_kernels(self, X: np.ndarray) -> KernelSet:
        ks = KernelSet.from_data(X, self.kernel_specs_)
        if self.normalization is None:
            return ks
        theta = self.theta if self.normalization == "tail_sum" else None
        return ks.normalized(self.normalization, theta=theta)

    def _fit_binary(self, kernel_set: KernelSet, y: np.ndarray) -> MKLResult:
        """Solve one two-class MKL problem on the training kernels."""
        common = dict(C=self.C, p=self.p, regularizer=self.regularizer, backend=self.backend)
        if self.driver_ == EXACT:
            reg = as_regularizer(self.regularizer, self.p)
            formulation = "lp_dual" if reg.has_support_expr else "lp_primal"
            tol = 1e-8 if self.tol is None else self.tol
            return _solve_exact(kernel_set, y, formulation, tol=tol, **common)
        extra = {"theta": self.theta} if self.driver_ == "dca" else {}
        tol = 1e-4 if self.tol is None else self.tol
        result = _fit_loop(kernel_set, y, self.driver_, tol=tol, max_iter=self.max_iter,
                           **common, **extra)
        if result.status in _NOT_CONVERGED:
            warnings.warn(
                f"MKLClassifier: driver '{self.driver_}' stopped on {result.status} with certified "
                f"rel_gap {result.rel_gap:.2e} > tol {tol:g}; increase max_iter or use driver='exact'.",
                ConvergenceWarning, stacklevel=3)
        return result

    def _store(self, results: list[MKLResult], kernel_set: KernelSet, X: np.ndarray) -> None:
        """Keep what prediction needs: support vectors, their coefficients, the normalization."""
        coefs = np.array([np.asarray(r.dual_coef, dtype=float) for r in results])
        self.support_ = np.flatnonzero(np.any(np.abs(coefs) > 0, axis=tuple(range(coefs.ndim - 1))))
        self.support_vectors_ = X[self.support_]
        self._scales = np.asarray(kernel_set.scales, dtype=float).copy()
        diag = kernel_set._train_diag
        self._train_diag = None if diag is None else diag[:, self.support_].copy()
        self._coef = coefs[..., self.support_]
        weights = np.array([np.asarray(r.weights, dtype=float) for r in results])
        iters = np.array([max(1, int(r.iterations)) for r in results])
        self.intercept_ = np.array([float(r.bias) for r in results])
        binary = len(results) == 1
        self.weights_ = weights[0] if binary else weights
        self.dual_coef_ = coefs[0, self.support_] if binary else coefs[:, self.support_]
        self.n_iter_ = int(iters[0]) if binary else iters
        self.result_ = results[0] if binary else results

    # ------------------------------------------------------------ predict
    def _test_kernels(self, X: np.ndarray) -> np.ndarray:
        """Normalized kernels between ``X`` and the support vectors, shape (M, n_test, n_SV)."""
        T = kernel_stack(X, self.kernel_specs_, self.support_vectors_)
        test_diag = diagonals(X, self.kernel_specs_) if self._train_diag is not None else None
        return normalize_test(T, self._scales, self._train_diag, test_diag)

    def decision_function(self, X) -> np.ndarray:
        """Signed distance to the margin.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
            Binary: > 0 means ``classes_[1]``. One-vs-rest: one column per class.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        T = self._test_kernels(X)
        results = [self.result_] if isinstance(self.result_, MKLResult) else self.result_
        scores = [decision_values(T, r.weights, coef, r.bias) for r, coef in zip(results, self._coef)]
        return scores[0] if len(scores) == 1 else np.column_stack(scores)

    def predict(self, X) -> np.ndarray:
        """Predicted class labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]


def _driver_names() -> list[str]:
    from ..drivers import DRIVERS

    return [EXACT, *sorted(d for d in DRIVERS if d not in _VKR_DRIVERS)]
