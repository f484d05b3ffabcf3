"""What the weight methods read from a kernel set: the dense stack, labels as +-1."""

from __future__ import annotations

import numpy as np

from .._validation import as_kernel_set, check_labels
from ..exceptions import InvalidInputError

__all__ = ["dense_kernels", "binary_labels", "normalized"]


def dense_kernels(kernels, method: str):
    """The validated kernel set and its (M, n, n) stack (factor sets are expanded)."""
    ks = as_kernel_set(kernels)
    if getattr(ks, "lazy", False):
        raise InvalidInputError(
            f"weight method {method!r} needs the kernel matrices, and these kernels are computed on "
            "the fly (lazy=True); build a dense KernelSet (lazy=False) or call .dense() first.")
    return ks, np.asarray(ks.K, dtype=float)


def binary_labels(y, n: int, method: str) -> np.ndarray:
    """Two-class labels of any type as +-1 (classes sorted, the second is +1)."""
    y_pm = check_labels(y, n)[0]
    if min(np.sum(y_pm > 0), np.sum(y_pm < 0)) < 1:
        raise InvalidInputError(f"weight method {method!r} needs both classes in y.")
    return y_pm


def normalized(v: np.ndarray, norm: float, method: str) -> np.ndarray:
    """``v / ||v||_norm`` for ``norm`` in {1, 2}; a clear error when v is 0."""
    if isinstance(norm, bool) or norm not in (1, 2):
        raise InvalidInputError(f"norm must be 1 or 2, got {norm!r}.")
    size = float(np.sum(v) if norm == 1 else np.linalg.norm(v))
    if not size > 0:
        raise InvalidInputError(
            f"weight method {method!r} gave every kernel the score 0, so no weights can be formed; "
            "check the labels and the kernels.")
    return v / size
