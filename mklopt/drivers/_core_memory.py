"""The interleaved core's working memory: its two column caches and the RBF table.

:func:`column_caches` splits the ``cache_mb`` budget of :class:`~mklopt.drivers.chunking.Chunking`
between the columns of :math:`K_\\mu` (valid while the weights are fixed: :class:`KeptColumns`
says when they still hold) and, for kernels
computed on the fly, the inner products :math:`X x_i` (valid for the whole run);
:func:`rbf_table_of` builds the table from which the RBF kernels on the fly are read
(:mod:`mklopt._compiled.rbf_table`).
"""

from __future__ import annotations

import math
import threading

import numpy as np

from ..exceptions import InvalidInputError
from .._compiled.column_cache import new_cache, reset_cache
from .._compiled.columns import LAZY, RBF
from .._compiled.rbf_table import NO_TABLE, kernel_table, rbf_table

__all__ = ["CACHE_MB", "column_caches", "KeptColumns", "rbf_table_of", "shared_kernel_table"]

#: Default memory for cached kernel columns, in MB.
CACHE_MB = 256.0


def column_caches(kernels, cache_mb, views: int, Q: int) -> tuple[tuple, tuple]:
    """(inner-product cache, K_mu column cache) within ``cache_mb`` megabytes.

    K_mu columns live only while the weights are fixed. On a stack or factors they get up to
    one slot per point: at settled weights a chunk makes up to ``MAX_CHUNK * Q`` pairs and the
    columns are kept from step to step, where 2Q + 2 slots recomputed 1.8 columns a pair in
    the SVM's last chunks (digits, C = 100, 400 free variables). On the fly (``views`` > 0: the
    number of views, 1 without them) they get 2Q + 2 and the inner products
    :math:`X x_i`, valid for the whole run, the rest: one product column of every view per point.
    """
    if isinstance(cache_mb, bool) or not isinstance(cache_mb, (int, float, np.number)) \
            or not math.isfinite(cache_mb) or cache_mb <= 0:
        raise InvalidInputError(f"cache_mb must be a positive number of megabytes, got {cache_mb!r}.")
    column_bytes = 8 * kernels.n
    slots = int(cache_mb * 2**20 // column_bytes)
    needed = 2 + views
    if slots < needed:
        raise InvalidInputError(
            f"cache_mb={cache_mb} holds {slots} kernel column(s) of {kernels.n} points; the solver "
            f"needs at least {needed} ({needed * column_bytes / 2**20:.3g} MB): raise cache_mb.")
    combined = min(2 * Q + 2, slots - views) if views else min(kernels.n, slots)
    dots = new_cache(views * kernels.n, (slots - combined) // views) if views else new_cache(kernels.n, 0)
    return dots, new_cache(kernels.n, combined)


class KeptColumns:
    """The :math:`K_\\mu` column cache and what its columns hold: the weights they were made at,
    and the points (a column holds its entries at a step's points only)."""

    def __init__(self, cache: tuple, n: int, M: int) -> None:
        self.cache, self.mu, self.at = cache, np.full(M, np.nan), np.zeros(n, dtype=np.bool_)

    def keep_for(self, mu: np.ndarray, points: np.ndarray) -> None:
        """Forget the columns unless they hold at ``mu`` and ``points``: the same weights, and these
        points among those every column has entries at. The columns made next have entries at
        ``points`` only, so from now on the columns hold there. At settled weights the SVM's
        last chunks then reuse them."""
        if not (np.array_equal(mu, self.mu) and self.at[points].all()):
            reset_cache(self.cache)
            self.mu = mu.copy()
        self.at[:] = False
        self.at[points] = True


def rbf_table_of(oracle: tuple) -> tuple:
    """The RBF table of kernels on the fly (:mod:`mklopt._compiled.rbf_table`); empty otherwise."""
    if oracle[0] != LAZY:
        return NO_TABLE
    kinds, params, rowscale, offsets = oracle[7], oracle[8], oracle[9], oracle[12]
    candidates = (kinds == RBF) & np.all(rowscale == 1.0, axis=1)
    if not candidates.any():
        return NO_TABLE
    # one squared distance serves the table: the RBF kernels of one view (the view with most)
    views, counts = np.unique(offsets[candidates], return_counts=True)
    offset = int(views[np.argmax(counts)])
    n = rowscale.shape[1]
    return rbf_table(oracle[6][offset:offset + n], params[:, 0], candidates & (offsets == offset), offset)


_TABLE_LOCK = threading.Lock()


def shared_kernel_table(kernels, oracle: tuple, table: tuple) -> tuple:
    """The per-kernel table of kernels on the fly (:func:`~mklopt._compiled.rbf_table.kernel_table`),
    built once per kernel set and shared by every solver on it.

    It depends on the kernels, not on the weights or the labels, and is only read: the
    classes of a one-vs-rest fit, side by side on the cores, then read one copy (7 MB for
    50 kernels on letter) and compute one singular value decomposition, instead of one each.
    """
    with _TABLE_LOCK:  # the classes start side by side: the first builds it, the others wait
        if kernels._kernel_table is None:
            kernels._kernel_table = kernel_table(table, oracle[8][:, 0], oracle[10])
        return kernels._kernel_table
