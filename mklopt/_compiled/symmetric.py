"""Exactly symmetric training kernels, in compiled tiles that release the GIL.

:func:`symmetrize_tiles` makes :math:`K \\leftarrow \\tfrac12 (K + K^\\top)` in place, for a
kernel within rounding noise of symmetric and for the matrix of squared distances :math:`D`
that the GEMM inside scikit-learn's ``euclidean_distances`` leaves a few units of roundoff
from symmetric (the RBF kernels are then NumPy's vectorized :math:`e^{-\\gamma D}` of an
exactly symmetric matrix, so exactly symmetric too). It walks the upper triangle in square
tiles of :data:`TILE` rows (a tile and its mirror stay in L1), each pair of entries read once
and both written with the same value, so no transpose of the whole matrix is formed; the
diagonal is left as it is (:math:`\\tfrac12(K_{ii}+K_{ii}) = K_{ii}` exactly). The values are
those of NumPy's ``(K + K.T) * 0.5``, bit for bit. Since it holds no Python lock, kernels are
made symmetric on all cores at once (:func:`~mklopt.kernels._stack.map_kernels`).
"""

from __future__ import annotations

from numba import njit

from .cache import locked_cache

__all__ = ["symmetrize_tiles", "TILE"]

#: Rows and columns of a tile: a tile and its mirror (2 × 32 KB) stay in the L1 cache.
TILE = 64


@locked_cache
@njit(cache=True, nogil=True)
def symmetrize_tiles(K):
    """In place :math:`K \\leftarrow \\tfrac12 (K + K^\\top)`, tile by tile."""
    n = K.shape[0]
    for top in range(0, n, TILE):
        bottom = min(top + TILE, n)
        for left in range(top, n, TILE):
            right = min(left + TILE, n)
            for a in range(top, bottom):
                for b in range(max(left, a + 1), right):
                    value = (K[a, b] + K[b, a]) * 0.5
                    K[a, b] = value
                    K[b, a] = value
