"""ℓp-MKL primal, weight view, for **any** convex weight set Θ.

.. math::

    \\min_{w,b,\\xi,\\mu}\\ \\tfrac12\\sum_m \\frac{\\|w_m\\|^2}{\\mu_m} + C\\sum_i\\xi_i
    \\quad\\text{s.t.}\\quad y_i\\Big(\\sum_m L_m[i,:]\\,w_m + b\\Big) \\ge 1-\\xi_i,\\
    \\xi\\ge0,\\ \\mu\\in\\Theta.

:math:`\\|w_m\\|^2/\\mu_m` is ``cp.quad_over_lin`` (jointly convex). The dual
coefficients :math:`\\alpha` are the multipliers of the margin constraints.
This is how user-defined regularizers are solved exactly.
"""

from __future__ import annotations

import cvxpy as cp

from ._base import Formulation, MKLData, Model, margin_problem


def build(data: MKLData) -> Model:
    blocks, b, xi, margin, hinge = margin_problem(data)
    mu = cp.Variable(data.M, name="weights")
    reg_term = 0.5 * cp.sum(cp.hstack([cp.quad_over_lin(w_m, mu[m]) for m, w_m in enumerate(blocks)]))
    problem = cp.Problem(cp.Minimize(reg_term + hinge),
                         [margin, *data.regularizer.constraints(mu)])

    def extract():
        return mu.value, margin.dual_value, float(b.value)

    return Model(problem, extract, data.regularizer)


FORMULATION = Formulation(
    "lp_primal", "SOCP", build,
    "MKL primal 1/2 sum ||w_m||^2/mu_m + C sum xi over any convex weight set",
    page="lp_primal.md")
