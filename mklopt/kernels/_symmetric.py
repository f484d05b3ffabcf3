"""Exactly symmetric training kernels, in compiled tiles that release the GIL.

:func:`symmetrize_tiles` makes :math:`K \\leftarrow \\tfrac12 (K + K^\\top)` in place and
:func:`rbf_symmetric` writes :math:`\\tfrac12(E + E^\\top)`, :math:`E = e^{-\\gamma D}`, from a
matrix of squared distances :math:`D` that the GEMM inside scikit-learn's
``euclidean_distances`` leaves a few units of roundoff from symmetric. Both walk the
upper triangle in square tiles of :data:`TILE` rows (a tile and its mirror stay in L1),
each pair of entries read once and both written with the same value, so no transpose of
the whole matrix is formed; the diagonal is left as it is (:math:`\\tfrac12(K_{ii}+K_{ii}) =
K_{ii}` exactly). The values are those of NumPy's ``(K + K.T) * 0.5`` and of
``np.exp(D * -gamma)`` followed by it, bit for bit where NumPy's ``exp`` is libm's (an AVX-512
NumPy has its own, within an ulp). Since they hold no Python lock, kernels are built on
all cores at once (:func:`~mklopt.kernels._stack.map_kernels`).
"""

from __future__ import annotations

import math

from numba import njit

from ._compile_lock import locked_cache

__all__ = ["symmetrize_tiles", "rbf_symmetric", "TILE"]

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


@locked_cache
@njit(cache=True, nogil=True)
def rbf_symmetric(D, gamma, out):
    """``out`` :math:`\\leftarrow \\tfrac12 (E + E^\\top)` with :math:`E = e^{-\\gamma D}`, tile by tile."""
    n = D.shape[0]
    scale = -gamma
    for top in range(0, n, TILE):
        bottom = min(top + TILE, n)
        for left in range(top, n, TILE):
            right = min(left + TILE, n)
            for a in range(top, bottom):
                if left == top:
                    out[a, a] = math.exp(D[a, a] * scale)
                for b in range(max(left, a + 1), right):
                    value = (math.exp(D[a, b] * scale) + math.exp(D[b, a] * scale)) * 0.5
                    out[a, b] = value
                    out[b, a] = value
