"""Newton's method for ℓq-norm MKL (the learning-kernels tutorial, "Newton's Method: L_q-Norm";
Kloft, Brefeld, Sonnenburg, Laskov, Müller & Zien, NIPS 2009).

At the SVM solution for the current weights the block norms
:math:`a_m=\\|w_m\\|^2=\\mu_m^2s_m(\\alpha)` are held fixed and the Lagrangian of the
weight problem, :math:`\\tfrac12\\sum_ma_m/\\mu_m+\\delta(\\sum_m\\mu_m^q-1)` (the tutorial
folds the factor q into :math:`\\delta`), gets one Newton step with its diagonal Hessian:

.. math::

    \\Delta\\mu_m=\\frac{\\tfrac12\\mu_ma_m-\\delta\\mu_m^{q+2}}{a_m+(q-1)\\,\\delta\\,\\mu_m^{q+1}} .

mklopt chooses :math:`\\delta` (one root by Brent's method) so that the safeguarded point
:math:`\\max(\\mu+\\Delta\\mu,\\ \\mu/10)` lies on the sphere :math:`\\|\\mu\\|_q=1`: the
safeguard keeps every weight positive (a weight can shrink tenfold per step, never to
zero). The line search: when the certified SVM objective at the new weights is not
below the last accepted one, the next weights go halfway back toward them.
The stop is mklopt's certified gap, as for every driver.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq

from ..exceptions import FormulationError
from ..formulations import MKLData
from ..regularizers import LpBall
from .base import Driver, Step
from .inner import make_inner

__all__ = ["Newton"]

#: Smallest fraction of a weight kept by one step.
SAFEGUARD = 0.1


def newton_weights(mu: np.ndarray, a: np.ndarray, q: float) -> np.ndarray:
    """The safeguarded diagonal Newton step on the sphere :math:`\\|\\mu\\|_q=1`."""
    def moved(delta: float) -> np.ndarray:
        numerator = 0.5 * mu * a - delta * mu ** (q + 2)
        denominator = a + (q - 1) * delta * mu ** (q + 1)
        step = np.divide(numerator, denominator, out=np.zeros_like(mu), where=denominator > 0)
        return np.maximum(mu + step, SAFEGUARD * mu)

    def excess(delta: float) -> float:
        return float(np.sum(moved(delta) ** q)) - 1.0

    high = 1.0
    while excess(high) > 0 and high < 1e300:
        high *= 10.0
    delta = brentq(excess, 0.0, high, xtol=1e-14, rtol=1e-12) if excess(0.0) > 0 else 0.0
    new = moved(delta)
    return new / np.sum(new ** q) ** (1.0 / q)


class Newton(Driver):
    """Wrapper with the tutorial's diagonal Newton weight step, for :math:`\\Theta=\\{\\|\\mu\\|_q\\le1\\}`, 1 < q < ∞."""

    method = ("the tutorial's Newton step for ℓq-norm MKL (Kloft et al., NIPS 2009): block norms "
              "fixed, a diagonal-Hessian step on the Lagrangian")
    notes = "`p` in (1, ∞); safeguarded (weights stay positive) and line-searched"

    name = "newton"

    def __init__(self, data: MKLData, *, inner="smo", tol: float = 1e-4, backend=None,
                 init_weights=None) -> None:
        super().__init__(data)
        reg = data.regularizer
        if type(reg) is not LpBall or not 1 < reg.p < np.inf:
            raise FormulationError(
                f"driver 'newton' is Newton's method for lq-norm MKL, 1 < q < inf; got {reg!r}. "
                "Use p in (1, inf), or driver='wrapper' / 'cutting_plane' for other weight sets.")
        self.q = float(reg.p)
        self.tol = tol
        self.inner = make_inner(inner, data, tol, backend)
        self.init_weights = init_weights
        self._accepted: tuple[np.ndarray, float, np.ndarray] | None = None

    def start(self) -> np.ndarray:
        start = super().start()
        return np.maximum(start, 1e-3 * start.max())  # Newton works in the interior

    def step(self, weights: np.ndarray) -> Step:
        alpha, cert = self.svm_step(weights)
        if self._accepted is not None and cert.primal > self._accepted[1]:
            back = 0.5 * (self._accepted[0] + weights)  # line search: halfway back
            return Step(alpha, cert, back / np.linalg.norm(back, self.q), extra={"accepted": False})
        a = cert.weights ** 2 * cert.s
        self._accepted = (np.array(weights, copy=True), cert.primal, a)
        return Step(alpha, cert, newton_weights(np.asarray(weights, dtype=float), a, self.q),
                    extra={"accepted": True})
