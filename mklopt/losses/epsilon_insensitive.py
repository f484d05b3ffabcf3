"""ε-insensitive loss (support vector regression): ``loss="epsilon_insensitive"``.

.. math::

    \\ell(y, f) = \\max(0, |y - f| - \\varepsilon), \\qquad
    D(\\alpha) = y^\\top\\alpha - \\varepsilon\\|\\alpha\\|_1, \\quad
    A = \\{|\\alpha_i|\\le C,\\ 1^\\top\\alpha = 0\\},

alpha signed (:math:`f = \\sum_m\\mu_m K_m\\alpha + b`). The offset minimizes a
piecewise-linear sum with breakpoints :math:`y_i - f_i \\pm \\varepsilon`.
Inner solver: libsvm ``SVR`` (its ``dual_coef_`` is alpha).
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from .._validation import check_targets
from ..exceptions import InvalidInputError
from ._offset import minimize_piecewise_linear
from ._projection import project_box_hyperplane
from .base import DualPart, Loss, PrimalPart
from .libsvm import run_libsvm
from .smo_form import SmoForm

__all__ = ["EpsilonInsensitive"]


class EpsilonInsensitive(Loss):
    """:math:`\\max(0, |y-f|-\\varepsilon)` for real targets, ``epsilon >= 0`` (default 0.1)."""

    name = "epsilon_insensitive"
    has_fast_inner = True

    def __init__(self, epsilon: float = 0.1) -> None:
        value = float(epsilon) if isinstance(epsilon, (int, float, np.floating)) and not isinstance(epsilon, bool) else None
        if value is None or not (0.0 <= value < np.inf):
            raise InvalidInputError(f"epsilon must be a finite number >= 0, got {epsilon!r}.")
        self.epsilon = value

    def params(self):
        return {"epsilon": self.epsilon}

    def check_labels(self, y, n):
        return check_targets(y, n), None

    def project(self, alpha, y, C):
        return project_box_hyperplane(alpha, np.ones(y.size), 0.0, -C, C)

    def gain(self, alpha, y, C):
        return float(y @ alpha) - self.epsilon * float(np.sum(np.abs(alpha)))

    def dual_part(self, y, C):
        beta = cp.Variable(y.size, name="alpha")
        gain = y @ beta - self.epsilon * cp.norm1(beta)
        return DualPart(beta, beta, gain, [beta <= C, beta >= -C, cp.sum(beta) == 0])

    def data_term(self, outputs, y, C):
        r, eps = y - outputs, self.epsilon

        def value(b: float) -> float:
            return float(np.sum(np.maximum(0.0, np.abs(r - b) - eps)))

        b, h = minimize_piecewise_linear(np.concatenate((r - eps, r + eps)), np.ones(2 * r.size),
                                         -float(r.size), value)
        return b, C * h

    def primal_part(self, outputs, y, C):
        b = cp.Variable(name="b")
        xi = cp.Variable(y.size, nonneg=True, name="xi")
        above = y - outputs - b - self.epsilon <= xi
        below = outputs + b - y - self.epsilon <= xi

        def alpha() -> np.ndarray:
            return np.asarray(above.dual_value, dtype=float) - np.asarray(below.dual_value, dtype=float)

        return PrimalPart(C * cp.sum(xi), [above, below], alpha, lambda: float(b.value))

    def output_lipschitz(self, outputs, y, C, offset):
        return 1.0

    def fit_inner(self, K, y, C, eps, max_iter):
        from sklearn.svm import SVR

        svr = SVR(kernel="precomputed", C=C, epsilon=self.epsilon, tol=eps, max_iter=max_iter)
        hit = run_libsvm(svr, K, y)
        alpha = np.zeros(y.size)
        alpha[svr.support_] = svr.dual_coef_[0]
        return alpha, hit

    def smo_forms(self, y, C):
        """:math:`\\beta = (\\alpha^+, \\alpha^-)` on the same points, :math:`s = (1, -1)`,
        :math:`p = (\\epsilon - y, \\epsilon + y)`, :math:`u = C`; :math:`\\alpha = \\alpha^+ - \\alpha^-`."""
        n = y.size
        return [SmoForm.build(np.tile(np.arange(n), 2), np.repeat([1.0, -1.0], n),
                              np.concatenate((self.epsilon - y, self.epsilon + y)), C, 0.0)]

    def smo_alpha(self, betas, y):
        return betas[0][:y.size] - betas[0][y.size:]

    def smo_betas(self, alpha, y):
        alpha = np.asarray(alpha, dtype=float)
        return [np.concatenate((np.maximum(alpha, 0.0), np.maximum(-alpha, 0.0)))]
