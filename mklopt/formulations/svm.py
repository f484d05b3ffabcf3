"""SVM with a fixed kernel combination (the ``unif`` baseline and every driver's inner problem).

.. math::

    \\max_\\alpha\\ 1^\\top\\alpha - \\tfrac12 \\sum_m \\mu_m \\|L_m^\\top(y\\circ\\alpha)\\|^2
    \\quad\\text{s.t.}\\quad 0\\le\\alpha\\le C,\\ y^\\top\\alpha = 0.

The weights are a nonnegative ``cp.Parameter``, so a driver re-solves the
same compiled problem for new weights (DPP).
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from ..regularizers import Fixed
from ._base import Formulation, MKLData, Model, dual_box, quad_terms


def build(data: MKLData, weights=None) -> Model:
    """Build the SVM dual on :math:`K_\\mu` (default: uniform weights, the plain sum kernel)."""
    mu0 = np.ones(data.M) if weights is None else Fixed(weights).weights
    mu = cp.Parameter(data.M, nonneg=True, name="weights", value=mu0)
    alpha, coef, cons = dual_box(data)
    s = cp.hstack(quad_terms(data.factors(), coef))
    problem = cp.Problem(cp.Maximize(cp.sum(alpha) - 0.5 * (mu @ s)), cons)

    def extract():
        return mu.value.copy(), alpha.value, 0.0

    return Model(problem, extract, Fixed(mu0), info={"weights": mu})


FORMULATION = Formulation(
    "svm", "QP", build,
    "SVM dual on a fixed combination K_mu (weights=..., default uniform)",
    page="svm.md")
