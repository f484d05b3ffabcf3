"""The linear and polynomial kernels of a training stack from one Gram matrix: each entry's value.

scikit-learn's ``linear_kernel`` is :math:`G = XX^\\top` and its ``polynomial_kernel``
``K = XX^\\top; K *= gamma; K += coef0; K **= degree``, so every such kernel of a training
stack is an entrywise function of the same :math:`G`:

.. math:: K_k = G \\quad\\text{(linear)},\\qquad K_k = (\\gamma_k G + c_k)^{d_k}\\quad\\text{(polynomial)}.

:math:`G` is made once (a BLAS product) and each kernel is written from its upper triangle at
:math:`(i, j)` and :math:`(j, i)`: the kernels are exactly symmetric by construction, whatever
the BLAS summed in which order, so that the validation scan need not compare them with their
transposes, and one matrix product serves them all where each kernel made its own before.
The operations are scikit-learn's, in its order (a power of 1 or 2 is the value or its
square, as NumPy's ``**=`` takes them; another power is libm's ``pow``, within a unit of
roundoff of NumPy's). :math:`G` may be one of the
kernels' own slots: only its upper triangle is read, each tile copied to a buffer before any
kernel of it is written (a diagonal tile's lower half from its upper half), and mirrors go
below the diagonal only. The pass itself, with the RBF kernels', is
:mod:`~mklopt._compiled.training_stack`'s.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .cache import locked_cache

__all__ = ["entry", "upper_tile", "LINEAR"]

#: The degree that marks a linear kernel (``gammas``, ``coef0s`` ignored for it).
LINEAR = 0


@locked_cache
@njit(cache=True, nogil=True, inline="always")
def entry(g, gamma, coef0, degree):
    """One kernel entry from the Gram matrix's entry ``g``, as scikit-learn computes it."""
    if degree == LINEAR:
        return g
    base = g * gamma + coef0
    if degree == 1:
        return base
    if degree == 2:
        return base * base
    return base ** np.float64(degree)


@locked_cache
@njit(cache=True, nogil=True, inline="always")
def upper_tile(G, top, left, rows, columns, tile):
    """The tile of G at (top, left) from G's upper triangle only (a diagonal tile mirrored)."""
    for r in range(rows):
        first = r if top == left else 0
        for c in range(first, columns):
            tile[r, c] = G[top + r, left + c]
    if top == left:
        for r in range(rows):
            for c in range(r + 1, columns):
                tile[c, r] = tile[r, c]
