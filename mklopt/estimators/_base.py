"""What every MKL estimator shares: kernels from specs, the driver, the solve.

The estimators take kernel *specifications* (``("rbf", {"gamma": 0.1})``,
``"linear"``, a callable ``k(X, Y)``) instead of kernel matrices, so ``X``
stays an ordinary 2-D feature array and they work in
:class:`~sklearn.model_selection.GridSearchCV` and
:class:`~sklearn.pipeline.Pipeline`. Training kernels are built with
:meth:`mklopt.KernelSet.from_data` and normalized (on the fly for the interleaved core
where the dense stack would not fit); with ``rank=r`` they are low-rank factors
(:meth:`~mklopt.KernelSet.from_data` with ``rank``, Nyström by default). What a fitted
estimator keeps and how it predicts: :mod:`mklopt.estimators._model`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning

from ..weight_methods import learn_weights
from ..api import fit as _fit_loop
from ..api import solve as _solve_exact
from ..drivers.chunking import Chunking
from ..drivers.core_threads import core_threads
from ..exceptions import InvalidInputError, NotPSDError
from ..kernels import KernelSet
from ..kernels._checked_stack import with_precision_hint
from ..kernels._normalize import SCALAR_NORMALIZATIONS
from ..kernels._memory import stack_bytes
from ..kernels._threads import granted_threads
from ..kernels.lazy import lazy_supported
from ..losses import Loss
from ..regularizers import Fixed, LpBall, as_regularizer
from ..regularizers.penalties import Penalty
from ..results.result import MKLResult
from .cost import choose_driver
from . import _kernel_reuse
from ._model import StoredModel
from .kernel_specs import resolve_kernel_specs
from .precomputed import (ESTIMATOR_CLIP, PRECOMPUTED, check_normalization, dense_kernel_set, low_precision,
                          training_stack)
from .._validation import check_targets
from ._checked import checked_column, checked_data, checked_lengths
from ._params import AUTO, EXACT, WEIGHT_METHODS, check_common_params, check_rank, driver_names

__all__ = ["MKLEstimatorBase", "EXACT", "AUTO", "WEIGHT_METHODS", "driver_names",
           "check_rank"]

#: ``driver="chunking"`` computes kernels on the fly when the dense stack would exceed this (bytes).
LAZY_STACK_BYTES = 2 * 2**30
#: Stop reasons of the outer loops that mean "not converged".
_NOT_CONVERGED = ("max_iter", "time_limit", "callback")


def machine_threads() -> int:
    """The threads the outer loops' stack passes share: numba's thread count (``NUMBA_NUM_THREADS``),
    capped by the threads the caller grants (a joblib or Dask worker's share)."""
    return min(int(numba.get_num_threads()), granted_threads())


def _stack_over(M: int, n: int) -> bool:
    """Would the dense stack of M kernels on n points exceed :data:`LAZY_STACK_BYTES`?"""
    return stack_bytes(M, n) > LAZY_STACK_BYTES


class MKLEstimatorBase(StoredModel, BaseEstimator):
    """Shared machinery; subclasses set the loss and the label handling."""

    def _loss_name(self) -> str:
        raise NotImplementedError

    # ------------------------------------------------------------ params
    def _check_common_params(self) -> None:
        check_common_params(self)

    def _precomputed(self) -> bool:
        return isinstance(self.kernels, str) and self.kernels == PRECOMPUTED

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self._precomputed()  # CV slices both sample axes
        return tags

    # --------------------------------------------------------------- fit
    def _fit_inputs(self, X, y=None, y_numeric: bool = False, needs_y: bool = True,
                    order_of: Callable[[np.ndarray], np.ndarray | None] | None = None) -> tuple[np.ndarray, Any]:
        """``X`` and ``y`` checked: features, or the (M, n, n) stack for ``kernels="precomputed"``.

        ``order_of(y)``: an order of the training points to fit them in (None: as given), applied
        to the features and labels, or while a precomputed array is copied into the stack (not to a
        :class:`~mklopt.kernels.KernelSet`, used as it is); ``_training_order`` says which was taken.
        """
        self._training_order = None
        if needs_y and y is None:
            raise InvalidInputError(f"{type(self).__name__} requires y to be passed, but the target y is None.")
        if not self._precomputed():
            if not needs_y:
                return checked_data(self, X, dtype=np.float64), None
            X, y = checked_data(self, X, y, dtype=np.float64, y_numeric=y_numeric)
            order = None if order_of is None else order_of(y)
            if order is not None:
                X, y, self._training_order = X[order], y[order], order
            return X, y
        # a KernelSet was validated when it was made: its stack is not screened again; the
        # copy of an array is normalized in place (scalar divisors: no second stack)
        given = dense_kernel_set(X)
        check_normalization(self.normalization)
        order = None
        if needs_y:
            y = checked_column(self, y)
            order = None if order_of is None or given else order_of(y)
            y = y if order is None else y[order]
        key = None if given else _kernel_reuse.precomputed_key(X, self.normalization, self._theta(), order)
        self._reused_kernels, self._reuse_key = _kernel_reuse.kept(key, X), key  # a grid search's fold again
        if self._reused_kernels is not None:
            stack = self._reused_kernels.K
        else:
            stack = training_stack(X, copy=self.normalization in SCALAR_NORMALIZATIONS, order=order)
        self._validated_kernels, self._given_precision = (X if given else None), low_precision(X)
        if getattr(self, "rank", None) is not None:
            raise InvalidInputError("rank= builds low-rank factors from features; with "
                                    "kernels='precomputed' leave rank=None.")
        if needs_y:
            self._training_order = order
            checked_lengths(self, stack[0], y)
            if y_numeric:  # real numbers, finite (text or objects: mklopt's error, not NumPy's)
                y = check_targets(y)
        return stack, y

    def _precomputed_kernels(self, stack: np.ndarray, theta: int | None) -> KernelSet:
        self.kernel_specs_, self.rank_ = None, None
        given, precision = self.__dict__.pop("_validated_kernels", None), self.__dict__.pop("_given_precision", None)
        reused, key = self.__dict__.pop("_reused_kernels", None), self.__dict__.pop("_reuse_key", None)
        if reused is not None:
            return reused
        names = [f"K{m}" for m in range(stack.shape[0])]
        try:
            if given is None and self.normalization in SCALAR_NORMALIZATIONS:  # the copy made for it
                ks = KernelSet.normalized_in_place(stack, names, self.normalization)
            else:
                ks = KernelSet(stack if given is None else given, names=names)
                ks = ks if self.normalization is None else ks.normalized(self.normalization, theta=theta)
        except NotPSDError as exc:
            raise with_precision_hint(exc, precision, ESTIMATOR_CLIP) from None
        _kernel_reuse.keep(key, ks)
        return ks

    def _theta(self) -> int | None:
        """θ of the tail-sum normalization (None for the others)."""
        return self.theta if self.normalization == "tail_sum" else None

    def _prepare_kernels(self, X: np.ndarray) -> KernelSet:
        """Resolve the kernel specs and build the normalized training kernels."""
        n = X.shape[1] if self._precomputed() else X.shape[0]
        if n < 2:
            raise InvalidInputError(
                f"{type(self).__name__} needs at least 2 training points, got n_samples={n}.")
        theta = self._theta()
        if self._precomputed():
            self._kernels_known(on_the_fly=False)
            self.driver_ = self._resolve_driver(n, X.shape[0], lazy_possible=False)
            ks = self._precomputed_kernels(X, theta)
            self.kernel_names_ = list(ks.names)
            return ks
        self.kernel_specs_ = resolve_kernel_specs(self.kernels, X, getattr(self, "feature_names_in_", None))
        lazy_possible = self._lazy_possible(X)
        self._kernels_known(on_the_fly=lazy_possible and getattr(self, "rank", None) is None
                            and self.driver in (AUTO, "chunking") and _stack_over(len(self.kernel_specs_), n))
        self.driver_ = self._resolve_driver(n, len(self.kernel_specs_), lazy_possible)
        rank = getattr(self, "rank", None)
        if rank is None and lazy_possible and self._on_the_fly(n):
            self.rank_ = None
            ks = KernelSet.from_data(X, self.kernel_specs_, lazy=True, normalization=self.normalization)
        elif rank is None:  # a grid search's next fit on the same features reuses the set
            self.rank_ = None
            ks = _kernel_reuse.reused(X, self.kernel_specs_, self.normalization, theta, lambda: KernelSet.from_data(
                X, self.kernel_specs_, normalization=self.normalization, theta=theta))
        else:  # low-rank factors; a Nystroem approximation has at most n landmarks
            self.rank_ = min(check_rank(rank), X.shape[0])
            ks = KernelSet.from_data(X, self.kernel_specs_, rank=self.rank_,
                                     approximation=self.approximation, random_state=self.random_state)
            if self.normalization is not None:
                ks = ks.normalized(self.normalization, theta=theta)
        self.kernel_names_ = list(ks.names)
        return ks

    def _resolve_driver(self, n: int, M: int, lazy_possible: bool) -> str:
        """``driver``, or for ``"auto"``: the interleaved ``"chunking"`` where it can run and
        is estimated faster (:func:`mklopt.estimators.cost.choose_driver`), on low-rank
        factors, or where the dense stack would exceed ``LAZY_STACK_BYTES`` and the
        kernels can be computed on the fly; else the cutting plane (p = 1) or the wrapper.
        Sets ``driver_choice_`` (the estimates) when they decided."""
        self.driver_choice_ = None
        if self.driver != AUTO:
            return self.driver
        reg = as_regularizer(self.regularizer, self.p)
        loss = self._loss_name()
        polyhedral = isinstance(reg, LpBall) and reg.p == 1
        outer = "cutting_plane" if polyhedral else "wrapper"
        if loss not in Chunking.losses or isinstance(reg, Penalty):
            return outer
        if getattr(self, "rank", None) is not None:
            return "chunking"
        problems = self._core_problems()
        self.driver_choice_ = choose_driver(
            n, M, polyhedral=polyhedral, C=float(getattr(self, "C", 1.0)), loss=loss, problems=problems,
            threads=machine_threads(), core_threads=core_threads(problems),
            stack_bytes_over=lazy_possible and _stack_over(M, n))
        return self.driver_choice_.driver

    def _core_problems(self) -> int:
        """Independent problems the core would solve side by side (one-vs-rest classes)."""
        return 1

    def _kernels_known(self, on_the_fly: bool) -> None:
        """Hook before the driver is chosen: whether the training kernels of all the points
        will be computed on the fly (what a classifier's multiclass scheme depends on)."""

    def _on_the_fly(self, n: int) -> bool:
        """Kernels on the fly (where they can be): driver ``"chunking"`` and a dense stack of
        ``n`` points above ``LAZY_STACK_BYTES``."""
        return self.driver_ == "chunking" and _stack_over(len(self.kernel_specs_), n)

    def _lazy_possible(self, X: np.ndarray) -> bool:
        """Whether the resolved kernel specs and the normalization can be computed on the fly."""
        return self.normalization in (None, "trace", "spherical", "multiplicative") and all(
            lazy_supported(spec, X.shape[1]) for spec in self.kernel_specs_)

    def _solve(self, kernel_set: KernelSet, y, loss: Loss | str, C: float = 1.0,
               **driver_options: Any) -> MKLResult:
        """One certified MKL problem on the training kernels, exact or by an outer loop
        (``driver_options`` go to the outer loop's driver)."""
        common = dict(C=C, p=self.p, regularizer=self.regularizer, backend=self.backend, loss=loss)
        if self.driver_ == EXACT:
            reg = as_regularizer(self.regularizer, self.p)
            formulation = "lp_dual" if reg.has_support_expr else "lp_primal"
            tol = 1e-8 if self.tol is None else self.tol
            return _solve_exact(kernel_set, y, formulation, tol=tol, **common)
        extra = {"theta": self.theta} if self.driver_ == "dca" else {}
        driver = self.driver_
        if driver in WEIGHT_METHODS:  # two-stage: weights from a weight method, certified SVM at them
            options = {"C": C} if WEIGHT_METHODS[driver].uses_C else {}
            common["regularizer"] = Fixed(learn_weights(kernel_set, y, driver, **options))
            driver = "wrapper"
        tol = 1e-4 if self.tol is None else self.tol
        result = _fit_loop(kernel_set, y, driver, tol=tol, max_iter=self.max_iter,
                           progress=bool(getattr(self, "verbose", 0)), **common, **extra, **driver_options)
        if driver != self.driver_:
            result.info["weights_method"] = self.driver_
        if result.status in _NOT_CONVERGED:
            warnings.warn(
                f"{type(self).__name__}: driver '{self.driver_}' stopped on {result.status} with "
                f"certified rel_gap {result.rel_gap:.2e} > tol {tol:g}; increase max_iter or use "
                "driver='exact'.", ConvergenceWarning, stacklevel=4)
        elif result.status == "stalled" and not result.rel_gap <= tol:  # the message says what limits it
            warnings.warn(f"{type(self).__name__}: driver '{self.driver_}' {result.message}; tol was {tol:g}.",
                          ConvergenceWarning, stacklevel=4)
        return result

    def _keep_params(self, params: dict[str, Any]) -> None:
        """scikit-learn's convention: ``__init__`` stores each of its parameters, unchanged."""
        for name, value in params.items():
            if name not in ("self", "__class__"):
                setattr(self, name, value)

    def _fit_problems(self, X: np.ndarray, solve: Callable[[KernelSet], list[MKLResult]]) -> list[MKLResult]:
        """Build the training kernels, solve the problem(s) on them, keep what predict needs.

        Sets ``weights_``, ``dual_coef_``, ``n_iter_`` and ``result_``: arrays of one problem,
        or stacked over the problems (one-vs-rest).
        """
        self._check_common_params()
        kernel_set = self._prepare_kernels(X)
        results = solve(kernel_set)
        self._store(results, kernel_set, X)
        one = len(results) == 1
        self.weights_ = self._weights[0] if one else np.array(self._weights)
        self.dual_coef_ = self._coef[0] if one else np.vstack(self._coef)
        iterations = np.array([max(1, int(r.iterations)) for r in results])
        self.n_iter_ = int(iterations[0]) if one else iterations
        self.result_ = results[0] if one else results
        return results
