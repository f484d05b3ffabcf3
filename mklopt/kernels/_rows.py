"""BLAS products of a kernel build by row blocks, on mklopt's own threads.

The matrix products of a build (the Gram matrix or squared distances the RBF kernels share, linear and
polynomial kernels) could run on BLAS's threads. OpenBLAS's threads do not sleep when a call
returns: they wait busily for the next call, for about :math:`2^{28}` cycles (a tenth of a
second). A fit goes on at once with its own threads (the interleaved core's classes side by
side, each with BLAS on one thread), and those waiting threads then take the cores from it:
the default ``MKLClassifier()`` fit on scikit-learn's digits spent a sixth of its time
so. Here each product is split by rows over the cores instead, every block on one BLAS
thread (:func:`~mklopt.kernels._stack.map_kernels`), so that no BLAS thread is left running.

A block's entries are computed by the same function as the whole matrix's; the blocks
differ in their rows and, for the upper triangle of a Gram matrix (:func:`upper_gram`), in
their first column (OpenBLAS sums each entry in the same order whatever the block: the
product kernels are scikit-learn's bit for bit, tested).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._compiled.rbf_stack import tile_pairs
from .._compiled.training_stack import HIGHEST, LOWEST
from ._stack import cores, map_kernels

__all__ = ["by_row_blocks", "map_row_blocks", "upper_gram", "squared_distances", "training_kernels"]

#: Fewest rows in a block (a block's product must outweigh handing it to a thread).
MIN_ROWS = 64


def map_row_blocks(work: Callable[[slice], None], n: int) -> None:
    """``work(r)`` for a few blocks ``r`` of the rows ``0 … n-1`` (at least :data:`MIN_ROWS`
    each), on all cores, with BLAS on one thread in each."""
    blocks = max(1, min(cores(), n // MIN_ROWS))
    edges = np.linspace(0, n, blocks + 1).astype(int)
    map_kernels(lambda b: work(slice(int(edges[b]), int(edges[b + 1]))), blocks)


def by_row_blocks(rows: Callable[[slice], np.ndarray], out: np.ndarray) -> np.ndarray:
    """``out[r] = rows(r)`` for a few row blocks ``r`` of ``out`` (:func:`map_row_blocks`)."""

    def fill(block: slice) -> None:
        out[block] = rows(block)

    map_row_blocks(fill, out.shape[0])
    return out


def upper_gram(X: np.ndarray, out: np.ndarray) -> np.ndarray:
    """The upper triangle and diagonal of ``out`` = :math:`XX^\\top`, by row blocks of about equal
    area: rows ``a:b`` against the rows from ``a`` on only, each block's product written in
    place (the entries below the diagonal are left as they were; half the work of the whole)."""
    n = X.shape[0]
    blocks = max(1, min(2 * cores(), n // MIN_ROWS))
    edges = np.unique(np.rint(n * (1.0 - np.sqrt(1.0 - np.arange(blocks + 1) / blocks))).astype(int))

    def block(b: int) -> None:
        a, z = int(edges[b]), int(edges[b + 1])
        np.matmul(X[a:z], X[a:].T, out=out[a:z, a:])

    map_kernels(block, edges.size - 1)
    return out


def squared_distances(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """scikit-learn's ``euclidean_distances(X, Y, squared=True)`` by row blocks: clipped at 0,
    and with ``Y is X`` an exactly zero diagonal."""
    from sklearn.metrics.pairwise import euclidean_distances
    from sklearn.utils.extmath import row_norms

    XX = row_norms(X, squared=True)[:, None]
    YY = XX.T if Y is X else row_norms(Y, squared=True)[None, :]

    def rows(block: slice) -> np.ndarray:
        D = euclidean_distances(X[block], Y, X_norm_squared=XX[block], Y_norm_squared=YY, squared=True)
        if Y is X:
            D[np.arange(D.shape[0]), np.arange(block.start, block.stop)] = 0.0
        return D

    return by_row_blocks(rows, np.empty((X.shape[0], Y.shape[0])))


def training_kernels(X: np.ndarray, Xc: np.ndarray, gammas: np.ndarray, rbf_slots: np.ndarray,
                     forms: np.ndarray, product_slots: np.ndarray, out: np.ndarray) -> np.ndarray:
    """The RBF kernels ``out[rbf_slots[k]] = exp(-gammas[k] D)`` (D the squared distances of the
    training points ``X``, read from the centred points ``Xc``) and the linear and polynomial
    ones ``out[product_slots[k]]`` (``forms`` (k, 3): the rows ``(gamma, coef0, degree)`` of
    :func:`~mklopt.kernels._named.product_form`),
    from the upper triangles of the Gram matrices of the centred points and of X (each by row
    blocks into the first slot of its kernels), in one compiled pass over their tiles split over
    the cores (:mod:`~mklopt._compiled.training_stack`: exactly symmetric, the RBF diagonals
    exactly 1, the products scikit-learn's bit for bit). Returns each kernel's largest and
    smallest entries, shape (M, 2) (NaN for the other slots, and for a kernel with an entry that
    is not finite)."""
    from sklearn.utils.extmath import row_norms

    from .._compiled.training_stack import training_tiles

    rbf_slots = np.ascontiguousarray(rbf_slots, dtype=np.int64)
    product_slots = np.ascontiguousarray(product_slots, dtype=np.int64)
    forms = np.asarray(forms, dtype=float).reshape(-1, 3)
    gram = upper_gram(X, out[product_slots[0]]) if product_slots.size else None
    if rbf_slots.size:
        centred, norms = upper_gram(Xc, out[rbf_slots[0]]), row_norms(Xc, squared=True)
    else:
        centred, norms = gram, np.empty(0)
    arguments = (centred, norms, centred if gram is None else gram, np.ascontiguousarray(gammas, dtype=float),
                 rbf_slots, np.ascontiguousarray(forms[:, 0]), np.ascontiguousarray(forms[:, 1]),
                 np.ascontiguousarray(forms[:, 2]).astype(np.int64), product_slots, out)
    pairs = tile_pairs(X.shape[0])
    parts = max(1, min(cores(), pairs.shape[0]))
    extremes = np.empty((parts, out.shape[0], 2))
    extremes[:, :, HIGHEST], extremes[:, :, LOWEST] = -np.inf, np.inf
    map_kernels(lambda b: training_tiles(*arguments, np.ascontiguousarray(pairs[b::parts]), extremes[b]), parts)
    found = np.full((out.shape[0], 2), np.nan)
    slots = np.concatenate([rbf_slots, product_slots])
    found[slots, HIGHEST] = extremes[:, slots, HIGHEST].max(axis=0)
    found[slots, LOWEST] = extremes[:, slots, LOWEST].min(axis=0)
    return found
