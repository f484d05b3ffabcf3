"""One large LMI in a few variables, solved on a growing subspace of it.

.. math::

    \\min_x\\ f^\\top x\\quad\\text{s.t.}\\quad I+\\sum_{i=1}^kx_iB_i\\succeq0\\ (\\text{order }r),\\qquad Gx\\le h.

Restricting the LMI to an orthonormal basis :math:`V` (:math:`r\\times q`),
:math:`I_q+\\sum_ix_iV^\\top B_iV\\succeq0`, relaxes it: the restricted minimum is a lower
bound and its dual :math:`VZ_qV^\\top` is a dual point of the full problem (PSD, the same
stationarity). Where the restricted answer :math:`x` leaves the full LMI, the
eigenvectors of its negative eigenvalues (up to :data:`ADDED`) join :math:`V` and the small
problem is solved again (Kelley's cutting planes for the LMI, one eigenvector a cut; Helmberg & Rendl's
spectral bundle method keeps a subspace the same way: "A spectral bundle method for
semidefinite programming", SIAM J. Optim. 10(3), 2000). Near the optimum only the few
directions where the matrix is singular matter, so :math:`q\\ll r` and each solve costs
:math:`O(kq^3)` plus one partial eigendecomposition of order :math:`r`. The basis is
kept between calls (a cutting plane's masters and certificates visit nearby points).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from .lmi_interior import LMISolution, lmi_minimize

__all__ = ["SubspaceLMI"]

#: Up to this order the LMI is solved whole (the subspace would not pay).
FULL_ORDER = 80
#: Eigenvectors of each end of each B_i's spectrum in the first basis.
EDGE = 4
#: Eigenvectors added per refinement, at most.
ADDED = 8
#: Past this fraction of the order the basis is dropped and the LMI solved whole.
WHOLE_FRACTION = 0.9
#: The answer may leave the full LMI by this much (lambda_min >= -FEASIBLE; the identity's scale).
FEASIBLE = 1e-11


class SubspaceLMI:
    """:math:`\\{x: I+\\sum_ix_iB_i\\succeq0\\}` for symmetric ``B`` (k, r, r), with the kept basis.

    Parameters
    ----------
    B : array (k, r, r)
    radius : float
        A bound on :math:`\\|x\\|_\\infty` over the set (inf when unknown: then the LMI is
        solved whole); its box keeps every restriction bounded.
    """

    def __init__(self, B: np.ndarray, radius: float) -> None:
        self.B = B
        self.k, self.order = B.shape[0], B.shape[1]
        self.radius = float(radius)
        self.whole = self.order <= FULL_ORDER or not np.isfinite(self.radius)
        self._set_basis(np.eye(self.order) if self.whole else _orthonormal(_edges(B)))

    def _set_basis(self, V: np.ndarray) -> None:
        """The basis and the restricted matrices :math:`V^\\top B_iV` (once per basis, not per solve)."""
        self.V = V
        Bq = self.B if self.whole else np.einsum("ai,kab,bj->kij", V, self.B, V, optimize=True)
        self.Bq = (Bq + Bq.transpose(0, 2, 1)) / 2

    def minimize(self, f: np.ndarray, G: np.ndarray | None = None, h: np.ndarray | None = None,
                 x0: np.ndarray | None = None, gap: float = 1e-10) -> LMISolution:
        """:func:`~mklopt.regularizers.lmi_interior.lmi_minimize` over the LMI and ``Gx <= h``;
        variables past the first k do not enter the LMI. The returned ``x`` satisfies the
        full LMI to :data:`FEASIBLE`; ``Z`` is of order r, ``y`` holds the rows' multipliers."""
        f = np.asarray(f, dtype=float)
        G = np.zeros((0, f.size)) if G is None else np.asarray(G, dtype=float)
        h = np.zeros(0) if h is None else np.asarray(h, dtype=float)
        rows = G.shape[0]
        if not self.whole:
            box = np.zeros((2 * self.k, f.size))
            box[: self.k, : self.k], box[self.k:, : self.k] = np.eye(self.k), -np.eye(self.k)
            G, h = np.vstack([G, box]), np.concatenate([h, np.full(2 * self.k, 2 * self.radius)])
        while True:
            solution = self._restricted(f, G, h, x0, gap)
            if not self.whole:
                vals, vecs = self._lowest(solution.x[: self.k])
            if self.whole or vals[0] >= -FEASIBLE:
                solution.y = solution.y[:rows]
                return solution
            self._extend(vecs[:, vals < 0.0])

    def _restricted(self, f, G, h, x0, gap) -> LMISolution:
        V, extra = self.V, f.size - self.k
        Bq = self.Bq if not extra else np.concatenate([self.Bq, np.zeros((extra,) + self.Bq.shape[1:])])
        solution = lmi_minimize(f, np.eye(V.shape[1]), Bq, G, h, x0, gap)
        solution.Z = V @ solution.Z @ V.T if not self.whole else solution.Z
        return solution

    def _lowest(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        F = np.eye(self.order) + np.tensordot(x, self.B, axes=1)
        count = min(ADDED, self.order)
        return scipy.linalg.eigh((F + F.T) / 2, subset_by_index=[0, count - 1], check_finite=False)

    def _extend(self, vectors: np.ndarray) -> None:
        extended = _orthonormal(np.hstack([self.V, vectors]))
        if extended.shape[1] <= self.V.shape[1]:  # rounding: nothing new; solve whole from now on
            extended = np.eye(self.order)
        if extended.shape[1] >= WHOLE_FRACTION * self.order:
            self.whole, extended = True, np.eye(self.order)
        self._set_basis(extended)


def _edges(B: np.ndarray) -> np.ndarray:
    """Eigenvectors of the :data:`EDGE` smallest and largest eigenvalues of each :math:`B_i`
    (the first directions a step along :math:`\\pm B_i` meets the boundary in)."""
    r = B.shape[1]
    count = min(EDGE, r)
    picks = []
    for Bi in B:
        low = scipy.linalg.eigh(Bi, subset_by_index=[0, count - 1], check_finite=False)[1]
        high = scipy.linalg.eigh(Bi, subset_by_index=[r - count, r - 1], check_finite=False)[1]
        picks += [low, high]
    return np.hstack(picks)


def _orthonormal(vectors: np.ndarray) -> np.ndarray:
    """An orthonormal basis of the columns' span (rank-revealing QR, tiny columns dropped)."""
    Q, R, _ = scipy.linalg.qr(vectors, mode="economic", pivoting=True, check_finite=False)
    diag = np.abs(np.diag(R))
    return Q[:, diag > 1e-10 * max(float(diag.max(initial=0.0)), 1e-300)]
