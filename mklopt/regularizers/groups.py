"""Groups of kernels, one simplex each: the weight set of mirror descent over groups.

.. math::

    \\Theta_{\\mathcal G}=\\Big\\{\\mu\\ge0:\\ \\sum_{m\\in G_j}\\mu_m\\le1\\ \\ \\forall j\\Big\\},
    \\qquad \\sigma_{\\Theta_{\\mathcal G}}(s)=\\sum_j\\max\\big(0,\\max_{m\\in G_j}s_m\\big),

for a partition :math:`\\mathcal G=\\{G_1,\\dots,G_J\\}` of the kernels (e.g. one group per
feature, or per data source): ℓ1-MKL inside each group, every group always used. Its
block norm is :math:`\\big(\\sum_j(\\sum_{m\\in G_j}\\|w_m\\|)^2\\big)^{1/2}`. One group is ℓ1-MKL;
singletons are the uniform combination.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from ..exceptions import InvalidInputError
from .base import Regularizer
from .lp import _simplex_ball_projection

__all__ = ["GroupSimplex"]


class GroupSimplex(Regularizer):
    """:math:`\\{\\mu\\ge0:\\sum_{m\\in G_j}\\mu_m\\le1\\ \\forall j\\}` for groups given by a label per kernel.

    Parameters
    ----------
    groups : array of int (M,)
        ``groups[m]`` is the group of kernel m (any integers; each group non-empty by construction).
    """

    has_support_expr = True

    def __init__(self, groups) -> None:
        try:
            labels = np.asarray(groups)
        except (TypeError, ValueError):  # a ragged list of lists, e.g. one list of kernels per group
            labels = np.empty(0)
        if labels.ndim != 1 or labels.size == 0 or labels.dtype.kind not in "iu":
            raise InvalidInputError(f"GroupSimplex needs one integer group label per kernel (e.g. [0, 0, 1] for "
                                    f"three kernels in two groups), got {groups!r}.")
        self.groups = labels.astype(int)
        self.members = [np.flatnonzero(self.groups == g) for g in np.unique(self.groups)]
        self.name = "group_simplex"

    def __repr__(self) -> str:
        return f"GroupSimplex(groups={self.groups.tolist()})"

    def _check(self, M: int) -> None:
        if M != self.groups.size:
            raise InvalidInputError(f"GroupSimplex has {self.groups.size} group labels but there are {M} kernels.")

    def check(self, M: int) -> None:
        self._check(M)

    def contains_zero(self, M: int) -> bool:
        return True

    def set_constraints(self, mu):
        self._check(mu.shape[0])
        return [cp.sum(mu[idx]) <= 1 for idx in self.members]

    def support(self, s):
        s = np.asarray(s, dtype=float)
        self._check(s.size)
        return float(sum(max(0.0, float(s[idx].max())) for idx in self.members))

    def support_expr(self, u):
        return cp.sum(cp.hstack([cp.max(u[idx]) for idx in self.members]))

    def argmin_weights(self, wnorm2):
        a = np.clip(np.asarray(wnorm2, dtype=float), 0, None)
        self._check(a.size)
        root = np.sqrt(a)
        mu = np.empty(a.size)
        for idx in self.members:
            total = root[idx].sum()
            mu[idx] = root[idx] / total if total > 0 else 1.0 / idx.size
        return mu

    def violation(self, mu):
        mu = np.asarray(mu, dtype=float)
        sums = max(float(mu[idx].sum()) - 1.0 for idx in self.members)
        return max(sums, float(np.max(-mu, initial=0.0)), 0.0)

    def into_set(self, mu, tol=1e-12):
        mu = np.clip(np.asarray(mu, dtype=float), 0, None)
        for idx in self.members:
            mu[idx] /= max(1.0, float(mu[idx].sum()))
        return mu

    def project(self, mu):
        mu = np.asarray(mu, dtype=float).copy()
        for idx in self.members:
            mu[idx] = _simplex_ball_projection(mu[idx])
        return mu
