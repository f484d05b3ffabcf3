"""Kernel specifications of the scikit-learn estimators: defaults, ``"scale"``, diagonals.

A spec is a metric name of :func:`sklearn.metrics.pairwise.pairwise_kernels`
(``"linear"``), a pair ``(name, params)`` such as ``("rbf", {"gamma": 0.1})``,
or a callable ``k(X, Y)``; ``"gamma": "scale"`` means
:math:`1/(d\\cdot\\operatorname{Var}(X))`, as in scikit-learn's SVC.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..exceptions import InvalidInputError
from ..kernels import kernel_stack
from ..kernels.construct import spec_list
from ..kernels.views import resolve_scale, scale_gamma

__all__ = ["default_kernels", "resolve_kernel_specs", "diagonals"]


def default_kernels(gamma: float) -> list[tuple[str, dict]]:
    """The default kernel set: linear, quadratic and three Gaussian widths.

    Parameters
    ----------
    gamma : float
        Reference RBF width, by default scikit-learn's ``"scale"`` heuristic
        :math:`1 / (d \\cdot \\operatorname{Var}(X))`.

    Returns
    -------
    list of (name, params)
        ``linear``, ``poly`` (degree 2, ``coef0=1``) and ``rbf`` with
        ``gamma / 10``, ``gamma`` and ``10 * gamma``.
    """
    return [("linear", {}),
            ("poly", {"degree": 2, "gamma": gamma, "coef0": 1.0}),
            ("rbf", {"gamma": gamma / 10.0}),
            ("rbf", {"gamma": gamma}),
            ("rbf", {"gamma": gamma * 10.0})]


def _scale_gamma(X: np.ndarray) -> float:
    return scale_gamma(X)


def resolve_kernel_specs(kernels: Sequence[Any] | None, X: np.ndarray,
                         feature_names: Sequence[str] | None = None) -> list:
    """Kernel specs with data-dependent values filled in.

    ``None`` gives :func:`default_kernels`; a ``"gamma": "scale"`` entry in a
    spec's parameters becomes :math:`1 / (d \\cdot \\operatorname{Var}(X))`.

    Parameters
    ----------
    kernels : sequence of specs or None
        Metric names, ``(name, params)`` pairs or callables ``k(X, Y)``.
    X : ndarray of shape (n_samples, n_features)
        Training features.
    feature_names : sequence of str, optional
        Column names (a DataFrame's), for :class:`~mklopt.kernels.views.ViewKernel` specs
        that name their columns; views get integer columns and their own ``"scale"``.

    Returns
    -------
    list
        Specs accepted by :func:`mklopt.kernel_stack`.
    """
    gamma = _scale_gamma(X)
    if kernels is None:
        return default_kernels(gamma)
    specs = spec_list(kernels)
    if not specs:
        raise InvalidInputError("kernels is empty; give at least one spec, e.g. [('rbf', {'gamma': 0.1})].")
    return resolve_scale(specs, X, feature_names)


def diagonals(X: np.ndarray, specs: Sequence[Any], chunk: int = 256) -> np.ndarray:
    """:math:`K_m(x_i, x_i)` for every spec and row, shape (M, n) (chunked, any spec)."""
    out = np.empty((len(specs), X.shape[0]))
    for start in range(0, X.shape[0], chunk):
        rows = X[start:start + chunk]
        out[:, start:start + chunk] = np.einsum("mii->mi", kernel_stack(rows, specs))
    return out
