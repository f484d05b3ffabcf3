"""The minimizer over a polyhedral Θ of a convex quadratic in μ: the second-order step's QP.

.. math:: \\min_{\\mu\\in\\Theta}\\ c^\\top\\mu + \\tfrac12\\mu^\\top H\\mu,\\qquad
          \\Theta = \\{\\mu : 0\\le\\mu\\le u,\\ a^\\top\\mu\\le 1\\},\\quad H \\succ 0.

Near the MKL optimum the weights that are zero, at their bound, or on the row
:math:`a^\\top\\mu = 1` stay so from one step to the next, so the QP is solved by the
primal active-set method (J. Nocedal and S. J. Wright, *Numerical Optimization*, 2nd ed.,
Springer 2006, Algorithm 16.3) started on the face of the current weights. On a face
(the weights at 0 or at their bound :math:`u_U` fixed there, the row kept where active)
the minimizer is one small linear system, the KKT system of the equality-constrained QP,

.. math:: \\begin{pmatrix} H_{SS} & a_S\\\\ a_S^\\top & 0\\end{pmatrix}
          \\begin{pmatrix}\\mu_S\\\\ \\lambda\\end{pmatrix} =
          \\begin{pmatrix} -c_S - H_{SU}u_U\\\\ 1 - a_U^\\top u_U\\end{pmatrix}

on the free weights S. From a point of Θ on the face the method steps towards that
minimizer as far as Θ allows; a bound or the row that stops it joins the face. Where
the minimizer is reached, it is the minimizer over all of Θ exactly when the multipliers
have the right signs (the KKT conditions, sufficient for a convex QP): the gradient
:math:`r = H\\mu + c + \\lambda a` is :math:`\\ge 0` on the weights at 0 and :math:`\\le 0` on
those at their bound, and :math:`\\lambda\\ge0`; else the constraint with the most negative
multiplier leaves the face. Each face is one solve of at most M + 1 equations; the
objective falls at every step that moves, so a face comes back only through steps of
length 0 at a degenerate vertex (after :data:`MAX_FACES` faces, or a singular system,
HiGHS' QP solver finds the minimizer from scratch). The method runs compiled, outside the GIL
(:func:`~mklopt._compiled.face_qp.face_qp`: a few µs a face, ~40 µs as NumPy calls, against
~0.3-0.6 ms for HiGHS).
"""

from __future__ import annotations

import numpy as np

from .._compiled.face_qp import face_qp
from .lp_master import PolyhedralSet, theta_model

__all__ = ["ThetaQP", "QP_ITERATIONS"]

#: Iterations of HiGHS' QP solver at most (an active-set method: a few per kernel suffice).
QP_ITERATIONS = 1000
#: A weight within this of 0 or its bound (relative to the bound, or 1) is on that bound.
ON_BOUND = 1e-12
#: The KKT conditions' tolerance, relative to the largest term of the gradient.
KKT_TOL = 1e-9
#: Faces the active-set method visits at most before HiGHS (a few suffice near the optimum).
MAX_FACES = 24


class ThetaQP:
    """``qp(mu, c, H)``: the minimizer over Θ of :math:`c^\\top\\mu' + \\tfrac12\\mu'^\\top H\\mu'`,
    from the face of ``mu`` where the KKT conditions certify it, else from HiGHS (None where
    HiGHS does not end optimal).

    Parameters
    ----------
    theta : PolyhedralSet
        Θ.
    """

    def __init__(self, theta: PolyhedralSet) -> None:
        self.theta, self.M = theta, theta.upper.size
        self.upper = np.asarray(theta.upper, dtype=float)
        self.a = None if theta.a is None else np.asarray(theta.a, dtype=float)
        self.scale = np.where(np.isfinite(self.upper), self.upper, 1.0)
        self.row = np.zeros(self.M) if self.a is None else self.a  # the compiled method's a
        self._highs = None
        self.face_hits = self.highs_calls = 0

    def __call__(self, mu: np.ndarray, c: np.ndarray, H: np.ndarray) -> np.ndarray | None:
        x = np.empty(self.M)
        if face_qp(np.ascontiguousarray(H, dtype=float), np.ascontiguousarray(c, dtype=float),
                   np.ascontiguousarray(mu, dtype=float), self.upper, self.row, self.a is not None, self.scale,
                   ON_BOUND, KKT_TOL, MAX_FACES, x):
            self.face_hits += 1
            return x
        self.highs_calls += 1
        return self.highs(c, H)

    def highs(self, c: np.ndarray, H: np.ndarray) -> np.ndarray | None:
        """The minimizer from HiGHS' QP solver (the model of Θ built once, at the first call)."""
        import highspy

        if self._highs is None:
            self._highs = _QPModel(self.theta)
        x = self._highs.solve(c, H, highspy)
        return None if x is None else np.clip(x, 0.0, self.upper)  # HiGHS' -1e-17 and the like


class _QPModel:
    """One HiGHS model of Θ whose cost and Hessian change from solve to solve."""

    def __init__(self, theta: PolyhedralSet) -> None:
        self.M = theta.upper.size
        self.h = theta_model(theta, qp_iteration_limit=QP_ITERATIONS)
        self.columns = np.arange(self.M, dtype=np.int32)
        rows, cols = np.tril_indices(self.M)  # the Hessian's lower triangle, column by column
        order = np.lexsort((rows, cols))
        self.lower = (rows[order], cols[order])
        self.starts = np.searchsorted(self.lower[1], np.arange(self.M + 1)).astype(np.int32)

    def solve(self, c: np.ndarray, H: np.ndarray, highspy) -> np.ndarray | None:
        values = H[self.lower]
        self.h.passHessian(self.M, values.size, highspy.HessianFormat.kTriangular,
                           self.starts, self.lower[0].astype(np.int32), values)
        self.h.changeColsCost(self.M, self.columns, c)
        self.h.run()
        if self.h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            self.h.clearSolver()
            return None
        return np.asarray(self.h.getSolution().col_value, dtype=float)[:self.M].copy()
