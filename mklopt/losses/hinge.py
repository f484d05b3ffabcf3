"""Binary hinge loss (the soft-margin SVM): ``loss="hinge"``.

.. math::

    \\ell(y, f) = \\max(0, 1 - y f), \\qquad
    D(\\alpha) = 1^\\top\\alpha, \\quad
    A = \\{0\\le\\alpha\\le C,\\ y^\\top\\alpha = 0\\}, \\quad c(\\alpha) = y\\circ\\alpha.

The offset :math:`b^*` minimizes :math:`\\sum_i\\max(0, 1-y_i(f_i+b))` exactly
(breakpoints :math:`b = y_i - f_i`). Inner solver: libsvm ``SVC``.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from .._validation import check_labels
from ._projection import project_box_hyperplane
from .base import DualPart, Loss, PrimalPart
from .smo_form import SmoForm

__all__ = ["Hinge", "project_alpha", "best_bias", "hinge_sum", "fit_svc"]


def project_alpha(alpha: np.ndarray, y: np.ndarray, C: float) -> np.ndarray:
    """Euclidean projection onto :math:`\\{0 \\le \\alpha \\le C,\\ y^\\top\\alpha = 0\\}`.

    The projection is :math:`\\mathrm{clip}(\\alpha - \\lambda y, 0, C)` with the
    scalar :math:`\\lambda` found by bisection on the monotone residual.
    """
    return project_box_hyperplane(alpha, y, 0.0, 0.0, C)


def hinge_sum(margins_offset: np.ndarray, y: np.ndarray, b: float) -> float:
    """:math:`\\sum_i \\max(0, 1 - y_i(f_i + b))` for ``margins_offset = f``."""
    terms = np.add(margins_offset, b)  # one temporary, changed in place (every step of a fit)
    np.multiply(y, terms, out=terms)
    np.subtract(1.0, terms, out=terms)
    return float(np.maximum(terms, 0.0, out=terms).sum())


def best_bias(f: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Exact minimizer of :math:`h(b) = \\sum_i \\max(0, 1 - y_i(f_i + b))`.

    :math:`h` is convex piecewise linear with breakpoints :math:`c_i = y_i - f_i`;
    with :math:`P = \\{i: y_i = 1\\}`, :math:`N = \\{i: y_i=-1\\}`,
    :math:`h(b) = \\sum_{P}(c_i - b)_+ + \\sum_{N}(b - c_i)_+`. Between the j-th and
    the (j+1)-th smallest breakpoints :math:`c_{(j)} < b < c_{(j+1)}` its slope is

    .. math::

        h'(b) = |\\{i \\in N: c_i < b\\}| - |\\{i \\in P: c_i > b\\}| = j - |P|,

    whatever the labels of the breakpoints below :math:`b`, so :math:`h` is minimal
    exactly on :math:`[c_{(|P|)}, c_{(|P|+1)}]`, two order statistics (one partial
    sort, O(n)); its midpoint is returned. With one class only, the minimum is
    attained on a half-line: its end, the extreme breakpoint, is returned.

    Returns
    -------
    (b, h(b))
    """
    c = y - f
    positives = int(np.count_nonzero(y > 0))
    if positives == 0:
        b = float(np.min(c))
    elif positives == c.size:
        b = float(np.max(c))
    else:
        ends = np.partition(c, (positives - 1, positives))
        b = 0.5 * (float(ends[positives - 1]) + float(ends[positives]))
    return b, hinge_sum(f, y, b)


def hinge_form(y: np.ndarray, C: float) -> SmoForm:
    """The SVM dual as an SMO problem: :math:`\\beta = \\alpha`, :math:`s = y`, :math:`p = -1`, :math:`u = C`."""
    return SmoForm.build(np.arange(y.size), y, -1.0, C, 0.0)


def fit_svc(K: np.ndarray, y: np.ndarray, C: float, eps: float, max_iter: int):
    """libsvm ``SVC`` on a precomputed kernel: ``(alpha >= 0, stopped_at_budget)``."""
    from sklearn.svm import SVC

    from .libsvm import run_libsvm

    svc = SVC(kernel="precomputed", C=C, tol=eps, max_iter=max_iter)
    hit = run_libsvm(svc, K, y)
    alpha = np.zeros(y.size)
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    return alpha, hit


class Hinge(Loss):
    """:math:`\\ell(y, f) = \\max(0, 1 - yf)`, labels in two classes (mapped to ±1)."""

    name = "hinge"
    has_fast_inner = True

    def check_labels(self, y, n):
        return check_labels(y, n)

    def coef(self, alpha, y):
        return y * np.asarray(alpha, dtype=float)

    def project(self, alpha, y, C):
        return project_alpha(alpha, y, C)

    def gain(self, alpha, y, C):
        return float(np.asarray(alpha).sum())

    def dual_part(self, y, C):
        alpha = cp.Variable(y.size, name="alpha")
        return DualPart(alpha, cp.multiply(y, alpha), cp.sum(alpha),
                        [alpha >= 0, alpha <= C, y @ alpha == 0])

    def data_term(self, outputs, y, C):
        b, h = best_bias(outputs, y)
        return b, C * h

    def primal_part(self, outputs, y, C):
        b = cp.Variable(name="b")
        xi = cp.Variable(y.size, nonneg=True, name="xi")
        margin = cp.multiply(y, outputs + b) >= 1 - xi
        return PrimalPart(C * cp.sum(xi), [margin], lambda: np.asarray(margin.dual_value, dtype=float),
                          lambda: float(b.value))

    def output_lipschitz(self, outputs, y, C, offset):
        return 1.0

    def fit_inner(self, K, y, C, eps, max_iter):
        return fit_svc(K, y, C, eps, max_iter)

    def smo_forms(self, y, C):
        return [hinge_form(y, C)]

    def predict(self, decision, classes):
        classes = classes if classes is not None else np.array([-1, 1])
        return np.where(decision >= 0, classes[1], classes[0])
