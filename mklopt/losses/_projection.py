"""Euclidean projection onto a box cut by one hyperplane, the dual set of most losses.

.. math:: \\Pi(a) = \\arg\\min_{l\\le x\\le u,\\ w^\\top x = t} \\|x - a\\|
               = \\mathrm{clip}(a - \\lambda w,\\ l,\\ u),

with :math:`w_i = \\pm1` and the scalar :math:`\\lambda` the root of the monotone,
piecewise-linear residual :math:`w^\\top\\mathrm{clip}(a-\\lambda w, l, u) - t`: a binary
search over its breakpoints, then the exact root on one linear piece.
"""

from __future__ import annotations

import numpy as np

__all__ = ["project_box_hyperplane"]


def project_box_hyperplane(a: np.ndarray, w: np.ndarray, target: float, lower: float,
                           upper: float) -> np.ndarray:
    """Projection of ``a`` onto :math:`\\{l \\le x \\le u,\\ w^\\top x = t\\}`, ``w`` in ±1."""
    a = np.asarray(a, dtype=float)
    # The problem's own scale, not 1: with C = 1e-235 an absolute 1e-14 would accept any alpha.
    scale = max(abs(lower), abs(upper), float(np.max(np.abs(a), initial=0.0)), abs(target))
    if scale == 0.0:
        return np.zeros_like(a)
    if (np.all(a >= lower) and np.all(a <= upper)
            and abs(float(w @ a) - target) <= 1e-14 * scale * a.size):
        return a.copy()

    def residual(lam: float) -> float:
        return float(w @ np.clip(a - lam * w, lower, upper)) - target

    # The residual is piecewise linear and nonincreasing in lambda, with breakpoints where an
    # entry meets a bound: binary search over them, then the exact root on the linear piece
    # (exact at any scale, unlike a bisection on lambda with an absolute resolution).
    knots = np.unique(np.concatenate([w * (a - lower), w * (a - upper)]))
    lo, hi = 0, knots.size - 1
    if residual(knots[lo]) <= 0:
        return np.clip(a - knots[lo] * w, lower, upper)
    if residual(knots[hi]) >= 0:
        return np.clip(a - knots[hi] * w, lower, upper)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if residual(knots[mid]) > 0:
            lo = mid
        else:
            hi = mid
    r_lo, r_hi = residual(knots[lo]), residual(knots[hi])
    lam = knots[lo] + (knots[hi] - knots[lo]) * r_lo / (r_lo - r_hi)
    return _onto_hyperplane(np.clip(a - lam * w, lower, upper), w, target, lower, upper)


def _onto_hyperplane(x: np.ndarray, w: np.ndarray, target: float, lower: float,
                     upper: float) -> np.ndarray:
    """Move entries of ``x`` within the box, in order, until :math:`w^\\top x = t` exactly.

    Needed when the box is far narrower than the entries of ``a`` (``C = 1e-235``
    against ``alpha ~ 1e-10``): the breakpoints then coincide in floating point
    and the root leaves :math:`w^\\top x \\ne t`. Any feasible point keeps the
    certificate's lower bound valid.
    """
    excess = float(w @ x) - target
    if excess == 0.0:
        return x
    direction = -np.sign(excess) * w  # the way each entry must move to reduce |excess|
    room = np.where(direction > 0, upper - x, x - lower)
    need = abs(excess)
    moved = np.minimum(room, np.maximum(need - (np.cumsum(room) - room), 0.0))
    return np.clip(x + direction * moved, lower, upper)
