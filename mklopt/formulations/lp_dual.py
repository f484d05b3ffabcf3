"""ℓp-MKL (any Θ with a closed-form support function), dual form.

.. math::

    \\max_{\\alpha, u}\\ D_\\ell(\\alpha) - \\sigma_\\Theta(u)
    \\quad\\text{s.t.}\\quad \\tfrac12 s_m(\\alpha) \\le u_m,\\ \\alpha\\in A_\\ell,

for any loss (hinge: :math:`D = 1^\\top\\alpha`,
:math:`A = \\{0\\le\\alpha\\le C,\\ y^\\top\\alpha=0\\}`).

For :math:`\\Theta=\\{\\|\\mu\\|_p\\le1\\}`, :math:`\\sigma_\\Theta(u)=\\|u\\|_{p^*}`
(``p`` the weight norm): p = 1 is the QCQP, p = ∞ the SVM on the sum
kernel. The epigraph variables :math:`u` make the weights the multipliers
of the quadratic constraints, :math:`\\mu\\in\\partial\\sigma_\\Theta(u)`, which
is exact even when several kernels tie (p = 1).
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from ..exceptions import FormulationError
from ._base import Formulation, MKLData, Model, refuse_signed, dual_part, dual_values, quad_terms


def build(data: MKLData) -> Model:
    refuse_signed(data, "lp_dual")
    reg = data.regularizer
    if not reg.has_support_expr:
        raise FormulationError(
            f"lp_dual needs a closed-form support function, which {reg!r} does not have; "
            "use formulation='lp_primal' (its certificate still computes the exact dual value).")
    dual = dual_part(data)
    u = cp.Variable(data.M, name="u")
    quad = [0.5 * s <= u[m] for m, s in enumerate(quad_terms(data.factors(), dual.coef))]
    problem = cp.Problem(cp.Maximize(dual.gain - reg.support_expr(u)), dual.constraints + quad)

    def extract():
        return np.clip(dual_values(quad), 0, None), dual.alpha.value, 0.0

    return Model(problem, extract, reg)


FORMULATION = Formulation(
    "lp_dual", "SOCP", build,
    "lp-MKL dual max 1'a - 1/2 sigma_Theta(s(a)); weights = multipliers",
    page="lp_dual.md")
