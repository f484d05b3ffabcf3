"""ℓp-MKL primal, weight view, for **any** convex weight set Θ.

.. math::

    \\min_{w,b,\\mu}\\ \\tfrac12\\sum_m \\frac{\\|w_m\\|^2}{\\mu_m} + C\\sum_i \\ell(y_i, f_i + b),
    \\quad f = \\sum_m L_m w_m,\\ \\mu\\in\\Theta,

for any loss (the hinge: :math:`C\\sum_i\\xi_i` with
:math:`y_i(f_i + b)\\ge 1-\\xi_i,\\ \\xi\\ge0`).

:math:`\\|w_m\\|^2/\\mu_m` is ``cp.quad_over_lin`` (jointly convex). The dual
coefficients :math:`\\alpha` are the multipliers of the loss's constraints
(:meth:`~mklopt.losses.Loss.primal_part`).
This is how user-defined regularizers are solved exactly.
"""

from __future__ import annotations

import cvxpy as cp

from ._base import Formulation, MKLData, Model, refuse_signed, primal_blocks, primal_part


def build(data: MKLData) -> Model:
    refuse_signed(data, "lp_primal")
    blocks, outputs = primal_blocks(data)
    fit = primal_part(data, outputs)
    mu = cp.Variable(data.M, name="weights")
    reg_term = 0.5 * cp.sum(cp.hstack([cp.quad_over_lin(w_m, mu[m]) for m, w_m in enumerate(blocks)]))
    problem = cp.Problem(cp.Minimize(reg_term + fit.term),
                         [*fit.constraints, *data.regularizer.constraints(mu)])

    def extract():
        return mu.value, fit.alpha(), fit.offset()

    return Model(problem, extract, data.regularizer)


FORMULATION = Formulation(
    "lp_primal", "SOCP", build,
    "MKL primal 1/2 sum ||w_m||^2/mu_m + C sum xi over any convex weight set",
    page="lp_primal.md")
