"""Blocks of a dense stack in one compiled pass: :math:`K_m[R, C]` of every kernel, and the
weighted block :math:`\\sum_m \\mu_m K_m[F, F]`.

:func:`gather_block` reads each row of R once per kernel and writes the block in order,
with no (|R|·|C|)-long index array as ``take`` wants: the second-order step's
:math:`|F|\\times|SV|` rows of the gradients. :func:`gather_points` copies one-vs-one's pair
stacks (:meth:`~mklopt.kernels.kernelset.KernelSet.points`) and, in the same pass, what
every pair's certificate and fingerprint read of them: each kernel's largest entry and
:math:`K_m W` of the fingerprint's sketch (digits, 45 pairs of ~250 points: the two
passes over each fresh copy took 2.7 ms a pair, more than the copy). :func:`kernels_first` turns the estimators'
precomputed (n, n, M) layout into the stack's (M, n, n), reading each row of points once
and writing M contiguous rows (NumPy's copy of the moved axes reads the array M times), its
points in a given order;
:func:`same_kernels_first` compares such an array with a stack bit for bit, in the same
order, and stops at the first difference.

The second-order step's model (:mod:`~mklopt.drivers._newton_step`) needs
:math:`(K_\\mu)_{FF}` on the free variables F of each step (hundreds of points at C = 100):
in :func:`weighted_block` each row :math:`f_a` of every kernel in use is read once while
that row of the block stays in L1; only the upper triangle is summed (the kernels are
exactly symmetric) and mirrored. The sum runs over the kernels in their order, as
``sum(mu[m] * K[m][np.ix_(F, F)])`` would, so the block is that one bit for bit.
"""

from __future__ import annotations

from numba import njit

from .cache import locked_cache

__all__ = ["gather_block", "gather_points", "weighted_block", "kernels_first", "same_kernels_first"]


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


@locked_cache
@njit(cache=True, nogil=True)
def gather_block(stack, rows, columns, out):
    """``out[m, a, b] = stack[m, rows[a], columns[b]]``, shape (M, |R|, |C|)."""
    for m in range(stack.shape[0]):
        for a in range(rows.size):
            kernel_row, block_row = stack[m, rows[a]], out[m, a]
            for b in range(columns.size):
                block_row[b] = kernel_row[columns[b]]


#: The pair copy's sums and largest entry in any order (SIMD lanes: 0.58 against 0.74 ms a pair
#: of digits); the stack is finite (validated when the set was made).
_SUMS = {"reassoc", "contract", "nnan", "ninf", "nsz"}


@locked_cache
@njit(cache=True, nogil=True, fastmath=_SUMS)
def gather_points(stack, index, W, out, largest, KW):
    """``out[m, a, b] = stack[m, index[a], index[b]]``; ``largest[m]`` the largest
    :math:`|K_{m,ab}|` of the block, ``KW[m] = out[m] @ W`` (W of shape (|I|, 3)), each row
    summed while it is written."""
    for m in range(stack.shape[0]):
        top = 0.0
        for a in range(index.size):
            kernel_row, block_row = stack[m, index[a]], out[m, a]
            s0 = s1 = s2 = 0.0
            for b in range(index.size):
                x = kernel_row[index[b]]
                block_row[b] = x
                top = max(top, abs(x))
                s0 += x * W[b, 0]
                s1 += x * W[b, 1]
                s2 += x * W[b, 2]
            KW[m, a, 0], KW[m, a, 1], KW[m, a, 2] = s0, s1, s2
        largest[m] = top


@locked_cache
@njit(cache=True, nogil=True)
def kernels_first(array, order, out, start, stop):
    """``out[m, i, j] = array[order[i], order[j], m]`` for the rows ``start <= i < stop``; whether
    every value copied is finite (the check on the copy's own reads: no second pass). ``order``
    permutes the points (one-vs-one's pairs read their classes' blocks contiguously); the
    identity copies the array as it is."""
    n, M = array.shape[1], array.shape[2]
    finite = True
    for i in range(start, stop):
        row = array[order[i]]
        for m in range(M):
            target = out[m, i]
            for j in range(n):
                value = row[order[j], m]
                target[j] = value
                finite &= value - value == 0.0
    return finite


@locked_cache
@njit(cache=True, nogil=True)
def same_kernels_first(array, stack, start, stop):
    """Whether ``array[i, j, m] == stack[m, i, j]`` for the rows ``start <= i < stop`` (int64
    views of the float64 values: bit for bit, -0.0 is not 0.0); False at the first difference."""
    n, M = array.shape[1], array.shape[2]
    for i in range(start, stop):
        row = array[i]
        for m in range(M):
            target = stack[m, i]
            for j in range(n):
                if target[j] != row[j, m]:
                    return False
    return True
