"""Is a candidate's weight vector in Θ? The unit-free violation a certificate reports.

:func:`relative_violation` decides ``feasible`` in :func:`mklopt.certify`;
:func:`convention_hint` names the convention an infeasible candidate seems
to follow (another p, the block norm, the conjugate exponent).
"""

from __future__ import annotations

import numpy as np

from ..regularizers import LpBall, Regularizer, block_from_weight_norm, conjugate_exponent, stable_norm

__all__ = ["FEASIBILITY_TOL", "relative_violation", "convention_hint"]


#: Largest relative violation of Θ (see :func:`relative_violation`) still called feasible.
FEASIBILITY_TOL = 1e-8


def relative_violation(regularizer: Regularizer, weights: np.ndarray, tol: float = FEASIBILITY_TOL) -> float:
    """Violation of Θ by ``weights`` as given, free of units and of the scale of Θ.

    Two parts, the larger is returned. Negative entries count relative to
    :math:`\\max(\\|\\mu\\|_\\infty, \\sigma_\\Theta(u))`, :math:`u = |\\mu|/\\|\\mu\\|_2` (the
    extent of Θ in the candidate's direction, its support function). The rest
    of :math:`\\mu^+ = \\max(\\mu, 0)` counts through the gauge of Θ when
    :math:`0\\in\\Theta`,

    .. math:: \\gamma_\\Theta(\\mu^+) - 1,\\qquad \\gamma_\\Theta(\\mu) = \\min\\{t > 0 : \\mu/t\\in\\Theta\\},

    (how many times too large the candidate is: 5 for (3e-9, 3e-9) in
    :math:`\\{\\mu_1+\\mu_2\\le10^{-9}\\}`), else through the distance to its projection
    relative to the same scale. Constraint values (:meth:`Regularizer.violation`)
    are in whatever units the constraints are written in, so they only
    decide *whether* the candidate is outside; the verdict is the same when
    Θ and the candidate are scaled together. A weight set of signed weights
    (``signed = True``) counts the distance of μ itself to Θ: bracketed first by the set's
    cheap bounds (:meth:`distance_bounds`), and by the projection only when they straddle
    ``tol`` (the projection onto a spectrahedron is an :math:`n\\times n` SDP). Beyond
    ``tol`` the value is then a lower bound on the distance.
    """
    weights = np.asarray(weights, dtype=float)
    if regularizer.violation(weights) <= 0.0:
        return 0.0
    size = float(np.linalg.norm(weights))
    direction = np.abs(weights) / size if size > 0 else np.full(weights.size, weights.size ** -0.5)
    extent = 2.0 * regularizer.dual_penalty(direction)  # sigma_Theta(u)
    scale = max(float(np.max(np.abs(weights))), extent, np.finfo(float).tiny)
    if getattr(regularizer, "signed", False):  # weights of any sign: the distance to Θ alone
        low, high = regularizer.distance_bounds(weights)
        if low / scale > tol or high / scale <= tol:
            return (low if low / scale > tol else high) / scale
        return float(np.max(np.abs(weights - regularizer.project(weights)))) / scale
    negative = float(np.max(-weights, initial=0.0)) / scale
    plus = np.clip(weights, 0.0, None)
    if regularizer.violation(plus) <= 0.0:
        return negative
    if regularizer.contains_zero(weights.size):
        shrunk = regularizer._scale_into(plus, tol=0.0)  # c mu+ with the largest feasible c <= 1
        c = float(np.max(shrunk)) / float(np.max(plus))
        return max(negative, 1.0 / c - 1.0 if c > 0 else np.inf)
    return max(negative, float(np.max(np.abs(plus - regularizer.project(plus)))) / scale)


def convention_hint(regularizer: Regularizer, weights: np.ndarray) -> str:
    """Name the convention an infeasible candidate seems to follow (empty when none fits)."""
    if not isinstance(regularizer, LpBall) or np.any(weights < 0) or not np.any(weights):
        return ""
    p = regularizer.p
    if np.allclose(weights, weights[0]) and np.isclose(weights[0], 1.0):
        return " All weights are 1: an unweighted sum kernel is the p = inf ball."
    guesses = [(block_from_weight_norm(p), "the block norm b = 2p/(p+1) of this p (mklopt's p is "
                "the weight norm; convert with weight_from_block_norm)"),
               (conjugate_exponent(p), "the conjugate exponent p* = p/(p-1)"),
               (1.0, "p = 1"), (4.0 / 3.0, "p = 4/3"), (2.0, "p = 2"), (4.0, "p = 4"),
               (np.inf, "p = inf")]
    for q, label in guesses:
        if q != p and abs(stable_norm(weights, q) - 1.0) <= 1e-6:
            return f" The weights have ||mu||_q = 1 for q = {q:.6g}: they look normalized for {label}."
    return ""
