"""The cutting plane's master over the spectrahedron, by a primal-dual interior point.

.. math::

    \\min_{\\mu\\in\\Theta_c,\\ \\eta}\\ \\eta\\quad\\text{s.t.}\\quad
    \\eta+\\tfrac12 s(\\alpha^r)^\\top\\mu\\ \\ge\\ D(\\alpha^r),\\qquad r=1..t,

with :math:`\\Theta_c=\\{\\mu:K_\\mu\\succeq0,\\ \\operatorname{Tr}K_\\mu=c\\}` (Lanckriet et al.'s
general linear combinations). Written in :math:`\\mu=\\mu_u+Nd` on the kernels' joint
range it is one LMI of the joint rank :math:`r` in :math:`M-1` free weights plus
:math:`t` linear rows: :class:`~mklopt.regularizers.lmi_subspace.SubspaceLMI`
solves it with Newton systems of order :math:`M`, where an interior point on the
SDP statement forms an :math:`(n(n+1)/2)^2` block. The same interface as the LP
master of polyhedral sets (``add_cut``, ``drop_cut``, ``solve``).
"""

from __future__ import annotations

import numpy as np

from ..exceptions import SolverError


__all__ = ["SpectrahedronMaster"]


class SpectrahedronMaster:
    """The SILP master over a :class:`~mklopt.regularizers.spectrahedron.Spectrahedron`."""

    def __init__(self, theta) -> None:
        self.theta = theta
        self.N = theta.reduced()[0]
        self.lmi = theta.lmi()
        self.offsets: list[float] = []
        self.terms: list[np.ndarray] = []
        #: The cuts' multipliers at the last solve (they sum to 1): weights of the cuts'
        #: alphas in the aggregate dual point the master's optimum certifies.
        self.multipliers = np.zeros(0)

    @property
    def n_cuts(self) -> int:
        return len(self.offsets)

    def add_cut(self, offset: float, s: np.ndarray) -> None:
        """Add :math:`\\eta + \\tfrac12 s^\\top\\mu \\ge` ``offset``."""
        self.offsets.append(float(offset))
        self.terms.append(np.asarray(s, dtype=float))

    def drop_cut(self, index: int) -> None:
        """Remove the ``index``-th cut (0-based, in the order of :meth:`add_cut`)."""
        del self.offsets[index], self.terms[index]

    def solve(self) -> tuple[np.ndarray, float]:
        """``(mu, -inf)``: the last centre's weights (to a relative gap of 1e-9: the next
        weights only need to be good, the certificate of the SVM at them is what counts).
        No master value is reported: the centre's is exact only in exact arithmetic,
        and the outer loop's recorded bounds must be valid. :attr:`multipliers` holds
        the cuts' multipliers at the answer."""
        if not self.offsets:
            raise SolverError("the cutting-plane master has no cut yet.")
        k = self.N.shape[1]
        S = np.array(self.terms)
        uniform = self.theta.uniform
        # rows: D_r - s_r'(mu_u + N d)/2 - eta <= 0
        G = np.hstack([-0.5 * S @ self.N, -np.ones((len(S), 1))])
        h = 0.5 * S @ uniform - np.array(self.offsets)
        start = np.zeros(k + 1)
        f = np.zeros(k + 1)
        f[k] = 1.0
        start[k] = float(np.max(-h)) + 1.0 + abs(float(np.max(-h)))
        scale = 1.0 + abs(start[k])
        try:
            solution = self.lmi.minimize(f, G, h, x0=start, gap=1e-9 * scale)
        except (ValueError, np.linalg.LinAlgError) as exc:
            raise SolverError(f"the spectrahedron master's interior point failed: {exc}") from None
        self.multipliers = solution.y / max(float(np.sum(solution.y)), 1e-300)
        mu = uniform + self.N @ solution.x[:k]
        return mu, -np.inf
