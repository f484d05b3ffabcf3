"""ℓp-MKL primal, block view (thesis convention), any block norm :math:`b\\ge1`.

.. math::

    \\min_{w,b,\\xi}\\ \\tfrac12\\Big(\\sum_m \\|w_m\\|^{b}\\Big)^{2/b} + C\\sum_i\\xi_i
    \\quad\\text{s.t.}\\quad y_i\\Big(\\sum_m L_m[i,:]\\,w_m + b\\Big)\\ge1-\\xi_i,\\ \\xi\\ge0.

Equal optimum to the weight view with **weight norm** :math:`p=b/(2-b)` for
:math:`b\\le2`; :math:`b>2` has no weight-norm form and is solved here only.
Pass ``b=`` directly, or ``p=`` (weight norm) to use :math:`b = 2p/(p+1)`.
For :math:`b\\le2` the effective kernel weights are :math:`\\mu_m = \\|w_m\\|/\\sqrt{s_m(\\alpha)}`
(so that :math:`w_m = \\mu_m L_m^\\top(y\\circ\\alpha)`). For :math:`b>2` that form breaks
down (at :math:`b=\\infty` blocks with :math:`L_m^\\top(y\\circ\\alpha)=0` keep :math:`w_m\\ne0`):
the decision function uses per-kernel coefficients (``dual_coef`` of shape (M, n)),
the certificate's upper bound is the primal objective at the solver's :math:`w`
(or the weight-form value when that is tighter), and at :math:`b=\\infty` ``weights``
are the block norms :math:`\\|w_m\\|` (finite :math:`b>2` keeps the effective weights). The lower bound is always
the block-norm dual :math:`1^\\top\\alpha - \\tfrac12\\|(\\sqrt{s_m})_m\\|_{b^*}^2`.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from ..exceptions import FormulationError
from ..regularizers import BlockNorm, LpBall, block_from_weight_norm
from ..regularizers.norms import conic_norm
from ._base import Formulation, MKLData, Model, PrimalPoint, primal_blocks, primal_part


def block_norm(data: MKLData) -> float:
    b = data.params.get("b")
    if b is not None:
        return BlockNorm(b).b
    reg = data.regularizer
    if isinstance(reg, BlockNorm):
        return reg.b
    if not isinstance(reg, LpBall):
        raise FormulationError(f"lp_block_primal needs b=..., regularizer=BlockNorm(b) or an Lp-ball weight set, "
                               f"not {reg!r}.")
    return block_from_weight_norm(reg.p)


def build(data: MKLData, b: float | None = None) -> Model:
    bnorm = block_norm(data) if b is None else BlockNorm(b).b
    blocks, outputs = primal_blocks(data)
    fit = primal_part(data, outputs)
    norms = cp.hstack([cp.norm(w_m, 2) for w_m in blocks])
    block = conic_norm(norms, bnorm, f"block norm b = {bnorm:.6g}") if bnorm != 1 else cp.sum(norms)
    problem = cp.Problem(cp.Minimize(0.5 * cp.square(block) + fit.term), fit.constraints)

    def alpha_value() -> np.ndarray:
        return fit.alpha()

    def extract():
        alpha = alpha_value()
        wn = np.array([np.linalg.norm(w_m.value) for w_m in blocks])
        if np.isinf(bnorm):  # no kernel-weight form at all: report the block norms
            return wn, alpha, fit.offset()
        s, _ = data.kernels.products(data.y * np.clip(alpha, 0, data.C))
        mu = np.where(s > 1e-300, wn / np.sqrt(np.maximum(s, 1e-300)), 0.0)
        return mu, alpha, fit.offset()

    def primal_point() -> PrimalPoint:
        return _function_form(data, [w_m.value for w_m in blocks], bnorm, extract()[0])

    return Model(problem, extract, BlockNorm(bnorm), info={"b": bnorm},
                 primal_point=primal_point if bnorm > 2 else None)


def _function_form(data: MKLData, w_values: list[np.ndarray], bnorm: float,
                   weights: np.ndarray) -> PrimalPoint:
    """Per-kernel coefficients :math:`\\beta_m = L_m \\Lambda_m^{-1} w_m` with :math:`K_m\\beta_m = L_m w_m`.

    The factor's columns are orthogonal with squared norms :math:`\\Lambda_m` (the
    kept eigenvalues), so :math:`K_m\\beta_m = L_m L_m^\\top L_m\\Lambda_m^{-1}w_m = L_m w_m`.
    """
    factors = data.factors()
    outputs = sum(L @ w for L, w in zip(factors, w_values))
    coef = np.stack([L @ (w / np.einsum("ij,ij->j", L, L)) for L, w in zip(factors, w_values)])
    norms = np.array([np.linalg.norm(w) for w in w_values])
    penalty = 0.5 * float(np.linalg.norm(norms, ord=bnorm)) ** 2
    return PrimalPoint(penalty=penalty, outputs=outputs, weights=weights, coef=coef)


FORMULATION = Formulation(
    "lp_block_primal", "SOCP", build,
    "block-norm primal 1/2 ||w||_{2,b}^2 + C sum xi, any b >= 1 (b > 2: primal only)",
    page="lp_block_primal.md", losses=("hinge",))
