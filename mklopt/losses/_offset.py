"""Exact best offset of a piecewise-linear loss sum: one sort and one scan.

.. math:: h(b) = \\sum_i h_i(b), \\qquad h_i \\text{ convex, piecewise linear,}

is described by its breakpoints :math:`c_k`, the slope increase :math:`d_k > 0`
at each, and its slope :math:`s_0` left of all of them. The slope right of
the k-th sorted breakpoint is :math:`s_0 + \\sum_{j\\le k} d_j`, nondecreasing;
the minimum is at the first breakpoint where it turns nonnegative (the
midpoint of the segment when the slope is zero on it, as for the hinge's
:func:`~mklopt.certificates.best_bias`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["minimize_piecewise_linear"]


def minimize_piecewise_linear(breaks: np.ndarray, jumps: np.ndarray, base_slope: float,
                              value: Callable[[float], float]) -> tuple[float, float]:
    """``(b*, h(b*))`` for the convex piecewise-linear ``h`` described above.

    ``value(b)`` evaluates :math:`h`. When the slope right of the chosen
    breakpoint is zero (up to rounding), the midpoint of that flat segment is
    evaluated too and the smaller value is kept (the midpoint on a tie), so rounding
    in the slope sums cannot pick a worse point.
    """
    order = np.argsort(breaks, kind="stable")
    c = np.asarray(breaks, dtype=float)[order]
    slope = base_slope + np.cumsum(np.asarray(jumps, dtype=float)[order])
    scale = max(abs(base_slope), float(np.max(np.abs(slope))), 1.0)
    k = int(np.searchsorted(slope, -1e-12 * scale, side="left"))
    k = min(k, c.size - 1)
    candidates = [float(c[k])]
    if abs(slope[k]) <= 1e-12 * scale and k + 1 < c.size:
        # flat segment: its midpoint, first, so that it is kept on a tie (libsvm's offset where no
        # variable is free); the segment's end is as good, but at the edge of every residual's tube
        candidates.insert(0, 0.5 * (float(c[k]) + float(c[k + 1])))
    values = [value(b) for b in candidates]
    best = int(np.argmin(values))
    return candidates[best], values[best]
