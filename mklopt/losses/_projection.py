"""Euclidean projection onto a box cut by one hyperplane, the dual set of most losses.

.. math:: \\Pi(a) = \\arg\\min_{l\\le x\\le u,\\ w^\\top x = t} \\|x - a\\|
               = \\mathrm{clip}(a - \\lambda w,\\ l,\\ u),

with :math:`w_i = \\pm1` and the scalar :math:`\\lambda` found by bisection on
the monotone residual :math:`w^\\top\\mathrm{clip}(a-\\lambda w, l, u) - t`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["project_box_hyperplane"]


def project_box_hyperplane(a: np.ndarray, w: np.ndarray, target: float, lower: float,
                           upper: float) -> np.ndarray:
    """Projection of ``a`` onto :math:`\\{l \\le x \\le u,\\ w^\\top x = t\\}`, ``w`` in ±1."""
    a = np.asarray(a, dtype=float)
    scale = max(abs(lower), abs(upper), 1.0)
    if (np.all(a >= lower) and np.all(a <= upper)
            and abs(float(w @ a) - target) <= 1e-14 * scale * a.size):
        return a.copy()

    def residual(lam: float) -> float:
        return float(w @ np.clip(a - lam * w, lower, upper)) - target

    lo = -(scale + float(np.max(np.abs(a))) + abs(target) + 1.0)
    hi = -lo
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if residual(mid) > 0:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-16 * max(1.0, abs(mid)):
            break
    return np.clip(a - 0.5 * (lo + hi) * w, lower, upper)
