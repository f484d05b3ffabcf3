"""Kernels given by low-rank factors :math:`K_m = G_m G_m^\\top`, never formed.

A :class:`FactorKernelSet` holds the factors side by side in one (n, R)
float64 array, :math:`R = \\sum_m r_m`. Every quantity the certificates and
the drivers need costs :math:`O(nR)`:

.. math::

    s_m(c) = \\|G_m^\\top c\\|^2,\\qquad K_m c = G_m (G_m^\\top c),\\qquad
    \\operatorname{Tr} K_m = \\|G_m\\|_F^2,\\qquad
    \\lambda_j(K_m) = \\sigma_j(G_m)^2 .

:math:`K_\\mu = \\sum_m \\mu_m G_m G_m^\\top` is the linear kernel of the scaled,
concatenated features :math:`[\\sqrt{\\mu_1} G_1, \\dots, \\sqrt{\\mu_M} G_M]`
(:meth:`FactorKernelSet.combined_factor`), so the inner SVM is a linear SVM
(:class:`mklopt.drivers.linear_inner.LinearInner`). Dense products
(:meth:`~FactorKernelSet.combined`, :meth:`~FactorKernelSet.dense`) are
formed only on request.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..exceptions import KernelError
from ._arguments import kernel_index, kernel_weights, point_coefficients
from ._stack import check_names, check_points, sketch_vectors
from .kernelset import VARIANTS, KernelSet
from .spectra import check_theta
from .out_of_sample import FeatureMap, TestFactors, as_factors

__all__ = ["FactorKernelSet", "TestFactors", "FeatureMap", "as_factors"]


class FactorKernelSet(KernelSet):
    """``M`` kernels over ``n`` points as low-rank factors :math:`K_m = G_m G_m^\\top`.

    Build it with :meth:`KernelSet.from_factors` or
    ``KernelSet.from_data(X, specs, rank=r)``. It offers the operations of a
    dense :class:`KernelSet` that the drivers and certificates use, at
    :math:`O(nR)` cost; the (M, n, n) stack is never formed (:attr:`K`
    raises; :meth:`dense` builds it on request, for small n).

    Parameters
    ----------
    factors : sequence of M arrays of shape (n, r_m)
        Real, finite, at least one column each (copied once into one (n, R) array).
    names : sequence of str, optional
    approximators : sequence, optional
        Fitted scikit-learn transformers (``Nystroem``, ``RBFSampler``) mapping
        features to each factor, for :meth:`transform_test` on raw test features.
    """

    psd = True
    symmetric = True
    factored = True

    def __init__(self, factors: Sequence[np.ndarray], names: Sequence[str] | None = None, *,
                 approximators: Sequence[Any] | None = None) -> None:
        arrays = as_factors(factors)
        self.M, self.n = len(arrays), arrays[0].shape[0]
        self.names = check_names(names, self.M)
        self.G = np.ascontiguousarray(np.hstack(arrays), dtype=np.float64)
        self.G.flags.writeable = False
        self.offsets = np.concatenate([[0], np.cumsum([G.shape[1] for G in arrays])])
        self.scales = np.ones(self.M)
        self.clipped: dict[str, float] = {}
        self.approximators = list(approximators) if approximators is not None else None
        self._train_diag: np.ndarray | None = None
        self._sketch: np.ndarray | None = None

    # ---------------------------------------------------------------- access
    @property
    def K(self) -> np.ndarray:
        raise KernelError(
            "this KernelSet holds low-rank factors: the (M, n, n) stack is never formed. "
            "Use .dense() for a dense KernelSet (small n only), or an operation that works on "
            "factors (wrapper, cutting_plane, certify).")

    def __repr__(self) -> str:
        return f"FactorKernelSet(M={self.M}, n={self.n}, ranks={self.ranks.tolist()}, names={self.names})"

    def factor(self, m: int, rank_tol: float = 0.0) -> np.ndarray:
        """:math:`G_m`, shape (n, r_m) (a read-only view)."""
        m = kernel_index(m, self.M)
        return self.G[:, self.offsets[m]:self.offsets[m + 1]]

    def factors(self) -> list[np.ndarray]:
        return [self.factor(m) for m in range(self.M)]

    @property
    def ranks(self) -> np.ndarray:
        return np.diff(self.offsets)

    @property
    def traces(self) -> np.ndarray:
        """:math:`\\|G_m\\|_F^2`."""
        return np.add.reduceat(np.einsum("ij,ij->j", self.G, self.G), self.offsets[:-1])

    def diagonals(self) -> np.ndarray:
        """:math:`K_m(x_i, x_i) = \\|G_m[i]\\|^2`, shape (M, n)."""
        return np.stack([np.einsum("ij,ij->i", G, G) for G in self.factors()])

    def _largest_entries(self) -> np.ndarray:
        """:math:`\\max_{ij}|K_{m,ij}| = \\max_i K_m(x_i, x_i)` (PSD), shape (M,)."""
        return self.diagonals().max(axis=1)

    def combined(self, weights: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Dense :math:`K_\\mu` (n, n), formed on request (into ``out``)."""
        Z = self.combined_factor(weights)
        return np.matmul(Z, Z.T, out=out)

    def combined_factor(self, weights: np.ndarray, rank_tol: float = 0.0,
                        out: np.ndarray | None = None) -> np.ndarray:
        """:math:`Z = [\\sqrt{\\mu_1}G_1,\\dots,\\sqrt{\\mu_M}G_M]`, :math:`ZZ^\\top = K_\\mu` (into ``out``)."""
        roots = np.repeat(np.sqrt(np.clip(kernel_weights(weights, self.M), 0, None)), self.ranks)
        return np.multiply(self.G, roots, out=out)

    def dense(self) -> KernelSet:
        """The dense :class:`KernelSet` of the same kernels (M n² memory: small n only)."""
        stack = np.stack([G @ G.T for G in self.factors()])
        dense = KernelSet(stack, self.names, psd_tol=1e-6)
        dense.scales = self.scales.copy()
        return dense

    def points(self, index) -> "FactorKernelSet":
        """The same kernels on the points ``index`` only (rows of the factors; distinct positions
        or a boolean mask of the n points), scaled as this set."""
        index = check_points(index, self.n)
        sub = self._with([np.ascontiguousarray(self.factor(m)[index]) for m in range(self.M)], self.names)
        sub._train_diag = None if self._train_diag is None else self._train_diag[:, index]
        return sub

    def __getitem__(self, index) -> "FactorKernelSet":
        idx = np.atleast_1d(np.arange(self.M)[index])
        sub = self._with([self.factor(m) for m in idx], [self.names[m] for m in idx])
        sub.scales = self.scales[idx].copy()
        if self._train_diag is not None:
            sub._train_diag = self._train_diag[idx]
        if self.approximators is not None:
            sub.approximators = [self.approximators[m] for m in idx]
        return sub

    def _with(self, factors: list[np.ndarray], names: Sequence[str]) -> "FactorKernelSet":
        new = FactorKernelSet(factors, names)
        new.scales, new.approximators = self.scales.copy(), self.approximators
        new._train_diag = self._train_diag
        return new

    # -------------------------------------------------------------- products
    def products(self, coef: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:math:`s_m = \\|G_m^\\top c\\|^2` and :math:`K_m c = G_m G_m^\\top c`; see :func:`quadratic_terms`.

        Two BLAS products with the (n, R) factor matrix, :math:`O(nR)`.
        """
        coef = point_coefficients(coef, self.n)
        projected = coef @ self.G  # (R,) or (T, R)
        squares = np.add.reduceat(np.atleast_2d(projected) ** 2, self.offsets[:-1], axis=1).sum(axis=0)
        Kc = np.stack([projected[..., a:b] @ self.factor(m).T
                       for m, (a, b) in enumerate(zip(self.offsets[:-1], self.offsets[1:]))])
        return squares, Kc

    def quadratic_terms(self, coef: np.ndarray) -> np.ndarray:
        return self.products(coef)[0]

    def sketch(self) -> np.ndarray:
        """Fingerprint :math:`W^\\top K_m W = (G_m^\\top W)^\\top (G_m^\\top W)`, shape (M, 3, 3)."""
        if self._sketch is None:
            P = self.G.T @ sketch_vectors(self.n)
            self._sketch = np.stack([P[a:b].T @ P[a:b]
                                     for a, b in zip(self.offsets[:-1], self.offsets[1:])])
        return self._sketch

    # --------------------------------------------------------------- spectra
    def eig(self, m: int) -> tuple[np.ndarray, np.ndarray]:
        """Non-zero eigenpairs of :math:`K_m` from a thin SVD of :math:`G_m` (ascending)."""
        U, sv, _ = np.linalg.svd(self.factor(m), full_matrices=False)
        return sv[::-1] ** 2, U[:, ::-1]

    def top_eigen_terms(self, weights: np.ndarray,
                        theta: int) -> tuple[np.ndarray, np.ndarray, float]:
        """As :meth:`KernelSet.top_eigen_terms`, from a thin SVD of :math:`Z` (:math:`K_\\mu = ZZ^\\top`).

        :math:`\\operatorname{Tr}(U^\\top K_m U) = \\|U^\\top G_m\\|_F^2`; :math:`O(nR^2)`.
        """
        theta = check_theta(theta, self.n)
        U, sv, _ = np.linalg.svd(self.combined_factor(weights), full_matrices=False)
        U, vals = U[:, :theta], np.concatenate([sv[:theta] ** 2, np.zeros(max(0, theta - sv.size))])
        projected = U.T @ self.G
        top = np.add.reduceat(np.einsum("ij,ij->j", projected, projected), self.offsets[:-1])
        return vals, top, float(np.sum(sv ** 2))

    def tail_sums(self, theta: int) -> np.ndarray:
        """:math:`\\sum_{j>\\theta}\\sigma_j(G_m)^2` from the (r_m, r_m) Gram matrices."""
        theta = check_theta(theta, self.n + 1)
        out = np.empty(self.M)
        for m, G in enumerate(self.factors()):
            vals = np.sort(np.clip(np.linalg.eigvalsh(G.T @ G), 0, None))[::-1]
            out[m] = vals[theta:].sum()
        return out

    def _rank_hint(self, m: int) -> int:
        vals = np.linalg.eigvalsh(self.factor(m).T @ self.factor(m))
        return int(np.sum(vals > 1e-10 * max(vals[-1], 1e-300)))

    def centered_alignment(self, y: np.ndarray | None = None) -> np.ndarray:
        """As :meth:`KernelSet.centered_alignment`, from centered factors :math:`G^c = G - \\bar G`.

        :math:`\\langle K_k^c, K_l^c\\rangle_F = \\|G_k^{c\\top} G_l^c\\|_F^2`.
        """
        Gc = self.G - self.G.mean(axis=0)
        blocks = [Gc[:, a:b] for a, b in zip(self.offsets[:-1], self.offsets[1:])]
        gram = np.array([[np.sum((Gk.T @ Gl) ** 2) for Gl in blocks] for Gk in blocks])
        norms = np.sqrt(np.diag(gram))
        if y is None:
            return gram / np.outer(norms, norms)
        yc = np.asarray(y, dtype=float) - np.mean(y)
        return np.array([np.sum((Gk.T @ yc) ** 2) for Gk in blocks]) / (norms * (yc @ yc))

    # ---------------------------------------------------------- normalizing
    def normalized(self, method: str = "trace", *, target: float = 1.0,
                   theta: int | None = None) -> "FactorKernelSet":
        """As :meth:`KernelSet.normalized`: the factors are scaled by :math:`1/\\sqrt{\\text{divisor}}`."""
        if method == "spherical":
            diag = self.diagonals()
            if np.any(diag <= 0):
                raise KernelError("spherical normalization needs K(x, x) > 0 (a factor row of zeros "
                                  "found); use 'trace' instead.")
            rows = [G / np.sqrt(diag[m])[:, None] for m, G in enumerate(self.factors())]
            new = self._with(rows, self.names)
            new._train_diag = diag if self._train_diag is None else self._train_diag
            return new
        divisors = self._divisors(method, theta) / (target if method == "trace" else 1.0)
        new = self._with([G / np.sqrt(d) for G, d in zip(self.factors(), divisors)], self.names)
        new.scales = self.scales / divisors
        return new

    def _feature_variance(self) -> np.ndarray:
        """:math:`\\tfrac1n\\operatorname{Tr}K - \\tfrac1{n^2}1^\\top K1` (multiplicative normalization)."""
        sums = np.add.reduceat(self.G.sum(axis=0) ** 2, self.offsets[:-1])
        return self.traces / self.n - sums / self.n**2

    # ---------------------------------------------------------------- tests
    def transform_test(self, test: Any, test_diag: np.ndarray | None = None) -> "TestFactors":
        """Test-point factors under this set's normalization.

        Parameters
        ----------
        test : array (n_test, d) of raw features, or sequence of M factor arrays (n_test, r_m)
            Raw features when the set was built by ``from_data(..., rank=r)``
            (the fitted approximations are applied), else the test points'
            factors in the coordinates of the training factors.
        """
        return TestFactors(self.feature_map().transform(test), self)

    def feature_map(self) -> FeatureMap:
        """The :class:`FeatureMap` of this set: raw test features (or test factors) to :math:`G_m(x)`."""
        return FeatureMap(self.approximators, self.scales, self.ranks, self._train_diag is not None)


VARIANTS["factors"] = FactorKernelSet
