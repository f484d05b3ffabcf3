"""Mirror descent with the entropy map over groups of kernels (the learning-kernels tutorial,
"Mirror Descent" and "Mirror Descent: Mixed-Norm MKL"; Nath, Dinesh, Raman, Bhattacharyya,
Ben-Tal & Ramakrishnan, NIPS 2009).

:math:`F(\\mu)=\\max_\\alpha D(\\alpha)-\\tfrac12\\mu^\\top s(\\alpha)` is convex with gradient
:math:`\\nabla F=-\\tfrac12 s(\\alpha^*)` (Danskin). With the entropy
:math:`\\Omega(\\mu)=\\sum_m\\mu_m\\log\\mu_m` the mirror step is the tutorial's
exponentiated update, normalized in each group :math:`G_j` of kernels:

.. math::

    \\mu_m^{t+1}=\\frac{\\mu_m^t\\exp(-s_t[\\nabla F]_m)}{\\sum_{l\\in G_j}\\mu_l^t\\exp(-s_t[\\nabla F]_l)},
    \\qquad m\\in G_j,\\qquad s_t=\\frac{\\sqrt{2\\log\\max_j|G_j|}}{\\|\\nabla F\\|_\\infty\\sqrt t}

(the step of the classical :math:`O(1/\\sqrt t)` bound, scaled by the current gradient).
The weight set is :class:`~mklopt.regularizers.groups.GroupSimplex` (one simplex per
group; one group is ℓ1-MKL, the default). The tutorial's mixed-norm problem also
maximizes over a weight per group (:math:`\\gamma\\in\\Delta`); mklopt keeps every group at
full weight, so the problem is MKL over :math:`\\Theta_{\\mathcal G}` — convex, and
certified by mklopt's duality gap like every driver.
"""

from __future__ import annotations

import math

import numpy as np

from ..exceptions import FormulationError
from ..formulations import MKLData
from ..regularizers import LpBall
from ..regularizers.groups import GroupSimplex
from .base import Driver, Step
from .inner import make_inner

__all__ = ["MirrorDescent"]


class MirrorDescent(Driver):
    """Entropy mirror descent on the simplex of each group of kernels (ℓ1-MKL for one group)."""

    method = "entropy mirror descent over groups of kernels (the tutorial; Nath et al., NIPS 2009)"
    notes = "`p=1` or `regularizer=mklopt.GroupSimplex(groups)`; slow tail, for teaching"

    name = "mirror_descent"

    def __init__(self, data: MKLData, *, inner="smo", tol: float = 1e-4, backend=None,
                 init_weights=None) -> None:
        super().__init__(data)
        reg = data.regularizer
        if isinstance(reg, LpBall) and reg.p == 1:
            reg = GroupSimplex(np.zeros(data.M, dtype=int))
        if not isinstance(reg, GroupSimplex):
            raise FormulationError(
                f"driver 'mirror_descent' runs on simplices: p=1 or regularizer=GroupSimplex(groups); "
                f"got {reg!r}.")
        self.groups = reg
        self.tol = tol
        self.inner = make_inner(inner, data, tol, backend)
        self.init_weights = init_weights
        self.iteration = 0
        self.radius = math.sqrt(2.0 * math.log(max(2, max(idx.size for idx in reg.members))))

    def start(self) -> np.ndarray:
        init = self.init_weights
        mu = np.ones(self.data.M) if init is None else np.clip(np.asarray(init, dtype=float), 1e-12, None)
        return self._normalize(mu)

    def _normalize(self, mu: np.ndarray) -> np.ndarray:
        mu = np.array(mu, dtype=float)
        for idx in self.groups.members:
            mu[idx] /= mu[idx].sum()
        return mu

    def step(self, weights: np.ndarray) -> Step:
        alpha, cert = self.svm_step(weights)
        self.iteration += 1
        grad = -0.5 * cert.s
        scale = float(np.max(np.abs(grad))) or 1.0
        rate = self.radius / (scale * math.sqrt(self.iteration))
        logits = np.log(np.clip(weights, 1e-300, None)) - rate * (grad - grad.max())
        new = np.empty_like(logits)
        for idx in self.groups.members:
            shifted = np.exp(logits[idx] - logits[idx].max())
            new[idx] = shifted / shifted.sum()
        return Step(alpha, cert, new, extra={"step_size": rate})
