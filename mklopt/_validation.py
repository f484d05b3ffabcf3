"""Input checks shared by every layer (labels, C, candidates)."""

from __future__ import annotations

import numpy as np

from .exceptions import InvalidInputError
from .kernels import KernelSet


def check_labels(y, n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Map two-class labels to +-1.

    Returns ``(y_pm, classes)`` where ``classes[0]`` maps to -1 and
    ``classes[1]`` to +1 (sorted, as scikit-learn does).
    """
    y = np.asarray(y)
    if y.ndim != 1:
        raise InvalidInputError(f"labels y must be a 1-D array, got shape {y.shape}.")
    if n is not None and y.shape[0] != n:
        raise InvalidInputError(f"got {y.shape[0]} labels for kernels over {n} points; they must match.")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise InvalidInputError("labels y contain NaN or infinite values.")
    classes = np.unique(y)
    if classes.size != 2:
        raise InvalidInputError(
            f"labels must have exactly two classes, got {classes.size} ({classes[:5]}). "
            "For multiclass problems use MKLClassifier (one-vs-rest).")
    return np.where(y == classes[1], 1.0, -1.0), classes


def check_C(C) -> float:
    try:
        C = float(C)
    except (TypeError, ValueError):
        raise InvalidInputError(f"C must be a positive number, got {C!r}.") from None
    if not (C > 0 and np.isfinite(C)):
        raise InvalidInputError(f"C must be positive and finite, got {C}.")
    return C


def as_kernel_set(kernels, **kwargs) -> KernelSet:
    return kernels if isinstance(kernels, KernelSet) and not kwargs else KernelSet(kernels, **kwargs)


def check_vector(x, n: int, what: str) -> np.ndarray:
    x = np.array(x, dtype=float, copy=True).ravel()
    if x.size != n:
        raise InvalidInputError(f"{what} must have {n} entries, got {x.size}.")
    if not np.all(np.isfinite(x)):
        raise InvalidInputError(f"{what} contains NaN or infinite values.")
    return x
