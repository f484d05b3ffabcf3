"""BLAS products of a kernel build by row blocks, on mklopt's own threads.

The matrix products of a build (the Gram matrix or squared distances the RBF kernels share, linear and
polynomial kernels) could run on BLAS's threads. OpenBLAS's threads do not sleep when a call
returns: they wait busily for the next call, for about :math:`2^{28}` cycles (a tenth of a
second). A fit goes on at once with its own threads (the interleaved core's classes side by
side, each with BLAS on one thread), and those waiting threads then take the cores from it:
the default ``MKLClassifier()`` fit on scikit-learn's digits spent a sixth of its time
so. Here each product is split by rows over the cores instead, every block on one BLAS
thread (:func:`~mklopt.kernels._stack.map_kernels`), so that no BLAS thread is left running.

A block's rows are computed by the same function on the same columns as the whole matrix;
only the rows differ.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ._stack import cores, map_kernels

__all__ = ["by_row_blocks", "map_row_blocks", "gram_by_row_blocks", "squared_distances", "rbf_training_kernels",
           "product_training_kernels"]

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


def gram_by_row_blocks(X: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``out`` = :math:`XX^\\top`, each row block's product written in place (no block copied)."""
    map_row_blocks(lambda rows: np.matmul(X[rows], X.T, out=out[rows]), X.shape[0])
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


def rbf_training_kernels(Xc: np.ndarray, gammas: np.ndarray, slots: np.ndarray, out: np.ndarray) -> None:
    """``out[slots[k]] = exp(-gammas[k] * D)`` for the squared distances D of the (centred)
    training points ``Xc``: their Gram matrix by row blocks into ``out[slots[0]]``, then every
    kernel in one compiled pass over its upper triangle (:mod:`~mklopt._compiled.rbf_stack`:
    exactly symmetric, diagonal 1), its tiles split over the cores."""
    from sklearn.utils.extmath import row_norms

    from .._compiled.rbf_stack import rbf_tiles

    slots = np.ascontiguousarray(slots, dtype=np.int64)
    gram = gram_by_row_blocks(Xc, out[slots[0]])
    norms = row_norms(Xc, squared=True)
    gammas = np.ascontiguousarray(gammas, dtype=float)
    _over_tiles(lambda pairs: rbf_tiles(gram, norms, gammas, slots, out, pairs), Xc.shape[0])


def product_training_kernels(X: np.ndarray, gammas: np.ndarray, coef0s: np.ndarray, degrees: np.ndarray,
                             slots: np.ndarray, out: np.ndarray) -> None:
    """``out[slots[k]]`` = the linear kernel of the training points ``X`` (``degrees[k] = 0``) or
    the polynomial :math:`(\\gamma_k XX^\\top + c_k)^{d_k}`: the Gram matrix by row blocks into
    ``out[slots[0]]``, then every kernel in one compiled pass over its upper triangle
    (:mod:`~mklopt._compiled.product_stack`: exactly symmetric), its tiles split over the cores."""
    from .._compiled.product_stack import product_tiles

    slots = np.ascontiguousarray(slots, dtype=np.int64)
    gram = gram_by_row_blocks(X, out[slots[0]])
    forms = (np.ascontiguousarray(gammas, dtype=float), np.ascontiguousarray(coef0s, dtype=float),
             np.ascontiguousarray(degrees, dtype=np.int64))
    _over_tiles(lambda pairs: product_tiles(gram, *forms, slots, out, pairs), X.shape[0])


def _over_tiles(work: Callable[[np.ndarray], None], n: int) -> None:
    """``work(pairs)`` for the tiles of an n x n upper triangle, split evenly over the cores."""
    from .._compiled.rbf_stack import tile_pairs

    pairs = tile_pairs(n)
    parts = max(1, min(cores(), pairs.shape[0]))
    map_kernels(lambda b: work(np.ascontiguousarray(pairs[b::parts])), parts)
