"""Kernel ridge regression on a learned polynomial combination of kernels, degree 2 (Cortes, Mohri and Rostamizadeh, Learning Kernels, ICML 2011 tutorial, "Polynomial Kernels – KRR").

Cortes, Mohri & Rostamizadeh (*Learning Non-Linear Combinations of Kernels*, NIPS 2009):

.. math:: \\min_{\\mu\\in\\mathcal M}F(\\mu)=y^\\top\\bigl(K_\\mu^{\\circ2}+\\lambda I\\bigr)^{-1}y,\\qquad
          K_\\mu^{\\circ2}=\\Bigl(\\sum_k\\mu_kK_k\\Bigr)\\circ\\Bigl(\\sum_l\\mu_lK_l\\Bigr)
          =\\sum_{k,l}\\mu_k\\mu_l\\,K_k\\circ K_l,

over :math:`\\mathcal M=\\{\\mu\\ge0:\\|\\mu-\\mu_0\\|_2\\le\\Lambda\\}`. With
:math:`\\alpha=(K_\\mu^{\\circ2}+\\lambda I)^{-1}y`, :math:`\\partial K_\\mu^{\\circ2}/\\partial\\mu_k=2K_k\\circ K_\\mu`, so

.. math:: \\frac{\\partial F}{\\partial\\mu_k}=-2\\,\\alpha^\\top(K_k\\circ K_\\mu)\\,\\alpha
          =-2\\,\\langle K_k,\\ K_\\mu\\circ\\alpha\\alpha^\\top\\rangle\\ \\le0

(one matrix–vector product over the stack; :math:`\\le0` by the Schur product theorem).
:math:`F` is not convex: projected gradient with backtracking (as ``krr_projected_gradient``)
finds a stationary point. It stops when the Frank–Wolfe gap
:math:`\\max_{\\nu\\in\\mathcal M}\\nabla F(\\mu)^\\top(\\mu-\\nu)=\\sigma_{\\mathcal M}(-\\nabla F)+\\nabla F^\\top\\mu`
(zero exactly at stationary points) is at most ``tol`` times :math:`F(\\mu)`. There is no global
certificate: the result's ``primal`` is :math:`F(\\mu)` at the returned weights (an upper bound
on the global optimum), and ``dual``/``gap`` certify only kernel ridge regression at the final
fixed kernel :math:`K_\\mu^{\\circ2}`, as the DCA driver reports its last convex subproblem.
:math:`\\mu=0` is a degenerate stationary point (zero gradient), so the default start is
:math:`\\mu_0+\\Lambda\\mathbf 1/\\sqrt M`.
"""

from __future__ import annotations

import numpy as np

from ..exceptions import InvalidInputError
from ..results.result import MKLResult
from .krr_pgd import KRRProjectedGradient

__all__ = ["PolynomialKRR"]


class PolynomialKRR(KRRProjectedGradient):
    """Projected gradient to a stationary point of the degree-2 KRR problem (no global certificate)."""

    method = ("kernel ridge regression on the degree-2 combination (Σ μk Kk)∘2 (Cortes, Mohri & "
              "Rostamizadeh, NIPS 2009): projected gradient to a stationary point")
    notes = "non-convex: no global certificate (said in the result)"

    name = "polynomial_krr"
    degree = 2
    certified = False

    def __init__(self, data, *, degree: int = 2, **kwargs) -> None:
        if isinstance(degree, bool) or degree != 2:
            raise InvalidInputError(
                f"polynomial_krr learns K_mu = (sum_k mu_k K_k)^2, degree 2 only (the tutorial's "
                f"family); got degree={degree!r}. For degree 1 use krr_projected_gradient.")
        super().__init__(data, **kwargs)

    def reached(self, rel_gap: float, stationarity: float) -> bool:
        return stationarity <= self.tol

    def converged(self, record: dict, history: list, tol: float) -> bool:
        return record["stationarity"] <= tol and record["gap"] >= 0.0

    def finish(self, result: MKLResult) -> None:
        super().finish(result)
        last = result.history[-1] if result.history else {}
        result.message += (
            "; polynomial_krr (degree 2) stopped at a stationary point of a non-convex problem, "
            "which has no global certificate: primal is F(mu) at the returned weights (an upper "
            f"bound on the optimum), relative Frank-Wolfe stationarity gap "
            f"{last.get('stationarity', float('nan')):.2e}; dual and gap certify only kernel "
            "ridge regression at the final fixed kernel (K_mu)^2")
        result.info.update(certified_globally=False,
                           stationarity=float(last.get("stationarity", np.nan)))
