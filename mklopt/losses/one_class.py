"""One-class ν-SVM (novelty detection, no labels): ``loss="one_class"``.

.. math::

    \\min_{\\mu\\in\\Theta, w, \\rho}\\ \\tfrac12\\sum_m\\frac{\\|w_m\\|^2}{\\mu_m} - \\rho
    + \\frac{1}{\\nu n}\\sum_i (\\rho - f_i)_+, \\qquad
    D(\\alpha) = 0, \\quad A = \\{0\\le\\alpha\\le\\tfrac{1}{\\nu n},\\ 1^\\top\\alpha = 1\\}.

ν ∈ (0, 1] replaces C (which must stay 1). The offset :math:`\\rho` minimizes
a piecewise-linear sum with breakpoints :math:`f_i`; the decision function
is :math:`f(x) - \\rho` (the result's ``bias`` is :math:`-\\rho`), positive for
inliers. Inner solver: libsvm ``OneClassSVM``, whose coefficients sum to
:math:`\\nu n` (divided by :math:`\\nu n` here); at :math:`\\nu = 1` the dual set is
the single point :math:`\\alpha = 1/n`, taken in closed form (libsvm fails there).
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from ..exceptions import InvalidInputError
from ._offset import minimize_piecewise_linear
from ._projection import project_box_hyperplane
from .base import DualPart, Loss, PrimalPart
from .libsvm import run_libsvm
from .smo_form import SmoForm

__all__ = ["OneClass"]


class OneClass(Loss):
    """ν-one-class loss; ``nu`` in (0, 1] bounds the fraction of outliers (default 0.5)."""

    name = "one_class"
    uses_C = False
    has_fast_inner = True

    def __init__(self, nu: float = 0.5) -> None:
        ok = isinstance(nu, (int, float, np.floating)) and not isinstance(nu, bool)
        if not ok or not (0.0 < float(nu) <= 1.0):
            raise InvalidInputError(f"nu must be a number in (0, 1], got {nu!r}.")
        self.nu = float(nu)

    def params(self):
        return {"nu": self.nu}

    def check_labels(self, y, n):
        if y is not None and np.shape(y)[:1] != (n,):
            raise InvalidInputError(f"one_class ignores y, but got {np.shape(y)} labels for {n} points.")
        return np.ones(n), None

    def _upper(self, n: int) -> float:
        return 1.0 / (self.nu * n)

    def project(self, alpha, y, C):
        return project_box_hyperplane(alpha, np.ones(y.size), 1.0, 0.0, self._upper(y.size))

    def gain(self, alpha, y, C):
        return 0.0

    def dual_part(self, y, C):
        alpha = cp.Variable(y.size, name="alpha")
        return DualPart(alpha, alpha, cp.Constant(0.0),
                        [alpha >= 0, alpha <= self._upper(y.size), cp.sum(alpha) == 1])

    def data_term(self, outputs, y, C):
        slope = self._upper(y.size)

        def value(rho: float) -> float:
            return -rho + slope * float(np.sum(np.maximum(0.0, rho - outputs)))

        rho, h = minimize_piecewise_linear(outputs, np.full(outputs.size, slope), -1.0, value)
        return -rho, h

    def primal_part(self, outputs, y, C):
        rho = cp.Variable(name="rho")
        xi = cp.Variable(y.size, nonneg=True, name="xi")
        margin = rho - outputs <= xi
        return PrimalPart(-rho + self._upper(y.size) * cp.sum(xi), [margin],
                          lambda: np.asarray(margin.dual_value, dtype=float),
                          lambda: -float(rho.value))

    def output_lipschitz(self, outputs, y, C, offset):
        return 1.0 / (self.nu * y.size)

    def fit_inner(self, K, y, C, eps, max_iter):
        from sklearn.svm import OneClassSVM

        if self.nu == 1.0:  # A is the single point alpha = 1/n (libsvm fails there)
            return np.full(y.size, 1.0 / y.size), False
        model = OneClassSVM(kernel="precomputed", nu=self.nu, tol=eps, max_iter=max_iter)
        hit = run_libsvm(model, K, None)
        alpha = np.zeros(y.size)
        alpha[model.support_] = model.dual_coef_[0] / (self.nu * y.size)
        return alpha, hit

    def smo_forms(self, y, C):
        """:math:`s = 1`, :math:`p = 0`, :math:`u = 1/(\\nu n)`, from the feasible :math:`\\alpha = 1/n`."""
        n = y.size
        return [SmoForm.build(np.arange(n), 1.0, 0.0, self._upper(n), 1.0 / n)]

    def predict(self, decision, classes):
        return np.where(decision >= 0, 1, -1)
