"""The spectrahedron's linear algebra on the kernels' joint range, computed once and kept.

:class:`~mklopt.regularizers.Spectrahedron` decides PSD-ness on the range of the uniform
combination :math:`K_{\\mu_u}` (whitened by :math:`W`, :meth:`_JointRange.whitening`), states
the set in the :math:`M-1` free weights :math:`\\mu=\\mu_u+Nd` (:meth:`_JointRange.reduced`,
:meth:`_JointRange.lmi`) and bounds every weight vector of the set by the singular values of
the flattened kernels (:meth:`_JointRange.gram`, :meth:`_JointRange.radius`). Each is
computed on first use and kept on the set: the cutting plane's masters and the certificates
share them.
"""

from __future__ import annotations

import numpy as np

from ..exceptions import InvalidInputError
from .lmi_subspace import SubspaceLMI

__all__ = ["RANGE_CUTOFF"]

#: The joint range: eigenvalues of the uniform combination above this fraction of its largest.
#: Below it a direction carries at most ~1e-10 of any combination (its eigenvectors would
#: be whitened by 1e5 and more, which only rounding resolves); the violation there is
#: still measured in full (:meth:`~mklopt.regularizers.Spectrahedron.violation`).
RANGE_CUTOFF = 1e-10


class _JointRange:
    """Mixin of :class:`~mklopt.regularizers.Spectrahedron` (its ``K``, ``traces``, ``uniform``
    and ``c``): the whitening, the reduced problem, its LMI and the bound on the weights."""

    def lmi(self):
        """The set's LMI in the free weights, :math:`I+\\sum_id_iW^\\top K_{N_i}W\\succeq0`, with the
        subspace it is solved on (kept: the cutting plane's masters and certificates share it)."""
        if not hasattr(self, "_lmi"):
            N, A = self.reduced()
            self._lmi = SubspaceLMI(np.tensordot(N.T, A, axes=1), self.radius())
        return self._lmi

    def reduced(self) -> tuple[np.ndarray, np.ndarray]:
        """:math:`N` (M, M-1) and the whitened kernels :math:`W^\\top K_mW` (M, r, r)."""
        if not hasattr(self, "_reduced_value"):
            t = self.traces / np.linalg.norm(self.traces)
            N = np.linalg.svd(np.eye(t.size) - np.outer(t, t))[0][:, : t.size - 1]
            W = self.whitening()
            A = np.einsum("ia,mij,jb->mab", W, self.K, W, optimize=True)
            self._reduced_value = (N, (A + A.transpose(0, 2, 1)) / 2)
        return self._reduced_value

    def radius(self) -> float:
        """:math:`\\max_{\\mu\\in\\Theta_c}\\|\\mu\\|_2\\le c/\\sigma_{\\min}` (:meth:`gram`)."""
        return self.c / float(self.gram()[0][-1])

    def gram(self) -> tuple[np.ndarray, np.ndarray]:
        """Lower bounds on the singular values :math:`\\sigma_j` of the flattened kernels (descending;
        :math:`\\sigma_j^2` the eigenvalues of :math:`Q`) and their left vectors :math:`V` (M, M).

        From an SVD of the (M, n²) matrix of kernels, accurate to :math:`\\varepsilon\\sigma_{\\max}`
        (the eigenvalues of :math:`Q` itself only to :math:`\\varepsilon\\sigma_{\\max}^2`); each is
        lowered by :math:`10M\\varepsilon\\sigma_{\\max}`. Kernels dependent to within that (one a
        combination of the others, to rounding) leave :math:`\\Theta_c` without a computable bound
        and raise :class:`~mklopt.exceptions.InvalidInputError` naming them.
        """
        if not hasattr(self, "_gram_value"):
            M = self.K.shape[0]
            U, sigma, _ = np.linalg.svd(self.K.reshape(M, -1), full_matrices=False)
            low = sigma - 10.0 * M * np.finfo(float).eps * float(sigma[0])
            if not low[-1] > 0:
                involved = np.flatnonzero(np.abs(U[:, -1]) > 0.1 * np.abs(U[:, -1]).max())
                raise InvalidInputError(
                    f"the spectrahedron's kernels {involved.tolist()} are linearly dependent to rounding "
                    f"(singular values {float(sigma[-1]):.3g} of {float(sigma[0]):.3g}): the weights are not "
                    "determined and no bound on them can be certified; drop one of them.")
            self._gram_value = (low, U)
        return self._gram_value

    def whitening(self) -> np.ndarray:
        """:math:`W` (n, r) with :math:`W^\\top K_{\\mu_u}W=I_r` on the range of the uniform combination.

        Directions where :math:`K_{\\mu_u}` is (nearly) zero are (nearly) in every kernel's
        null space (each :math:`K_m\\succeq0` has a positive uniform weight), so every
        :math:`K_\\mu` (nearly) vanishes there and PSD-ness is decided on the range
        (:data:`RANGE_CUTOFF`).
        """
        if not hasattr(self, "_whitening"):
            vals, vecs = np.linalg.eigh(np.tensordot(self.uniform, self.K, axes=1))
            keep = vals > RANGE_CUTOFF * max(float(vals[-1]), 1e-300)
            self._whitening = vecs[:, keep] / np.sqrt(vals[keep])
        return self._whitening
