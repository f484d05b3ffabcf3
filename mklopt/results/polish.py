"""Weight polish: the best kernel weights for a fixed alpha, by one small convex solve.

For any dual-feasible :math:`\\alpha` and any :math:`\\mu \\in \\Theta`, the primal value

.. math:: P(\\mu, \\alpha) = \\tfrac12 \\mu^\\top s(\\alpha)
          + C \\min_b \\sum_i \\ell\\bigl(y_i,\\ \\textstyle\\sum_m \\mu_m [K_m c(\\alpha)]_i + b\\bigr)

is the objective at the primal point :math:`w_m = \\mu_m L_m^\\top c(\\alpha)`
(:math:`c = y\\circ\\alpha` for the hinge),
hence an upper bound on OPT, and it is jointly convex in :math:`(\\mu, b)`. So

.. math:: \\hat\\mu = \\arg\\min_{\\mu \\in \\Theta} P(\\mu, \\alpha)

(an LP for the simplex, a small conic problem otherwise: M + 1 + n variables)
gives the pair :math:`(\\hat\\mu, \\alpha)` with the smallest certified gap for that
alpha. Interior-point solvers return the optimal alpha of a dual formulation to
high accuracy but its weights (constraint multipliers) less so; the polish
turns an accurate alpha into one certified pair.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from ..certificates.gap import certificate
from ..exceptions import MKLError
from ..formulations import MKLData
from ..regularizers import BlockNorm, Fixed, solve_auxiliary
from ..certificates.bounds import Certificate

__all__ = ["weight_polish"]


def weight_polish(data: MKLData, alpha: np.ndarray) -> Certificate | None:
    """Certificate of :math:`(\\hat\\mu, \\alpha)`, or None where it does not apply or fails."""
    reg = data.regularizer
    if isinstance(reg, (BlockNorm, Fixed)):  # a penalty, or nothing to choose
        return None
    loss = data.loss
    a = loss.project(alpha, data.y, data.C)
    s, Kc = data.kernels.products(loss.coef(a, data.y))
    mu = cp.Variable(data.M)
    outputs = Kc.reshape(data.M, -1).T @ mu  # f = sum_m mu_m K_m c, flattened over tasks
    if Kc.ndim == 3:
        outputs = cp.reshape(outputs, Kc.shape[1:], order="C")
    fit = loss.primal_part(outputs, data.y, data.C)
    problem = cp.Problem(cp.Minimize(0.5 * (s @ mu) + fit.term), [*fit.constraints, *reg.constraints(mu)])
    try:
        solve_auxiliary(problem, reg)
    except MKLError:
        return None
    if mu.value is None or not np.all(np.isfinite(mu.value)):
        return None
    return certificate(data.kernels, data.y, mu.value, a, data.C, reg, loss)
