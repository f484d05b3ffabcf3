"""Centered kernels :math:`K^c = HKH` of a stack, and the same scaled for alignments.

Centered alignments (:mod:`mklopt.alignment`, :meth:`~mklopt.kernels.KernelSet.centered_alignment`)
are ratios of Frobenius products; a kernel's scale cancels in them, but the squares of a kernel
of 1e-160 underflow to 0, so each centered kernel is divided by its largest magnitude first.
"""

from __future__ import annotations

import numpy as np

__all__ = ["centered_kernels", "scaled_centered", "largest_magnitude"]


def centered_kernels(K: np.ndarray) -> np.ndarray:
    """:math:`K_m^c = HK_mH` for a stack (M, n, n), from row and column means (a new array).

    .. math:: K^c_{ij} = K_{ij} - \\bar K_{i\\cdot} - \\bar K_{\\cdot j} + \\bar K_{\\cdot\\cdot}

    Three vectorized passes; :math:`H` is never formed and ``K`` is not modified.
    """
    row = K.mean(axis=2, keepdims=True)
    col = K.mean(axis=1, keepdims=True)
    out = np.subtract(K, row)
    out -= col
    out += row.mean(axis=1, keepdims=True)
    return out


def scaled_centered(K: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The centered kernels, each divided by its largest magnitude (``scales``), as rows
    (M, n n), and the scales (M,)."""
    flat = centered_kernels(K).reshape(K.shape[0], -1)
    scales = np.array([largest_magnitude(row) for row in flat])
    flat /= scales[:, None]  # the new array centered_kernels made
    return flat, scales


def largest_magnitude(values: np.ndarray) -> float:
    """The largest magnitude in ``values`` (1 where all are 0: nothing to scale)."""
    largest = float(np.abs(values).max(initial=0.0))
    return largest if largest > 0 else 1.0
