"""Feature-space variances of linear and polynomial kernels, from centred data.

The multiplicative normalization (Kloft's thesis, eq. 3.6) divides a kernel by the
variance of its feature map,

.. math::

    v = \\tfrac1n\\operatorname{Tr}K - \\tfrac1{n^2}1^\\top K1
      = \\tfrac1{n^2}\\sum_{i,j}\\big(k(x_i,x_i) - k(x_i,x_j)\\big).

Read off the kernel's entries, this cancels catastrophically when the data lie far from
the origin: a linear kernel of features shifted by :math:`s` has entries of order
:math:`s^2` while :math:`v` is the spread of the data, so at :math:`s = 10^8` the stored
entries carry no digit of it (the divisor came out 4x off). Here the differences are
formed before any large product. With :math:`z_i = x_i - \\bar x` and
:math:`e_{ij} = \\langle x_i, x_i - x_j\\rangle = \\langle z_i, z_i - z_j\\rangle +
\\langle\\bar x, z_i - z_j\\rangle`:

* linear: :math:`v = \\tfrac1n\\sum_i\\|z_i\\|^2`;
* polynomial :math:`(\\gamma\\langle x, x'\\rangle + c_0)^d`, integer :math:`d`: with
  :math:`a_i = \\gamma\\|x_i\\|^2 + c_0` and :math:`u_{ij} = a_i - \\gamma e_{ij}`,
  :math:`a_i^d - u_{ij}^d = \\gamma e_{ij}\\sum_{k<d} a_i^k u_{ij}^{d-1-k}`.

Other kernels (RBF and Laplacian are already computed from centred data, callables) get
NaN: their divisor is read off the kernel. So do polynomial kernels of data near the origin
(offset below :data:`OFFSET_RATIO` times the spread, standardized data among them): there the
entries lose no digits, and the pass over all pairs (seconds at n = 20,000) is not needed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..exceptions import KernelError
from .._compiled.columns import LINEAR, POLY
from .construct import KernelSpec, _is_view
from ._lazy_specs import _parse

__all__ = ["feature_variances", "data_variances"]

#: Rows per block of the polynomial sums (a block of 256 x n doubles at a time).
BLOCK = 256


def feature_variances(X: np.ndarray, specs: Sequence[KernelSpec]) -> np.ndarray:
    """:math:`v_m` of each linear or polynomial spec from centred data; NaN for the others."""
    X = np.asarray(X, dtype=float)
    out = np.full(len(specs), np.nan)
    for m, spec in enumerate(specs):
        columns = spec.index(X.shape[1]) if _is_view(spec) else slice(None)
        data = X[:, columns]
        try:
            kind, (gamma, degree, coef0) = _parse(spec.spec if _is_view(spec) else spec, data.shape[1])
        except KernelError:
            continue
        if kind == LINEAR:
            out[m] = _linear(data)
        elif kind == POLY and _far_from_origin(data):
            out[m] = _polynomial(data, gamma, int(degree), coef0)
    return out


def data_variances(X: np.ndarray, specs: Sequence[KernelSpec], normalization: str | None) -> np.ndarray | None:
    """:func:`feature_variances` for the multiplicative normalization, else None."""
    return feature_variances(X, specs) if normalization == "multiplicative" else None


#: Offsets :math:`\\|\\bar x\\|^2` beyond this many times the spread :math:`\\tfrac1n\\sum\\|z_i\\|^2` make the
#: entries' variance lose more than 3 digits: only then is the O(n^2 d) pass over pairs worth it.
OFFSET_RATIO = 1e3


def _far_from_origin(X: np.ndarray) -> bool:
    """Whether the data sit far enough from the origin for the entries' variance to cancel."""
    centre = X.mean(axis=0)
    spread = float(np.einsum("ij,ij->", X - centre, X - centre)) / X.shape[0]
    return float(centre @ centre) > OFFSET_RATIO * max(spread, 1e-300)


def _linear(X: np.ndarray) -> float:
    Z = X - X.mean(axis=0)
    return float(np.einsum("ij,ij->", Z, Z)) / X.shape[0]


def _polynomial(X: np.ndarray, gamma: float, degree: int, coef0: float) -> float:
    n = X.shape[0]
    centre = X.mean(axis=0)
    Z = X - centre
    sqz = np.einsum("ij,ij->i", Z, Z)
    shift = Z @ centre
    a = gamma * np.einsum("ij,ij->i", X, X) + coef0
    total = 0.0
    for start in range(0, n, BLOCK):
        rows = slice(start, min(start + BLOCK, n))
        e = (sqz[rows, None] - Z[rows] @ Z.T) + (shift[rows, None] - shift[None, :])
        step = gamma * e
        top = a[rows, None]
        u = top - step
        powers = np.zeros_like(u)
        for k in range(degree):
            powers += top**k * u ** (degree - 1 - k)
        total += float(np.sum(step * powers))
    return total / n**2
