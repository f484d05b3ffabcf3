"""The weighted block :math:`\\sum_m \\mu_m K_m[F, F]` of a dense stack, in one compiled pass.

The second-order step's model (:mod:`~mklopt.drivers._newton_step`) needs
:math:`(K_\\mu)_{FF}` on the free variables F of each step (hundreds of points at C = 100).
Each row :math:`f_a` of every kernel in use is read once while that row of the block
stays in L1; only the upper triangle is summed (the kernels are exactly symmetric) and
mirrored. The sum runs over the kernels in their order, as
``sum(mu[m] * K[m][np.ix_(F, F)])`` would, so the block is that one bit for bit.
"""

from __future__ import annotations

from numba import njit

from .cache import locked_cache

__all__ = ["weighted_block"]


@locked_cache
@njit(cache=True, nogil=True)
def weighted_block(stack, kernels, weights, rows, out):
    """``out[a, b] = sum_k weights[k] * stack[kernels[k], rows[a], rows[b]]``, shape (|F|, |F|)."""
    size = rows.size
    for a in range(size):
        block_row = out[a]
        for b in range(a, size):
            block_row[b] = 0.0
        for k in range(kernels.size):
            kernel_row, weight = stack[kernels[k], rows[a]], weights[k]
            for b in range(a, size):
                block_row[b] += weight * kernel_row[rows[b]]
    for a in range(size):
        for b in range(a + 1, size):
            out[b, a] = out[a, b]
