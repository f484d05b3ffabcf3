"""The LRU caches of kernel columns (the SMO core's columns of K_mu, the lazy kernels' products).

A cache is a tuple ``(slots (S, n), slot_of (n,), owner (S,), last_use (S,),
counters (4,))`` with counters = (clock, hits, misses, slots filled since the last reset);
:func:`cached_slot` returns the slot holding a column: on a miss the next slot never filled
(no search while the cache fills), else the least recently used one. The tuple of arrays
passes into compiled code as it is.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .cache import locked_cache

__all__ = ["new_cache", "reset_cache", "cached_slot"]


def new_cache(n: int, slots: int) -> tuple:
    """An empty LRU cache of ``slots`` columns of length ``n``."""
    return (np.empty((max(int(slots), 0), n)), np.full(n, -1, dtype=np.int64),
            np.full(max(int(slots), 0), -1, dtype=np.int64), np.zeros(max(int(slots), 0), dtype=np.int64),
            np.zeros(4, dtype=np.int64))


def reset_cache(cache) -> None:
    """Forget every column (the weights changed); the hit/miss counters stay."""
    _, slot_of, owner, last, counters = cache
    slot_of[owner[owner >= 0]] = -1
    owner[:] = -1
    last[:] = 0
    counters[3] = 0


@locked_cache
@njit(cache=True, nogil=True)
def cached_slot(cache, i):
    """``(slot, hit)``: the slot of column ``i``; on a miss, the next empty slot or else the least
    recently used one (now ``i``'s)."""
    _, slot_of, owner, last, counters = cache
    counters[0] += 1
    s = slot_of[i]
    if s >= 0:
        last[s] = counters[0]
        counters[1] += 1
        return s, True
    if counters[3] < owner.shape[0]:
        s = counters[3]
        counters[3] += 1
    else:
        s = 0
        for k in range(1, owner.shape[0]):
            if last[k] < last[s]:
                s = k
    if owner[s] >= 0:
        slot_of[owner[s]] = -1
    owner[s] = i
    slot_of[i] = s
    last[s] = counters[0]
    counters[2] += 1
    return s, False
