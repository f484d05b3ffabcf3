"""Weight polish: the best kernel weights for a fixed alpha, by one small convex solve.

For any dual-feasible :math:`\\alpha` and any :math:`\\mu \\in \\Theta`, the primal value

.. math:: P(\\mu, \\alpha) = \\tfrac12 \\mu^\\top s(\\alpha)
          + C \\min_b \\sum_i \\max\\bigl(0,\\ 1 - y_i (\\textstyle\\sum_m \\mu_m [K_m(y\\circ\\alpha)]_i + b)\\bigr)

is the objective at the primal point :math:`w_m = \\mu_m L_m^\\top (y\\circ\\alpha)`,
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

from .certificates import certificate, project_alpha
from .exceptions import MKLError
from .formulations import MKLData
from .kernels import quadratic_terms
from .regularizers import BlockNorm, Fixed, solve_auxiliary
from .result import Certificate

__all__ = ["weight_polish"]


def weight_polish(data: MKLData, alpha: np.ndarray) -> Certificate | None:
    """Certificate of :math:`(\\hat\\mu, \\alpha)`, or None where it does not apply or fails."""
    reg = data.regularizer
    if isinstance(reg, (BlockNorm, Fixed)):  # a penalty, or nothing to choose
        return None
    a = project_alpha(alpha, data.y, data.C)
    s, Kc = quadratic_terms(data.kernels.K, data.y * a, data.kernels.symmetric)
    mu, b = cp.Variable(data.M), cp.Variable()
    margins = cp.multiply(data.y, Kc.T @ mu + b)
    objective = 0.5 * (s @ mu) + data.C * cp.sum(cp.pos(1 - margins))
    problem = cp.Problem(cp.Minimize(objective), reg.constraints(mu))
    try:
        solve_auxiliary(problem, reg)
    except MKLError:
        return None
    if mu.value is None or not np.all(np.isfinite(mu.value)):
        return None
    return certificate(data.kernels, data.y, mu.value, a, data.C, reg)
