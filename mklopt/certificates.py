"""Duality-gap certificates for any MKL candidate (DESIGN §6).

Given weights :math:`\\mu` and dual coefficients :math:`\\alpha` from *any*
solver, mklopt computes by itself

.. math::

    P &= \\tfrac12 \\sum_m \\mu_m s_m(\\alpha)
         + C \\sum_i \\max\\bigl(0,\\ 1 - y_i (f_i + b^*)\\bigr),
         \\qquad f = K_\\mu (y\\circ\\alpha),\\\\
    G &= 1^\\top\\alpha - \\tfrac12 \\sigma_\\Theta\\bigl(s(\\alpha)\\bigr),

after scaling :math:`\\mu` into Θ and projecting :math:`\\alpha` onto
:math:`\\{0\\le\\alpha\\le C,\\ y^\\top\\alpha=0\\}`, with :math:`b^*` the exact
minimizer of the hinge sum (checked at the breakpoints :math:`b = y_i - f_i`).
Weak duality gives :math:`G \\le \\mathrm{OPT} \\le P`.
"""

from __future__ import annotations

import numpy as np

from ._validation import as_kernel_set, check_C, check_labels, check_vector
from .kernels import KernelSet, quadratic_terms
from .regularizers import Regularizer, as_regularizer
from .result import Certificate

__all__ = ["certify", "certificate", "primal_point_certificate", "project_alpha", "best_bias",
           "hinge_sum"]


def project_alpha(alpha: np.ndarray, y: np.ndarray, C: float) -> np.ndarray:
    """Euclidean projection onto :math:`\\{0 \\le \\alpha \\le C,\\ y^\\top\\alpha = 0\\}`.

    The projection is :math:`\\mathrm{clip}(\\alpha - \\lambda y, 0, C)` with the
    scalar :math:`\\lambda` found by bisection on the monotone residual.
    """
    a = np.asarray(alpha, dtype=float)
    if np.all(a >= 0) and np.all(a <= C) and abs(float(y @ a)) <= 1e-14 * max(C, 1.0) * a.size:
        return a.copy()

    def residual(lam: float) -> float:
        return float(y @ np.clip(a - lam * y, 0.0, C))

    lo = -(C + float(np.max(np.abs(a))) + 1.0)
    hi = -lo
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if residual(mid) > 0:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-16 * max(1.0, abs(mid)):
            break
    return np.clip(a - 0.5 * (lo + hi) * y, 0.0, C)


def hinge_sum(margins_offset: np.ndarray, y: np.ndarray, b: float) -> float:
    """:math:`\\sum_i \\max(0, 1 - y_i(f_i + b))` for ``margins_offset = f``."""
    return float(np.sum(np.maximum(0.0, 1.0 - y * (margins_offset + b))))


def best_bias(f: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Exact minimizer of :math:`h(b) = \\sum_i \\max(0, 1 - y_i(f_i + b))`.

    :math:`h` is convex piecewise linear with breakpoints :math:`c_i = y_i - f_i`;
    with :math:`P = \\{i: y_i = 1\\}`, :math:`N = \\{i: y_i=-1\\}`,
    :math:`h(b) = \\sum_{P}(c_i - b)_+ + \\sum_{N}(b - c_i)_+`. All breakpoints
    are evaluated at once with sorted prefix sums (O(n log n)); when the
    minimum is attained on an interval its midpoint is returned.

    Returns
    -------
    (b, h(b))
    """
    c = y - f
    pos, neg = np.sort(c[y > 0]), np.sort(c[y < 0])
    cand = np.sort(c)
    pos_cum = np.concatenate(([0.0], np.cumsum(pos)))
    neg_cum = np.concatenate(([0.0], np.cumsum(neg)))
    # positive terms active where pos > b: count and sum above b
    k_pos = np.searchsorted(pos, cand, side="right")
    pos_part = (pos_cum[-1] - pos_cum[k_pos]) - cand * (pos.size - k_pos)
    k_neg = np.searchsorted(neg, cand, side="left")
    neg_part = cand * k_neg - neg_cum[k_neg]
    h = pos_part + neg_part
    hmin = float(np.min(h))
    flat = cand[h <= hmin + 1e-12 * max(1.0, abs(hmin))]
    b = 0.5 * (float(flat[0]) + float(flat[-1]))
    return b, hinge_sum(f, y, b)


def certificate(kernels: KernelSet, y: np.ndarray, weights: np.ndarray, alpha: np.ndarray,
                C: float, regularizer: Regularizer) -> Certificate:
    """Certificate for validated inputs (``y`` in +-1); see :func:`certify`.

    One pass over the kernel stack (restricted to support vectors) yields all
    :math:`s_m` and :math:`K_m(y\\circ\\alpha)`; :math:`f` is their weighted sum.
    """
    mu = regularizer.into_set(weights)
    a = project_alpha(alpha, y, C)
    coef = y * a
    s, Kc = quadratic_terms(kernels.K, coef, kernels.symmetric)
    f = mu @ Kc
    bias, hinge = best_bias(f, y)
    primal = regularizer.primal_penalty(mu, s) + C * hinge
    dual = float(np.sum(a)) - regularizer.dual_penalty(s)
    gap = primal - dual
    return Certificate(primal=primal, dual=dual, gap=gap,
                       rel_gap=gap / max(1.0, abs(primal)), bias=bias, weights=mu, alpha=a, s=s)


def primal_point_certificate(kernels: KernelSet, y: np.ndarray, C: float, alpha: np.ndarray,
                             regularizer: Regularizer, point) -> Certificate:
    """Certificate whose upper bound comes from an explicit primal point.

    For formulations whose primal solution has no kernel-weight form (block
    norms :math:`b > 2`): ``point`` gives the regularization value
    :math:`R(w)`, the training outputs :math:`f = \\sum_m L_m w_m`, the reported
    weights and the per-kernel coefficients :math:`\\beta` with
    :math:`K_m\\beta_m = L_m w_m`. Then :math:`P = R(w) + C\\min_b\\sum_i
    \\max(0, 1-y_i(f_i+b))` and :math:`G = 1^\\top\\alpha - \\text{dual_penalty}(s(\\alpha))`.
    """
    a = project_alpha(alpha, y, C)
    s, _ = quadratic_terms(kernels.K, y * a, kernels.symmetric)
    bias, hinge = best_bias(point.outputs, y)
    primal = point.penalty + C * hinge
    dual = float(np.sum(a)) - regularizer.dual_penalty(s)
    gap = primal - dual
    return Certificate(primal=primal, dual=dual, gap=gap, rel_gap=gap / max(1.0, abs(primal)),
                       bias=bias, weights=point.weights, alpha=a, s=s, dual_coef=point.coef)


def certify(kernels, y, weights, alpha, *, C: float = 1.0, p: float = 1.0,
            regularizer: Regularizer | None = None) -> Certificate:
    """Certify any candidate ``(weights, alpha)`` with a primal value, a dual value and their gap.

    Parameters
    ----------
    kernels : KernelSet or array (M, n, n)
    y : array (n,)
        Two-class labels (any two values; the larger maps to +1).
    weights : array (M,)
        Candidate kernel weights; scaled into Θ if slightly outside.
    alpha : array (n,)
        Candidate dual coefficients; projected onto the dual-feasible set.
    C : float
        Soft-margin constant.
    p : float
        Weight norm (Θ = {μ >= 0, ||μ||_p <= 1}) when ``regularizer`` is None.
    regularizer : Regularizer, optional
        Any weight set Θ.

    Returns
    -------
    Certificate
        ``dual <= OPT <= primal``; ``rel_gap = (primal - dual) / max(1, |primal|)``.
    """
    ks = as_kernel_set(kernels)
    y_pm, _ = check_labels(y, ks.n)
    C = check_C(C)
    reg = as_regularizer(regularizer, p)
    weights = check_vector(weights, ks.M, "weights")
    alpha = check_vector(alpha, ks.n, "alpha")
    return certificate(ks, y_pm, weights, alpha, C, reg)
