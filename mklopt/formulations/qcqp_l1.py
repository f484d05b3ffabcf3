"""ℓ1-MKL as a QCQP (Lanckriet et al. 2004; tutorial Part II; thesis §2.3.2).

.. math::

    \\max_{\\alpha, t}\\ D_\\ell(\\alpha) - t \\quad\\text{s.t.}\\quad
    \\tfrac12 s_m(\\alpha)/v_m \\le t\\ \\ \\forall m,\\quad \\alpha\\in A_\\ell,

with :math:`v = 1` for the simplex (ℓ1-MKL) and :math:`v` the weights of a
``WeightedL1`` set. :math:`D_\\ell, A_\\ell` are the loss's dual gain and set (hinge: :math:`1^\\top\\alpha`,
:math:`0\\le\\alpha\\le C,\\ y^\\top\\alpha=0`). The kernel weights are the multipliers :math:`\\lambda_m`
of the quadratic constraints divided by :math:`v_m` (they satisfy
:math:`\\langle v, \\mu\\rangle = \\sum_m\\lambda_m = 1`).
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from ..exceptions import FormulationError
from ..regularizers import LpBall, WeightedL1
from ._base import Formulation, MKLData, Model, dual_part, dual_values, quad_terms, refuse_signed


def _scales(data: MKLData) -> np.ndarray:
    reg = data.regularizer
    if isinstance(reg, WeightedL1):
        return reg.v
    if isinstance(reg, LpBall) and reg.p == 1:
        return np.ones(data.M)
    raise FormulationError(
        f"qcqp_l1 solves l1-MKL (p=1) or a weighted-l1 set, not {reg!r}; "
        "use formulation='lp_dual' or 'lp_primal' for other weight sets.")


def build(data: MKLData) -> Model:
    refuse_signed(data, "qcqp_l1")
    v = _scales(data)
    dual = dual_part(data)
    t = cp.Variable(name="t")
    # 1/v_m folded into the factor (not the quadratic): far better conditioned
    scaled = [L / np.sqrt(v_m) for L, v_m in zip(data.factors(), v)]
    quad = [0.5 * s <= t for s in quad_terms(scaled, dual.coef)]
    problem = cp.Problem(cp.Maximize(dual.gain - t), dual.constraints + quad)

    def extract():
        return np.clip(dual_values(quad), 0, None) / v, dual.alpha.value, 0.0

    return Model(problem, extract, data.regularizer)


FORMULATION = Formulation(
    "qcqp_l1", "SOCP", build,
    "l1-MKL QCQP; weights = multipliers of the M quadratic constraints",
    page="qcqp_l1.md")
