"""The compiled α-step of interleaved MKL: SMO pair updates at fixed weights (the Large n guide).

At weights μ the SVM dual is :math:`\\max\\, 1^\\top\\alpha - \\tfrac12 (y\\circ\\alpha)^\\top
K_\\mu (y\\circ\\alpha)` over :math:`0\\le\\alpha\\le C`, :math:`y^\\top\\alpha=0`. With the
combined gradient :math:`\\hat g = K_\\mu(y\\circ\\alpha)` write :math:`F_t = y_t - \\hat g_t`.
Moving :math:`y\\circ\\alpha` by :math:`\\lambda(e_i - e_j)` keeps :math:`y^\\top\\alpha = 0` and
raises the dual by :math:`\\lambda b - \\tfrac12\\lambda^2 a` with :math:`b = F_i - F_j`,
:math:`a = K_\\mu(i,i) + K_\\mu(j,j) - 2K_\\mu(i,j)`. The pair is libsvm's (Fan, Chen &
Lin 2005): :math:`i` maximizes :math:`F` over the indices that may move up, :math:`j`
maximizes the second-order gain :math:`b^2/a` over those that may move down with
:math:`F_j < F_i`; the step :math:`\\lambda = \\min(b/a, \\text{room}_i, \\text{room}_j)` is
exact. SMO at this μ is optimal to ``eps`` when :math:`\\max_{up}F - \\min_{low}F \\le`
``eps``.

Each pair needs the columns :math:`K_\\mu[:, i]`, :math:`K_\\mu[:, j]` (an LRU cache,
valid while μ is fixed) and changes :math:`\\hat g` by
:math:`\\lambda(K_\\mu[:, i] - K_\\mu[:, j])`; the change of :math:`y\\circ\\alpha` is
accumulated in ``delta`` over the touched indices so that the per-kernel
gradients can be brought up to date once per chunk
(:func:`mklopt.kernels.columns.add_columns`).

The on-disk cache of compiled code is invalidated when any mklopt file with compiled
functions changes (:mod:`mklopt.kernels._compile_lock`), not only this one.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..kernels._compile_lock import locked_cache
from ..kernels.columns import cached_slot, combined_column

__all__ = ["smo_chunk", "violation"]


@locked_cache
@njit(cache=True, nogil=True)
def _column(oracle, dots, table, cache, mu, i):
    slot, hit = cached_slot(cache, i)
    column = cache[0][slot]
    if not hit:
        combined_column(oracle, dots, table, mu, i, column)
    return column


@locked_cache
@njit(cache=True, nogil=True)
def _first_index(y, alpha, ghat, C):
    """``(i, F_i, violation)``: the maximal F over indices that may rise, and max F - min F."""
    i, high, low = -1, -np.inf, np.inf
    for t in range(y.shape[0]):
        F = y[t] - ghat[t]
        a = alpha[t]
        # written out, not as helper calls: numba does not inline them (4x slower passes)
        if y[t] > 0:
            rise, fall = a < C, a > 0.0
        else:
            rise, fall = a > 0.0, a < C
        if rise and F > high:
            i, high = t, F
        if fall and F < low:
            low = F
    return i, high, high - low


@locked_cache
@njit(cache=True, nogil=True)
def violation(y, alpha, ghat, C):
    """SMO's optimality measure :math:`\\max_{up}F - \\min_{low}F` at fixed weights."""
    return _first_index(y, alpha, ghat, C)[2]


@locked_cache
@njit(cache=True, nogil=True)
def _second_index(y, alpha, ghat, C, high, Ki, i, dmu, tau):
    j, best = -1, -np.inf
    for t in range(y.shape[0]):
        if not ((alpha[t] > 0.0) if y[t] > 0 else (alpha[t] < C)):  # may fall
            continue
        b = high - (y[t] - ghat[t])
        if b <= 0.0:
            continue
        a = dmu[i] + dmu[t] - 2.0 * Ki[t]
        gain = b * b / (a if a > 0.0 else tau)
        if gain > best:
            j, best = t, gain
    return j


@locked_cache
@njit(cache=True, nogil=True)
def _record(delta, touched, count, t, change):
    if not touched[t]:
        touched[t] = True
        count[1 + count[0]] = t
        count[0] += 1
    delta[t] += change


@locked_cache
@njit(cache=True, nogil=True)
def smo_chunk(oracle, dots, table, cache, mu, y, C, alpha, ghat, dmu, delta, touched, count,
              max_pairs, eps, tau=1e-12):
    """Up to ``max_pairs`` SMO updates at weights ``mu``; ``(pairs, violation)``.

    ``alpha`` and ``ghat`` are updated in place; ``delta`` accumulates the change
    of :math:`y\\circ\\alpha`, ``touched``/``count`` list the indices it touched
    (``count[0]`` of them, in ``count[1:]``). Stops early when the violation is
    at most ``eps`` (SMO optimal at these weights).
    """
    pairs, gap = 0, np.inf
    while pairs < max_pairs:
        i, high, gap = _first_index(y, alpha, ghat, C)
        if i < 0 or gap <= eps:
            break
        Ki = _column(oracle, dots, table, cache, mu, i)
        j = _second_index(y, alpha, ghat, C, high, Ki, i, dmu, tau)
        if j < 0:
            break
        Kj = _column(oracle, dots, table, cache, mu, j)
        a = dmu[i] + dmu[j] - 2.0 * Ki[j]
        step = (high - (y[j] - ghat[j])) / (a if a > 0.0 else tau)
        room_i = C - alpha[i] if y[i] > 0 else alpha[i]
        room_j = alpha[j] if y[j] > 0 else C - alpha[j]
        step = min(step, room_i, room_j)
        if step == room_i:  # exactly at the bound, not within rounding of it
            alpha[i] = C if y[i] > 0 else 0.0
        else:
            alpha[i] += y[i] * step
        if step == room_j:
            alpha[j] = 0.0 if y[j] > 0 else C
        else:
            alpha[j] -= y[j] * step
        for t in range(ghat.shape[0]):
            ghat[t] += step * (Ki[t] - Kj[t])
        _record(delta, touched, count, i, step)
        _record(delta, touched, count, j, -step)
        pairs += 1
    return pairs, gap
