"""Input checks shared by every layer (labels, controls, candidates).

Every check raises :class:`InvalidInputError` with one sentence naming the
parameter, the value it got and the valid range, before any work is done.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .exceptions import InvalidInputError
from .kernels import KernelSet
from .kernels.spectra import check_theta

__all__ = ["check_labels", "check_class_labels", "check_targets", "check_C", "check_tol", "check_max_iter", "check_time_limit",
           "check_theta", "check_vector", "as_kernel_set"]


def check_labels(y, n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Map two-class labels to +-1.

    Returns ``(y_pm, classes)`` where ``classes[0]`` maps to -1 and
    ``classes[1]`` to +1 (sorted, as scikit-learn does).
    """
    y, classes = check_class_labels(y, n)
    if classes.size != 2:
        hint = ("For multiclass problems use loss='ovr_hinge' or MKLClassifier (one-vs-rest).")
        if y.dtype.kind == "f" and classes.size > 2 and np.any(classes != np.round(classes)):
            hint = ("They look like real-valued regression targets: use "
                    "loss='epsilon_insensitive' or 'squared_error' (MKLRegressor).")
        raise InvalidInputError(
            f"labels must have exactly two classes, got {classes.size} ({classes[:5]}). {hint}")
    return np.where(y == classes[1], 1.0, -1.0), classes


def check_class_labels(y, n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Class labels as a 1-D array of length ``n`` and their sorted distinct values."""
    if y is None:
        raise InvalidInputError("labels y are missing (got None); pass one label per point.")
    y = np.asarray(getattr(y, "to_numpy", lambda: y)())
    if y.ndim == 2 and 1 in y.shape:
        y = y.ravel()
    if y.ndim != 1:
        raise InvalidInputError(f"labels y must be a 1-D array, got shape {y.shape}.")
    if n is not None and y.shape[0] != n:
        raise InvalidInputError(f"got {y.shape[0]} labels for kernels over {n} points; they must match.")
    if y.dtype.kind == "c":
        raise InvalidInputError("labels y are complex numbers; use two real or string class labels.")
    if y.dtype.kind == "O" and any(v is None for v in y):
        raise InvalidInputError("labels y contain None; every point needs a label.")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise InvalidInputError("labels y contain NaN or infinite values.")
    try:
        classes = np.unique(y)
    except TypeError:
        raise InvalidInputError("labels y mix types that cannot be compared; use one label type.") from None
    return y, classes


def check_targets(y, n: int | None = None) -> np.ndarray:
    """Real-valued regression targets: a finite 1-D float array of length ``n``."""
    if y is None:
        raise InvalidInputError("targets y are missing (got None); pass one real target per point.")
    y = np.asarray(getattr(y, "to_numpy", lambda: y)())
    if y.ndim == 2 and 1 in y.shape:
        y = y.ravel()
    if y.ndim != 1:
        raise InvalidInputError(f"targets y must be a 1-D array, got shape {y.shape}.")
    if n is not None and y.shape[0] != n:
        raise InvalidInputError(f"got {y.shape[0]} targets for kernels over {n} points; they must match.")
    if y.dtype.kind not in "biuf":
        raise InvalidInputError(
            f"regression targets must be real numbers, got dtype {y.dtype}; class labels need "
            "loss='hinge' or 'ovr_hinge'.")
    y = y.astype(float)
    if not np.all(np.isfinite(y)):
        raise InvalidInputError("targets y contain NaN or infinite values.")
    return y


def _real(value, name: str, valid: str) -> float:
    """``value`` as a float; bools, strings, arrays and None are rejected."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise InvalidInputError(f"{name} must be {valid}, got {value!r}.")
    return float(value)


def check_C(C) -> float:
    """Soft-margin constant: a real number in :math:`(0, \\infty)`."""
    value = _real(C, "C", "a positive finite number")
    if not (value > 0 and math.isfinite(value)):
        raise InvalidInputError(f"C must be positive and finite (a real number > 0), got {C!r}.")
    return value


def check_tol(tol, name: str = "tol") -> float:
    """A relative tolerance: a finite number in the open interval (0, 1)."""
    value = _real(tol, name, "a number in (0, 1), e.g. 1e-6")
    if not (0.0 < value < 1.0):
        raise InvalidInputError(f"{name} must be a number in (0, 1), e.g. 1e-6, got {tol!r}.")
    return value


def check_max_iter(max_iter, name: str = "max_iter") -> int:
    """A positive integer (integral floats such as ``100.0`` are accepted)."""
    if isinstance(max_iter, (bool, np.bool_)) or not isinstance(max_iter, numbers.Real):
        raise InvalidInputError(f"{name} must be a positive integer, got {max_iter!r}.")
    if not (math.isfinite(max_iter) and float(max_iter).is_integer() and max_iter >= 1):
        raise InvalidInputError(f"{name} must be a positive integer, got {max_iter!r}.")
    return int(max_iter)


def check_time_limit(time_limit) -> float | None:
    """Seconds: ``None`` (no limit) or a positive finite number."""
    if time_limit is None:
        return None
    value = _real(time_limit, "time_limit", "None or a positive number of seconds")
    if not (value > 0 and math.isfinite(value)):
        raise InvalidInputError(f"time_limit must be None or a positive finite number of seconds, "
                                f"got {time_limit!r}.")
    return value


def as_kernel_set(kernels, **kwargs) -> KernelSet:
    if isinstance(kernels, KernelSet) and (not kwargs or kernels.factored):
        return kernels
    return KernelSet(kernels, **kwargs)


def check_vector(x, n: int, what: str, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """A finite real vector of ``n`` entries (a copy; the input is never modified), given as a
    1-D array or, where ``shape`` is named, in that shape: a 2-D array of the right size is not
    taken apart silently (weights of shape (2, 2) for four kernels, alpha transposed)."""
    try:
        arr = np.asarray(x)
    except Exception:  # ragged nested lists and the like
        raise InvalidInputError(f"{what} must be a 1-D array of {n} real numbers.") from None
    if arr.dtype.kind not in "biuf" or arr.dtype.kind == "b":
        raise InvalidInputError(f"{what} must be a 1-D array of {n} real numbers, "
                                f"got values of type {arr.dtype}.")
    if arr.ndim > 1 and arr.shape != shape:
        named = "" if shape is None else f" or of shape {shape}"
        raise InvalidInputError(f"{what} must be a 1-D array of {n} real numbers{named}, got shape {arr.shape}.")
    arr = np.array(arr, dtype=float, copy=True).ravel()
    if arr.size != n:
        raise InvalidInputError(f"{what} must have {n} entries, got {arr.size}.")
    if not np.all(np.isfinite(arr)):
        raise InvalidInputError(f"{what} contains NaN or infinite values.")
    return arr
