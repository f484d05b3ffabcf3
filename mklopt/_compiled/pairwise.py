"""A compiled pairwise (SMO-type) solver for the simplex QPs of :mod:`._simplex_qp`.

.. math::

    \\min_x\\ a\\,(s\\circ x)^\\top K(s\\circ x)+r\\|x\\|^2+c^\\top x
    \\quad\\text{over a product of unit simplices (one per group of coordinates).}

Each step moves mass inside one group from the active coordinate of largest
gradient to the coordinate of smallest gradient, by the exact line minimum (as
libsvm's SMO moves a pair of multipliers); the gradient is updated with two rows
of :math:`K`. It warm-starts from any feasible point, which is what the outer
loops of GRAM and MEMO need: a small change of the weights moves the QP's
solution a little. The answer is certified afterwards by the caller's Frank–Wolfe
gap, computed from scratch; this solver only has to be fast.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .cache import locked_cache
from .layout import frozen

__all__ = ["pairwise_simplex_qp"]


@locked_cache
@njit(cache=True, nogil=True)
def _descend(K, s, a, r, c, group, n_groups, x, tol, max_steps):  # pragma: no cover (compiled)
    n = x.size
    v = s * x
    grad = 2.0 * a * s * (K @ v) + 2.0 * r * x + c
    high = np.empty(n_groups)
    low = np.empty(n_groups)
    arg_high = np.empty(n_groups, dtype=np.int64)
    arg_low = np.empty(n_groups, dtype=np.int64)
    gap = np.inf
    for step in range(max_steps):
        high[:] = -np.inf
        low[:] = np.inf
        for j in range(n):
            g = group[j]
            if x[j] > 0.0 and grad[j] > high[g]:
                high[g], arg_high[g] = grad[j], j
            if grad[j] < low[g]:
                low[g], arg_low[g] = grad[j], j
        best, gap = -1, 0.0
        for g in range(n_groups):
            gap += high[g] - low[g]
            if best < 0 or high[g] - low[g] > high[best] - low[best]:
                best = g
        if gap <= tol:
            return x, step, gap
        i, k = arg_high[best], arg_low[best]
        curvature = a * (K[i, i] + K[k, k] - 2.0 * s[i] * s[k] * K[i, k]) + 2.0 * r
        t = x[i] if curvature <= 0.0 else min(x[i], (grad[i] - grad[k]) / (2.0 * curvature))
        x[i] -= t
        x[k] += t
        si, sk = s[i] * t, s[k] * t
        for j in range(n):
            grad[j] += 2.0 * a * s[j] * (sk * K[k, j] - si * K[i, j])
        grad[i] -= 2.0 * r * t
        grad[k] += 2.0 * r * t
    return x, max_steps, gap


def pairwise_simplex_qp(K: np.ndarray, s: np.ndarray, groups: list[np.ndarray], *, a: float = 1.0,
                        r: float = 0.0, c: np.ndarray | None = None, start: np.ndarray | None = None,
                        rtol: float = 1e-10, max_steps: int | None = None) -> np.ndarray | None:
    """The minimizer (a feasible point), or None when ``max_steps`` did not reach ``rtol``.

    The stop: the sum over groups of (largest active gradient - smallest gradient),
    an upper bound on the Frank–Wolfe gap, at most ``rtol`` times the size of
    the objective's terms.
    """
    n = K.shape[0]
    c = np.zeros(n) if c is None else np.asarray(c, dtype=float)
    group = np.empty(n, dtype=np.int64)
    for index, members in enumerate(groups):
        group[members] = index
    x = np.zeros(n)
    if start is not None and np.all(np.isfinite(start)):
        x[:] = np.clip(start, 0.0, None)
    for members in groups:
        total = x[members].sum()
        x[members] = x[members] / total if total > 0 else 1.0 / members.size
    scale = a * float(np.max(np.abs(np.diag(K)), initial=0.0)) + r + float(np.max(np.abs(c), initial=0.0))
    steps = 200 * n + 1000 if max_steps is None else max_steps
    x, used, gap = _descend(frozen(K), frozen(s), float(a), float(r), frozen(c), frozen(group, np.int64),
                            len(groups), x, rtol * max(scale, np.finfo(float).tiny), steps)
    return x if gap <= rtol * max(scale, np.finfo(float).tiny) else None
