"""How kernel specs become kernels on the fly: parsing, views, precision, diagonals, normalization.

The pieces of :class:`~mklopt.kernels.lazy.LazyKernelSet` that read specs and data (no
compiled code here): which specs the compiled columns support (:func:`lazy_supported`),
the column sets of views, the exact diagonals, the normalizations that need only them, and
the refusal of kernels whose computed values could miss PSD by more than the certificate
absorbs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..exceptions import InvalidInputError, KernelError
from .._compiled.columns import LINEAR, POLY, RBF
from .construct import MAX_DEGREE, _is_view, _parse_spec
from .rounding import DataScales, bound_message, trusted_by_construction

__all__ = ["lazy_supported"]


def lazy_supported(spec: Any, d: int) -> bool:
    """Whether ``spec`` can be computed on the fly (over ``d`` features; a view over its own)."""
    try:
        if _is_view(spec):
            _parse(spec.spec, spec.index(d).size)
        else:
            _parse(spec, d)
    except KernelError:
        return False
    return True


def _view_layout(specs: list, d: int) -> tuple[list[np.ndarray], np.ndarray]:
    """The distinct column sets the kernels read (all d columns for a plain spec) and each kernel's."""
    keys: dict[tuple, int] = {}
    views: list[np.ndarray] = []
    view_of = np.empty(len(specs), dtype=np.int64)
    for m, spec in enumerate(specs):
        cols = np.asarray(spec.columns, dtype=np.int64) if _is_view(spec) else np.arange(d)
        key = tuple(cols.tolist())
        if key not in keys:
            keys[key] = len(views)
            views.append(cols)
        view_of[m] = keys[key]
    return views, view_of


def _check_data(X: Any, d: int | None = None) -> np.ndarray:
    try:
        X = np.asarray(X, dtype=float)
    except (TypeError, ValueError):
        raise InvalidInputError("X must be a 2-D array of real features.") from None
    if X.ndim != 2 or X.shape[0] == 0 or (d is not None and X.shape[1] != d):
        want = f"(n, {d})" if d is not None else "(n, d)"
        raise InvalidInputError(f"X must be a 2-D array of shape {want}, got shape {X.shape}.")
    if not np.all(np.isfinite(X)):
        raise InvalidInputError("X contains NaN or infinite values; impute or drop them first.")
    return np.ascontiguousarray(X)


def _parse(spec: Any, d: int) -> tuple[int, tuple[float, float, float]]:
    """(kind, (gamma, degree, coef0)) of a spec the on-the-fly columns support."""
    metric, params = _parse_spec(spec)
    if metric == "linear" and not params:
        return LINEAR, (0.0, 0.0, 0.0)
    gamma = params.pop("gamma", None)
    gamma = 1.0 / d if gamma is None else gamma
    if metric == "rbf" and not params and _positive(gamma):
        return RBF, (float(gamma), 0.0, 0.0)
    if metric in ("poly", "polynomial"):
        degree, coef0 = params.pop("degree", 3), params.pop("coef0", 1.0)
        if not params and _positive(gamma) and _integer(degree) and 1 <= degree <= MAX_DEGREE \
                and _real(coef0) and coef0 >= 0:
            return POLY, (float(gamma), float(degree), float(coef0))
    raise KernelError(
        f"kernel spec {spec!r} cannot be computed on the fly; lazy kernels support 'linear', "
        "('rbf', {'gamma': g > 0}) and ('poly', {'degree': integer k in [1, "
        f"{MAX_DEGREE}], 'gamma': g > 0, 'coef0': c >= 0}}) with finite numbers. "
        "Build a dense KernelSet (lazy=False) for other kernels.")


def _real(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool) \
        and bool(np.isfinite(value))


def _positive(value: Any) -> bool:
    return _real(value) and value > 0


def _integer(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _check_precision(X: np.ndarray, kinds: np.ndarray, params: np.ndarray, base: np.ndarray,
                     names: list[str]) -> None:
    """Refuse kernels whose computed values could miss PSD by more than the certificate absorbs."""
    scales = DataScales.of(X)  # once for all kernels
    for m, (kind, (gamma, degree, coef0)) in enumerate(zip(kinds, params)):
        if not np.all(np.isfinite(base[m])):
            raise KernelError(f"kernel {names[m]!r} overflows on these data (its diagonal is not "
                              "finite); lower the degree or gamma, or scale the features.")
        metric = ("linear", "rbf", "poly")[kind]
        spec_params = {"gamma": gamma, "degree": int(degree), "coef0": coef0}
        if not trusted_by_construction(metric, spec_params, scales):
            raise KernelError(
                f"kernel {names[m]!r} cannot be computed on the fly to the certificate's precision: "
                f"{bound_message(metric, spec_params, X)}. Build it densely (lazy=False), where it "
                "is screened for PSD, or as low-rank factors (rank=).")


def _diagonal(kind: int, params: np.ndarray, sqn: np.ndarray) -> np.ndarray:
    gamma, degree, coef0 = params
    if kind == LINEAR:
        return sqn.copy()
    if kind == RBF:
        return np.ones_like(sqn)
    return (gamma * sqn + coef0) ** degree


def _normalization(method: str | None, base: np.ndarray, names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(scale (M,), rowscale (M, n)) of a normalization that needs only the diagonals."""
    M, n = base.shape
    if method is None:
        return np.ones(M), np.ones((M, n))
    if method == "trace":
        traces = base.sum(axis=1)
        bad = [names[m] for m in np.flatnonzero(~(traces > 0))]
        if bad:
            raise KernelError(f"cannot normalize by trace: it is not positive for kernel(s) {bad}.")
        return 1.0 / traces, np.ones((M, n))
    if method == "spherical":
        bad = [names[m] for m in np.flatnonzero((base <= 0).any(axis=1))]
        if bad:
            raise KernelError(f"spherical normalization needs K(x, x) > 0, but kernel(s) {bad} have a "
                              "zero diagonal entry; use 'trace' instead.")
        return np.ones(M), 1.0 / np.sqrt(base)
    raise KernelError(
        f"normalization {method!r} needs the spectrum; kernels on the fly support None, 'trace', "
        "'spherical' and 'multiplicative'. Use a dense KernelSet (lazy=False) for it.")
