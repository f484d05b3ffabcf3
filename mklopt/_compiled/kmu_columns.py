"""Columns of the combined kernel :math:`K_\\mu` at a set of points, for the SMO α-steps.

The column functions write :math:`K_\\mu[t, i] = \\sum_m \\mu_m K_m[t, i]` for the
points ``t`` of a list: all points, or the active points of a chunk when SMO
shrinks (:mod:`mklopt._compiled.smo`); the other entries of ``out`` are left as
they are. Kernels are read from any oracle of :mod:`mklopt._compiled.columns`; on
the fly, the RBF kernels held by the table (:mod:`mklopt._compiled.rbf_table`) cost
one lookup per point for all of them, the other kernels one evaluation each.
Above :data:`PARALLEL_ENTRIES` entries a column is split over the cores in
contiguous blocks of the list (each entry is written by one thread: the column
is the same whatever the number of threads).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .cache import locked_cache
from .columns import (LAZY, LINEAR, PARALLEL_PRODUCTS, RBF, _FAST, dot_column, kernel_view, products_column,
                      rbf_entry, shifted_dot)
from .rbf_table import table_column

__all__ = ["dense_column", "factor_column", "lazy_column", "lazy_column_serial", "parallel_columns",
           "PARALLEL_ENTRIES"]

#: Kernel entries (points × kernels read one by one) from which a column is split over the
#: cores: a parallel launch costs ~7 µs here, an entry 3-8 ns.
PARALLEL_ENTRIES = 16_384
#: What one point's table lookup (distance, cell, cubic Hermite) costs in kernel entries:
#: measured ~11 ns against 3-8 ns per entry, so a column of 10,000 points from the table
#: alone (109 µs on one core) is split over the cores (62 µs on two).
TABLE_ENTRY_UNITS = 4


@locked_cache
@njit(cache=True, nogil=True, fastmath=_FAST)
def _accumulate_at(oracle, m, i, dot, weight, out, points, start, stop):
    """``out[t] += weight * K_m[t, i]`` for ``t`` in ``points[start:stop]`` (on the fly)."""
    kind, gamma, degree, coef0, factor, row, dot, sqn, shift, norm_i, shift_i = kernel_view(
        oracle, m, i, dot, weight, out.shape[0])
    for k in range(start, stop):
        t = points[k]
        if kind == LINEAR:
            value = shifted_dot(dot, shift, t, shift_i)
        elif kind == RBF:
            value = 1.0 if t == i else rbf_entry(gamma, sqn, dot, t, norm_i)  # 1 on the diagonal
        else:
            value = (gamma * shifted_dot(dot, shift, t, shift_i) + coef0) ** degree
        out[t] += factor * row[t] * value


@locked_cache
@njit(cache=True, nogil=True)
def _lazy_block(oracle, table, mu, i, dot, out, points, start, stop):
    skip = table[0]  # the kernels the table holds
    if skip.shape[0]:
        table_column(oracle, table, i, dot, out, points, start, stop)
    else:
        for k in range(start, stop):
            out[points[k]] = 0.0
    for m in range(mu.shape[0]):
        if mu[m] != 0.0 and not (skip.shape[0] and skip[m]):
            _accumulate_at(oracle, m, i, dot, mu[m], out, points, start, stop)


@locked_cache
@njit(cache=True, parallel=True, nogil=True)
def _lazy_blocks(oracle, table, mu, i, dot, out, points, blocks):
    size = (points.shape[0] + blocks - 1) // blocks
    for b in prange(blocks):
        _lazy_block(oracle, table, mu, i, dot, out, points, b * size, min((b + 1) * size, points.shape[0]))


@locked_cache
@njit(cache=True, inline="always")
def _next_used(mu, m):
    """The first kernel from ``m`` on with a non-zero weight (``mu.shape[0]`` if none)."""
    while m < mu.shape[0] and mu[m] == 0.0:
        m += 1
    return m


@locked_cache
@njit(cache=True, nogil=True)
def dense_column(stack, mu, i, points, out):
    """``out[t] = sum_m mu_m K_m[i, t]`` at ``points`` from the stack's rows, four kernels per
    pass over the points, then two, then one (a pass reads the point list and ``out`` once for
    all its rows: a column of 5 kernels at 600 points, rows not in cache, 5.8 µs against 10.8 µs
    one kernel at a time)."""
    M = mu.shape[0]
    a, first = _next_used(mu, 0), True
    while a < M:
        b = _next_used(mu, a + 1)
        c = _next_used(mu, b + 1) if b < M else M
        d = _next_used(mu, c + 1) if c < M else M
        if d < M:
            ra, rb, rc, rd = stack[a, i], stack[b, i], stack[c, i], stack[d, i]
            wa, wb, wc, wd = mu[a], mu[b], mu[c], mu[d]
            for t in points:
                value = (wa * ra[t] + wb * rb[t]) + (wc * rc[t] + wd * rd[t])
                out[t] = value if first else out[t] + value
            a = _next_used(mu, d + 1)
        elif b < M:
            ra, rb, wa, wb = stack[a, i], stack[b, i], mu[a], mu[b]
            for t in points:
                value = wa * ra[t] + wb * rb[t]
                out[t] = value if first else out[t] + value
            a = c
        else:
            row, w = stack[a, i], mu[a]
            for t in points:
                out[t] = w * row[t] if first else out[t] + w * row[t]
            a = b
        first = False
    if first:  # no kernel in use
        for t in points:
            out[t] = 0.0


@locked_cache
@njit(cache=True, nogil=True)
def factor_column(oracle, mu, i, points, out):
    """``out[t] = K_mu[t, i]`` for ``t`` in ``points`` from low-rank factors:
    :math:`G\\,(w \\circ G[i])`, w the weights repeated over each kernel's block."""
    F, owner = oracle[2], oracle[3]
    w = np.empty(F.shape[1])
    for r in range(F.shape[1]):
        w[r] = mu[owner[r]] * F[i, r]
    if points.shape[0] == out.shape[0]:
        out[:] = F @ w
    else:
        for t in points:
            out[t] = np.dot(F[t], w)


@locked_cache
@njit(cache=True, nogil=True)
def lazy_column(oracle, dots, table, mu, i, points, out, blocks):
    """``out[t] = K_mu[t, i]`` for ``t`` in ``points`` on the fly: the RBF kernels in ``table``
    (filled for ``mu``) from the table, the others one by one; large columns split in
    ``blocks`` over the cores (numba's thread count)."""
    dot = dot_column(oracle, dots, i, blocks)
    skip = table[0]
    units = TABLE_ENTRY_UNITS if skip.shape[0] else 0
    for m in range(mu.shape[0]):
        units += mu[m] != 0.0 and not (skip.shape[0] and skip[m])
    if blocks > 1 and points.shape[0] * units >= PARALLEL_ENTRIES:
        _lazy_blocks(oracle, table, mu, i, dot, out, points, blocks)
    else:
        _lazy_block(oracle, table, mu, i, dot, out, points, 0, points.shape[0])


@locked_cache
@njit(cache=True, nogil=True)
def lazy_column_serial(oracle, dots, table, mu, i, points, out):
    """:func:`lazy_column` on one thread (compiles no parallel code: small problems)."""
    _lazy_block(oracle, table, mu, i, products_column(oracle, dots, i), out, points, 0, points.shape[0])


def parallel_columns(oracle: tuple, n: int, M: int) -> bool:
    """Can a column of ``n`` points ever be split over the cores (on the fly, above
    :data:`PARALLEL_ENTRIES` entries or :data:`~mklopt._compiled.columns.PARALLEL_PRODUCTS`)?"""
    return int(oracle[0]) == LAZY and (n * (M + TABLE_ENTRY_UNITS) >= PARALLEL_ENTRIES
                                       or oracle[5].size >= PARALLEL_PRODUCTS)
