"""Feature arrays X, checked once before any kernel is built from them.

Real (an integer, boolean-free or float array; complex is refused, never cast), 2-D with at
least one row and one column, finite, and small enough that squared norms and inner
products are finite in double precision. Each failure is a one-line
:class:`~mklopt.exceptions.KernelError` naming the array.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..exceptions import KernelError

__all__ = ["check_features", "check_finite_features", "MAX_FEATURE"]

#: The largest feature magnitude: squared norms over up to 1e8 features stay finite (1e150^2 * 1e8).
MAX_FEATURE = 1e150


def check_features(X: Any, what: str = "X", d: int | None = None) -> np.ndarray:
    """``X`` as a float64 C-contiguous (n, d) array, or a :class:`KernelError`."""
    if hasattr(X, "to_numpy") and getattr(X, "ndim", 0) == 2:
        X = X.to_numpy()
    try:
        arr = np.asarray(X)
    except (TypeError, ValueError):
        raise KernelError(f"{what} must be a 2-D array of real features (a ragged or mixed "
                          "sequence was given).") from None
    if arr.dtype.kind == "c":
        raise KernelError(f"{what} is complex ({arr.dtype}); kernels need real features. Pass X.real "
                          "(or the real and imaginary parts as separate columns).")
    if arr.dtype.kind == "O":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise KernelError(f"{what} holds values that are not numbers.") from None
    if arr.dtype.kind not in "biuf":
        raise KernelError(f"{what} must hold real numbers, got values of type {arr.dtype}.")
    if arr.ndim != 2:
        raise KernelError(f"{what} must be a 2-D array (n_samples, n_features), got shape {arr.shape}; "
                          "reshape one feature with X.reshape(-1, 1).")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise KernelError(f"{what} has shape {arr.shape}; it needs at least one row and one feature.")
    if d is not None and arr.shape[1] != d:
        raise KernelError(f"{what} has {arr.shape[1]} features, but the kernels were built on {d}.")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    check_finite_features(arr, what)
    return arr


def check_finite_features(features: np.ndarray, what: str) -> None:
    """A :class:`KernelError` for features with NaN or infinite values, or so large that their
    products overflow (beyond :data:`~mklopt.kernels.features.MAX_FEATURE`: test points too)."""
    if not np.all(np.isfinite(features)):
        raise KernelError(f"{what} contains NaN or infinite values; impute or drop them first.")
    largest = float(np.abs(features).max()) if features.size else 0.0
    if largest > MAX_FEATURE:
        raise KernelError(f"{what} has entries up to {largest:.3g}; beyond {MAX_FEATURE:g} their "
                          "products overflow. Scale the features first.")
