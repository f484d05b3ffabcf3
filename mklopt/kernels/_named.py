"""Named kernels (scikit-learn's pairwise kernels) evaluated for a stack, and their errors.

:func:`named_kernel` evaluates a parsed spec with :func:`~sklearn.metrics.pairwise.pairwise_kernels`
(shift-invariant kernels on the centred data); :func:`product_kernel_into` writes the linear
and polynomial kernels (:func:`product_form`) straight into the stack instead, with scikit-learn's own operations in
its order; :func:`evaluated_spec` turns scikit-learn's and a user's errors into
:class:`~mklopt.exceptions.KernelError` messages that say what to pass instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._compiled.product_stack import LINEAR
from ..exceptions import KernelError
from .rounding import SHIFT_INVARIANT

__all__ = ["product_form", "product_kernel_into", "named_kernel", "evaluated_spec", "is_real"]


def product_form(parsed: tuple[Any, dict] | None, d: int) -> tuple[float, float, int] | None:
    """``(gamma, coef0, degree)`` of a kernel scikit-learn computes from :math:`XY^\\top` alone on
    ``d`` features: the linear kernel (degree :data:`~mklopt._compiled.product_stack.LINEAR`)
    and the polynomial one (its defaults ``gamma = 1/d``, ``coef0 = 1``, ``degree = 3``); else
    None."""
    if parsed is None:
        return None
    metric, params = parsed
    if metric == "linear" and not params:
        return 1.0, 0.0, LINEAR
    gamma = params.get("gamma")
    if metric not in ("poly", "polynomial") or not (gamma is None or is_real(gamma)) \
            or not set(params) <= {"gamma", "coef0", "degree"}:
        return None
    return 1.0 / d if gamma is None else float(gamma), float(params.get("coef0", 1.0)), int(params.get("degree", 3))


def product_kernel_into(parsed: tuple[Any, dict] | None, X: np.ndarray, Y: np.ndarray, out: np.ndarray) -> bool:
    """A linear or polynomial kernel written straight into ``out`` (True), else nothing (False).

    scikit-learn's ``linear_kernel`` and ``polynomial_kernel`` do :math:`XY^\\top`, then
    ``K *= gamma; K += coef0; K **= degree``; the same operations in place give the same
    values bit for bit, without its (n, n) result and the copy into the stack (a kernel of
    1,257 points: 2.5 of its 4.2 ms on one core)."""
    form = product_form(parsed, X.shape[1])
    if form is None:
        return False
    gamma, coef0, degree = form
    np.matmul(X, Y.T, out=out)
    if degree != LINEAR:
        out *= gamma
        out += coef0
        out **= degree
    return True


def named_kernel(parsed: tuple[Any, dict], X: np.ndarray, Y: np.ndarray, Xc: np.ndarray,
                 Yc: np.ndarray) -> np.ndarray:
    """A kernel of :func:`~sklearn.metrics.pairwise.pairwise_kernels` (shift-invariant ones on
    the centred data)."""
    from sklearn.metrics.pairwise import pairwise_kernels

    metric, params = parsed
    shift = isinstance(metric, str) and metric in SHIFT_INVARIANT
    return pairwise_kernels(Xc if shift else X, Yc if shift else Y, metric=metric, **params)


def evaluated_spec(spec: Any, evaluate: Callable[[], np.ndarray]) -> np.ndarray:
    """``evaluate()``, its errors (scikit-learn's or a user's callable's) as :class:`KernelError`."""
    try:
        return evaluate()
    except KernelError:
        raise
    except (TypeError, ValueError) as exc:
        raise KernelError(
            f"kernel spec {spec!r} could not be evaluated: {_first_line(exc)}. Use a metric of "
            "sklearn.metrics.pairwise.pairwise_kernels with its own parameters, e.g. "
            "('rbf', {'gamma': 0.1}).") from None


def is_real(value: Any) -> bool:
    """A finite real number (not a bool)."""
    return isinstance(value, (int, float, np.integer, np.floating)) \
        and not isinstance(value, (bool, np.bool_)) and bool(np.isfinite(value))


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:300]
