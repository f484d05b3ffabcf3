"""The cutting plane's master at LP speed: HiGHS through highspy, one row per cut, warm started.

For a polyhedral weight set :math:`\\Theta = \\{\\mu : 0 \\le \\mu \\le u,\\ a^\\top\\mu \\le 1\\}`
(the simplex of ℓ1-MKL, the box :math:`p=\\infty`, the weighted simplex of the DC
subproblem) the SILP master

.. math:: \\min_{\\mu\\in\\Theta,\\ \\eta}\\ \\eta \\quad\\text{s.t.}\\quad
          \\eta + \\tfrac12\\, s(\\alpha^r)^\\top\\mu \\ \\ge\\ D(\\alpha^r), \\qquad r = 1..t,

is a small LP (M + 1 columns, t + 1 rows). The CVXPY statement in
:mod:`mklopt.drivers.cutting_plane` is its readable definition; this module
solves the same LP without recompiling it: the model lives in one
``highspy.Highs`` object, each new cut is one ``addRow`` and HiGHS re-solves
from the previous optimal basis (dual simplex: a few pivots per cut). About
0.1–0.3 ms per solve at M = 50 and a few ms at M = 1,000 on this machine,
against ~20 ms for a CVXPY re-solve (`examples/bench_perf.py` prints it).
A solve that does not end ``Optimal`` is repeated cold (basis cleared), then
cold with tolerances a decade looser, before it is an error. The master value is
a lower bound on OPT only as an exact LP optimum, so tolerances are tight (1e-10);
they are absolute, and late cuts of a large-C problem have offsets and terms of
~10³ that differ in their fifth digit: such a master ended ``Unknown`` warm and
cold at 1e-10 (letter, n = 3,000, C = 100) and optimal at 1e-9. (Dividing each row by
its largest coefficient instead made the tolerances relative, but then too loose
for tol = 1e-6 at C = 100: the master returned the same weights over and over.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..exceptions import SolverError
from ..regularizers import L1, LpBall, Regularizer, WeightedL1

__all__ = ["PolyhedralSet", "polyhedral_set", "theta_model", "LPMaster"]

#: HiGHS' primal and dual feasibility tolerances (absolute), and the last try's.
TOLERANCE, LOOSE_TOLERANCE = 1e-10, 1e-9


@dataclass(frozen=True)
class PolyhedralSet:
    """:math:`\\{\\mu : 0\\le\\mu\\le u,\\ a^\\top\\mu\\le 1\\}`; ``a`` is None for a box."""

    upper: np.ndarray
    a: np.ndarray | None


def polyhedral_set(reg: Regularizer, M: int) -> PolyhedralSet | None:
    """The linear description of Θ when mklopt knows one exactly, else None (conic master).

    ℓ1 ball / simplex (:class:`L1`, ``LpBall(1)``): :math:`a = 1`; the box
    ``LpBall(inf)``: :math:`u = 1`; :class:`WeightedL1`: :math:`a = v`. Subclasses
    of these (which may add constraints) are not matched.
    """
    if type(reg) in (LpBall, L1):
        if reg.p == 1:
            return PolyhedralSet(np.full(M, math.inf), np.ones(M))
        if math.isinf(reg.p):
            return PolyhedralSet(np.ones(M), None)
        return None
    if type(reg) is WeightedL1:
        return PolyhedralSet(np.full(M, math.inf), np.asarray(reg.v, dtype=float))
    return None


def theta_model(theta: PolyhedralSet, **options):
    """A quiet ``highspy.Highs`` model of Θ: columns :math:`\\mu_1..\\mu_M` in
    :math:`[0, u]`, row 0 :math:`a^\\top\\mu\\le 1` where there is one, feasibility tolerances
    :data:`TOLERANCE` (and ``options``)."""
    import highspy

    h = highspy.Highs()
    settings = {"output_flag": False, "presolve": "off", "primal_feasibility_tolerance": TOLERANCE,
                "dual_feasibility_tolerance": TOLERANCE, **options}
    for option, value in settings.items():
        h.setOptionValue(option, value)
    inf, M = h.getInfinity(), theta.upper.size
    h.addVars(M, np.zeros(M), np.where(np.isinf(theta.upper), inf, theta.upper))
    if theta.a is not None:
        h.addRow(-inf, 1.0, M, np.arange(M, dtype=np.int32), np.asarray(theta.a, dtype=float))
    return h


class LPMaster:
    """The SILP master over a polyhedral Θ, kept in one HiGHS model between solves.

    Parameters
    ----------
    theta : PolyhedralSet
        Θ (:func:`polyhedral_set`).

    Columns are :math:`\\mu_1..\\mu_M, \\eta`; row 0 is :math:`a^\\top\\mu \\le 1` (when
    there is one), then one row per cut in the order :meth:`add_cut` was called
    (:meth:`drop_cut` keeps that order).
    """

    def __init__(self, theta: PolyhedralSet) -> None:
        import highspy

        self._highspy = highspy
        self.M = theta.upper.size
        h = theta_model(theta)
        inf = h.getInfinity()
        h.addVar(-inf, inf)  # eta
        h.changeColCost(self.M, 1.0)
        self._first_cut = 0 if theta.a is None else 1
        self.h, self.inf, self.n_cuts = h, inf, 0
        self._cols = np.arange(self.M + 1, dtype=np.int32)
        self._s_range = (math.inf, -math.inf)  # of every cut's products, for a failure's message
        self._largest_offset = 0.0

    def add_cut(self, offset: float, s: np.ndarray) -> None:
        """Add :math:`\\eta + \\tfrac12 s^\\top\\mu \\ge` ``offset``."""
        values = np.append(0.5 * np.asarray(s, dtype=float), 1.0)
        self.h.addRow(float(offset), self.inf, self.M + 1, self._cols, values)
        self.n_cuts += 1
        self._s_range = (min(self._s_range[0], float(np.min(s))), max(self._s_range[1], float(np.max(s))))
        self._largest_offset = max(self._largest_offset, abs(float(offset)))

    def drop_cut(self, index: int) -> None:
        """Remove the ``index``-th cut (0-based, in the order of :meth:`add_cut`)."""
        if not 0 <= index < self.n_cuts:
            raise IndexError(f"cut {index} of {self.n_cuts}")
        row = np.array([self._first_cut + index], dtype=np.int32)
        self.h.deleteRows(1, row)
        self.n_cuts -= 1

    def solve(self) -> tuple[np.ndarray, float]:
        """``(mu, eta)`` at the optimum (warm started from the last basis)."""
        if self.n_cuts == 0:
            raise SolverError("the cutting-plane master has no cut yet.")
        if not self._run():
            self.h.clearSolver()  # cold: no basis, fresh factorization
            if not self._run() and not self._run_looser():
                status = self.h.modelStatusToString(self.h.getModelStatus())
                raise SolverError(f"cutting-plane master on HiGHS (highspy) ended with status {status!r}; "
                                  + _cuts_hint(*self._s_range, self._largest_offset))
        x = np.asarray(self.h.getSolution().col_value, dtype=float)
        return x[:self.M].copy(), float(x[self.M])

    def _run_looser(self) -> bool:
        """A cold solve at LOOSE_TOLERANCE, the tolerances restored after it."""
        self._tolerances(LOOSE_TOLERANCE)
        self.h.clearSolver()
        try:
            return self._run()
        finally:
            self._tolerances(TOLERANCE)

    def _tolerances(self, value: float) -> None:
        for option in ("primal_feasibility_tolerance", "dual_feasibility_tolerance"):
            self.h.setOptionValue(option, value)

    def _run(self) -> bool:
        self.h.run()
        return self.h.getModelStatus() == self._highspy.HighsModelStatus.kOptimal


#: Cut offsets this many times the largest product make a master HiGHS may not solve.
_OFFSET_SPREAD = 1e6


def _cuts_hint(low: float, high: float, offset: float = 0.0) -> str:
    """What the cuts' products :math:`s_m = c^\\top K_m c` and offsets (the loss's part of the dual)
    say about a master that failed."""
    span = f"the cuts' products s_m = c'K_m c ranged over [{low:.3g}, {high:.3g}]"
    if offset > _OFFSET_SPREAD * max(abs(low), abs(high)):
        return (f"{span}, their offsets (the loss's part of the dual, y'alpha for regression) reached "
                f"{offset:.3g}: targets (or C) far larger than the kernels' scale; scale the targets, e.g. "
                "with TransformedTargetRegressor(regressor=MKLRegressor(), transformer=StandardScaler()).")
    if low < 0:
        return (f"{span}: negative, which PSD kernels cannot give exactly, so their rounding swamps "
                "the kernels' variation (entries far larger than their spread, e.g. linear or "
                "polynomial kernels of features with a large offset: centre the features, e.g. "
                "with StandardScaler).")
    return f"{span}; kernels of very different scales make such cuts: normalize them (normalization='trace')."
