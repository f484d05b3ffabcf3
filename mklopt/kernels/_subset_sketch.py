"""A fingerprint of a kernel set on a few points, which every representation computes cheaply.

:math:`W^\\top K_m[I, I] W` for a fixed pseudo-random subset I of the points (at most 24) and
a fixed (|I|, 3) matrix W, both seeded by the number of points: a dense stack reads its
entries, low-rank factors and kernels on the fly compute them (one column oracle call per
point of I). Results carry it (:mod:`mklopt.certificates.fingerprint`), so that a result can
be checked against kernels given in another representation.
"""

from __future__ import annotations

import functools

import numpy as np

from .._compiled.column_cache import new_cache
from .._compiled.columns import kernel_entries, oracle_of, product_length
from ._stack import dense_stack

__all__ = ["subset_sketch"]


@functools.lru_cache(maxsize=64)
def _subset_probes(n: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The subset sketch's points (sorted, int64) and its (size, 3) matrix :math:`W` for ``n``
    points: fixed by ``n``, made once and shared by every call (W read-only; the index stays
    writeable, as the compiled entries' signature has it, and is only read)."""
    rng = np.random.default_rng(n)
    index = np.sort(rng.choice(n, size=min(size, n), replace=False)).astype(np.int64)
    W = rng.standard_normal((index.size, 3))
    W.flags.writeable = False
    return index, W


def subset_sketch(kernels, size: int = 24) -> np.ndarray:
    """:math:`W^\\top K_m[I, I] W` on a fixed pseudo-random subset I of the points, shape (M, 3, 3).

    A fingerprint any kernel representation computes cheaply (dense, factors,
    on the fly): entries of the kernels on at most ``size`` points.
    """
    index, W = _subset_probes(kernels.n, size)
    if dense_stack(kernels):
        block = kernels.K[:, index[:, None], index]  # a dense stack: its entries (no compiled code)
        return W.T @ block @ W
    block = np.empty((kernels.M, index.size, index.size))
    column = np.empty((kernels.M, index.size))
    oracle = oracle_of(kernels)
    dots = new_cache(product_length(oracle) if getattr(kernels, "lazy", False) else kernels.n, 1)
    for k, i in enumerate(index):
        kernel_entries(oracle, dots, index, i, column)
        block[:, :, k] = column
    return W.T @ block @ W
