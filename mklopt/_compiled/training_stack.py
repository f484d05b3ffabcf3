"""Every RBF, linear and polynomial kernel of a training stack in one compiled pass over its Gram matrices.

From the upper triangles of the Gram matrix :math:`G_c = X_cX_c^\\top` of the centred points
(and their squared norms :math:`d_i`) and of :math:`G = XX^\\top`, each entry gives

* the squared distance of scikit-learn's ``euclidean_distances``,
  :math:`D_{ij} = \\max((-2G_{c,ij} + d_i) + d_j,\\ 0)`, :math:`D_{ii} = 0`, and from it every RBF
  kernel :math:`e^{-\\gamma_k D_{ij}}` (:mod:`~mklopt._compiled.rbf_stack`);
* every linear and polynomial kernel from :math:`G_{ij}` by scikit-learn's operations in its
  order (:mod:`~mklopt._compiled.product_stack`: scikit-learn's values bit for bit).

Each tile of the two matrices is read once into buffers that stay in L1, every kernel of it
is written at :math:`(i, j)` and :math:`(j, i)` (exactly symmetric), and each kernel's largest
and smallest entries are kept as they are written (``extremes``: the validation scan's, so
that it need not read the kernels for them; a kernel with an entry that is not finite gets
NaN for both, and the scan reads it itself). The Gram matrices may be kernels' own slots: only
their upper triangles are read, a tile of both wholly before any kernel of it is written, and
mirrors go below the diagonal only. Callers split the tiles
(:func:`~mklopt._compiled.rbf_stack.tile_pairs`) over threads, each part with its own
``extremes`` (the function holds no Python lock).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .cache import locked_cache
from .fastexp import exp_nonpositive
from .product_stack import entry, upper_tile
from .rbf_stack import TILE, mirror_tile, tile_distances

__all__ = ["training_tiles", "HIGHEST", "LOWEST"]

#: Columns of ``extremes``: each kernel's largest and smallest entry.
HIGHEST, LOWEST = 0, 1


@locked_cache
@njit(cache=True, nogil=True)
def training_tiles(Gc, norms, G, gammas, rbf_slots, scales, coef0s, degrees, product_slots, stack, pairs,
                   extremes):
    """The RBF kernels ``stack[rbf_slots[k]] = exp(-gammas[k] D)`` (D from ``Gc`` and ``norms``) and
    the products ``stack[product_slots[k]]`` (``entry`` of ``G`` with ``scales[k]``,
    ``coef0s[k]``, ``degrees[k]``) on the tiles ``pairs``; their extremes so far in
    ``extremes`` (M, 2)."""
    n = G.shape[0]
    distances, products = np.empty((TILE, TILE)), np.empty((TILE, TILE))
    for p in range(pairs.shape[0]):
        top, left = pairs[p, 0], pairs[p, 1]
        rows, columns = min(top + TILE, n) - top, min(left + TILE, n) - left
        if rbf_slots.size:
            tile_distances(Gc, norms, top, left, rows, columns, distances)
        if product_slots.size:
            upper_tile(G, top, left, rows, columns, products)
        for k in range(rbf_slots.size):
            out, minus = stack[rbf_slots[k]], -gammas[k]
            for r in range(rows):  # the tile's rows, one vectorized pass each
                row, near = out[top + r, left:left + columns], distances[r]
                for c in range(columns):
                    row[c] = exp_nonpositive(minus * near[c])
            _kept(out, top, left, rows, columns, extremes[rbf_slots[k]])
        for k in range(product_slots.size):
            out = stack[product_slots[k]]
            for r in range(rows):
                row, values = out[top + r, left:left + columns], products[r]
                for c in range(columns):
                    row[c] = entry(values[c], scales[k], coef0s[k], degrees[k])
            _kept(out, top, left, rows, columns, extremes[product_slots[k]])


@locked_cache
@njit(cache=True, nogil=True, inline="always")
def _kept(out, top, left, rows, columns, extremes):
    """A kernel's tile just written at (top, left): its entries into the kernel's ``extremes``
    (read while the tile is in L1), then its mirror below the diagonal."""
    hi, lo = extremes[HIGHEST], extremes[LOWEST]
    for r in range(rows):
        hi, lo = _extremes(out[top + r, left:left + columns], hi, lo)
    extremes[HIGHEST], extremes[LOWEST] = hi, lo
    if top != left:
        mirror_tile(out, top, left, rows, columns)


@locked_cache
@njit(cache=True, nogil=True, inline="always")
def _extremes(row, hi, lo):
    """``(max(hi, row), min(lo, row))``, NaN once an entry is not finite (then the scan reads the
    kernel itself): four independent comparisons per pass, a non-finite entry spotted by
    :math:`0\\cdot v` (NaN for :math:`\\pm\\infty` and NaN)."""
    h0 = h1 = h2 = h3 = hi
    l0 = l1 = l2 = l3 = lo
    spot = 0.0
    size, c = row.shape[0], 0
    while c + 4 <= size:
        a, b, d, e = row[c], row[c + 1], row[c + 2], row[c + 3]
        h0, h1, h2, h3 = max(h0, a), max(h1, b), max(h2, d), max(h3, e)
        l0, l1, l2, l3 = min(l0, a), min(l1, b), min(l2, d), min(l3, e)
        spot += ((a + b) + (d + e)) * 0.0
        c += 4
    while c < size:
        h0, l0 = max(h0, row[c]), min(l0, row[c])
        spot += row[c] * 0.0
        c += 1
    if spot != 0.0:
        return np.nan, np.nan
    return max(max(h0, h1), max(h2, h3)), min(min(l0, l1), min(l2, l3))
