"""The compiled α-step of interleaved MKL: SMO pair updates at fixed weights (the Large n guide).

At weights μ the loss's dual is libsvm's general problem (Chang & Lin, "LIBSVM: a library
for support vector machines", ACM TIST 2011, Sect. 4.1; :class:`~mklopt.losses.smo_form.SmoForm`)

.. math::

    \\min_\\beta\\ \\tfrac12 \\beta^\\top Q \\beta + p^\\top \\beta \\quad\\text{s.t.}\\quad
    s^\\top\\beta = \\Delta,\\ 0 \\le \\beta \\le u, \\qquad Q_{tv} = s_t s_v K_\\mu[r_t, r_v],

each variable tied to a data point :math:`r_t` (the hinge: :math:`\\beta = \\alpha`, :math:`s = y`,
:math:`p = -1`; ε-SVR two variables per point; one-class :math:`s = 1`, :math:`p = 0`). With the
combined gradient :math:`\\hat g = K_\\mu w`, :math:`w_k = \\sum_{r_t = k} s_t\\beta_t` (the point
weights, :math:`y\\circ\\alpha` for the hinge), write :math:`F_t = -s_t p_t - \\hat g_{r_t}`. The
pair is libsvm's (Fan, Chen & Lin 2005): :math:`i` maximizes :math:`F` over the variables that
may move up, :math:`j` maximizes the second-order gain :math:`b^2/a`,
:math:`b = F_i - F_j > 0`, :math:`a = K_\\mu(r_i,r_i) + K_\\mu(r_j,r_j) - 2K_\\mu(r_i,r_j)`, over
those that may move down; the step :math:`\\lambda = \\min(b/a, \\text{room}_i, \\text{room}_j)`
is exact. SMO at this μ is optimal to ``eps`` when :math:`\\max_{up}F - \\min_{low}F \\le`
``eps``.

Each pair needs the columns :math:`K_\\mu[:, r_i]`, :math:`K_\\mu[:, r_j]` (an LRU cache,
valid while μ is fixed) and changes :math:`\\hat g` by
:math:`\\lambda(K_\\mu[:, r_i] - K_\\mu[:, r_j])`; the change of :math:`w` is
accumulated in ``delta`` over the touched points so that the per-kernel
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
def _first_index(rows, signs, base, upper, beta, ghat):
    """``(i, F_i, violation)``: the maximal F over variables that may rise, and max F - min F."""
    i, high, low = -1, -np.inf, np.inf
    for t in range(beta.shape[0]):
        F = base[t] - ghat[rows[t]]
        b, u = beta[t], upper[t]
        # written out, not as helper calls: numba does not inline them (4x slower passes)
        if signs[t] > 0.0:
            rise, fall = b < u, b > 0.0
        else:
            rise, fall = b > 0.0, b < u
        if rise and F > high:
            i, high = t, F
        if fall and F < low:
            low = F
    return i, high, high - low


@locked_cache
@njit(cache=True, nogil=True)
def violation(rows, signs, base, upper, beta, ghat):
    """SMO's optimality measure :math:`\\max_{up}F - \\min_{low}F` at fixed weights."""
    return _first_index(rows, signs, base, upper, beta, ghat)[2]


@locked_cache
@njit(cache=True, nogil=True)
def _second_index(rows, signs, base, upper, beta, ghat, high, Ki, ri, dmu, tau):
    j, best = -1, -np.inf
    for t in range(beta.shape[0]):
        if not ((beta[t] > 0.0) if signs[t] > 0.0 else (beta[t] < upper[t])):  # may fall
            continue
        rt = rows[t]
        b = high - (base[t] - ghat[rt])
        if b <= 0.0:
            continue
        a = dmu[ri] + dmu[rt] - 2.0 * Ki[rt]
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
def smo_chunk(oracle, dots, table, cache, mu, rows, signs, base, upper, beta, ghat, dmu, delta,
              touched, count, max_pairs, eps, tau=1e-12):
    """Up to ``max_pairs`` SMO updates at weights ``mu``; ``(pairs, violation)``.

    ``beta`` and ``ghat`` are updated in place; ``delta`` accumulates the change
    of the point weights :math:`w`, ``touched``/``count`` list the points it touched
    (``count[0]`` of them, in ``count[1:]``). Stops early when the violation is
    at most ``eps`` (SMO optimal at these weights).
    """
    pairs, gap = 0, np.inf
    while pairs < max_pairs:
        i, high, gap = _first_index(rows, signs, base, upper, beta, ghat)
        if i < 0 or gap <= eps:
            break
        ri = rows[i]
        Ki = _column(oracle, dots, table, cache, mu, ri)
        j = _second_index(rows, signs, base, upper, beta, ghat, high, Ki, ri, dmu, tau)
        if j < 0:
            break
        rj = rows[j]
        a = dmu[ri] + dmu[rj] - 2.0 * Ki[rj]
        step = (high - (base[j] - ghat[rj])) / (a if a > 0.0 else tau)
        room_i = upper[i] - beta[i] if signs[i] > 0.0 else beta[i]
        room_j = beta[j] if signs[j] > 0.0 else upper[j] - beta[j]
        step = min(step, room_i, room_j)
        if step == room_i:  # exactly at the bound, not within rounding of it
            beta[i] = upper[i] if signs[i] > 0.0 else 0.0
        else:
            beta[i] += signs[i] * step
        if step == room_j:
            beta[j] = 0.0 if signs[j] > 0.0 else upper[j]
        else:
            beta[j] -= signs[j] * step
        if ri != rj:  # two variables of one point (SVR's pair) leave w as it is
            Kj = _column(oracle, dots, table, cache, mu, rj)
            for t in range(ghat.shape[0]):
                ghat[t] += step * (Ki[t] - Kj[t])
            _record(delta, touched, count, ri, step)
            _record(delta, touched, count, rj, -step)
        pairs += 1
    return pairs, gap
