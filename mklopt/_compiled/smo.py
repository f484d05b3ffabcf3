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
those that may move down (:mod:`~mklopt._compiled.smo_select`); the step
:math:`\\lambda = \\min(b/a, \\text{room}_i, \\text{room}_j)` is exact. SMO at this μ is optimal
to ``eps`` when :math:`\\max_{up}F - \\min_{low}F \\le` ``eps``.

Each pair needs the columns :math:`K_\\mu[:, r_i]`, :math:`K_\\mu[:, r_j]` (an LRU cache,
valid while μ is fixed) and changes :math:`\\hat g` by
:math:`\\lambda(K_\\mu[:, r_i] - K_\\mu[:, r_j])`; the change of :math:`w` is
accumulated in ``delta`` over the touched points so that the per-kernel
gradients can be brought up to date once per chunk
(:func:`mklopt._compiled.gradient_updates.add_columns`).

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
functions changes (:mod:`mklopt._compiled.cache`), not only this one.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .cache import locked_cache
from .column_cache import cached_slot
from .splitting import splits_small
from .columns import DENSE, FACTORS, LAZY
from .kmu_columns import dense_column, factor_column, lazy_column, lazy_column_serial, parallel_columns
from .smo_select import (FALL, PARALLEL_SCAN, RISE, _first_index, _first_range, _moves, _second_index,
                          _second_range, kept)

__all__ = ["smo_chunk", "uses_threads", "shrink", "violation", "pair_step", "PARALLEL_SCAN"]

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


def _extremes(rise, fall, F) -> tuple[float, float]:
    """:math:`(\\max_{up}F, \\min_{low}F)`, infinite when a side is empty."""
    high = float(F[rise].max()) if rise.any() else -np.inf
    low = float(F[fall].min()) if fall.any() else np.inf
    return high, low


def violation(state, rows, base, ghat) -> float:
    """SMO's optimality measure :math:`\\max_{up}F - \\min_{low}F` at fixed weights, over all variables."""
    high, low = _extremes((state & RISE) > 0, (state & FALL) > 0, base - ghat[rows])
    return high - low


@locked_cache
@njit(cache=True, nogil=True)
def shrink(rows, signs, base, upper, beta, ghat, state, active, marks, shrinking):
    """Set every variable's moves in ``state``, write the active variables into ``active[:k]``
    and mark their points; ``(k, violation)``.

    ``ghat`` must be exact at every point. With ``shrinking``, kept (libsvm's rule): the free
    variables, those that may only rise with :math:`F_t \\ge \\min_{low}F` and those that may
    only fall with :math:`F_t \\le \\max_{up}F`; without, all. The violation is over all
    variables. (Two passes over the variables, compiled: once per chunk of every class.)
    """
    high, low = -np.inf, np.inf
    for t in range(beta.shape[0]):
        moves = _moves(signs[t], beta[t], upper[t])
        state[t] = moves
        F = base[t] - ghat[rows[t]]
        if moves & RISE and F > high:
            high = F
        if moves & FALL and F < low:
            low = F
    k = 0
    for t in range(beta.shape[0]):
        if not shrinking or kept(state[t], base[t] - ghat[rows[t]], high, low):
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
        _update_points(ghat, step, Ki, Kj, points)


@locked_cache
@njit(cache=True, inline="always")
def _update_points(ghat, step, Ki, Kj, points):
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


def _compiled_chunk(kind: int, parallel: int):
    """:func:`smo_chunk` compiled for one kind of column oracle, with (``parallel`` 1) or
    without (0) the threads' blocks: a fit compiles the columns of its own kernels only, and
    a small problem no parallel code (numba prunes the branches on the closure's constants
    and caches each variant under its own name, e.g. ``smo_chunk_dense``)."""

    def chunk(oracle, dots, table, cache, mu, rows, signs, base, upper, beta, ghat, dmu, state, active,
              points, delta, touched, count, max_pairs, eps, blocks, tau):

        def column(r):
            slot, hit = cached_slot(cache, r)
            out = cache[0][slot]
            if hit:
                return out
            if kind == DENSE:
                dense_column(oracle[1], mu, r, points, out)
            elif kind == FACTORS:
                factor_column(oracle, mu, r, points, out)
            elif parallel == 1:
                lazy_column(oracle, dots, table, mu, r, points, out, blocks)
            else:
                lazy_column_serial(oracle, dots, table, mu, r, points, out)
            return out

        pairs, gap = 0, np.inf
        while pairs < max_pairs:
            if parallel == 1:
                i, high, gap = _first_index(state, rows, base, ghat, active, blocks)
            else:
                i, high, low = _first_range(state, rows, base, ghat, active, 0, active.shape[0])
                gap = high - low
            if i < 0 or gap <= eps:
                break
            ri = rows[i]
            Ki = column(ri)
            if parallel == 1:
                j = _second_index(state, rows, base, ghat, high, Ki, ri, dmu, tau, active, blocks)
            else:
                j = _second_range(state, rows, base, ghat, high, Ki, ri, dmu, tau, active, 0, active.shape[0])[0]
            if j < 0:
                break
            rj = rows[j]
            step = pair_step(i, j, dmu[ri] + dmu[rj] - 2.0 * Ki[rj], high, rj, signs, base, upper, beta,
                             ghat, state, tau)
            if ri != rj:  # two variables of one point (SVR's pair) leave w as it is
                Kj = column(rj)
                if parallel == 1:
                    _update(ghat, step, Ki, Kj, points, blocks)
                else:
                    _update_points(ghat, step, Ki, Kj, points)
                _record(delta, touched, count, ri, step)
                _record(delta, touched, count, rj, -step)
            pairs += 1
        return pairs, gap

    chunk.__name__ = chunk.__qualname__ = f"smo_chunk_{('dense', 'factors', 'lazy')[kind]}" + (
        "_threads" if parallel else "")
    return locked_cache(njit(cache=True, nogil=True)(chunk))


_CHUNKS = {(kind, parallel): _compiled_chunk(kind, parallel) for kind in (DENSE, FACTORS, LAZY)
           for parallel in (0, 1)}


def uses_threads(oracle: tuple, variables: int, n: int, M: int, blocks: int) -> bool:
    """Can a chunk of this problem ever split a scan, an update or a column over ``blocks``
    threads (:data:`PARALLEL_SCAN`, :func:`~mklopt._compiled.kmu_columns.parallel_columns`)?
    If not, it runs the variant without parallel code (the same pairs: each parallel part
    gives the answer of one pass)."""
    return blocks > 1 and (variables >= PARALLEL_SCAN or n >= 4 * PARALLEL_SCAN
                           or parallel_columns(oracle, n, M) or splits_small())


def smo_chunk(oracle, dots, table, cache, mu, rows, signs, base, upper, beta, ghat, dmu, state, active,
              points, delta, touched, count, max_pairs, eps, blocks=1, tau=1e-12, parallel=None):
    """Up to ``max_pairs`` SMO updates of the variables ``active`` at weights ``mu``;
    ``(pairs, violation over the active variables)``.

    ``state`` holds each variable's moves (set by :func:`shrink`, kept here);
    ``points`` must hold the points of the active variables (it may hold more: the
    columns and ``ghat`` are kept at all of them). ``beta`` and ``ghat`` are updated
    in place; ``delta`` accumulates the change of the point weights :math:`w`,
    ``touched``/``count`` list the points it touched (``count[0]`` of them, in
    ``count[1:]``). Stops early when the active violation is at most ``eps``. ``blocks``:
    the threads over which long scans, updates and columns are split; ``parallel``: whether
    the problem may use them (:func:`uses_threads`; by default judged from this chunk).
    """
    if parallel is None:
        parallel = uses_threads(oracle, rows.shape[0], ghat.shape[0], mu.shape[0], blocks)
    chunk = _CHUNKS[int(oracle[0]), int(bool(parallel) and blocks > 1)]
    return chunk(oracle, dots, table, cache, mu, rows, signs, base, upper, beta, ghat, dmu, state, active,
                 points, delta, touched, count, max_pairs, eps, blocks, tau)
