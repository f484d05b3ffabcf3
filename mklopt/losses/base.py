"""The :class:`Loss` interface: everything of an MKL problem that depends on the loss.

Every loss shares one objective (the Losses page),

.. math::

    \\min_{\\mu\\in\\Theta,\\,w,\\,b}\\ \\tfrac12\\sum_m \\frac{\\|w_m\\|^2}{\\mu_m}
    + C\\sum_i \\ell(y_i, f_i), \\qquad f = \\sum_m K_m\\beta_m + b,

and one dual,

.. math::

    \\max_{\\alpha\\in A_\\ell}\\ D_\\ell(\\alpha) - \\tfrac12\\,\\sigma_\\Theta\\bigl(s(\\alpha)\\bigr),
    \\qquad s_m(\\alpha) = \\sum_t c_t(\\alpha)^\\top K_m\\, c_t(\\alpha),

where :math:`c(\\alpha)` are the signed coefficients of the decision function
(:math:`c = y\\circ\\alpha` for the hinge, :math:`c = \\alpha` otherwise; one row
per task for multi-output losses). A loss says what :math:`D_\\ell`,
:math:`A_\\ell` (and the projection onto it), :math:`c(\\alpha)` and the exact best
offset are, builds its part of the CVXPY models, and may bring a fast inner
solver for a fixed :math:`K_\\mu`. Formulations, drivers and certificates only
talk to this interface (the style of skglm's datafits).
"""

from __future__ import annotations

from typing import Any

import cvxpy as cp
import numpy as np

__all__ = ["Loss", "DualPart", "PrimalPart"]


class DualPart:
    """The loss's part of a CVXPY dual model.

    Attributes
    ----------
    alpha : cp.Variable
        The dual variable (shape of the loss's alpha).
    coef : cp.Expression
        Signed coefficients :math:`c(\\alpha)`, shape ``(n,)`` or ``(T, n)``.
    gain : cp.Expression
        :math:`D_\\ell(\\alpha)` (concave).
    constraints : list
        :math:`\\alpha\\in A_\\ell` (and the offset's equality).
    """

    def __init__(self, alpha, coef, gain, constraints) -> None:
        self.alpha, self.coef, self.gain, self.constraints = alpha, coef, gain, constraints


class PrimalPart:
    """The loss's part of a CVXPY primal model on given outputs :math:`f` (offset excluded).

    Attributes
    ----------
    term : cp.Expression
        :math:`C\\sum_i\\ell(y_i, f_i + b)` (convex), the offset a variable inside.
    constraints : list
    alpha : callable
        ``alpha() -> ndarray``: the loss's dual variable from the multipliers, after a solve.
    offset : callable
        ``offset() -> float or ndarray``: the bias added to :math:`f` in the decision function.
    """

    def __init__(self, term, constraints, alpha, offset) -> None:
        self.term, self.constraints, self.alpha, self.offset = term, constraints, alpha, offset


class Loss:
    """A loss :math:`\\ell(y, f)` of the MKL objective; subclass it to add one.

    A subclass sets :attr:`name` and implements :meth:`check_labels`,
    :meth:`coef`, :meth:`project`, :meth:`gain`, :meth:`data_term`,
    :meth:`dual_part` and :meth:`primal_part`; :meth:`fit_inner` (a fast
    solver at fixed :math:`K_\\mu`) and :meth:`predict` are optional. Labels
    are mapped once by :meth:`check_labels` to the loss's internal form
    (``y`` below), shape ``(n,)``, or ``(T, n)`` for multi-output losses.
    """

    name = "loss"
    #: Does the objective use C? (The one-class loss has ν instead.)
    uses_C = True
    #: Is there a libsvm-class inner solver (``fit_inner``)?
    has_fast_inner = False

    # ------------------------------------------------------------ labels
    def check_labels(self, y, n: int) -> tuple[np.ndarray, np.ndarray | None]:
        """``(y_internal, classes)``; raises :class:`InvalidInputError` for labels that don't fit."""
        raise NotImplementedError

    def n_tasks(self, y: np.ndarray) -> int:
        """Number of output rows :math:`T` (1 unless multi-output)."""
        return 1 if y.ndim == 1 else y.shape[0]

    # -------------------------------------------------------------- dual
    def coef(self, alpha: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Signed coefficients :math:`c(\\alpha)` (default: alpha itself)."""
        return np.asarray(alpha, dtype=float)

    def project(self, alpha: np.ndarray, y: np.ndarray, C: float) -> np.ndarray:
        """Euclidean projection of alpha onto the dual-feasible set :math:`A_\\ell`."""
        raise NotImplementedError

    def gain(self, alpha: np.ndarray, y: np.ndarray, C: float) -> float:
        """:math:`D_\\ell(\\alpha)` at a feasible alpha."""
        raise NotImplementedError

    def dual_part(self, y: np.ndarray, C: float) -> DualPart:
        raise NotImplementedError

    # ------------------------------------------------------------ primal
    def data_term(self, outputs: np.ndarray, y: np.ndarray, C: float) -> tuple[Any, float]:
        """``(offset, value)``: the exact minimum over the offset of the loss part of the primal."""
        raise NotImplementedError

    def primal_part(self, outputs: cp.Expression, y: np.ndarray, C: float) -> PrimalPart:
        raise NotImplementedError

    def output_lipschitz(self, outputs: np.ndarray, y: np.ndarray, C: float, offset) -> float:
        """A bound on :math:`|\\partial\\ell/\\partial f|` near ``outputs`` (per output, per unit of C).

        Used only to bound rounding errors of the certificate; 0 means unknown.
        """
        return 0.0

    # ------------------------------------------------------------- inner
    def fit_inner(self, K: np.ndarray, y: np.ndarray, C: float, eps: float,
                  max_iter: int) -> tuple[np.ndarray, bool]:
        """Solve the single-kernel problem on ``K``: ``(alpha, stopped_at_budget)``."""
        raise NotImplementedError(f"loss {self.name!r} has no fast inner solver; use inner='cvxpy'.")

    def smo_forms(self, y: np.ndarray, C: float) -> list | None:
        """The dual at fixed weights as SMO problems (:class:`~mklopt.losses.smo_form.SmoForm`,
        one per output), or None when the loss has none (the default)."""
        return None

    def smo_alpha(self, betas: list, y: np.ndarray) -> np.ndarray:
        """The loss's ``alpha`` from the SMO variables of :meth:`smo_forms`."""
        return betas[0] if len(betas) == 1 else np.stack(betas)

    def smo_betas(self, alpha: np.ndarray, y: np.ndarray) -> list:
        """The SMO variables of :meth:`smo_forms` for a dual-feasible ``alpha`` (the inverse of
        :meth:`smo_alpha`; by default the variables are ``alpha``, one row per output)."""
        alpha = np.asarray(alpha, dtype=float)
        return [alpha.copy()] if alpha.ndim == 1 else [row.copy() for row in alpha]

    # ----------------------------------------------------------- predict
    def predict(self, decision: np.ndarray, classes: np.ndarray | None) -> np.ndarray:
        """Predictions from decision values (default: the decision values)."""
        return decision

    # ------------------------------------------------------------- misc
    def params(self) -> dict:
        """The loss's parameters (saved with a result, shown in its repr)."""
        return {}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self.params() == other.params()

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(sorted(self.params().items()))))
