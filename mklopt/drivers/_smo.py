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
those that may move down (:mod:`~mklopt.drivers._smo_select`); the step
:math:`\\lambda = \\min(b/a, \\text{room}_i, \\text{room}_j)` is exact. SMO at this μ is optimal
to ``eps`` when :math:`\\max_{up}F - \\min_{low}F \\le` ``eps``.

Each pair needs the columns :math:`K_\\mu[:, r_i]`, :math:`K_\\mu[:, r_j]` (an LRU cache,
valid while μ is fixed) and changes :math:`\\hat g` by
:math:`\\lambda(K_\\mu[:, r_i] - K_\\mu[:, r_j])`; the change of :math:`w` is
accumulated in ``delta`` over the touched points so that the per-kernel
gradients can be brought up to date once per chunk
(:func:`mklopt.kernels.gradient_updates.add_columns`).

**Shrinking** (libsvm's heuristic, Chang & Lin 2011, Sect. 5.1): at the start of a
chunk, :func:`shrink` sets aside the variables at a bound that cannot join a pair:
one that may only rise (it can only be :math:`i`) with :math:`F_t` below
:math:`\\min_{low}F`, one that may only fall (only :math:`j`) with :math:`F_t` above
:math:`\\max_{up}F`. The chunk's pairs, scans, columns and :math:`\\hat g` updates then
run over the active variables and their points only. libsvm must reconstruct the
gradient of the shrunk variables before its final check; here the per-kernel
gradients are kept exact for every point (the flush after each chunk), so
:math:`\\hat g = \\sum_m\\mu_m g_m` is exact again at the start of every chunk and the
active set is chosen afresh from it: a variable set aside wrongly rejoins at the
next chunk, and the certificates never depend on the heuristic.

**Threads**: the scans over the active variables, the :math:`\\hat g` update and the
kernel columns on the fly are split over numba's threads in contiguous blocks
(:data:`PARALLEL_SCAN` variables and up); the blocks' maxima are combined in
block order with the same tie rule as one pass, so the pairs, and the answer,
do not depend on the number of threads.

The on-disk cache of compiled code is invalidated when any mklopt file with compiled
functions changes (:mod:`mklopt.kernels._compile_lock`), not only this one.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..kernels._compile_lock import locked_cache
from ..kernels.column_cache import cached_slot
from ..kernels.kmu_columns import combined_column
from ._smo_select import FALL, PARALLEL_SCAN, RISE, _first_index, _first_range, _moves, _second_index

__all__ = ["smo_chunk", "shrink", "violation", "pair_step", "PARALLEL_SCAN"]

@locked_cache
@njit(cache=True, nogil=True)
def _column(oracle, dots, table, cache, mu, i, points, blocks):
    slot, hit = cached_slot(cache, i)
    column = cache[0][slot]
    if not hit:
        combined_column(oracle, dots, table, mu, i, points, column, blocks)
    return column


@locked_cache
@njit(cache=True, inline="always")
def pair_step(i, j, a, high, rj, signs, base, upper, beta, ghat, state, tau):
    """Move the pair (i, j) by its exact step, clipped to the box; return the step.

    ``a`` is :math:`K(r_i,r_i) + K(r_j,r_j) - 2K(r_i,r_j)` and ``high`` :math:`F_i`; the
    unclipped step is :math:`(F_i - F_j)/a`. ``beta`` and the two variables' moves in
    ``state`` are updated in place.
    """
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
    state[i], state[j] = _moves(signs[i], beta[i], upper[i]), _moves(signs[j], beta[j], upper[j])
    return step


@locked_cache
@njit(cache=True, inline="always")
def kept(moves, F, high, low):
    """libsvm's shrinking rule: keep a free variable, one that may only rise with
    :math:`F \\ge \\min_{low}F` (``low``) and one that may only fall with :math:`F \\le \\max_{up}F` (``high``)."""
    return moves == RISE | FALL or (moves == RISE and F >= low) or (moves == FALL and F <= high)


@locked_cache
@njit(cache=True, nogil=True)
def violation(state, rows, base, ghat):
    """SMO's optimality measure :math:`\\max_{up}F - \\min_{low}F` at fixed weights, over all variables."""
    i, high, low = _first_range(state, rows, base, ghat, np.arange(state.shape[0]), 0, state.shape[0])
    return high - low


@locked_cache
@njit(cache=True, nogil=True)
def shrink(rows, signs, base, upper, beta, ghat, state, active, marks, shrinking):
    """Set every variable's moves in ``state``, write the active variables into ``active[:k]``
    and mark their points; ``(k, violation)``.

    ``ghat`` must be exact at every point. With ``shrinking``, kept: the free
    variables, those that may only rise with :math:`F_t \\ge \\min_{low}F` and those
    that may only fall with :math:`F_t \\le \\max_{up}F`; without, all. The violation
    is over all variables.
    """
    for t in range(beta.shape[0]):
        state[t] = _moves(signs[t], beta[t], upper[t])
    i, high, low = _first_range(state, rows, base, ghat, np.arange(beta.shape[0]), 0, beta.shape[0])
    k = 0
    for t in range(beta.shape[0]):
        F, moves = base[t] - ghat[rows[t]], state[t]
        if not shrinking or kept(moves, F, high, low):
            active[k] = t
            marks[rows[t]] = True
            k += 1
    return k, high - low


@locked_cache
@njit(cache=True, nogil=True, parallel=True)
def _update_blocks(ghat, step, Ki, Kj, points, blocks):
    size = (points.shape[0] + blocks - 1) // blocks
    for b in prange(blocks):
        for k in range(b * size, min((b + 1) * size, points.shape[0])):
            t = points[k]
            ghat[t] += step * (Ki[t] - Kj[t])


@locked_cache
@njit(cache=True, nogil=True)
def _update(ghat, step, Ki, Kj, points, blocks):
    """:math:`\\hat g \\mathrel{+}= \\lambda (K_\\mu[:, r_i] - K_\\mu[:, r_j])` at ``points``."""
    if blocks > 1 and points.shape[0] >= 4 * PARALLEL_SCAN:
        _update_blocks(ghat, step, Ki, Kj, points, blocks)
    else:
        for t in points:
            ghat[t] += step * (Ki[t] - Kj[t])


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
def smo_chunk(oracle, dots, table, cache, mu, rows, signs, base, upper, beta, ghat, dmu, state, active,
              points, delta, touched, count, max_pairs, eps, blocks=1, tau=1e-12):
    """Up to ``max_pairs`` SMO updates of the variables ``active`` at weights ``mu``;
    ``(pairs, violation over the active variables)``.

    ``state`` holds each variable's moves (set by :func:`shrink`, kept here);
    ``points`` must hold the points of the active variables (it may hold more: the
    columns and ``ghat`` are kept at all of them). ``beta`` and ``ghat`` are updated
    in place; ``delta`` accumulates the change of the point weights :math:`w`,
    ``touched``/``count`` list the points it touched (``count[0]`` of them, in
    ``count[1:]``). Stops early when the active violation is at most ``eps``. ``blocks``:
    the threads over which long scans, updates and columns are split.
    """
    pairs, gap = 0, np.inf
    while pairs < max_pairs:
        i, high, gap = _first_index(state, rows, base, ghat, active, blocks)
        if i < 0 or gap <= eps:
            break
        ri = rows[i]
        Ki = _column(oracle, dots, table, cache, mu, ri, points, blocks)
        j = _second_index(state, rows, base, ghat, high, Ki, ri, dmu, tau, active, blocks)
        if j < 0:
            break
        rj = rows[j]
        step = pair_step(i, j, dmu[ri] + dmu[rj] - 2.0 * Ki[rj], high, rj, signs, base, upper, beta,
                         ghat, state, tau)
        if ri != rj:  # two variables of one point (SVR's pair) leave w as it is
            Kj = _column(oracle, dots, table, cache, mu, rj, points, blocks)
            _update(ghat, step, Ki, Kj, points, blocks)
            _record(delta, touched, count, ri, step)
            _record(delta, touched, count, rj, -step)
        pairs += 1
    return pairs, gap
