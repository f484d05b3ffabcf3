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

from .cache import locked_cache
from .smo import pair_step
from .smo_select import _first_range, _moves, _second_range, kept

__all__ = ["smo_qp"]

# The pair scans and the shrinking rule are the interleaved core's (:mod:`mklopt._compiled.smo`),
# on a dense K: the column of i is the row K[r_i], the diagonal plays dmu.


@locked_cache
@njit(cache=True, nogil=True)
def _shrink(active, n_active, state, rows, base, ghat, high, low):
    """Drop the active variables at a bound that neither end of the pair rule can pick
    (libsvm's shrinking, :func:`mklopt._compiled.smo_select.kept`). Returns the new active count."""
    count = 0
    for a in range(n_active):
        t = active[a]
        if kept(state[t], base[t] - ghat[rows[t]], high, low):
            active[count] = t
            count += 1
    return count


@locked_cache
@njit(cache=True, nogil=True)
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
    active, state = np.arange(n_var), np.empty(n_var, dtype=np.int8)
    for t in range(n_var):
        state[t] = _moves(signs[t], beta[t], upper[t])
    n_active, interval = n_var, min(n_var, 1000)
    pairs, gap, countdown = 0, np.inf, interval
    while pairs < max_pairs:
        i, high, low = _first_range(state, rows, base, ghat, active, 0, n_active)
        gap = high - low
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
            n_active = _shrink(active, n_active, state, rows, base, ghat, high, low)
            countdown = interval
        j = _second_range(state, rows, base, ghat, high, K[rows[i]], rows[i], diag, tau, active, 0, n_active)[0]
        if j < 0:
            break
        ri, rj = rows[i], rows[j]
        step = pair_step(i, j, diag[ri] + diag[rj] - 2.0 * K[ri, rj], high, rj, signs, base, upper, beta,
                         ghat, state, tau)
        if ri != rj:
            Ki, Kj = K[ri], K[rj]  # rows of the symmetric K: contiguous
            for k in range(ghat.shape[0]):
                ghat[k] += step * (Ki[k] - Kj[k])
        pairs += 1
    return pairs, gap
