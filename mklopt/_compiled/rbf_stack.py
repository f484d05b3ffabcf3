"""The RBF kernels of a training stack from the Gram matrix of the centred points: the tiles, their distances.

With the Gram matrix :math:`G = X_cX_c^\\top` of the centred points and their squared
norms :math:`d_i` (scikit-learn's ``row_norms``), each entry of the upper triangle gives
the squared distance of scikit-learn's ``euclidean_distances``,

.. math:: D_{ij} = \\max\\bigl((-2G_{ij} + d_i) + d_j,\\ 0\\bigr),\\qquad D_{ii} = 0,

in the same order of operations, and every kernel :math:`e^{-\\gamma_k D_{ij}}` of it is
written at :math:`(i, j)` and :math:`(j, i)`: the kernels are exactly symmetric and their
diagonal exactly 1, and :math:`D` is never stored. The exponential is
:func:`~mklopt._compiled.fastexp.exp_nonpositive` (vectorized; within 2.3e-16 relative
of libm's). The Gram matrix may be the stack's first RBF slot itself: only its upper
triangle is read, a tile wholly before it is overwritten, and a tile's mirror is
written only below the diagonal. Tiles of :data:`TILE` rows and columns (a tile's
distances stay in L1, the tile and its mirror in L2); :func:`tile_pairs` lists them. The
pass itself, with the linear and polynomial kernels', is
:mod:`~mklopt._compiled.training_stack`'s.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .cache import locked_cache

__all__ = ["tile_pairs", "mirror_tile", "tile_distances", "TILE"]

#: Rows and columns of a tile.
TILE = 64


def tile_pairs(n: int) -> np.ndarray:
    """The (top, left) corners of the tiles of the upper triangle of an n × n matrix,
    shape (P, 2), in an order that hands every thread of an even split similar work."""
    corners = np.arange(0, n, TILE)
    top, left = np.triu_indices(corners.size)
    pairs = np.column_stack([corners[top], corners[left]]).astype(np.int64)
    return pairs[np.argsort(left - top, kind="stable")]


@locked_cache
@njit(cache=True, nogil=True, inline="always")
def mirror_tile(out, top, left, rows, columns):
    """The tile of ``out`` at (top, left), above the diagonal, written at its mirror below it:
    eight of its columns at a time, each of the tile's rows read once for them (a cache line)
    and written into eight rows of the mirror (the whole of a 1,257-point kernel: 3.4 ms
    against 5.4 ms a column at a time)."""
    for first in range(0, columns, 8):
        width = min(8, columns - first)
        for r in range(rows):
            source = out[top + r, left + first:left + first + width]
            for j in range(width):
                out[left + first + j, top + r] = source[j]


@locked_cache
@njit(cache=True, nogil=True, inline="always")
def tile_distances(G, norms, top, left, rows, columns, distances):
    """The tile's squared distances from the upper triangle of G only (a diagonal tile
    mirrored in the buffer, its diagonal 0)."""
    for r in range(rows):
        i = top + r
        first = r + 1 if top == left else 0
        for c in range(first, columns):
            value = (-2.0 * G[i, left + c] + norms[i]) + norms[left + c]
            distances[r, c] = value if value > 0.0 else 0.0
    if top == left:
        for r in range(rows):
            distances[r, r] = 0.0
            for c in range(r + 1, columns):
                distances[c, r] = distances[r, c]
