"""A user's kernel function ``k(X, Y) -> (n_x, n_y)`` called once per block of rows, checked.

mklopt documents a kernel callable as a matrix function. Its answer is checked before it is
used: exactly the shape ``(len(X), len(Y))`` (a scalar or a vector is not broadcast), real
and finite; and its own exceptions become a :class:`~mklopt.exceptions.KernelError` naming
it, so that user code never ends a fit in a foreign traceback.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..exceptions import KernelError

__all__ = ["call_user_kernel"]


def call_user_kernel(kernel: Callable, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """``kernel(X, Y)`` as a float64 (len(X), len(Y)) array, or a :class:`KernelError`."""
    name = getattr(kernel, "__name__", type(kernel).__name__)
    try:
        value = kernel(X, Y)
    except KernelError:
        raise
    except Exception as exc:  # user code: any error it raises is reported as the kernel's
        first = (str(exc).strip().splitlines() or [""])[0]
        raise KernelError(f"the kernel function {name!r} raised {type(exc).__name__}: {first[:200]}. "
                          "A kernel callable takes two 2-D arrays X (n_x, d), Y (n_y, d) and returns "
                          "the (n_x, n_y) matrix k(x_i, y_j).") from None
    value = np.asarray(value)
    want = (X.shape[0], Y.shape[0])
    if value.shape != want:
        raise KernelError(f"the kernel function {name!r} returned an array of shape {value.shape} for "
                          f"X of {want[0]} and Y of {want[1]} rows; it must return the {want} matrix "
                          "k(x_i, y_j), not a scalar, vector or one value per pair of rows.")
    if value.dtype.kind not in "biuf":
        raise KernelError(f"the kernel function {name!r} returned values of type {value.dtype}; "
                          "it must return real numbers.")
    value = np.asarray(value, dtype=float)
    if not np.all(np.isfinite(value)):
        raise KernelError(f"the kernel function {name!r} returned NaN or infinite values; check its "
                          "parameters and the data.")
    return value
