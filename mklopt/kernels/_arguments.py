"""The arguments of a kernel set's public methods, checked: a kernel's index, weights over the
kernels, coefficients over the points (their shapes).

These methods run inside the drivers' loops too, where the values are mklopt's own; a check
here is a few microseconds against an :math:`O(Mn^2)` pass. A wrong shape or a string
is a :class:`~mklopt.exceptions.KernelError` naming what was expected, not NumPy's
"shapes not aligned" or an ``IndexError``.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from .._options import real_array
from ..exceptions import KernelError

__all__ = ["kernel_index", "kernel_weights", "point_coefficients"]


def kernel_index(m: Any, M: int) -> int:
    """``m`` as the index of one of the M kernels (negative indices count from the end)."""
    if isinstance(m, (bool, np.bool_)) or not isinstance(m, numbers.Integral) or not -M <= m < M:
        raise KernelError(f"kernel index must be an integer in [0, {M}), got {m!r}.")
    return int(m) % M


def kernel_weights(weights: Any, M: int) -> np.ndarray:
    """``weights`` as M real numbers, one per kernel. Not checked finite: weights that grew to
    infinity in a driver make a combined kernel that its inner solver refuses, saying what
    went wrong there (a :class:`~mklopt.exceptions.SolverError`)."""
    values = real_array(weights, "kernel weights", KernelError)
    if values.shape != (M,):
        raise KernelError(f"kernel weights must be {M} numbers (one per kernel), got shape {values.shape}.")
    return values


def point_coefficients(coef: Any, n: int, what: str = "coefficients", finite: bool = False) -> np.ndarray:
    """``coef`` as real numbers over the n points: shape (n,) or (T, n); ``finite``: checked
    finite too (a user's labels; a driver's non-finite coefficients are its inner solver's to
    report, as for :func:`kernel_weights`)."""
    values = real_array(coef, what, KernelError)
    if values.ndim not in (1, 2) or values.shape[-1] != n:
        raise KernelError(f"{what} must be numbers over the {n} points, shape ({n},) or (T, {n}), "
                          f"got shape {values.shape}.")
    if finite and not np.all(np.isfinite(values)):
        raise KernelError(f"{what} hold NaN or infinite values.")
    return values
