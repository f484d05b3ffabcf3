"""scikit-learn estimator for multiple kernel learning classification: :class:`MKLClassifier`.

Binary (hinge loss), one-vs-rest with a weight vector per class, or
multiclass with one shared weight vector (``"ovr_hinge"``). Kernels are
hyperparameters (see :mod:`mklopt.estimators._base`). Throughout, **p is the
weight norm** :math:`\\|\\mu\\|_p \\le 1` (block norm :math:`b = 2p/(p+1)`), as in
:func:`mklopt.solve`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from sklearn.base import ClassifierMixin

from .._validation import check_C
from ..exceptions import InvalidInputError
from ..regularizers import Regularizer
from ._checked import checked_targets
from ._base import AUTO, MKLEstimatorBase
from .multiclass import check_schemes, scheme, solve_classes
from .one_vs_one import in_given_order, ovr_shaped, pairs_order, votes

__all__ = ["MKLClassifier"]


class MKLClassifier(ClassifierMixin, MKLEstimatorBase):
    """Multiple kernel learning classifier (ℓp-MKL or any weight set Θ).

    Learns kernel weights :math:`\\mu\\in\\Theta` and an SVM on
    :math:`K_\\mu=\\sum_m\\mu_m K_m` by solving the MKL problem of
    :func:`mklopt.solve` (``driver="exact"``) or by an outer loop of
    :func:`mklopt.fit`; every fitted model carries mklopt's duality-gap
    certificate in ``result_``.

    Parameters
    ----------
    kernels : list of kernel specs or "precomputed", optional
        Each a metric name of :func:`sklearn.metrics.pairwise.pairwise_kernels`
        (``"linear"``), a pair ``(name, params)`` such as
        ``("rbf", {"gamma": 0.1})`` or ``("poly", {"degree": 3})``, or a
        callable ``k(X, Y) -> (n_x, n_y)`` array. ``"gamma": "scale"``
        means :math:`1/(d\\cdot\\operatorname{Var}(X))`. Default
        (``None``): :func:`default_kernels` (linear, quadratic, three RBF widths).
        ``"precomputed"``: ``X`` is the kernels themselves, shape
        ``(n_samples, n_samples, M)`` to ``fit`` (or a list of M (n, n) arrays, or a
        dense :class:`~mklopt.kernels.KernelSet`, taken as it is: validated when it was made)
        and ``(n_test, n_train, M)`` to ``predict``; cross-validation slices both sample
        axes. The normalization must need no :math:`k(x, x)` of test points
        (not ``"spherical"``), and ``rank`` stays ``None``.
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
        ``"auto"``: an outer loop to the certified gap ``tol`` — the interleaved
        ``"chunking"`` where it is estimated faster (:mod:`mklopt.estimators.cost`:
        column reads against the outer loop's stack passes and SVM solves for this
        machine's threads; one-vs-rest classes run side by side on them), on low-rank
        factors, or where the dense stack would exceed 2 GB; otherwise the cutting plane
        for p = 1 and the wrapper for every other weight set; never the exact
        interior-point solve (10 to 100 times slower than these loops already at 150 points).
        ``"exact"``: one interior-point solve of formulation ``"lp_dual"``,
        or ``"lp_primal"`` when Θ has no closed-form support function.
        ``"wrapper"``, ``"cutting_plane"``, ``"dca"`` or any
        registered driver: an outer loop (:func:`mklopt.fit`) with a libsvm
        inner solver, much faster on large ``n``. ``"dca"`` learns over the
        tail-sum class :math:`H_1` (:math:`\\sum_{j>\\theta}\\lambda_j(K_\\mu)\\le1`,
        cutoff ``theta``), takes no ``p``/``regularizer``, and has no global
        certificate (``result_.rel_gap`` is that of its last convex subproblem).
        ``"simplemkl"``: reduced-gradient descent, ``p=1`` only.
        ``"align"``/``"alignf"``/``"easymkl"``/``"rmkl"``/``"gram"``/``"memo"``/
        ``"pwmk"``/``"fheuristic"``: two stages, the weights from that weight
        method (:func:`mklopt.learn_weights`, defaults; ``C`` is passed to R-MKL
        and PWMK), then the SVM at those fixed weights, certified for that combination (``p``/``regularizer``
        ignored; ``result_.info["weights_method"]`` names the method).
    backend : str, optional
        CVXPY backend of the exact solve (default: the formulation's
        default); for an outer loop it is passed to :func:`mklopt.fit`
        (used by a CVXPY inner solver and by DCA's exact subproblems).
    tol : float, optional
        Backend tolerance of the exact solve (default 1e-8), or the certified
        relative gap at which an outer loop stops (default 1e-4).
    max_iter : int, optional
        Iteration cap of an outer loop (default: :func:`mklopt.fit`'s).
    multiclass : {"auto", "ovo", "ovr", "shared"}, default="auto"
        More than two classes (``multiclass_`` is the one used): ``"auto"`` is ``"ovo"`` where
        the kernels of all the training points would be computed on the fly (a dense stack over
        2 GB) and ``"ovr"`` otherwise, whichever was measured faster there (the rule and the
        figures: :func:`~mklopt.estimators.multiclass.scheme`); ``"ovr"`` solves one binary MKL
        problem per class, each with its own kernel weights; ``"ovo"`` one per pair of classes on
        the two classes' points (libsvm's scheme, :mod:`mklopt.estimators.one_vs_one`:
        k(k-1)/2 smaller problems, each with its own weights and certificate; predictions
        by votes); ``"shared"`` solves one
        problem with the ``"ovr_hinge"`` loss, all classes sharing one weight
        vector (one offset per class). Ignored for two classes.
    n_jobs : int, optional
        Threads solving the binary problems in parallel (joblib; -1: all cores; libsvm, the
        BLAS passes and the compiled interleaved core release the GIL). None: one problem at a
        time, except on the interleaved core (``driver="chunking"``), whose problems run side
        by side on numba's threads, and one-vs-one on kernels on the fly, whose pairs run in
        worker processes (:mod:`mklopt.estimators.multiclass`). Either way the result is the
        same.
    decision_function_shape : {"ovr", "ovo"}, default="ovr"
        With ``multiclass="ovo"``: ``"ovo"`` returns the pairs' decision values (n_samples,
        pairs) in libsvm's pair order; ``"ovr"`` one column per class, the votes plus the
        squashed summed confidences (as scikit-learn's ``SVC``).
    verbose : int, default=0
        > 0 shows a progress bar with the certified gap for outer loops.
    rank : int, optional
        Low-rank kernels for large ``n``: each kernel becomes a factor with
        ``rank`` columns (:math:`K_m\\approx G_mG_m^\\top`,
        ``KernelSet.from_data(X, specs, rank=rank)``), so no n x n matrix is
        formed and the inner SVM is linear; certified for the approximated
        kernels. At most ``n_samples`` (``rank_``). Default: exact kernels.
    approximation : {"nystroem", "rff"}, default="nystroem"
        How the factors are built when ``rank`` is set (random Fourier
        features for RBF kernels only).
    random_state : int, default=0
        Seed of the approximation.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels (any values; sorted).
    weights_ : ndarray of shape (M,), (n_classes, M) or (n_pairs, M)
        Kernel weights μ; one row per class for ``multiclass="ovr"``, one per pair of
        classes (libsvm's order (0, 1), (0, 2), ..., (k-2, k-1)) for ``"ovo"``.
    dual_coef_ : ndarray of shape (n_SV,) or (n_classes, n_SV)
        :math:`y_i\\alpha_i` of the support vectors ``support_``.
    support_ : ndarray of shape (n_SV,)
        Indices of training points with :math:`\\alpha_i > 10^{-8} C` in at
        least one of the binary problems; ascending, or for ``multiclass="ovo"`` class by
        class (as libsvm's), the order the points were fitted in: a dense stack is made with
        the points sorted by class, so that each pair's kernels are copied as two blocks.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Bias ``b`` of each binary problem.
    result_ : MKLResult or list of MKLResult
        The full result with its certificate (``primal``, ``dual``,
        ``rel_gap``, ``status``, ``history``); a list, one per class for
        ``multiclass="ovr"``, one per pair for ``"ovo"`` (each certified on its pair's
        points, ``info["points"]``: class a's, then class b's, the order of its variables;
        its ``dual_coef`` spread over all training points, in their given order).
    multiclass_ : str
        The multiclass scheme used (``"auto"`` resolved).
    n_iter_ : int or ndarray of shape (n_classes,)
        Outer-loop iterations (1 for an exact solve).
    kernel_specs_ : list
        The kernel specs used (defaults and ``"scale"`` resolved).
    kernel_names_ : list of str
    driver_ : str
        The driver that was run (``"auto"`` resolved).
    driver_choice_ : DriverChoice or None
        With ``driver="auto"`` where the estimates decided: both estimates in seconds
        and the reason (:func:`mklopt.estimators.cost.choose_driver`).
    support_vectors_ : ndarray of shape (n_SV, n_features)
        Training features of ``support_``: test kernels are evaluated against
        them only (the training kernels are not kept).
    rank_ : int or None
        Columns of each kernel factor (``rank`` capped at ``n_samples``).
    n_features_in_ : int
    feature_names_in_ : ndarray
        Only when ``X`` has string column names.

    Notes
    -----
    **Multiclass** (the schemes: ``multiclass`` above): ``decision_function`` returns one column
    per class (per pair with ``multiclass="ovo"`` and ``decision_function_shape="ovo"``);
    ``predict`` takes the argmax, or for one-vs-one the votes. **Binary**: labels may be any two
    values; ``classes_[1]`` is the positive class (decision value > 0).

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
                 tol: float | None = None, max_iter: int | None = None,
                 multiclass: str = "auto", n_jobs: int | None = None, verbose: int = 0,
                 rank: int | None = None, approximation: str = "nystroem", random_state: int = 0,
                 decision_function_shape: str = "ovr") -> None:
        self._keep_params(locals())

    def _loss_name(self) -> str:
        shared = self._scheme() == "shared" and getattr(self, "classes_", np.arange(2)).size > 2
        return "ovr_hinge" if shared else "hinge"

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
        X, y = self._fit_inputs(X, y, order_of=lambda labels: pairs_order(self, labels))
        checked_targets(self, y)
        check_schemes(self.multiclass, self.decision_function_shape, self.n_jobs)
        check_C(self.C)
        self.classes_ = np.unique(y)
        if self.classes_.size < 2:
            raise InvalidInputError(
                f"MKLClassifier needs at least two classes in y, got 1 class ({self.classes_.tolist()[0]!r}).")
        self.multiclass_ = scheme(self.multiclass, self.classes_.size)
        results = self._fit_problems(X, lambda kernel_set: self._solve_classes(kernel_set, y))
        self.intercept_ = np.hstack([np.atleast_1d(np.asarray(r.bias, dtype=float)) for r in results])
        in_given_order(self, self.__dict__.pop("_training_order", None))
        return self

    def _kernels_known(self, on_the_fly: bool) -> None:
        self.multiclass_ = scheme(self.multiclass, self.classes_.size, on_the_fly=on_the_fly)

    def _core_problems(self) -> int:
        k = int(self.classes_.size)
        if k <= 2 or self.n_jobs is not None or self._scheme() == "shared":
            return 1
        return k * (k - 1) // 2 if self._scheme() == "ovo" else k

    def _scheme(self) -> str:
        """The multiclass scheme of this fit (``"auto"`` resolved once ``fit`` knows the classes)."""
        return getattr(self, "multiclass_", self.multiclass)

    def _one_vs_one(self) -> bool:
        return self._scheme() == "ovo" and self.classes_.size > 2

    def _solve_classes(self, kernel_set, y) -> list:
        """One problem (binary, or multiclass with shared weights), one per class (ovr) or one
        per pair of classes (ovo), side by side on threads (:func:`~.multiclass.solve_classes`)."""
        if self.classes_.size == 2 or self._scheme() == "shared":
            return [self._solve(kernel_set, y, self._loss_name(), self.C)]
        return solve_classes(self, kernel_set, y)

    # ------------------------------------------------------------ predict
    def decision_function(self, X) -> np.ndarray:
        """Signed distance to the margin.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
            Binary: > 0 means ``classes_[1]``. Multiclass: one column per class.
        """
        scores = self._decision(X)
        if self._one_vs_one() and self.decision_function_shape == "ovr":
            return ovr_shaped(scores, self.classes_.size)
        return scores

    def predict(self, X) -> np.ndarray:
        """Predicted class labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        if self._one_vs_one():  # libsvm's votes; ties to the smallest class index
            return self.classes_[np.argmax(votes(self._decision(X), self.classes_.size), axis=1)]
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]
