"""Test points of kernels given as factors: :class:`FeatureMap` and :class:`TestFactors`.

A :class:`~mklopt.kernels.factorset.FactorKernelSet` built from data
(``KernelSet.from_data(X, specs, rank=r)``) keeps the fitted approximations
(Nyström, random Fourier features). A test point :math:`x` gets the factor
rows :math:`G_m(x)` under the training normalization,

.. math:: K_m(x, X)\\,c = G_m(x)\\,\\bigl(G_m^\\top c\\bigr),

so prediction never forms :math:`K_m(x, X)` and needs only the
:math:`R`-vector :math:`G^\\top c`, not the training factors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..exceptions import KernelError

__all__ = ["FeatureMap", "TestFactors", "as_factors"]


def as_factors(factors: Any, what: str = "factors") -> list[np.ndarray]:
    """Validate M factor matrices (n, r_m): real, finite, 2-D, same n, r_m >= 1."""
    if isinstance(factors, np.ndarray) and factors.ndim == 2:
        factors = [factors]
    try:
        arrays = [np.asarray(G) for G in factors]
    except TypeError:
        raise KernelError(f"{what} must be a sequence of 2-D arrays (n, r_m).") from None
    if not arrays:
        raise KernelError(f"no {what} given; pass at least one (n, r) array.")
    for m, G in enumerate(arrays):
        if G.ndim != 2:
            raise KernelError(f"{what}[{m}] must be a 2-D array (n, r_m), got shape {G.shape}.")
        if G.dtype.kind not in "iuf":
            raise KernelError(f"{what}[{m}] must hold real numbers, got dtype {G.dtype}.")
        if G.shape[1] == 0:
            raise KernelError(f"{what}[{m}] has rank 0 (no columns): drop that kernel or give a "
                              "factor with at least one column.")
        if G.shape[0] != arrays[0].shape[0]:
            raise KernelError(f"{what} must all have the same number of rows (points): "
                              f"{what}[0] has {arrays[0].shape[0]}, {what}[{m}] has {G.shape[0]}.")
        if not np.all(np.isfinite(G)):
            raise KernelError(f"{what}[{m}] contains NaN or infinite values.")
    return arrays


class FeatureMap:
    """Raw features or test factors -> factor rows :math:`G_m(x)` under the training normalization.

    .. math:: G_m(x) = \\sqrt{\\text{scale}_m}\\;\\phi_m(x)
              \\quad\\bigl(\\text{spherical: } /\\|\\sqrt{\\text{scale}_m}\\,\\phi_m(x)\\|\\bigr)

    Small: the fitted approximations, the normalization scales and the ranks
    (what a fitted estimator keeps instead of the training factors).

    Parameters
    ----------
    approximators : sequence or None
        Fitted transformers :math:`\\phi_m` (``Nystroem``, ``RBFSampler``); None
        when only test factors are accepted.
    scales : ndarray of shape (M,)
    ranks : ndarray of shape (M,)
    spherical : bool
    """

    def __init__(self, approximators: Sequence[Any] | None, scales: np.ndarray, ranks: np.ndarray,
                 spherical: bool) -> None:
        self.approximators = None if approximators is None else list(approximators)
        self.scales = np.asarray(scales, dtype=float).copy()
        self.ranks = np.asarray(ranks).copy()
        self.spherical = bool(spherical)

    def transform(self, test: Any) -> list[np.ndarray]:
        """``test``: raw features (n_test, d) when there are approximations, else M factor arrays."""
        if self.approximators is not None and isinstance(test, np.ndarray) and test.ndim == 2:
            X = np.asarray(test, dtype=float)
            expected = getattr(self.approximators[0], "n_features_in_", X.shape[1])
            if X.shape[1] != expected:
                raise KernelError(f"test features have {X.shape[1]} columns; the kernels were "
                                  f"built on {expected}.")
            test = [a.transform(X) for a in self.approximators]
        arrays = as_factors(test, "test factors")
        if len(arrays) != self.ranks.size or np.any([A.shape[1] for A in arrays] != self.ranks):
            raise KernelError(f"test factors must be M={self.ranks.size} arrays with "
                              f"{self.ranks.tolist()} columns, got {[A.shape for A in arrays]}.")
        arrays = [np.sqrt(s) * A for s, A in zip(self.scales, arrays)]
        if self.spherical:
            arrays = [A / np.sqrt(np.einsum("ij,ij->i", A, A))[:, None] for A in arrays]
        return arrays

    def decision_values(self, X: Any, weights: np.ndarray, primal: np.ndarray, offsets: np.ndarray,
                        bias) -> np.ndarray:
        """:math:`f(x) = \\sum_m \\mu_m G_m(x) w_m + b` with :math:`w = G^\\top c` (R,) or (R, T)."""
        arrays = self.transform(X)
        out = sum(float(mu) * (A @ primal[offsets[m]:offsets[m + 1]])
                  for m, (mu, A) in enumerate(zip(weights, arrays)))
        return out + np.asarray(bias)


class TestFactors:
    """Test-point factors :math:`G_m(x)` against a training :class:`FactorKernelSet`.

    :math:`K_m(x, X) c = G_m(x)\\,(G_m^\\top c)`, never forming :math:`K_m(x, X)`.
    """

    def __init__(self, arrays: list[np.ndarray], train) -> None:
        self.arrays, self.train = arrays, train
        self.M, self.n_test = len(arrays), arrays[0].shape[0]

    def products(self, coef: np.ndarray) -> np.ndarray:
        """:math:`K_m(x, X)\\,c^\\top` for each kernel: (M, n_test) or (M, n_test, T)."""
        coef = np.asarray(coef, dtype=float)
        return np.stack([A @ (self.train.factor(m).T @ coef.T) for m, A in enumerate(self.arrays)])
