"""Spectral operations of a dense :class:`~mklopt.kernels.KernelSet`: factors, tail sums, alignment.

A mixin: eigendecompositions and rank-revealing factors :math:`K_m = L_m L_m^\\top`
are computed on demand and cached; tail sums and centered alignments read the stack.
"""

from __future__ import annotations

import numpy as np

from ..exceptions import KernelError, NotPSDError, RankError
from ._arguments import kernel_index, point_coefficients
from ._centering import scaled_centered
from .spectra import check_theta, eigh, tail_sum

__all__: list[str] = []


class _Spectral:
    """Mixin of :class:`~mklopt.kernels.KernelSet` (needs ``K``, ``M``, ``n``, ``names``, ``psd``)."""

    # --------------------------------------------------------------- factors
    def eig(self, m: int) -> tuple[np.ndarray, np.ndarray]:
        """Full eigendecomposition of kernel ``m`` (ascending), cached."""
        m = kernel_index(m, self.M)
        if m not in self._eig:
            self._eig[m] = eigh(self.K[m])
        return self._eig[m]

    def factor(self, m: int, rank_tol: float = 1e-12) -> np.ndarray:
        """Rank-revealing factor :math:`L_m` with :math:`K_m \\approx L_m L_m^\\top`.

        Eigenvalues below ``rank_tol`` times the largest one are dropped, so
        ``L_m`` has ``r_m`` = numerical-rank columns. Cached.
        """
        self._require_psd("factor")
        m = kernel_index(m, self.M)
        if m not in self._factors:
            vals, vecs = self.eig(m)
            keep = vals > rank_tol * max(vals[-1], 1e-300)
            self._factors[m] = np.ascontiguousarray(
                vecs[:, keep][:, ::-1] * np.sqrt(vals[keep][::-1]))
        return self._factors[m]

    def combined_factor(self, weights: np.ndarray, rank_tol: float = 1e-12) -> np.ndarray:
        """Rank-revealing factor of :math:`K_\\mu = \\sum_m \\mu_m K_m` (not cached)."""
        self._require_psd("combined_factor")
        vals, vecs = eigh(self.combined(weights))
        keep = vals > rank_tol * max(vals[-1], 1e-300)
        return np.ascontiguousarray(vecs[:, keep] * np.sqrt(vals[keep]))

    def factors(self) -> list[np.ndarray]:
        """All factors :math:`L_1, \\dots, L_M`."""
        return [self.factor(m) for m in range(self.M)]

    @property
    def ranks(self) -> np.ndarray:
        """Numerical ranks :math:`r_m` of the factors."""
        return np.array([self.factor(m).shape[1] for m in range(self.M)])

    def _require_psd(self, what: str) -> None:
        if not self.psd:
            raise NotPSDError(
                f"{what} needs positive semidefinite kernels, but this KernelSet "
                "was built with psd=False. Build it with psd=True (the default) "
                "or use the 'vkr_lp' formulation, which accepts indefinite kernels."
            )

    def top_eigen_terms(self, weights: np.ndarray,
                        theta: int) -> tuple[np.ndarray, np.ndarray, float]:
        """Top-:math:`\\theta` eigenvalues of :math:`K_\\mu`, :math:`\\operatorname{Tr}(U^\\top K_m U)` per kernel, :math:`\\operatorname{Tr}K_\\mu`.

        :math:`U` holds the matching eigenvectors (the tail sum's supergradient
        at :math:`\\mu`, :mod:`~mklopt.formulations.dc_subproblem`); one GEMM over the stack.
        """
        from .spectra import top_eigenvalues

        K_mu = self.combined(weights)
        vals, U = top_eigenvalues(K_mu, theta, vectors=True)
        KU = (self.K.reshape(self.M * self.n, self.n) @ U).reshape(self.M, self.n, theta)
        return vals, np.einsum("mij,ij->m", KU, U), float(np.trace(K_mu))

    # ------------------------------------------------------------ tail sums
    def tail_sums(self, theta: int) -> np.ndarray:
        """Tail sums :math:`\\tau_m = \\sum_{j>\\theta} \\lambda_j(K_m)`, shape (M,)."""
        theta = check_theta(theta, self.n + 1)
        self._require_psd("tail sums")
        return np.array([tail_sum(self.K[m], theta) for m in range(self.M)])

    def checked_tail_sums(self, theta: int) -> np.ndarray:
        """:meth:`tail_sums`, raising :class:`RankError` naming every kernel of rank <= theta.

        Such a kernel has a tail sum of ~0 (below 1e-10 of its trace): it can be
        neither tail-sum normalized nor bounded by a tail-sum constraint.
        """
        tails = self.tail_sums(theta)
        bad = [m for m in range(self.M) if not tails[m] > 1e-10 * max(self.traces[m], 1e-300)]
        if bad:
            raise RankError(
                "tail sum is ~0 (rank <= theta) for kernel(s) "
                + ", ".join(f"'{self.names[m]}' (rank {self._rank_hint(m)})" for m in bad)
                + f"; choose theta smaller than their rank (theta={theta}), or drop them.")
        return tails

    # ------------------------------------------------------------ alignment
    def centered_alignment(self, y: np.ndarray | None = None) -> np.ndarray:
        """Pairwise centered alignments.

        .. math:: \\rho(K, K') = \\frac{\\langle K^c, K'^c \\rangle_F}
                  {\\|K^c\\|_F \\|K'^c\\|_F},\\quad K^c = H K H,\\ H = I - \\tfrac1n 11^\\top

        Returns the (M, M) matrix; with labels ``y`` returns instead the
        alignment of each kernel with the target kernel :math:`yy^\\top`, shape (M,).
        """
        flat = scaled_centered(self.K)[0]  # the scales cancel in every ratio below
        norms = np.linalg.norm(flat, axis=1)
        if y is not None:
            y = point_coefficients(y, self.n, "labels y", finite=True)
            if y.ndim != 1:
                raise KernelError(f"labels y must have shape ({self.n},), got {y.shape}.")
            yc = y - y.mean()
            target = np.outer(yc, yc).ravel()
            return flat @ target / (norms * np.linalg.norm(target))
        gram = flat @ flat.T
        return gram / np.outer(norms, norms)
