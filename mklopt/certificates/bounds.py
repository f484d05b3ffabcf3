"""The certificate's value type: :class:`Certificate` and the relative gap (the Certificates page).

The lowest floor of the result layer: :mod:`mklopt.certificates` computes
certificates, :mod:`mklopt.results.result` holds them in an :class:`~mklopt.results.result.MKLResult`,
and both import this module (and nothing imports them from here).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Certificate", "relative_gap", "objective_scale", "ranked_gap", "GAP_FLOOR", "closes",
           "zero_optimum_note"]

#: ``rel_gap`` divides by ``max(|P|, |G|, GAP_FLOOR * scale)``; the floor only guards exact zeros.
GAP_FLOOR = 1e-12


def closes(lower: float, upper: float, tol: float) -> bool:
    """Whether the bounds certify: both finite and :math:`0 \\le U - L \\le \\text{tol}\\,|U|`.

    The one test behind every ``"certified"`` status of mklopt (weight methods,
    :meth:`Certificate.certified`): an infinite or NaN bound certifies nothing,
    whatever ``inf <= tol * inf`` says.
    """
    lower, upper = float(lower), float(upper)
    return bool(np.isfinite(lower) and np.isfinite(upper) and 0.0 <= upper - lower <= tol * abs(upper))


def objective_scale(C: float, n: int) -> float:
    """:math:`\\min(C, 1)\\,n`: the size of an objective that only guards exact zeros.

    For :math:`C \\le 1` it is the hinge primal value at :math:`w = 0, b = 0`.
    It does not grow with :math:`C` beyond :math:`n`: as :math:`C\\to\\infty` the
    optimum stays bounded (the hard-margin or interpolating solution), and a
    floor of :math:`10^{-12} C n` (round 2) at :math:`C = 10^{30}` passed a
    squared-loss answer with :math:`P = 2.3\\cdot10^{6}`, :math:`G = 17` as
    ``rel_gap`` 1e-13.
    """
    return min(float(C), 1.0) * float(n)


def relative_gap(gap: float, primal: float, dual: float, scale: float) -> float:
    """:math:`(P - G) / \\max(|P|, |G|, 10^{-12}\\,\\text{scale})`.

    Relative to the problem's own value; ``scale`` is a data-derived size of
    the objective (:func:`objective_scale`), used only so that exact zeros do
    not divide by zero.
    """
    if not np.isfinite(gap):
        return float(gap) if not np.isnan(gap) else np.inf
    return float(gap) / max(abs(primal), abs(dual), GAP_FLOOR * scale, np.finfo(float).tiny)


def zero_optimum_note(primal: float, dual: float, C: float, n: int) -> str:
    """Why a certificate whose values are both below the floor of :func:`relative_gap` cannot
    certify a relative gap (empty where they are not).

    Weak duality puts the optimal value in [G, P]; when :math:`|P|` and :math:`|G|` are both
    below :math:`10^{-12}\\,\\text{scale}`, the optimum is zero up to rounding, every weight
    vector may be optimal, and the relative gap is the rounding of the arithmetic divided by
    the floor: no tolerance on it can be met, and no other solver does better. (A one-class
    problem whose kernels put a weighting of the points in the box at the origin, e.g. only a
    linear kernel of centred features.)
    """
    floor = GAP_FLOOR * objective_scale(C, n)
    if not (np.isfinite(primal) and np.isfinite(dual) and max(abs(primal), abs(dual)) < floor):
        return ""
    return (f"the optimal value is zero up to rounding (primal {primal:.3g}, dual {dual:.3g}, both "
            f"below the relative gap's floor {floor:.3g}): every candidate is about as good and "
            "the relative gap measures the arithmetic's rounding, not the distance to the "
            "optimum; the kernels carry no structure for this loss (e.g. a one-class problem on "
            "only a linear kernel of centred features, whose mean is the origin): add a kernel "
            "that does, such as an RBF kernel")


@dataclass
class Certificate:
    """mklopt's own optimality certificate for a candidate (the Certificates page).

    When ``feasible``, ``dual <= OPT <= primal`` holds (weak duality);
    ``gap = primal - dual`` and ``rel_gap = gap / max(|primal|, |dual|, 1e-12 min(C, 1) n)``.
    An infeasible candidate (``feasible=False``) is never certified: its dual
    value is still a lower bound, its primal value is not an upper bound.

    Attributes
    ----------
    primal : float
        :math:`P = \\tfrac12\\sum_m\\mu_m s_m(\\alpha) + C\\min_b\\sum_i\\ell(y_i, f_i+b)`
        (hinge: :math:`\\ell = \\max(0, 1-y_i(f_i+b))`).
    dual : float
        :math:`G = D_\\ell(\\alpha) - \\tfrac12\\sigma_\\Theta(s(\\alpha))` (hinge: :math:`D = 1^\\top\\alpha`).
    bias : float or ndarray
        The exact best offset :math:`b^*` of the loss (:math:`-\\rho` for one-class; one per class
        for ``"ovr_hinge"``).
    weights, alpha : ndarray
        The candidate weights (noise-level repairs only, or the projection onto
        Θ when ``repaired``) and alpha projected onto the dual-feasible set.
    violation : float
        Violation of Θ by the weights *as given*, relative to the scale of the weights and
        of Θ (:func:`mklopt.certificates.feasibility.relative_violation`).
    feasible : bool
        ``violation <= feasibility_tol`` (or the weights were repaired).
    repaired : bool
        The certificate is about the projection of the weights onto Θ.
    message : str
        Why the candidate is not certified / what was repaired (empty otherwise).
    """

    primal: float
    dual: float
    gap: float
    rel_gap: float
    bias: float
    weights: np.ndarray
    alpha: np.ndarray
    #: Quadratic terms :math:`s_m(\\alpha)` at the projected alpha (reused by drivers).
    s: np.ndarray | None = None
    #: Decision-function coefficients when they are not :math:`y\\circ\\alpha`
    #: (per-kernel rows, shape (M, n), for primal-point certificates).
    dual_coef: np.ndarray | None = None
    #: The loss's part :math:`D(\\alpha)` of the dual value (``1'alpha`` for the hinge).
    gain: float | None = None
    violation: float = 0.0
    feasible: bool = True
    repaired: bool = False
    message: str = ""
    #: The bounds hold for a convex subproblem only (DCA's last one, a stationary point of
    #: polynomial KRR): never ``certified``, at most :meth:`certified_locally`.
    local: bool = False

    def certified(self, tol: float = 1e-6) -> bool:
        """The verdict: a global certificate, feasible, consistent and ``0 <= rel_gap <= tol``."""
        return bool(not self.local and self.certified_locally(tol))

    def certified_locally(self, tol: float = 1e-6) -> bool:
        """Feasible, consistent and ``0 <= rel_gap <= tol``, global or not (see :attr:`local`)."""
        return bool(self.feasible and self.consistent() and self.rel_gap <= tol)

    def consistent(self) -> bool:
        """Weak duality holds as computed: a finite ``gap >= 0``.

        The certificate widens a negative gap within the rounding bound of its
        arithmetic to zero; a gap still negative means the dual value exceeds
        the primal value beyond what rounding explains (an under- or overflow,
        or a bug), and nothing is certified (``message`` names the cause).
        """
        return bool(np.isfinite(self.primal) and np.isfinite(self.dual) and np.isfinite(self.gap)
                    and np.isfinite(self.rel_gap) and self.gap >= 0)

    def __repr__(self) -> str:
        extra = "" if self.feasible else f", feasible=False, violation={self.violation:.3g}"
        extra += "" if self.consistent() else ", consistent=False"
        return (f"Certificate(primal={self.primal:.10g}, dual={self.dual:.10g}, "
                f"gap={self.gap:.3g}, rel_gap={self.rel_gap:.3g}{extra})")


def ranked_gap(cert: Certificate) -> float:
    """The gap to rank candidates by: ``gap``, or ``+inf`` when the certificate is inconsistent."""
    return float(cert.gap) if cert.consistent() else np.inf
