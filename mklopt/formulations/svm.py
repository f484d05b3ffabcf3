"""SVM with a fixed kernel combination (the ``unif`` baseline and every driver's inner problem).

.. math::

    \\max_{\\alpha\\in A_\\ell}\\ D_\\ell(\\alpha) - \\tfrac12 \\sum_m \\mu_m \\|L_m^\\top c(\\alpha)\\|^2

for any loss (hinge: :math:`D = 1^\\top\\alpha`, :math:`c = y\\circ\\alpha`,
:math:`0\\le\\alpha\\le C,\\ y^\\top\\alpha = 0`).

The weights are a nonnegative ``cp.Parameter``, so a driver re-solves the
same compiled problem for new weights (DPP).
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from ..exceptions import InvalidInputError
from ..regularizers import Fixed
from ._base import Formulation, MKLData, Model, dual_part, quad_terms


def build(data: MKLData, weights=None, parametric: bool = False, combined: bool = False) -> Model:
    """Build the SVM dual on :math:`K_\\mu` (default: uniform weights, the plain sum kernel).

    The quadratic term is :math:`\\sum_m\\mu_m\\|L_m^\\top(y\\circ\\alpha)\\|^2` with the
    per-kernel factors. ``parametric=True`` makes the weights a ``cp.Parameter``
    (``model.info["weights"]``) so a driver re-solves one compiled problem;
    ``combined=True`` uses one rank-revealing factor of :math:`K_\\mu` instead,
    :math:`\\|L_\\mu^\\top(y\\circ\\alpha)\\|^2`: the smallest model when
    :math:`\\sum_m r_m > n` (but on ECOS slightly less accurate).
    """
    mu0 = np.ones(data.M) if weights is None else Fixed(weights).weights
    if mu0.size != data.M:
        raise InvalidInputError(f"weights must have {data.M} entries (one per kernel), got {mu0.size}.")
    dual = dual_part(data)
    info = {}
    if combined:
        quad = quad_terms([data.kernels.combined_factor(mu0)], dual.coef)[0]
    else:
        mu = cp.Parameter(data.M, nonneg=True, name="weights", value=mu0) if parametric else mu0
        quad = mu @ cp.hstack(quad_terms(data.factors(), dual.coef))
        if parametric:
            info["weights"] = mu
    problem = cp.Problem(cp.Maximize(dual.gain - 0.5 * quad), dual.constraints)

    def extract():
        current = info["weights"].value.copy() if parametric else mu0.copy()
        return current, dual.alpha.value, 0.0

    return Model(problem, extract, Fixed(mu0), info=info)


FORMULATION = Formulation(
    "svm", "QP", build,
    "SVM dual on a fixed combination K_mu (weights=..., default uniform)",
    page="svm.md")
