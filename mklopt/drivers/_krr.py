"""What the kernel ridge regression drivers share: the problem, evaluations, certificate, start.

The drivers ``krr_projected_gradient``, ``krr_interpolated`` (degree 1, certified by
:func:`mklopt.certificates.krr.point_certificate`, the certificate of ``krr_l2``) and
``polynomial_krr`` (degree 2, certified at the final fixed kernel only) minimize

.. math:: F(\\mu)=y^\\top(\\tilde K_\\mu+\\lambda I)^{-1}y\\quad\\text{over}\\quad
          \\mathcal M=\\{\\mu\\ge0:\\|\\mu-\\mu_0\\|_2\\le\\Lambda\\},

with :math:`\\nabla_kF(\\mu)=-s_k`, :math:`s_k=\\alpha^\\top(\\partial\\tilde K_\\mu/\\partial\\mu_k)\\alpha`,
:math:`\\alpha=(\\tilde K_\\mu+\\lambda I)^{-1}y`. Every evaluation is one Cholesky factorization
(:func:`mklopt.certificates.krr.evaluate`); the last one is cached, so that the point a line
search accepted is not factorized again when the next iteration certifies it.
"""

from __future__ import annotations

import numpy as np

from .._options import Real, Vector
from .._validation import check_vector
from ..formulations import MKLData
from ..formulations.krr_l2 import krr_problem
from ..certificates.krr import KRRPoint, evaluate, krr_scale, point_certificate
from ..results.result import Certificate, MKLResult
from .base import Driver

__all__ = ["KRRDriver", "projected_gradient_step"]


class KRRDriver(Driver):
    """Base of the KRR drivers (``loss="squared_error"``; ``inner`` and ``backend`` are unused).

    Parameters
    ----------
    data : MKLData
        ``C``, ``p`` and ``regularizer`` must stay at their defaults (refused otherwise).
    tol : float
        Target relative gap (stop test of the loop).
    lam, mu0, radius
        :math:`\\lambda>0`, :math:`\\mu_0\\ge0` (default 0) and :math:`\\Lambda>0`.
    init_weights : array (M,), optional
        Starting weights, projected onto :math:`\\mathcal M` (default
        :math:`\\mu_0+\\Lambda\\mathbf 1/\\sqrt M`, a point of the sphere: for degree 2,
        :math:`\\mu=0` is a stationary point with zero gradient).
    """

    losses = ("squared_error",)
    options = {"lam": Real(0, open="low"), "radius": Real(0, open="low"),
               "mu0": Vector("M", nonnegative=True)}
    needs_dense = True
    needs_psd = True
    degree = 1

    def __init__(self, data: MKLData, *, inner=None, tol: float = 1e-4, backend=None,
                 lam: float = 1.0, mu0=None, radius: float = 1.0, init_weights=None) -> None:
        super().__init__(data)
        self.problem = krr_problem(data, lam, mu0, radius, self.degree, who=f"driver '{self.name}'")
        self.tol = tol
        self.K, self.y = data.kernels.K, data.y
        self.kappa = np.abs(self.K.reshape(data.M, -1)).max(axis=1)
        self.scale = krr_scale(self.y, self.problem)
        self.init_weights = (None if init_weights is None
                             else check_vector(init_weights, data.M, "init_weights"))
        self.evaluations = 0
        self._last: KRRPoint | None = None

    def evaluate(self, weights: np.ndarray) -> KRRPoint:
        """:class:`KRRPoint` at ``weights`` (one Cholesky; the last point is reused).

        Weights outside :math:`\\mathcal M` by rounding (e.g. :math:`\\mu_0+\\Lambda v/\\|v\\|`)
        are projected first, so that every certificate is about a point of :math:`\\mathcal M`.
        """
        if self.problem.violation(weights) > 0:
            weights = self.problem.project(weights)
        if self._last is not None and np.array_equal(self._last.weights, weights):
            return self._last
        self.evaluations += 1
        self._last = evaluate(self.K, self.y, weights, self.problem, self.kappa)
        return self._last

    def start(self) -> np.ndarray:
        if self.init_weights is not None:
            return self.problem.project(self.init_weights)
        return self.problem.support_point(np.ones(self.data.M))

    def certify(self, weights: np.ndarray, alpha: np.ndarray | None = None) -> Certificate:
        return point_certificate(self.evaluate(weights), self.y, self.problem)

    def relative(self, value: float, point: KRRPoint) -> float:
        """``value`` relative to the objective (floored by :math:`10^{-12}\\|y\\|^2/\\lambda`)."""
        return value / max(abs(point.value), 1e-12 * self.scale, np.finfo(float).tiny)

    def finish(self, result: MKLResult) -> None:
        result.regularizer = self.problem  # what a saved result re-certifies with
        result.backend = "cholesky"
        result.info.update(lam=self.problem.lam, radius=self.problem.radius,
                           degree=self.problem.degree, evaluations=self.evaluations)


def projected_gradient_step(driver: KRRDriver, point: KRRPoint, eta: float,
                            max_halvings: int = 60) -> tuple[KRRPoint, float, int]:
    """One projected gradient step :math:`\\mu^+=\\Pi_{\\mathcal M}(\\mu-\\eta\\nabla F)` with backtracking.

    The step is accepted when the quadratic upper model holds,

    .. math:: F(\\mu^+)\\le F(\\mu)+\\nabla F^\\top(\\mu^+-\\mu)+\\frac{\\|\\mu^+-\\mu\\|^2}{2\\eta}

    (then :math:`F(\\mu^+)\\le F(\\mu)`; it holds for every :math:`\\eta\\le1/L` on an
    :math:`L`-smooth :math:`F`), else :math:`\\eta` is halved. Returns the accepted point,
    its :math:`\\eta` and the number of trials; the start point and 0 when no trial moved
    or none was accepted after ``max_halvings`` halvings (the caller stops: stalled).
    """
    problem, mu, s = driver.problem, point.weights, point.s
    slack = 1e-13 * abs(point.value)  # the evaluations' own rounding
    for trial in range(1, max_halvings + 1):
        candidate = problem.project(mu + eta * s)
        step = candidate - mu
        if not np.any(step):
            return point, 0.0, trial
        new = driver.evaluate(candidate)
        model = point.value - float(s @ step) + float(step @ step) / (2.0 * eta)
        if new.value <= model + slack:
            return new, eta, trial
        eta *= 0.5
    driver.evaluate(mu)  # restore the cache to the current point
    return point, 0.0, max_halvings
