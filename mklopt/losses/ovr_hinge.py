"""Multiclass one-vs-rest hinge with shared kernel weights: ``loss="ovr_hinge"``.

One binary hinge problem per class :math:`t` (labels :math:`y^t_i = +1` for
class :math:`t`, :math:`-1` otherwise), each with its own offset
:math:`b_t`, all sharing :math:`\\mu\\in\\Theta`:

.. math::

    \\min_{\\mu\\in\\Theta}\\ \\sum_t \\Bigl[\\tfrac12\\sum_m\\frac{\\|w^t_m\\|^2}{\\mu_m}
    + C\\sum_i\\max(0, 1 - y^t_i f^t_i)\\Bigr], \\qquad
    s_m(\\alpha) = \\sum_t (y^t\\circ\\alpha^t)^\\top K_m (y^t\\circ\\alpha^t).

alpha has one row per class; the decision function one column per class
and the prediction is the argmax. Inner solver: one libsvm ``SVC`` per class.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from .._validation import check_class_labels
from ..exceptions import InvalidInputError
from .base import DualPart, Loss, PrimalPart
from .hinge import best_bias, fit_svc, hinge_form, project_alpha

__all__ = ["OvrHinge"]


class OvrHinge(Loss):
    """Sum of one-vs-rest hinge losses over classes, one shared weight vector."""

    name = "ovr_hinge"
    has_fast_inner = True

    def check_labels(self, y, n):
        y, classes = check_class_labels(y, n)
        if classes.size < 2:
            raise InvalidInputError(f"ovr_hinge needs at least two classes, got {classes.size}.")
        return np.where(y[None, :] == classes[:, None], 1.0, -1.0), classes

    def coef(self, alpha, y):
        return y * np.asarray(alpha, dtype=float)

    def project(self, alpha, y, C):
        alpha = np.asarray(alpha, dtype=float).reshape(y.shape)
        return np.stack([project_alpha(a, yt, C) for a, yt in zip(alpha, y)])

    def gain(self, alpha, y, C):
        return float(np.sum(alpha))

    def dual_part(self, y, C):
        alpha = cp.Variable(y.shape, name="alpha")
        coef = cp.multiply(y, alpha)
        return DualPart(alpha, coef, cp.sum(alpha),
                        [alpha >= 0, alpha <= C, cp.sum(coef, axis=1) == 0])

    def data_term(self, outputs, y, C):
        pairs = [best_bias(f, yt) for f, yt in zip(outputs, y)]
        return np.array([b for b, _ in pairs]), C * sum(h for _, h in pairs)

    def primal_part(self, outputs, y, C):
        T, n = y.shape
        b = cp.Variable(T, name="b")
        xi = cp.Variable((T, n), nonneg=True, name="xi")
        offsets = cp.reshape(b, (T, 1), order="C") @ np.ones((1, n))
        margin = cp.multiply(y, outputs + offsets) >= 1 - xi
        return PrimalPart(C * cp.sum(xi), [margin],
                          lambda: np.asarray(margin.dual_value, dtype=float),
                          lambda: np.asarray(b.value, dtype=float))

    def output_lipschitz(self, outputs, y, C, offset):
        return 1.0

    def fit_inner(self, K, y, C, eps, max_iter):
        fits = [fit_svc(K, yt, C, eps, max_iter) for yt in y]
        return np.stack([a for a, _ in fits]), any(hit for _, hit in fits)

    def smo_forms(self, y, C):
        return [hinge_form(yt, C) for yt in y]

    def predict(self, decision, classes):
        return classes[np.argmax(decision, axis=1)]
