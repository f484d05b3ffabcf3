"""Working-set selection of the compiled α-step (:mod:`mklopt._compiled.smo`): which pair moves next.

libsvm's second-order rule (Fan, Chen & Lin, "Working set selection using second order
information for training support vector machines", JMLR 2005): :math:`i` maximizes
:math:`F_t = -s_t p_t - \\hat g_{r_t}` over the variables that may rise, :math:`j` the gain
:math:`b^2/a` over those that may fall. Each variable's moves are two bits of a state
array (:data:`RISE`, :data:`FALL`). Long scans are split over numba's threads in
contiguous blocks whose maxima are combined in block order with the tie rule of one pass,
so the pair found does not depend on the number of threads.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .cache import locked_cache

__all__ = ["RISE", "FALL", "PARALLEL_SCAN"]

#: Active variables from which a scan or an update is split over the cores (a parallel
#: launch costs ~7 µs here, a variable of a scan ~8 ns).
PARALLEL_SCAN = 4096

RISE, FALL = 1, 2


@locked_cache
@njit(cache=True, inline="always")
def _moves(sign, b, u):
    """``RISE | FALL`` bits of a variable: may it rise (be :math:`i`), may it fall (be :math:`j`)?"""
    if sign > 0.0:
        return RISE * (b < u) + FALL * (b > 0.0)
    return RISE * (b > 0.0) + FALL * (b < u)


@locked_cache
@njit(cache=True, nogil=True)
def _first_range(state, rows, base, ghat, active, start, stop):
    """``(i, F_i, min_low F)`` over ``active[start:stop]``: the first maximal F of the
    variables that may rise, and the minimal F of those that may fall."""
    i, high, low = -1, -np.inf, np.inf
    for k in range(start, stop):
        t = active[k]
        F = base[t] - ghat[rows[t]]
        # selects on the moves (unpredictable), then a comparison for each extreme: as
        # ``low = min(low, ...)`` the pass took 5.7x as long (8 against 1.5 ns a variable)
        moves = state[t]
        up = F if moves & RISE else -np.inf
        down = F if moves & FALL else np.inf
        if up > high:
            i, high = t, up
        if down < low:
            low = down
    return i, high, low


@locked_cache
@njit(cache=True, nogil=True, parallel=True)
def _first_blocks(state, rows, base, ghat, active, blocks):
    size = (active.shape[0] + blocks - 1) // blocks
    index, highs, lows = np.full(blocks, -1), np.full(blocks, -np.inf), np.full(blocks, np.inf)
    for b in prange(blocks):
        found = _first_range(state, rows, base, ghat, active, b * size, min((b + 1) * size, active.shape[0]))
        index[b], highs[b], lows[b] = found[0], found[1], found[2]
    first, most, least = -1, -np.inf, np.inf
    for b in range(blocks):  # in block order: the first maximum, as one pass finds it
        if highs[b] > most:
            first, most = index[b], highs[b]
        least = min(least, lows[b])
    return first, most, least


@locked_cache
@njit(cache=True, nogil=True)
def _first_index(state, rows, base, ghat, active, blocks):
    """``(i, F_i, violation)``: the maximal F over variables that may rise, and max F - min F."""
    if blocks > 1 and active.shape[0] >= PARALLEL_SCAN:
        i, high, low = _first_blocks(state, rows, base, ghat, active, blocks)
    else:
        i, high, low = _first_range(state, rows, base, ghat, active, 0, active.shape[0])
    return i, high, high - low


@locked_cache
@njit(cache=True, nogil=True)
def _second_range(state, rows, base, ghat, high, Ki, ri, dmu, tau, active, start, stop):
    j, best = -1, -np.inf
    own = dmu[ri]
    for k in range(start, stop):
        t = active[k]
        rt = rows[t]
        b = high - (base[t] - ghat[rt])
        # the gain only of a variable that may fall with b > 0: the division of every variable,
        # its result then masked, took 2.5-5x as long (the same gains, the same pair)
        if (state[t] & FALL) and b > 0.0:
            a = own + dmu[rt] - 2.0 * Ki[rt]
            gain = b * b / (a if a > 0.0 else tau)
            if gain > best:
                j, best = t, gain
    return j, best


@locked_cache
@njit(cache=True, nogil=True, parallel=True)
def _second_blocks(state, rows, base, ghat, high, Ki, ri, dmu, tau, active, blocks):
    size = (active.shape[0] + blocks - 1) // blocks
    index, gains = np.full(blocks, -1), np.full(blocks, -np.inf)
    for b in prange(blocks):
        found = _second_range(state, rows, base, ghat, high, Ki, ri, dmu, tau, active, b * size,
                              min((b + 1) * size, active.shape[0]))
        index[b], gains[b] = found[0], found[1]
    second, best = -1, -np.inf
    for b in range(blocks):
        if gains[b] > best:
            second, best = index[b], gains[b]
    return second


@locked_cache
@njit(cache=True, nogil=True)
def _second_index(state, rows, base, ghat, high, Ki, ri, dmu, tau, active, blocks):
    if blocks > 1 and active.shape[0] >= PARALLEL_SCAN:
        return _second_blocks(state, rows, base, ghat, high, Ki, ri, dmu, tau, active, blocks)
    return _second_range(state, rows, base, ghat, high, Ki, ri, dmu, tau, active, 0, active.shape[0])[0]


@locked_cache
@njit(cache=True, inline="always")
def kept(moves, F, high, low):
    """libsvm's shrinking rule: keep a free variable, one that may only rise with
    :math:`F \\ge \\min_{low}F` (``low``) and one that may only fall with :math:`F \\le \\max_{up}F` (``high``)."""
    return moves == RISE | FALL or (moves == RISE and F >= low) or (moves == FALL and F <= high)
