"""Compiled SMO for one SVM-type dual on a dense kernel matrix (the inner SVM of the outer loops).

Every loss with an SMO form (:meth:`mklopt.losses.Loss.smo_forms`) states its dual at fixed
weights as libsvm's general problem (Chang & Lin, "LIBSVM: a library for support vector
machines", ACM TIST 2011, Sect. 4.1):

.. math::

    \\min_\\beta\\ \\tfrac12 \\beta^\\top Q \\beta + p^\\top \\beta \\quad\\text{s.t.}\\quad
    s^\\top\\beta = \\Delta,\\ 0 \\le \\beta \\le u, \\qquad Q_{tv} = s_t s_v K[r_t, r_v],

with signs :math:`s_t = \\pm 1` and each variable tied to the data point :math:`r_t` (SVR has two
variables per point). Keeping :math:`\\hat g = K w`, :math:`w_k = \\sum_{r_t = k} s_t \\beta_t`,
write :math:`F_t = -s_t p_t - \\hat g_{r_t}`. The pair is libsvm's second-order choice (Fan, Chen
& Lin, JMLR 2005): :math:`i` maximizes :math:`F` over the variables that may move up, :math:`j`
maximizes :math:`b^2/a` (:math:`b = F_i - F_j > 0`) over those that may move down; the step is
exact and clipped to the box. Optimal to ``eps`` when :math:`\\max_{up}F - \\min_{low}F \\le` ``eps``.
Variables stuck at a bound leave the pair search (shrinking) and are checked again
before the solver stops.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..kernels._compile_lock import locked_cache

__all__ = ["smo_qp"]


@locked_cache
@njit(cache=True)
def _first(active, n_active, rows, signs, base, upper, beta, ghat):
    """``(i, F_i, violation, low)`` over the active variables: the maximal F over those that
    may rise, max F - min F, and the minimal F over those that may fall."""
    i, high, low = -1, -np.inf, np.inf
    for a in range(n_active):
        t = active[a]
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
    return i, high, high - low, low


@locked_cache
@njit(cache=True)
def _second(K, diag, active, n_active, rows, signs, base, upper, beta, ghat, i, high, tau):
    j, best, ri = -1, -np.inf, rows[i]
    Ki, kii = K[ri], diag[ri]
    for a in range(n_active):
        t = active[a]
        b = beta[t]
        if not ((b > 0.0) if signs[t] > 0.0 else (b < upper[t])):  # may fall
            continue
        rt = rows[t]
        gain = high - (base[t] - ghat[rt])
        if gain <= 0.0:
            continue
        a_tt = kii + diag[rt] - 2.0 * Ki[rt]
        gain = gain * gain / (a_tt if a_tt > 0.0 else tau)
        if gain > best:
            j, best = t, gain
    return j


@locked_cache
@njit(cache=True)
def _shrink(active, n_active, rows, signs, base, upper, beta, ghat, high, low):
    """Drop the variables at a bound that neither end of the pair rule can pick (libsvm's
    shrinking, Joachims 1999): one that may only rise with F below every F that may fall, one
    that may only fall with F above every F that may rise. Returns the new active count."""
    kept = 0
    for a in range(n_active):
        t = active[a]
        F = base[t] - ghat[rows[t]]
        b, u = beta[t], upper[t]
        if signs[t] > 0.0:
            rise, fall = b < u, b > 0.0
        else:
            rise, fall = b > 0.0, b < u
        if (rise and not fall and F < low) or (fall and not rise and F > high):
            continue
        active[kept] = t
        kept += 1
    return kept


@locked_cache
@njit(cache=True)
def smo_qp(K, rows, signs, base, upper, beta, ghat, eps, max_pairs, tau=1e-12):
    """Up to ``max_pairs`` SMO pair updates with shrinking; ``(pairs, violation)``.

    ``beta`` and ``ghat`` (:math:`K w`, length n) are updated in place; ``base`` is
    :math:`-s\\circ p`. Stops when the violation over *all* variables is at most
    ``eps``: the gradient is kept exact for every point, so a shrunk variable is
    checked again without reconstruction.
    """
    n_var = beta.shape[0]
    diag = np.empty(K.shape[0])
    for k in range(K.shape[0]):
        diag[k] = K[k, k]
    active = np.arange(n_var)
    n_active, interval = n_var, min(n_var, 1000)
    pairs, gap, countdown = 0, np.inf, interval
    while pairs < max_pairs:
        i, high, gap, low = _first(active, n_active, rows, signs, base, upper, beta, ghat)
        if i < 0 or gap <= eps:
            if n_active == n_var:
                break
            n_active = n_var  # optimal on the active set: check every variable
            for t in range(n_var):
                active[t] = t
            countdown = interval
            continue
        countdown -= 1
        if countdown <= 0:
            n_active = _shrink(active, n_active, rows, signs, base, upper, beta, ghat, high, low)
            countdown = interval
        j = _second(K, diag, active, n_active, rows, signs, base, upper, beta, ghat, i, high, tau)
        if j < 0:
            break
        ri, rj = rows[i], rows[j]
        a = diag[ri] + diag[rj] - 2.0 * K[ri, rj]
        step = (high - (base[j] - ghat[rj])) / (a if a > 0.0 else tau)
        room_i = upper[i] - beta[i] if signs[i] > 0 else beta[i]
        room_j = beta[j] if signs[j] > 0 else upper[j] - beta[j]
        step = min(step, room_i, room_j)
        if step == room_i:  # exactly at the bound, not within rounding of it
            beta[i] = upper[i] if signs[i] > 0 else 0.0
        else:
            beta[i] += signs[i] * step
        if step == room_j:
            beta[j] = 0.0 if signs[j] > 0 else upper[j]
        else:
            beta[j] -= signs[j] * step
        if ri != rj:
            Ki, Kj = K[ri], K[rj]  # rows of the symmetric K: contiguous
            for k in range(ghat.shape[0]):
                ghat[k] += step * (Ki[k] - Kj[k])
        pairs += 1
    return pairs, gap
