"""The wrapper (Kloft et al., thesis Alg. 3.1): alternate an SVM step and a weight step.

With :math:`\\|w_m\\|^2 = \\mu_m^2 s_m(\\alpha)` at the SVM solution, the weight step is

.. math:: \\mu \\leftarrow \\arg\\min_{\\mu\\in\\Theta} \\sum_m \\frac{\\|w_m\\|^2}{\\mu_m},

in closed form for Lp balls (:math:`\\mu_m\\propto\\|w_m\\|^{2/(p+1)}`, normalized
to :math:`\\|\\mu\\|_p=1`) and weighted-ℓ1 sets, and a small M-variable CVXPY
problem for any other Θ. For p = 1 the iteration contracts slowly (it
zeroes weights only asymptotically): prefer ``cutting_plane`` there.
"""

from __future__ import annotations

import numpy as np

from ..formulations import MKLData
from ..regularizers import LpBall
from .base import Driver, Step
from .inner import make_inner


class Wrapper(Driver):
    method = ("alternate an SVM (mklopt's SMO by default; libsvm, CVXPY or yours with `inner=`) and "
              "the closed-form weight step (Kloft's thesis, Algorithm 3.1)")
    notes = "fast for p > 1; at p = 1 weights reach zero only asymptotically"
    name = "wrapper"

    def __init__(self, data: MKLData, *, inner="smo", tol: float = 1e-4, backend=None,
                 init_weights=None) -> None:
        super().__init__(data)
        self.tol = tol
        self.inner = make_inner(inner, data, tol, backend)
        self.init_weights = init_weights

    def step(self, weights: np.ndarray) -> Step:
        alpha, cert = self.svm_step(weights)
        wnorm2 = cert.weights**2 * cert.s
        return Step(alpha, cert, self.data.regularizer.argmin_weights(wnorm2))

    def finish(self, result) -> None:
        reg = self.data.regularizer
        if isinstance(reg, LpBall) and reg.p == 1:
            result.message += ("; note: the wrapper converges slowly for p = 1 "
                               "(use driver='cutting_plane')")
