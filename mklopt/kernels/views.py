"""Kernels on views: several data sources, one kernel per source (and per width).

Multiple kernel learning is mostly used to fuse sources (Lanckriet et al., "A statistical
framework for genomic data fusion", Bioinformatics 2004): each kernel reads its own group of
columns of X. :class:`ViewKernel` is a kernel spec on some columns, usable wherever specs are
(``KernelSet.from_data``, the estimators' ``kernels=``, ``kernel_stack``); :func:`views` builds
one per view and spec::

    specs = mklopt.views({"fourier": range(0, 76), "pixels": range(76, 316)},
                         ["linear", ("rbf", {"gamma": "scale"})])

Columns are integer indices, a slice, a boolean mask or, for a pandas DataFrame given to an
estimator, column names. ``"gamma": "scale"`` uses the view's own variance,
:math:`\\gamma = 1/(d_v \\operatorname{Var} X_v)`, fixed when the estimator is fitted
(:meth:`ViewKernel.resolved`). Views may overlap. Kernels on views are computed densely, as
low-rank factors (``rank=``) or on the fly (``lazy=True``; :mod:`~mklopt._compiled.columns` keeps
the products of each view apart).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..exceptions import KernelError
from .construct import KernelSpec, kernel_stack, spec_list, spec_name

__all__ = ["ViewKernel", "views", "resolve_scale", "scale_gamma"]


class ViewKernel:
    """The kernel ``spec`` evaluated on ``columns`` of the data: :math:`k(x_v, x'_v)`.

    Parameters
    ----------
    spec : str, (name, params) pair or callable
        Any kernel spec of :func:`~mklopt.kernels.construct.kernel_stack`.
    columns : sequence of int, slice, boolean mask or sequence of str
        The view's columns (names need a DataFrame given to an estimator).
    view : str, optional
        The view's name, shown in kernel names (``"pixels:rbf(gamma=0.01)"``).
    """

    def __init__(self, spec: KernelSpec, columns: Any, view: str | None = None) -> None:
        if isinstance(spec, ViewKernel):
            raise KernelError("a ViewKernel's spec is a plain kernel spec, not another ViewKernel.")
        self.spec, self.columns, self.view = spec, columns, view

    @property
    def __name__(self) -> str:  # the kernel's name in KernelSet.names
        return f"{self.view or 'view'}:{spec_name(self.spec, 0)}"

    def __repr__(self) -> str:
        return f"ViewKernel({self.spec!r}, {self.columns!r}, view={self.view!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ViewKernel) and repr(self) == repr(other)

    def __hash__(self) -> int:
        return hash(repr(self))

    def index(self, d: int, names: Sequence[str] | None = None) -> np.ndarray:
        """The view's columns as sorted-as-given integer indices into ``d`` features."""
        cols = self.columns
        if isinstance(cols, (int, np.integer)) and not isinstance(cols, bool):
            cols = [int(cols)]
        if cols is None or isinstance(cols, (bool, float, dict)):
            raise KernelError(f"view {self.view!r}: columns must be integers, a slice, a boolean mask "
                              f"or column names, got {self.columns!r}.")
        if isinstance(cols, slice):
            idx = np.arange(d)[cols]
        elif isinstance(cols, str):
            idx = self._names([cols], names)
        else:
            cols = list(cols) if not isinstance(cols, np.ndarray) else cols
            array = np.asarray(cols)
            if array.dtype == bool:
                if array.shape != (d,):
                    raise KernelError(f"view {self.view!r}: a boolean mask needs {d} entries, got {array.shape}.")
                idx = np.flatnonzero(array)
            elif array.dtype.kind in "US" or (array.dtype == object and all(isinstance(c, str) for c in cols)):
                idx = self._names([str(c) for c in cols], names)
            elif array.dtype.kind in "iu" or (array.size == 0):
                idx = array.astype(np.int64)
            else:
                raise KernelError(f"view {self.view!r}: columns must be integers, a slice, a boolean mask "
                                  f"or column names, got {self.columns!r}.")
        if idx.size == 0:
            raise KernelError(f"view {self.view!r} selects no column.")
        if idx.min() < -d or idx.max() >= d:
            raise KernelError(f"view {self.view!r} names column {int(idx.max() if idx.max() >= d else idx.min())}, "
                              f"but X has {d} columns.")
        return idx % d

    def _names(self, wanted: list[str], names: Sequence[str] | None) -> np.ndarray:
        if names is None:
            raise KernelError(f"view {self.view!r} names columns {wanted[:3]}...; column names need a "
                              "pandas DataFrame given to an estimator (or integer indices).")
        position = {str(name): i for i, name in enumerate(names)}
        missing = [c for c in wanted if c not in position]
        if missing:
            raise KernelError(f"view {self.view!r}: no column named {missing[0]!r} in X.")
        return np.array([position[c] for c in wanted], dtype=np.int64)

    def resolved(self, X: np.ndarray, names: Sequence[str] | None = None) -> "ViewKernel":
        """The same kernel with integer columns and ``gamma="scale"`` fixed from the view of ``X``."""
        X = np.asarray(X, dtype=float)
        idx = self.index(X.shape[1], names)
        return ViewKernel(_resolved(self.spec, scale_gamma(X[:, idx])), idx.tolist(), self.view)

    def __call__(self, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
        idx = self.index(X.shape[1])
        return kernel_stack(X[:, idx], [self.spec], Y[:, idx])[0]


def views(groups: Mapping[str, Any], specs: Sequence[KernelSpec] | KernelSpec) -> list[ViewKernel]:
    """One :class:`ViewKernel` per view and spec (views outer, specs inner).

    Parameters
    ----------
    groups : mapping of str to columns
        View name to its columns (indices, slice, boolean mask or column names).
    specs : spec or sequence of specs
        Kernel specs applied to every view, e.g. ``["linear", ("rbf", {"gamma": "scale"})]``.

    Returns
    -------
    list of ViewKernel
    """
    if not isinstance(groups, Mapping) or not groups:
        raise KernelError("views needs a non-empty mapping {view name: columns}.")
    specs = spec_list(specs)
    if not specs:
        raise KernelError("views needs at least one kernel spec, e.g. ['linear'].")
    return [ViewKernel(spec, columns, str(name)) for name, columns in groups.items() for spec in specs]


def scale_gamma(X: np.ndarray) -> float:
    """scikit-learn's ``"scale"``: :math:`\\gamma = 1/(d\\operatorname{Var}X)` (1 for constant data)."""
    var = float(X.var()) if X.size else 0.0
    return 1.0 / (X.shape[1] * var) if var > 0 else 1.0


def resolve_scale(specs: Sequence[KernelSpec], X: np.ndarray,
                  names: Sequence[str] | None = None) -> list[KernelSpec]:
    """The specs with ``"gamma": "scale"`` fixed from ``X`` (a view's from its own columns) and
    views given integer columns (:meth:`ViewKernel.resolved`)."""
    gamma = None
    out = []
    for spec in specs:
        if isinstance(spec, ViewKernel):
            out.append(spec.resolved(X, names))
            continue
        if gamma is None and _wants_scale(spec):
            gamma = scale_gamma(np.asarray(X, dtype=float))
        out.append(_resolved(spec, gamma))
    return out


def _wants_scale(spec: Any) -> bool:
    return isinstance(spec, (tuple, list)) and len(spec) == 2 and isinstance(spec[1], dict) \
        and isinstance(spec[1].get("gamma"), str) and spec[1]["gamma"] == "scale"


def _resolved(spec: Any, gamma: float | None) -> Any:
    """``spec`` with ``"gamma": "scale"`` replaced by ``gamma``."""
    if not _wants_scale(spec):
        return spec
    return (spec[0], {**spec[1], "gamma": gamma})
