"""Per-kernel gradients :math:`g_m = K_m w` brought up to date from the columns of changed points.

The interleaved core keeps one gradient per kernel (an M × n array) and, after each
α-step, adds :math:`\\sum_k \\delta_k K_m[:, i_k]` for the points :math:`i_k` whose weights
changed by :math:`\\delta_k`, reading the kernels through a column oracle
(:mod:`~mklopt._compiled.columns`): rows of the dense stack, products of low-rank factors,
or columns on the fly — there the RBF kernels come from a few shared basis functions
(:func:`~mklopt._compiled.rbf_table.kernel_table`), the others exactly.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .cache import locked_cache
from .splitting import splits_small
from .columns import FACTORS, LAZY, map_kernel, dot_column, product_length
from .rbf_table import accumulate_tabulated, mix_tabulated

__all__ = ["add_columns", "add_columns_into", "add_rows", "update_scratch"]

#: Changed points whose product columns are read together by a gradient update.
_CHANGED_BLOCK = 64


@locked_cache
@njit(cache=True, parallel=True, nogil=True)
def _add_lazy(oracle, index, delta, dots_block, G, skip):
    """``G[m] += sum_k delta[k] K_m[:, index[k]]`` from the block's inner products, kernels over the cores."""
    for m in prange(G.shape[0]):
        if skip.shape[0] and skip[m]:
            continue
        for k in range(index.shape[0]):
            map_kernel(oracle, m, index[k], dots_block[k], delta[k], G[m], True)


@locked_cache
@njit(cache=True, nogil=True)
def _add_dense_rows(g, K, index, delta):
    """``g += sum_k delta[k] K[index[k]]`` (rows: the kernels are symmetric), four rows read
    side by side per pass over ``g`` (150 rows of 1,257 points, 5 kernels, rows not in
    cache: 0.69 ms against 1.04 ms one row at a time)."""
    rows, k = index.shape[0], 0
    while k + 4 <= rows:
        a, b, c, d = K[index[k]], K[index[k + 1]], K[index[k + 2]], K[index[k + 3]]
        wa, wb, wc, wd = delta[k], delta[k + 1], delta[k + 2], delta[k + 3]
        for t in range(g.shape[0]):
            g[t] += (wa * a[t] + wb * b[t]) + (wc * c[t] + wd * d[t])
        k += 4
    for r in range(k, rows):
        w, row = delta[r], K[index[r]]
        for t in range(g.shape[0]):
            g[t] += w * row[t]


@locked_cache
@njit(cache=True, nogil=True)
def _add_dense(stack, index, delta, G):
    """``G[m] += sum_k delta[k] K_m[index[k]]`` for every kernel m, on one thread."""
    for m in range(G.shape[0]):
        _add_dense_rows(G[m], stack[m], index, delta)


@locked_cache
@njit(cache=True, parallel=True, nogil=True)
def _add_dense_kernels(stack, index, delta, G):
    """:func:`_add_dense`, kernels over the cores (measured n = 5000, M = 50, 200 rows: 14 ms
    against 41 ms on one core)."""
    for m in prange(G.shape[0]):
        _add_dense_rows(G[m], stack[m], index, delta)


#: Kernel entries of a dense stack's row (kernels × points) from which a dense update runs
#: its kernels over the cores (smaller stacks never compile the parallel loop: first fits).
PARALLEL_DENSE = 65_536


@locked_cache
@njit(cache=True, nogil=True)
def _add_lazy_columns(oracle, dots, index, delta, G, ktable, buffer, basis, blocks):
    """:func:`add_columns` on the fly, in the working memory of :func:`update_scratch`."""
    block = buffer.shape[0]
    tabulated = ktable[0].shape[0] > 0
    if tabulated:
        basis[:] = 0.0
    for start in range(0, index.shape[0], block):
        stop = min(start + block, index.shape[0])
        for k in range(start, stop):
            buffer[k - start] = dot_column(oracle, dots, index[k], blocks)
        _add_lazy(oracle, index[start:stop], delta[start:stop], buffer[:stop - start], G, ktable[0])
        if tabulated:
            accumulate_tabulated(ktable, oracle[6], index[start:stop], delta[start:stop],
                                 buffer[:stop - start], basis, blocks)
    if tabulated:
        mix_tabulated(ktable, basis, G, blocks)


def update_scratch(oracle: tuple, ktable: tuple) -> tuple:
    """Working memory for :func:`add_columns_into`: on the fly, the product columns of a block
    of changed points and the basis sums of ``ktable`` (empty for the other oracles). A solver
    allocates it once: fresh pages at every update (15 MB at n = 20,000 with 50 tabulated
    kernels) would be faulted in again each time, by every class running side by side."""
    if oracle[0] != LAZY:
        return np.empty((0, 0)), np.empty((0, 0))
    n = oracle[9].shape[1]
    return np.empty((_CHANGED_BLOCK, product_length(oracle))), np.zeros((ktable[5].shape[1], n))


def add_columns(oracle, dots, index, delta, G, ktable, blocks=1):
    """``G[m] += sum_k delta[k] * K_m[:, index[k]]`` for every kernel m (the per-kernel gradients).

    On the fly, the kernels of ``ktable`` (:func:`~mklopt._compiled.rbf_table.kernel_table`)
    are interpolated from a few shared basis functions (relative error ~1e-12, several
    times faster); the others
    are exact. Certificates use the exact columns (``ktable=NO_KERNEL_TABLE``). ``blocks``:
    the threads over which missing product columns are computed.

    The oracle's kind is dispatched here, in Python, so that a fit compiles the update of
    its own kind of kernels only (a dense fit never compiles the on-the-fly update).
    """
    kind = int(oracle[0])
    if kind == FACTORS:
        _add_factors(oracle[2], oracle[4], index, delta, G)
    elif kind == LAZY:
        buffer = np.empty((max(1, min(index.shape[0], _CHANGED_BLOCK)), dots[0].shape[1]))
        basis = np.empty((ktable[5].shape[1], G.shape[1] if ktable[0].shape[0] else 0))
        _add_lazy_columns(oracle, dots, index, delta, G, ktable, buffer, basis, blocks)
    else:
        add_rows(oracle[1], index, delta, G, blocks)


def add_rows(stack, index, delta, G, blocks=1) -> None:
    """``G[m] += sum_k delta[k] * K_m[index[k]]`` on a read-only dense (M, n, n) stack (rows:
    columns of symmetric kernels); the kernels over ``blocks`` threads for large stacks."""
    if blocks > 1 and (G.shape[0] * G.shape[1] >= PARALLEL_DENSE or splits_small()):
        _add_dense_kernels(stack, index, delta, G)
    else:
        _add_dense(stack, index, delta, G)


@locked_cache
@njit(cache=True, nogil=True)
def _add_factors(F, offsets, index, delta, G):
    """:func:`add_columns` for low-rank factors: :math:`z=\\sum_k\\delta_kF_{i_k}`, then
    :math:`G_m \\mathrel{+}= F_m z_m` per kernel."""
    z = np.zeros(F.shape[1])
    for k in range(index.shape[0]):
        z += delta[k] * F[index[k]]
    for m in range(G.shape[0]):
        a, b = offsets[m], offsets[m + 1]
        G[m] += np.ascontiguousarray(F[:, a:b]) @ z[a:b]


def add_columns_into(oracle, dots, index, delta, G, ktable, scratch, blocks=1):
    """:func:`add_columns` in the working memory ``scratch`` (:func:`update_scratch`) on the fly."""
    if int(oracle[0]) == LAZY:
        _add_lazy_columns(oracle, dots, index, delta, G, ktable, scratch[0], scratch[1], blocks)
    else:
        add_columns(oracle, dots, index, delta, G, ktable, blocks)
