"""Squared loss (kernel ridge regression with an offset): ``loss="squared_error"``.

.. math::

    \\ell(y, f) = \\tfrac12 (y - f)^2, \\qquad
    D(\\alpha) = y^\\top\\alpha - \\frac{\\|\\alpha\\|^2}{2C}, \\quad
    A = \\{1^\\top\\alpha = 0\\},

alpha signed. The best offset is the mean residual. At fixed :math:`K_\\mu` the
problem is the linear system
:math:`(K_\\mu + I/C)\\,\\alpha + b\\,1 = y,\\ 1^\\top\\alpha = 0`, solved with a
Cholesky factor of :math:`K_\\mu + I/C` (positive definite) and the
Schur complement for :math:`b`.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from .._validation import check_targets
from ..exceptions import SolverError
from .base import DualPart, Loss, PrimalPart

__all__ = ["SquaredError", "half_weighted_square"]


def half_weighted_square(v: np.ndarray, weight: float) -> float:
    """:math:`\\tfrac12\\,w\\,\\|v\\|^2`, scaled before squaring.

    Written as :math:`\\tfrac12 (\\sqrt{w}\\,a)^2 \\|v/a\\|^2` with :math:`a = \\max_i|v_i|`,
    so that neither :math:`\\|v\\|^2` nor :math:`w` under- or overflows on its own
    (at :math:`C = 10^{-170}`, :math:`\\|\\alpha\\|^2` is :math:`10^{-340}`, below the
    smallest double, while :math:`\\|\\alpha\\|^2/(2C)` is :math:`10^{-170}`).
    """
    v = np.asarray(v, dtype=float)
    a = float(np.max(np.abs(v), initial=0.0))
    if a == 0.0 or not np.isfinite(a):
        return 0.0 if a == 0.0 else np.inf
    unit = v / a
    return 0.5 * (np.sqrt(weight) * a) ** 2 * float(unit @ unit)


class SquaredError(Loss):
    """:math:`\\tfrac12(y-f)^2` for real targets."""

    name = "squared_error"
    has_fast_inner = True

    def check_labels(self, y, n):
        return check_targets(y, n), None

    def project(self, alpha, y, C):
        a = np.asarray(alpha, dtype=float)
        return a - np.mean(a)

    def gain(self, alpha, y, C):
        return float(y @ alpha) - half_weighted_square(alpha, 1.0 / C)

    def dual_part(self, y, C):
        beta = cp.Variable(y.size, name="alpha")
        return DualPart(beta, beta, y @ beta - cp.sum_squares(beta) / (2.0 * C), [cp.sum(beta) == 0])

    def data_term(self, outputs, y, C):
        r = y - outputs
        b = float(np.mean(r))
        return b, half_weighted_square(r - b, C)

    def primal_part(self, outputs, y, C):
        b = cp.Variable(name="b")
        term = 0.5 * C * cp.sum_squares(y - outputs - b)

        def alpha() -> np.ndarray:
            return C * (y - np.asarray(outputs.value, dtype=float) - float(b.value))

        return PrimalPart(term, [], alpha, lambda: float(b.value))

    def output_lipschitz(self, outputs, y, C, offset):
        return float(np.max(np.abs(y - outputs - offset))) + 1.0

    def fit_inner(self, K, y, C, eps, max_iter):
        from scipy.linalg import LinAlgError, cho_factor, cho_solve

        H = K + np.eye(y.size) / C
        try:
            factor = cho_factor(H, overwrite_a=True)
        except LinAlgError:
            raise SolverError("K_mu + I/C is not positive definite: the kernels are not PSD.") from None
        h_y, h_1 = cho_solve(factor, np.column_stack((y, np.ones(y.size)))).T
        b = float(np.sum(h_y) / np.sum(h_1))
        return h_y - b * h_1, False
