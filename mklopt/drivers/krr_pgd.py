"""Projected gradient for kernel ridge regression with L2-regularized weights (Cortes, Mohri and Rostamizadeh, Learning Kernels, ICML 2011 tutorial, "Projected Gradient, KRR").

.. math:: \\min_{\\mu\\in\\mathcal M}F(\\mu)=y^\\top(K_\\mu+\\lambda I)^{-1}y,\\qquad
          \\mathcal M=\\{\\mu\\ge0:\\|\\mu-\\mu_0\\|_2\\le\\Lambda\\},\\qquad
          \\frac{\\partial F}{\\partial\\mu_k}=-\\alpha^\\top K_k\\alpha,\\quad\\alpha=(K_\\mu+\\lambda I)^{-1}y .

One iteration: :math:`\\mu\\leftarrow\\Pi_{\\mathcal M}(\\mu+\\eta s)`, :math:`s_k=\\alpha^\\top K_k\\alpha`,
with the exact Euclidean projection (:func:`mklopt.regularizers.krr.project_ball_orthant`)
and a backtracking line search (:func:`~mklopt.drivers._krr.projected_gradient_step`;
:math:`\\eta` starts at :math:`\\Lambda/\\|s\\|` and doubles after every accepted step). The
tutorial's pseudo-code instead clips :math:`\\mu+\\eta s` at 0 and rescales it onto the sphere,
which is the projection only when :math:`\\mu_0=0` and the clipped point lies outside the
ball. Every iterate is certified with the certificate of ``krr_l2``; the loop stops when
its ``rel_gap`` is at most ``tol``.
"""

from __future__ import annotations

import numpy as np

from .._options import Integer
from ..results.result import MKLResult
from ._krr import KRRDriver, projected_gradient_step
from .base import Step

__all__ = ["KRRProjectedGradient"]


class KRRProjectedGradient(KRRDriver):
    """Projected gradient descent with backtracking on :math:`F` over :math:`\\mathcal M`.

    Parameters are those of :class:`~mklopt.drivers._krr.KRRDriver` (``lam``, ``mu0``,
    ``radius``, ``init_weights``, ``tol``); ``max_halvings`` bounds the line search.
    """

    method = ("kernel ridge regression over {μ ≥ 0 : ‖μ − μ0‖ ≤ Λ} (Cortes, Mohri & Rostamizadeh, UAI"
              " 2009): projected gradient, one Cholesky per iterate, no inner SVM")
    notes = '`loss="squared_error"`, `lam=`, `mu0=`, `radius=`; certified by the gap of `krr_l2`'

    stall_rule = "the step was halved 60 times (`max_halvings`) without a decrease"

    name = "krr_projected_gradient"
    options = {"max_halvings": Integer(1, 1000)}
    degree = 1

    def __init__(self, data, *, max_halvings: int = 60, **kwargs) -> None:
        super().__init__(data, **kwargs)
        self.max_halvings = int(max_halvings)
        self.eta: float | None = None

    def step(self, weights: np.ndarray) -> Step:
        point = self.evaluate(weights)
        cert = self.certify(weights)
        size = float(np.linalg.norm(point.s))
        if self.eta is None:
            self.eta = self.problem.radius / size if size > 0 else 1.0
        new, eta, trials = projected_gradient_step(self, point, self.eta, self.max_halvings)
        if eta > 0:
            self.eta = 2.0 * eta
        stationarity = self.relative(point.stationarity(self.problem), point)
        self.stalled = eta == 0.0 and not self.reached(cert.rel_gap, stationarity)
        extra = {"objective": point.value, "step_size": eta, "trials": trials,
                 "stationarity": stationarity,
                 "weight_change": float(np.linalg.norm(new.weights - weights))}
        return Step(cert.alpha, cert, new.weights, extra=extra)

    def reached(self, rel_gap: float, stationarity: float) -> bool:
        """The stop test the line search cannot improve on: the certified ``rel_gap``."""
        return rel_gap <= self.tol

    def finish(self, result: MKLResult) -> None:
        super().finish(result)
        if result.status == "stalled":
            result.message += ("; the line search found no decrease at the rounding level of F "
                               f"(certified rel_gap {result.rel_gap:.2e})")
