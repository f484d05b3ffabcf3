"""Kernel columns without the (M, n, n) stack: compiled column oracles and their LRU caches.

One *oracle* describes M kernels over n points in one of three ways, as a
tuple of arrays numba can take (unused slots hold empty arrays):

* ``DENSE``: the validated stack; column :math:`i` of :math:`K_m` is row
  :math:`i` (the kernels are symmetric).
* ``FACTORS``: :math:`K_m = G_m G_m^\\top`, the factors side by side in one
  (n, R) matrix with block offsets; :math:`K_\\mu[:, i] = G\\,(w\\circ G[i])`, w the
  weights repeated over each block.
* ``LAZY``: data X (n, d) and kernel specs (linear, RBF, polynomial). The
  oracle holds the data centred at its mean, :math:`z_t = x_t - \\bar x`. One
  product :math:`Z z_i` (cached) serves every kernel; each kernel maps it
  elementwise, :math:`K_m(t, i) = c_m\\, r_{m,t} r_{m,i}\\, \\kappa_m(\\cdot)` with a
  scalar normalization :math:`c_m` (trace) and row scales :math:`r_m` (spherical
  normalization). RBF kernels read :math:`\\|z_t - z_i\\|^2 = \\|z_t\\|^2 + \\|z_i\\|^2 -
  2\\langle z_t, z_i\\rangle` (clipped at 0, exact on the diagonal: cancellation
  relative to the spread of the data, not to its distance from the origin);
  linear and polynomial kernels read :math:`\\langle x_t, x_i\\rangle = \\langle z_t,
  z_i\\rangle + h_t + h_i` with :math:`h = Z\\bar x + \\tfrac12\\|\\bar x\\|^2` (slot 11).
  Kernels on views (:class:`~mklopt.kernels.views.ViewKernel`) read their view's
  products: the data hold the V views side by side (slot 13: column offsets), a cached
  product column holds the V views' products one after another (length Vn), and
  kernel m reads the block that starts at ``offset[m]`` (slot 12), as do the norms
  (slot 6) and shifts (slot 11). Without views V = 1 and every offset is 0.

Columns and product columns are kept in the LRU caches of
:mod:`~mklopt._compiled.column_cache`; the per-kernel gradients are updated from these
columns in :mod:`~mklopt._compiled.gradient_updates`.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .cache import locked_cache
from .fastexp import exp_nonpositive as _exp
from .column_cache import cached_slot
from .layout import frozen

__all__ = ["DENSE", "FACTORS", "LAZY", "LINEAR", "RBF", "POLY", "dot_column", "products_column", "map_kernel",
           "kernel_entries", "oracle_of", "lazy_oracle", "kernel_diagonals", "product_length"]

DENSE, FACTORS, LAZY = 0, 1, 2
LINEAR, RBF, POLY = 0, 1, 2


@locked_cache
@njit(cache=True, nogil=True)
def _products(X, bounds, i, column, start, stop):
    """``column[v n + t] = <X_v[t], X_v[i]>`` for t in [start, stop) and every view v."""
    n = X.shape[0]
    if bounds.shape[0] <= 2:  # one view: BLAS (several accumulators; a loop here is 4x slower)
        np.dot(X[start:stop], X[i], column[start:stop])
        return
    for v in range(bounds.shape[0] - 1):
        a, b, at = bounds[v], bounds[v + 1], v * n
        for t in range(start, stop):
            total = 0.0
            for c in range(a, b):
                total += X[t, c] * X[i, c]
            column[at + t] = total


@locked_cache
@njit(cache=True, nogil=True, parallel=True)
def _products_blocks(X, bounds, i, column, blocks):
    size = (X.shape[0] + blocks - 1) // blocks
    for b in prange(blocks):
        _products(X, bounds, i, column, b * size, min((b + 1) * size, X.shape[0]))


#: Entries of the data (points × features) from which a product column is split over the cores.
PARALLEL_PRODUCTS = 65_536


@locked_cache
@njit(cache=True, nogil=True)
def products_column(oracle, dots, i):
    """:math:`X x_i` from the cache of inner-product columns (LAZY), on one thread."""
    s, hit = cached_slot(dots, i)
    column = dots[0][s]
    if not hit:
        _products(oracle[5], oracle[13], i, column, 0, oracle[5].shape[0])
    return column


@locked_cache
@njit(cache=True, nogil=True)
def dot_column(oracle, dots, i, blocks=1):
    """:math:`X x_i` from the cache of inner-product columns (LAZY), computed in ``blocks``
    over the cores when it is large."""
    X, bounds = oracle[5], oracle[13]
    s, hit = cached_slot(dots, i)
    column = dots[0][s]
    if not hit:
        if blocks > 1 and X.shape[0] * X.shape[1] >= PARALLEL_PRODUCTS:
            _products_blocks(X, bounds, i, column, blocks)
        else:
            _products(X, bounds, i, column, 0, X.shape[0])
    return column


_FAST = {"nnan", "ninf", "nsz", "contract"}  # no reassociation: the reduction above stays exact


@locked_cache
@njit(cache=True, inline="always")
def shifted_dot(dot, shift, t, shift_i):
    """:math:`\\langle x_t, x_i\\rangle` from the centred product (linear and polynomial kernels)."""
    return dot[t] + shift[t] + shift_i


@locked_cache
@njit(cache=True, inline="always")
def rbf_entry(gamma, sqn, dot, t, norm_i):
    """:math:`e^{-\\gamma\\|z_t - z_i\\|^2}` with the squared distance clipped at 0."""
    return _exp(-gamma * max(sqn[t] + norm_i - 2.0 * dot[t], 0.0))


@locked_cache
@njit(cache=True, inline="always")
def kernel_view(oracle, m, i, dot, weight, n):
    """What kernel m's entries :math:`K_m[\\cdot, i]` read on the fly: ``(kind, gamma, degree, coef0,
    factor, row scales, products, squared norms, shifts, |z_i|^2, shift_i)``, the arrays of its view."""
    kinds, params, rowscale, scale = oracle[7], oracle[8], oracle[9], oracle[10]
    o = oracle[12][m]  # where kernel m's view starts in the products
    dot, sqn, shift = dot[o:o + n], oracle[6][o:o + n], oracle[11][o:o + n]
    return (kinds[m], params[m, 0], params[m, 1], params[m, 2], weight * scale[m] * rowscale[m, i],
            rowscale[m], dot, sqn, shift, sqn[i], shift[i])


@locked_cache
@njit(cache=True, nogil=True, fastmath=_FAST)
def _accumulate(oracle, m, i, dot, weight, out, start, stop):
    """``out[t] += weight * K_m[t, i]`` for t in [start, stop), from the inner products ``dot`` (LAZY)."""
    kind, gamma, degree, coef0, factor, row, dot, sqn, shift, norm_i, shift_i = kernel_view(
        oracle, m, i, dot, weight, out.shape[0])
    if kind == LINEAR:
        for t in range(start, stop):
            out[t] += factor * row[t] * shifted_dot(dot, shift, t, shift_i)
    elif kind == RBF:
        for t in range(start, stop):
            out[t] += factor * row[t] * rbf_entry(gamma, sqn, dot, t, norm_i)
        if start <= i < stop:  # exactly 1 on the diagonal, as scikit-learn's
            out[i] += factor * row[i] * (1.0 - rbf_entry(gamma, sqn, dot, i, norm_i))
    else:
        for t in range(start, stop):
            out[t] += factor * row[t] * (gamma * shifted_dot(dot, shift, t, shift_i) + coef0) ** degree


@locked_cache
@njit(cache=True, nogil=True)
def map_kernel(oracle, m, i, dot, weight, out, accumulate):
    """``out (+)= weight * K_m[:, i]`` from the inner products ``dot`` of point i (LAZY)."""
    if not accumulate:
        out[:] = 0.0
    _accumulate(oracle, m, i, dot, weight, out, 0, out.shape[0])


@locked_cache
@njit(cache=True, nogil=True)
def kernel_entries(oracle, dots, rows, i, out):
    """``out[m, k] = K_m[rows[k], i]`` for every kernel m."""
    kind, stack, F, offsets = oracle[0], oracle[1], oracle[2], oracle[4]
    if kind == LAZY:
        dot = products_column(oracle, dots, i)
        column = np.empty(oracle[9].shape[1])
        for m in range(out.shape[0]):
            map_kernel(oracle, m, i, dot, 1.0, column, False)
            for k in range(rows.shape[0]):
                out[m, k] = column[rows[k]]
        return
    for m in range(out.shape[0]):
        for k in range(rows.shape[0]):
            if kind == DENSE:
                out[m, k] = stack[m, rows[k], i]
            else:
                value = 0.0
                for r in range(offsets[m], offsets[m + 1]):
                    value += F[rows[k], r] * F[i, r]
                out[m, k] = value


_EMPTY1, _EMPTY2, _EMPTY3 = frozen(np.empty(0)), frozen(np.empty((0, 0))), frozen(np.empty((0, 0, 0)))
_NO_INDEX = frozen(np.empty(0), np.int64)


def oracle_of(kernels) -> tuple:
    """The column oracle of a :class:`KernelSet`, :class:`FactorKernelSet` or :class:`LazyKernelSet`.

    Every array of every oracle is read-only (:func:`~mklopt._compiled.layout.frozen`), so
    each compiled function taking an oracle has one signature whatever its kind."""
    if getattr(kernels, "lazy", False):
        return kernels.oracle
    if getattr(kernels, "factored", False):
        owner = np.repeat(np.arange(kernels.M, dtype=np.int64), kernels.ranks)
        return (FACTORS, _EMPTY3, frozen(kernels.G), frozen(owner, np.int64), frozen(kernels.offsets, np.int64),
                _EMPTY2, _EMPTY1, _NO_INDEX, _EMPTY2, _EMPTY2, _EMPTY1, _EMPTY1, _NO_INDEX, _NO_INDEX)
    return (DENSE, frozen(kernels.K), _EMPTY2, _NO_INDEX, _NO_INDEX, _EMPTY2, _EMPTY1, _NO_INDEX, _EMPTY2,
            _EMPTY2, _EMPTY1, _EMPTY1, _NO_INDEX, _NO_INDEX)


def lazy_oracle(X: np.ndarray, kinds: np.ndarray, params: np.ndarray, rowscale: np.ndarray,
                scale: np.ndarray, views: list[np.ndarray] | None = None,
                view_of: np.ndarray | None = None) -> tuple:
    """The oracle of kernels computed on the fly from data ``X`` (see the module docstring).

    ``views`` are the column indices of each view and ``view_of`` the view of each
    kernel; without them every kernel reads all columns.
    """
    X = np.asarray(X, dtype=float)
    n, M = X.shape[0], len(kinds)
    if views is None:
        views, view_of = [np.arange(X.shape[1])], np.zeros(M, dtype=np.int64)
    parts = [X[:, np.asarray(cols, dtype=np.int64)] for cols in views]
    bounds = np.cumsum([0] + [part.shape[1] for part in parts]).astype(np.int64)
    centres = [part.mean(axis=0) for part in parts]
    Z = np.hstack([part - c for part, c in zip(parts, centres)])
    sqn = np.concatenate([np.einsum("ij,ij->i", Z[:, a:b], Z[:, a:b]) for a, b in zip(bounds, bounds[1:])])
    shift = np.concatenate([Z[:, a:b] @ c + 0.5 * float(c @ c)
                            for (a, b), c in zip(zip(bounds, bounds[1:]), centres)])
    return (LAZY, _EMPTY3, _EMPTY2, _NO_INDEX, _NO_INDEX, frozen(Z), frozen(sqn), frozen(kinds, np.int64),
            frozen(params), frozen(rowscale), frozen(scale), frozen(shift),
            frozen(np.asarray(view_of, dtype=np.int64) * n, np.int64), frozen(bounds, np.int64))


def product_length(oracle: tuple) -> int:
    """Length of one cached product column of kernels on the fly (n times the number of views)."""
    return int(oracle[6].shape[0])


def kernel_diagonals(kernels) -> np.ndarray:
    """:math:`K_m(x_i, x_i)`, shape (M, n), for any of the three representations."""
    if hasattr(kernels, "diagonals"):
        return np.asarray(kernels.diagonals(), dtype=float)
    return np.einsum("mii->mi", kernels.K).copy()
