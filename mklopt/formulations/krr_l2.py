"""Kernel ridge regression with L2-regularized kernel weights (Cortes, Mohri, Rostamizadeh, UAI 2009).

No offset, real targets :math:`y`, ridge :math:`\\lambda>0`, weights in
:math:`\\mathcal M=\\{\\mu\\ge0:\\|\\mu-\\mu_0\\|_2\\le\\Lambda\\}` (:math:`\\mu_0\\ge0`):

.. math:: \\min_{\\mu\\in\\mathcal M}\\ \\max_\\alpha\\ 2\\alpha^\\top y-\\lambda\\alpha^\\top\\alpha
          -\\alpha^\\top K_\\mu\\alpha\\;=\\;\\min_{\\mu\\in\\mathcal M}\\ y^\\top(K_\\mu+\\lambda I)^{-1}y .

With factors :math:`K_k=L_kL_k^\\top`, :math:`y^\\top(\\sum_k\\mu_kL_kL_k^\\top+\\lambda I)^{-1}y`
is the least value of :math:`\\sum_k\\|w_k\\|^2/\\mu_k+\\|e\\|^2/\\lambda` over
:math:`\\sum_kL_kw_k+e=y` (the minimizer is :math:`w_k=\\mu_kL_k^\\top\\alpha`,
:math:`e=\\lambda\\alpha`, :math:`\\alpha=(K_\\mu+\\lambda I)^{-1}y`), so the module hands CVXPY the
SOCP (``cp.quad_over_lin``, jointly convex), whose value is :math:`F` at the optimum

.. math:: \\min_{\\mu,w,e}\\ \\sum_k\\frac{\\|w_k\\|^2}{\\mu_k}+\\frac{\\|e\\|^2}{\\lambda}
          \\quad\\text{s.t.}\\quad \\sum_kL_kw_k+e=y,\\quad\\mu\\ge0,\\quad
          \\|\\mu-\\mu_0\\|_2\\le\\Lambda .

The answer is certified by :func:`mklopt.certificates.krr.krr_certificate` from the
weights alone (:math:`U=F(\\mu)` by Cholesky, :math:`L` from :math:`\\alpha(\\mu)`), never by the
backend's status. ``C``, ``p`` and ``regularizer`` do not apply (refused when given).
"""

from __future__ import annotations

from dataclasses import dataclass

import cvxpy as cp
import numpy as np

from .._options import Real, Vector
from ..exceptions import FormulationError, InvalidInputError
from ..certificates.krr import evaluate, point_certificate
from ..regularizers import LpBall
from ..regularizers.krr import KRRProblem
from ._base import Formulation, MKLData, Model

__all__ = ["FORMULATION", "build", "krr_problem"]


def krr_problem(data: MKLData, lam, mu0, radius, degree: int = 1, who: str = "krr_l2") -> KRRProblem:
    """The validated :class:`KRRProblem` of a call; refuses ``C``, ``p``, ``regularizer`` and other losses.

    Raises
    ------
    InvalidInputError
        λ ≤ 0, Λ ≤ 0, μ₀ of the wrong length, negative or not finite; ``C != 1``; a
        weight norm or regularizer; a loss other than ``squared_error``.
    """
    if data.loss.name != "squared_error":
        raise FormulationError(f"{who} is kernel ridge regression: pass loss='squared_error' and "
                               f"real targets y (got loss '{data.loss.name}').")
    if data.C != 1.0:
        raise InvalidInputError(f"{who} has no C: the ridge is lam= (lambda > 0); leave C at 1, "
                                f"got C = {data.C:g}.")
    reg = data.regularizer
    if not (isinstance(reg, LpBall) and reg.p == 1):
        raise InvalidInputError(f"{who} has its own weight set {{mu >= 0 : ||mu - mu0||_2 <= Lambda}}: "
                                f"pass mu0= and radius=, not p or regularizer (got {reg!r}).")
    problem = KRRProblem(lam=lam, mu0=mu0, radius=radius, degree=degree)
    problem.check(data.M)
    return problem


def build(data: MKLData, lam: float = 1.0, mu0=None, radius: float = 1.0) -> Model:
    """Build the SOCP above for :func:`mklopt.solve` (``loss="squared_error"``).

    Parameters
    ----------
    lam : float
        Ridge :math:`\\lambda>0`.
    mu0 : array (M,), optional
        Center :math:`\\mu_0\\ge0` of the weight ball (default 0).
    radius : float
        :math:`\\Lambda>0`.
    """
    problem = krr_problem(data, lam, mu0, radius)
    center, y, K = problem.center(data.M), data.y, data.kernels.K
    factors = data.factors()
    mu = cp.Variable(data.M, name="weights")
    w = [cp.Variable(L.shape[1], name=f"w{k}") for k, L in enumerate(factors)]
    e = cp.Variable(data.n, name="e")
    penalty = cp.sum(cp.hstack([cp.quad_over_lin(w_k, mu[k]) for k, w_k in enumerate(w)]))
    fit = sum(L @ w_k for L, w_k in zip(factors, w)) + e == y
    objective = cp.Minimize(penalty + cp.sum_squares(e) / problem.lam)
    model = cp.Problem(objective, [fit, mu >= 0, cp.norm(mu - center, 2) <= problem.radius])

    def extract():
        if mu.value is None or e.value is None:
            return None, None, 0.0
        return np.clip(mu.value, 0.0, None), e.value / problem.lam, 0.0

    def certify(weights, alpha, bias, limit):
        point = evaluate(K, y, problem.project(weights), problem)
        return point_certificate(point, y, problem)

    info = {"lam": problem.lam, "radius": problem.radius, "degree": 1}
    return Model(model, extract, problem, info=info, certify=certify)


@dataclass(frozen=True)
class KRRFormulation(Formulation):
    """A formulation for the squared loss only, with a message that says so."""

    def check_loss(self, loss) -> None:
        if loss.name != "squared_error":
            raise FormulationError(
                f"formulation '{self.name}' is kernel ridge regression (no offset): pass "
                f"loss='squared_error' with real targets y, not loss '{loss.name}'.")


FORMULATION = KRRFormulation(
    "krr_l2", "SOCP", build,
    "kernel ridge regression over mu >= 0, ||mu - mu0||_2 <= Lambda: min_mu y'(K_mu + lam I)^-1 y",
    page="krr_l2.md", losses=("squared_error",), needs_dense=True,
    options={"lam": Real(0, open="low"), "radius": Real(0, open="low"),
             "mu0": Vector("M", nonnegative=True)})
