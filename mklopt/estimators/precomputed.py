"""Precomputed kernels in the estimators: ``kernels="precomputed"``.

Kernels computed elsewhere (on strings, graphs, sequences, or one per data source) are
passed as the estimator's ``X``: a training stack of shape ``(n_samples, n_samples, M)``
to ``fit``, a test stack of shape ``(n_test, n_train, M)`` (each kernel between the test
points and all training points) to ``predict``. The sample axes come first so that
scikit-learn's cross-validation, which slices a pairwise ``X`` as
``X[np.ix_(rows, columns)]``, cuts both of them (the estimators carry the pairwise tag).
A list of M (n, n) arrays is accepted by ``fit`` too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._compiled.layout import frozen
from ..exceptions import InvalidInputError
from ..kernels._stack import dense_stack, low_precision_name

__all__ = ["PRECOMPUTED", "dense_kernel_set", "training_stack", "prediction_array", "prediction_stack",
           "check_normalization", "low_precision", "ESTIMATOR_CLIP"]

#: The value of ``kernels=`` that makes ``X`` the kernels themselves.
PRECOMPUTED = "precomputed"
#: Normalizations whose test-time scaling needs only numbers learned in training.
TRAINING_ONLY_NORMALIZATIONS = (None, "multiplicative", "trace", "tail_sum")


def _as_float_array(X: Any, what: str, check_finite: bool = True) -> np.ndarray:
    if isinstance(X, (list, tuple)) and X and all(np.ndim(K) == 2 for K in X):
        X = np.stack([np.asarray(K) for K in X], axis=-1)  # a list of M (n, n) kernels
    try:
        array = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"kernels='precomputed': {what} must be numeric ({exc}).") from None
    if array.ndim == 2:  # one kernel
        array = array[:, :, None]
    if array.ndim != 3 or array.shape[2] < 1:
        raise InvalidInputError(
            f"kernels='precomputed': {what} must have shape (n_samples, n_samples, M) (or be a "
            f"list of M (n, n) arrays), got shape {array.shape}.")
    if check_finite and not np.all(np.isfinite(array)):
        _not_finite(what)
    return array


def _not_finite(what: str) -> None:
    raise InvalidInputError(f"kernels='precomputed': {what} hold NaN or infinite values.")


def low_precision(X: Any) -> str | None:
    """The float dtype of precomputed kernels given less precise than float64 (``"float32"``,
    ``"float16"``; an array or a list of arrays), else None."""
    first = X[0] if isinstance(X, (list, tuple)) and X else X
    return low_precision_name(getattr(first, "dtype", None))


#: How an estimator's caller clips the rounding of low-precision precomputed kernels.
ESTIMATOR_CLIP = ("a larger psd_tol by passing a KernelSet as the precomputed kernels, e.g. "
                  "mklopt.KernelSet(np.moveaxis(K, 2, 0), psd_tol=1e-6)")


def dense_kernel_set(X: Any) -> bool:
    """Whether ``X`` is a dense :class:`~mklopt.kernels.KernelSet` (validated when it was made)."""
    return getattr(X, "factored", None) is False and dense_stack(X)


def training_stack(X: Any, copy: bool = False, order: np.ndarray | None = None) -> np.ndarray:
    """The training kernels as mklopt's (M, n, n) stack (``X`` is not changed).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_samples, M), a list of M (n, n) arrays, or a dense
        :class:`~mklopt.kernels.KernelSet` (its own read-only (M, n, n) stack, not copied)
    copy : bool
        For an array-like ``X``: a new array in any case, never one that shares memory with
        ``X`` (the caller may change it in place; otherwise a C-contiguous float64 ``X`` of one
        kernel comes back as a view of itself).
    order : ndarray of int, optional
        For an array-like ``X``: the points in this order (a permutation of the n points;
        always a new array). A :class:`~mklopt.kernels.KernelSet` keeps its own order.

    Returns
    -------
    ndarray of shape (M, n, n)
    """
    if dense_kernel_set(X):
        return X.K
    array = _as_float_array(X, "the training kernels", check_finite=False)  # checked as copied
    if array.shape[0] != array.shape[1]:
        raise InvalidInputError(
            f"kernels='precomputed': the training kernels must be square in their first two "
            f"axes (n_samples, n_samples, M), got shape {array.shape}.")
    if order is not None and order.size != array.shape[0]:
        raise InvalidInputError(
            f"kernels='precomputed': y has {order.size} labels but the training kernels are over "
            f"{array.shape[0]} points; give one label per point.")
    if array.shape[2] == 1 and not copy and order is None:
        if not np.all(np.isfinite(array)):
            _not_finite("the training kernels")
        return array.reshape(1, array.shape[0], array.shape[1])  # a view where it is contiguous
    return _kernels_first(array, np.arange(array.shape[0]) if order is None else order)


def _kernels_first(array: np.ndarray, order: np.ndarray) -> np.ndarray:
    """A new (M, n, n) stack of the (n, n, M) ``array``, its points in ``order``, its rows split
    over the cores, every value checked finite as it is copied."""
    from .._compiled.blocks import kernels_first

    out = np.empty((array.shape[2], array.shape[0], array.shape[1]))
    order = frozen(order, np.int64)

    def copy(array, out, start, stop):
        return kernels_first(array, order, out, start, stop)

    if not all(_over_row_blocks(copy, array, out)):
        _not_finite("the training kernels")
    return out


def same_stack(array: np.ndarray, stack: np.ndarray) -> bool:
    """Whether the (n, n, M) float64 ``array`` holds exactly the (M, n, n) ``stack``'s bytes (each
    block of rows stops at its first difference)."""
    from .._compiled.blocks import same_kernels_first

    n, M = array.shape[0], array.shape[2]
    if stack.shape != (M, n, n) or array.dtype != np.float64 or stack.dtype != np.float64:
        return False
    return all(_over_row_blocks(same_kernels_first, array.view(np.int64), frozen(stack).view(np.int64)))


def _over_row_blocks(compiled, array: np.ndarray, stack: np.ndarray) -> list:
    """``compiled(array, stack, start, stop)`` for blocks of the rows of the (n, n, M) ``array``
    (read-only: one signature, whoever owns it), on the cores; the blocks' answers."""
    from ..kernels._rows import map_row_blocks

    array, answers = frozen(array, array.dtype), []
    map_row_blocks(lambda rows: answers.append(compiled(array, stack, rows.start, rows.stop)), array.shape[0])
    return answers


def prediction_array(X: Any, n_train: int, M: int) -> np.ndarray:
    """The test kernels checked, in the given layout: shape (n_test, n_train, M), float64.

    Raises
    ------
    InvalidInputError
        Not numeric, not finite, or not of shape (n_test, n_train, M).
    """
    array = _as_float_array(X, "the test kernels")
    if array.shape[1:] != (n_train, M):
        raise InvalidInputError(
            f"kernels='precomputed': the test kernels must have shape (n_test, {n_train}, {M}) "
            f"(each of the {M} kernels between the test points and the {n_train} training "
            f"points), got shape {array.shape}.")
    return array


def prediction_stack(X: Any, n_train: int, M: int) -> np.ndarray:
    """The test kernels as an (M, n_test, n_train) stack.

    Parameters
    ----------
    X : array-like of shape (n_test, n_train, M)
        Each kernel between the test points and all training points.
    n_train, M : int
        Training points and kernels of the fitted estimator.

    Returns
    -------
    ndarray of shape (M, n_test, n_train)
    """
    return np.moveaxis(prediction_array(X, n_train, M), 2, 0)


def check_normalization(normalization: str | None) -> None:
    """Refuse a normalization whose test-time scaling needs :math:`k(x, x)` of test points."""
    if normalization not in TRAINING_ONLY_NORMALIZATIONS:
        raise InvalidInputError(
            f"normalization={normalization!r} divides by k(x, x) of each test point, which a "
            "precomputed test stack (n_test, n_train, M) does not hold; normalize the kernels "
            "yourself and pass normalization=None, or use one of "
            f"{[n for n in TRAINING_ONLY_NORMALIZATIONS if n]} (their scales are learned in training).")
