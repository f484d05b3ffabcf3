"""The interpolated iterative algorithm for KRR with L2-regularized weights (Cortes, Mohri and Rostamizadeh, Learning Kernels, ICML 2011 tutorial, "Interpolated Step, KRR – L₂ Reg.").

At the optimum of :math:`\\min_{\\mu\\in\\mathcal M}y^\\top(K_\\mu+\\lambda I)^{-1}y` the weights
maximize :math:`v^\\top\\mu` over :math:`\\mathcal M` for :math:`v_k=\\alpha^\\top K_k\\alpha`,
:math:`\\alpha=(K_\\mu+\\lambda I)^{-1}y`, i.e. :math:`\\mu=\\mu_0+\\Lambda v/\\|v\\|` — a fixed point.
Cortes, Mohri & Rostamizadeh iterate it with damping :math:`\\eta\\in[0,1)` on :math:`\\alpha`
(tutorial and UAI 2009 paper):

.. math:: v\\leftarrow(\\alpha^\\top K_k\\alpha)_k,\\quad \\mu\\leftarrow\\mu_0+\\Lambda\\frac{v}{\\|v\\|},\\quad
          \\alpha\\leftarrow\\eta\\,\\alpha+(1-\\eta)(K_\\mu+\\lambda I)^{-1}y,

from :math:`\\alpha=(K_{\\mu_0}+\\lambda I)^{-1}y`. ``interpolate="weights"`` damps the weights
instead: :math:`\\mu\\leftarrow\\eta\\mu+(1-\\eta)(\\mu_0+\\Lambda v/\\|v\\|)` (a convex combination, so
it stays in :math:`\\mathcal M`). The tutorial stops when :math:`\\|\\alpha'-\\alpha\\|\\le\\epsilon`;
mklopt certifies every :math:`\\mu` it visits (one Cholesky each, certificate of ``krr_l2``)
and stops on the certified ``rel_gap``. The algorithm has no convergence guarantee: a run
that does not reach ``tol`` ends with status ``"max_iter"`` and its best certified pair.
"""

from __future__ import annotations

import numpy as np

from .._options import Choice, Real
from ..exceptions import InvalidInputError
from .._compiled.products import quadratic_terms
from ._krr import KRRDriver
from .base import Step

__all__ = ["KRRInterpolated"]


class KRRInterpolated(KRRDriver):
    """The interpolated fixed-point iteration :math:`\\mu=\\mu_0+\\Lambda v/\\|v\\|`.

    Parameters
    ----------
    eta : float in [0, 1), default 0.4
        Interpolation weight of the previous iterate. :math:`\\eta=0` (the plain fixed-point
        iteration) oscillates; on the diabetes instances of ``tests/test_krr.py``
        (n = 60–150, 5 or 13 kernels) 0.3–0.4 needed the fewest iterations to a certified
        ``rel_gap`` of 1e-6 (7–14), 0.5 needed 8–18, 0.7 up to 33.
    interpolate : {"alpha", "weights"}, default "alpha"
        What is damped: the dual coefficients (the paper's algorithm) or the weights.
    lam, mu0, radius, tol, init_weights
        As for :class:`~mklopt.drivers._krr.KRRDriver`; ``init_weights`` replaces the paper's
        start :math:`\\alpha=(K_{\\mu_0}+\\lambda I)^{-1}y` by :math:`\\alpha=(K_{\\mu}+\\lambda I)^{-1}y`.
    """

    method = "the same problem by the paper's interpolated fixed-point step"
    notes = "as `krr_projected_gradient`; the tutorial promises fewer than 15 iterations"

    stall_rule = "the iteration reached a fixed point short of the target gap (weights and α unchanged)"
    stall_reason = ("the interpolated iteration reached a fixed point at rel_gap {rel_gap:.1e}; "
                    "driver='krr_projected_gradient' goes further")

    name = "krr_interpolated"
    options = {"eta": Real(0, 1, open="high"), "interpolate": Choice(("alpha", "weights"))}
    degree = 1

    def __init__(self, data, *, eta: float = 0.4, interpolate: str = "alpha", **kwargs) -> None:
        super().__init__(data, **kwargs)
        if isinstance(eta, (bool, np.bool_)) or not isinstance(eta, (int, float, np.number)) \
                or not 0.0 <= float(eta) < 1.0:
            raise InvalidInputError(f"eta must be a number in [0, 1), got {eta!r}.")
        if interpolate not in ("alpha", "weights"):
            raise InvalidInputError(f"interpolate must be 'alpha' or 'weights', got {interpolate!r}.")
        self.eta, self.interpolate = float(eta), interpolate
        self.alpha: np.ndarray | None = None

    def fixed_point(self, alpha: np.ndarray) -> np.ndarray:
        """:math:`\\mu_0+\\Lambda v/\\|v\\|`, :math:`v_k=\\alpha^\\top K_k\\alpha` (one pass over the stack)."""
        return self.problem.support_point(quadratic_terms(self.K, alpha)[0])

    def start(self) -> np.ndarray:
        first = self.problem.center(self.data.M) if self.init_weights is None else \
            self.problem.project(self.init_weights)
        self.alpha = self.evaluate(first).alpha
        return self.fixed_point(self.alpha)

    def step(self, weights: np.ndarray) -> Step:
        point = self.evaluate(weights)
        cert = self.certify(weights)
        if self.interpolate == "alpha":
            new_alpha = self.eta * self.alpha + (1.0 - self.eta) * point.alpha
            next_weights = self.fixed_point(new_alpha)
        else:
            new_alpha = point.alpha
            next_weights = self.eta * weights + (1.0 - self.eta) * self.problem.support_point(point.s)
        extra = {"objective": point.value, "alpha_change": float(np.linalg.norm(new_alpha - self.alpha)),
                 "weight_change": float(np.linalg.norm(next_weights - weights))}
        # a fixed point: the next step would repeat this one exactly
        self.stalled = np.array_equal(new_alpha, self.alpha) and np.array_equal(next_weights, weights)
        self.alpha = new_alpha
        return Step(cert.alpha, cert, next_weights, extra=extra)

    def finish(self, result) -> None:
        super().finish(result)
        result.info.update(eta=self.eta, interpolate=self.interpolate)
