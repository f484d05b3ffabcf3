"""A loss's dual at fixed weights as libsvm's general QP, for the compiled SMO inner solver.

.. math::

    \\min_\\beta\\ \\tfrac12 \\beta^\\top Q \\beta + p^\\top \\beta \\quad\\text{s.t.}\\quad
    s^\\top\\beta = s^\\top\\beta^{(0)},\\ 0 \\le \\beta \\le u, \\qquad Q_{tv} = s_t s_v K[r_t, r_v].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["SmoForm"]


@dataclass(frozen=True)
class SmoForm:
    """One SMO problem: per variable its data point, sign, linear term, bound and a feasible start.

    Attributes
    ----------
    rows : ndarray of int64
        :math:`r_t`, the data point of variable :math:`t`.
    signs : ndarray
        :math:`s_t \\in \\{-1, +1\\}`.
    linear : ndarray
        :math:`p_t`.
    upper : ndarray
        :math:`u_t`.
    start : ndarray
        A feasible :math:`\\beta^{(0)}`; it fixes :math:`\\Delta = s^\\top\\beta^{(0)}`.
    """

    rows: np.ndarray
    signs: np.ndarray
    linear: np.ndarray
    upper: np.ndarray
    start: np.ndarray

    @classmethod
    def build(cls, rows, signs, linear, upper, start) -> "SmoForm":
        size = len(rows)

        def vector(value) -> np.ndarray:  # always a fresh writable copy: one compiled signature
            return np.array(np.broadcast_to(np.asarray(value, dtype=float), (size,)))

        return cls(np.ascontiguousarray(rows, dtype=np.int64), vector(signs), vector(linear),
                   vector(upper), vector(start))

    @property
    def base(self) -> np.ndarray:
        """:math:`-s\\circ p`, the constant part of :math:`F`."""
        return -self.signs * self.linear

    def point_weights(self, beta: np.ndarray, n: int) -> np.ndarray:
        """:math:`w_k = \\sum_{r_t = k} s_t\\beta_t`, so that :math:`Q\\beta = s\\circ (Kw)[r]`."""
        return np.bincount(self.rows, weights=self.signs * beta, minlength=n)
