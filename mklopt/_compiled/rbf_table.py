"""The RBF part of :math:`K_\\mu` on the fly as one function of the squared distance, tabulated.

For RBF kernels :math:`K_\\mu(x_t, x_i) = \\varphi_\\mu(D_{ti})` with
:math:`D_{ti} = \\|x_t - x_i\\|^2` and

.. math:: \\varphi_\\mu(D) = \\sum_{m\\ \\text{rbf}} \\mu_m c_m e^{-\\gamma_m D}, \\qquad
          \\varphi_\\mu'(D) = -\\sum_m \\mu_m c_m \\gamma_m e^{-\\gamma_m D}.

A column of :math:`K_\\mu` then costs one lookup per point instead of one
exponential per point and kernel. :math:`\\varphi_\\mu` and :math:`\\varphi_\\mu'` are
tabulated once per weight step on knots uniform within each binade of D
(``2**BITS`` per binade: the knots are the floats whose low mantissa bits are
zero, so a point's cell is its bit pattern shifted and its place in the cell its
low bits) and read by cubic Hermite interpolation from one row of four numbers
per cell (the ends' values, and their slopes times the cell's width). In
:math:`v=\\log D` every :math:`e^{-\\gamma D}` is equally smooth, and the interpolation
error of one kernel is at most
:math:`\\max_x x^4e^{-x}/(384\\cdot 2^{4\\,\\text{BITS}}) \\approx 3\\times10^{-12}` of its
weight, whatever :math:`\\gamma`. Below the first knot
:math:`D_0=\\sqrt{2\\epsilon}/\\gamma_{\\max}` the line :math:`\\varphi(0)+\\varphi'(0)D` is
within :math:`\\epsilon = 10^{-12}` of it. The SMO α-steps use these columns, and the
per-kernel gradients are brought up to date between weight steps from tables on the
same knots (:func:`accumulate_tabulated`) of a few functions that span all the kernels
(:func:`kernel_table`: 50 widths in ratios of 1.2 need about 30); the certificate that ends a
fit recomputes the gradients from exact kernel values.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .cache import locked_cache
from .fastexp import as_float, as_int, exp_nonpositive

__all__ = ["rbf_table", "fill_table", "table_column", "NO_TABLE", "kernel_table", "NO_KERNEL_TABLE",
           "accumulate_tabulated", "mix_tabulated", "BASIS_TOLERANCE"]

BITS = 8
_SHIFT = 52 - BITS
_LINEAR_ERROR = 1e-12
_MAX_CELLS = 1 << 16
#: Largest per-kernel table (values and slopes of every kernel on every knot).
KERNEL_TABLE_BYTES = 256 * 2**20
#: Singular values of the per-kernel table kept, relative to its largest entry.
BASIS_TOLERANCE = 1e-13
_MIX_PIECE = 1024  # points per piece of the gradients' update from the basis sums (8 KB a row)
_LOW_BITS = (1 << _SHIFT) - 1
_CELL_FRACTION = 1.0 / (1 << _SHIFT)  # a point's place in its cell: its low bits over the cell's
NO_TABLE = (np.zeros(0, dtype=np.bool_), np.zeros(4), np.zeros(0), np.zeros((0, 4)), np.zeros(0))


def rbf_table(sqn: np.ndarray, gammas: np.ndarray, rbf: np.ndarray, offset: int = 0) -> tuple:
    """An empty table ``(tabulated (M,), [first cell, phi(0), phi'(0), offset], knots, cells, slopes)``.

    ``cells[c] = (phi(k_c), h_c phi'(k_c), phi(k_{c+1}), h_c phi'(k_{c+1}))`` for the cell
    :math:`[k_c, k_{c+1})` of width :math:`h_c`; ``slopes`` holds :math:`\\varphi'` on the knots.

    ``sqn`` are the squared norms of the points (:math:`D \\le 4\\max\\|x\\|^2`),
    ``gammas`` the kernels' widths, ``rbf`` marks the RBF kernels without row
    scaling (all on one view); ``offset`` is where that view's norms and products
    start in the oracle's (:mod:`~mklopt._compiled.columns`). Returns :data:`NO_TABLE`
    when there is nothing to tabulate.
    """
    reach = 4.0 * float(np.max(sqn, initial=0.0))
    tabulated = np.asarray(rbf, dtype=bool).copy()
    if reach <= 0.0 or not tabulated.any():
        return NO_TABLE
    first = np.sqrt(2.0 * _LINEAR_ERROR) / float(np.max(np.asarray(gammas)[tabulated]))
    low = int(np.float64(min(first, reach)).view(np.int64)) >> _SHIFT
    high = (int(np.float64(reach).view(np.int64)) >> _SHIFT) + 1
    if high - low + 1 > _MAX_CELLS:
        return NO_TABLE
    knots = (np.arange(low, high + 1, dtype=np.int64) << _SHIFT).view(np.float64)
    spec = np.array([float(low), 0.0, 0.0, float(offset)])
    return tabulated, spec, knots, np.zeros((knots.size - 1, 4)), np.zeros(knots.size)


@locked_cache
@njit(cache=True, nogil=True)
def fill_table(oracle, mu, table):
    """Tabulate :math:`\\varphi_\\mu` and :math:`\\varphi_\\mu'` for the weights ``mu``."""
    tabulated, spec, knots, cells, slopes = table
    params, scale = oracle[8], oracle[10]
    values = np.zeros(knots.shape[0])
    slopes[:] = 0.0
    spec[1] = 0.0
    spec[2] = 0.0
    for m in range(tabulated.shape[0]):
        w = mu[m] * scale[m]
        if not tabulated[m] or w == 0.0:
            continue
        gamma = params[m, 0]
        spec[1] += w
        spec[2] -= w * gamma
        for k in range(knots.shape[0]):
            e = w * exp_nonpositive(-gamma * knots[k])
            values[k] += e
            slopes[k] -= gamma * e
    for c in range(cells.shape[0]):
        h = knots[c + 1] - knots[c]
        cells[c, 0], cells[c, 1] = values[c], h * slopes[c]
        cells[c, 2], cells[c, 3] = values[c + 1], h * slopes[c + 1]


@locked_cache
@njit(cache=True, inline="always")
def _hermite(D, knots, low, last):
    """Cell ``k`` of ``D`` (``D >= knots[0]``) and the cubic Hermite weights of
    ``(values[k], slopes[k], values[k+1], slopes[k+1])``."""
    k = min((as_int(D) >> _SHIFT) - low, last)
    h = knots[k + 1] - knots[k]
    s = (D - knots[k]) / h
    s2 = s * s
    s3 = s2 * s
    return k, 2.0 * s3 - 3.0 * s2 + 1.0, (s3 - 2.0 * s2 + s) * h, 3.0 * s2 - 2.0 * s3, (s3 - s2) * h


@locked_cache
@njit(cache=True, nogil=True, fastmath={"nnan", "ninf", "nsz", "contract"})
def table_column(oracle, table, i, dot, out, points, start, stop):
    """``out[t] = phi_mu(D[t, i])`` for ``t`` in ``points[start:stop]``, by cubic Hermite
    interpolation (exactly ``phi_mu(0)`` at t = i). Written without branches (the
    linear piece below the first knot and the diagonal are selected) so that it vectorizes."""
    _, spec, knots, cells, _ = table
    n, o = out.shape[0], np.int64(spec[3])  # o: where the tabulated kernels' view starts
    sqn, dot = oracle[6][o:o + n], dot[o:o + n]
    low, phi0, slope0, norm_i = np.int64(spec[0]), spec[1], spec[2], sqn[i]
    first, top = knots[0], as_float(as_int(knots[-1]) - 1)  # top: the last float of the last cell
    for k in range(start, stop):
        t = points[k]
        D = max(sqn[t] + norm_i - 2.0 * dot[t], 0.0)
        bits = as_int(min(max(D, first), top))
        c = (bits >> _SHIFT) - low
        s = (bits & _LOW_BITS) * _CELL_FRACTION
        s2 = s * s
        s3 = s2 * s
        value = ((2.0 * s3 - 3.0 * s2 + 1.0) * cells[c, 0] + (s3 - 2.0 * s2 + s) * cells[c, 1]
                 + (3.0 * s2 - 2.0 * s3) * cells[c, 2] + (s3 - s2) * cells[c, 3])
        value = phi0 + slope0 * D if D < first else value
        out[t] = phi0 if t == i else value


def kernel_table(table: tuple, gammas: np.ndarray, scale: np.ndarray) -> tuple:
    """Per-kernel tables on a shared basis: ``(tabulated, spec, knots, cells (K - 1, 4R), origin (2, R),
    mix (M, R))``.

    The tabulated kernels :math:`c_m e^{-\\gamma_m D}` on the K knots of ``table`` form a
    K × M matrix :math:`E` whose columns are nearly dependent (50 widths in ratios of 1.2,
    on letter's distances, are spanned by about 30 functions). With its singular value decomposition
    :math:`E = U\\Sigma V^\\top` truncated at :data:`BASIS_TOLERANCE` of its largest entry,

    .. math:: c_m e^{-\\gamma_m D} \\approx \\sum_{r<R} b_r(D)\\, V_{mr}, \\qquad
              b_r(D) = \\sum_m c_m e^{-\\gamma_m D}\\, V_{mr},

    so a gradient update interpolates the R functions :math:`b_r` (values and slopes on the
    knots, the line :math:`(b_r(0), b_r'(0))` below the first knot) instead of the M kernels,
    and maps them back with ``mix`` = :math:`V` (zero rows for kernels not tabulated). The
    interpolation is linear in the tabulated data, so the result is the interpolant of the
    projected kernels: within the truncation (on the knots, at most the first singular
    value left out) plus the interpolation error of one kernel. Independent of the weights
    (built once). Above ``KERNEL_TABLE_BYTES`` (many kernels) there is none: the gradients
    are then updated exactly.
    """
    tabulated, spec, knots = table[0], table[1], table[2]
    if not tabulated.shape[0] or 16 * knots.size * tabulated.size > KERNEL_TABLE_BYTES:
        return NO_KERNEL_TABLE
    rates = np.where(tabulated, np.asarray(gammas, dtype=float), 0.0)
    scales = np.where(tabulated, np.asarray(scale, dtype=float), 0.0)
    values = np.exp(-np.outer(knots, rates)) * scales
    mix = _shared_basis(values)
    basis, slopes = values @ mix, (-rates * values) @ mix
    # one contiguous row per cell: its ends' values and slopes, read together
    cells = np.ascontiguousarray(np.hstack([basis[:-1], slopes[:-1], basis[1:], slopes[1:]]))
    origin = np.stack([scales, -rates * scales]) @ mix
    return tabulated, spec.copy(), knots, cells, origin, mix


def _shared_basis(values: np.ndarray) -> np.ndarray:
    """The right singular vectors of ``values`` (K × M) whose singular values exceed
    :data:`BASIS_TOLERANCE` times its largest entry: (M, R), orthonormal columns, then zero
    columns up to a multiple of 8 (the loops over R then run in whole AVX vectors only,
    measured 1.4× faster per point at R = 32 than at R = 30)."""
    _, sigma, Vt = np.linalg.svd(values, full_matrices=False)
    keep = max(1, int(np.count_nonzero(sigma > BASIS_TOLERANCE * np.abs(values).max())))
    mix = np.zeros((values.shape[1], -(-keep // 8) * 8))
    mix[:, :keep] = Vt[:keep].T
    return mix


NO_KERNEL_TABLE = (np.zeros(0, dtype=np.bool_), np.zeros(4), np.zeros(0), np.zeros((0, 0)),
                   np.zeros((2, 0)), np.zeros((0, 0)))


@locked_cache
@njit(cache=True, nogil=True, fastmath={"nnan", "ninf", "nsz", "contract"})
def _tabulated_points(ktable, sqn, index, delta, dots_block, H, start, stop):
    """``H[:, u] += sum_k delta[k] b(D[u, index[k]])`` for u in [start, stop): the basis functions."""
    _, spec, knots, cells, origin, _ = ktable
    low, last, R = np.int64(spec[0]), knots.shape[0] - 2, origin.shape[1]
    acc = np.empty(R)  # a buffer of its own (not a view of H) lets the loops over r vectorize
    for u in range(start, stop):
        acc[:] = 0.0
        for k in range(index.shape[0]):
            t, w = index[k], delta[k]
            D = 0.0 if t == u else max(sqn[u] + sqn[t] - 2.0 * dots_block[k, u], 0.0)
            if D < knots[0]:
                for r in range(R):
                    acc[r] += w * (origin[0, r] + origin[1, r] * D)
                continue
            j, a, b, c, d = _hermite(D, knots, low, last)
            a, b, c, d = w * a, w * b, w * c, w * d
            cell = cells[j]
            for r in range(R):
                acc[r] += a * cell[r] + b * cell[R + r] + c * cell[2 * R + r] + d * cell[3 * R + r]
        for r in range(R):
            H[r, u] += acc[r]


@locked_cache
@njit(cache=True, nogil=True, fastmath={"nnan", "ninf", "nsz", "contract"})
def _mix_points(ktable, H, G, start, stop):
    """``G[m, u] += sum_r mix[m, r] H[r, u]`` for the tabulated kernels and u in [start, stop),
    as contiguous axpys over pieces of the points that stay in the core's first-level cache."""
    tabulated, mix = ktable[0], ktable[5]
    for low in range(start, stop, _MIX_PIECE):
        high = min(low + _MIX_PIECE, stop)
        for m in range(G.shape[0]):
            if tabulated[m]:
                out = G[m, low:high]
                for r in range(mix.shape[1]):
                    c = mix[m, r]
                    if c != 0.0:
                        h = H[r, low:high]
                        for u in range(high - low):
                            out[u] += c * h[u]


@locked_cache
@njit(cache=True, parallel=True, nogil=True)
def _tabulated_blocks(ktable, sqn, index, delta, dots_block, H, blocks):
    n = H.shape[1]
    size = (n + blocks - 1) // blocks
    for b in prange(blocks):
        _tabulated_points(ktable, sqn, index, delta, dots_block, H, b * size, min((b + 1) * size, n))


@locked_cache
@njit(cache=True, parallel=True, nogil=True)
def _mix_blocks(ktable, H, G, blocks):
    n = H.shape[1]
    size = (n + blocks - 1) // blocks
    for b in prange(blocks):
        _mix_points(ktable, H, G, b * size, min((b + 1) * size, n))


@locked_cache
@njit(cache=True, nogil=True)
def accumulate_tabulated(ktable, sqn, index, delta, dots_block, H, blocks=1):
    """``H[:, u] += sum_k delta[k] b(D[u, index[k]])``: the basis functions of :func:`kernel_table`
    at the points, summed over a block of changed points (the cell and the Hermite weights of
    each pair are shared by all R functions); the points are split in ``blocks`` over the cores.
    :func:`mix_tabulated` then adds them to the per-kernel gradients."""
    o, n = np.int64(ktable[1][3]), H.shape[1]  # where the tabulated kernels' view starts
    sqn, dots_block = sqn[o:o + n], dots_block[:, o:o + n]
    if blocks > 1:
        _tabulated_blocks(ktable, sqn, index, delta, dots_block, H, blocks)
    else:
        _tabulated_points(ktable, sqn, index, delta, dots_block, H, 0, n)


@locked_cache
@njit(cache=True, nogil=True)
def mix_tabulated(ktable, H, G, blocks=1):
    """``G[m] += mix[m] @ H`` for the tabulated kernels m: the gradients from the basis functions."""
    if blocks > 1:
        _mix_blocks(ktable, H, G, blocks)
    else:
        _mix_points(ktable, H, G, 0, H.shape[1])
