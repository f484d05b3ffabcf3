"""The minimizer over a polyhedral Θ of a convex quadratic in μ: the second-order step's QP.

.. math:: \\min_{\\mu\\in\\Theta}\\ c^\\top\\mu + \\tfrac12\\mu^\\top H\\mu,\\qquad
          \\Theta = \\{\\mu : 0\\le\\mu\\le u,\\ a^\\top\\mu\\le 1\\},\\quad H \\succ 0.

Near the MKL optimum the weights that are zero, at their bound, or on the row
:math:`a^\\top\\mu = 1` stay so from one step to the next. The minimizer on that face of Θ
(the guess: the face of the current weights) is one small linear system, the KKT system
of the equality-constrained QP,

.. math:: \\begin{pmatrix} H_{SS} & a_S\\\\ a_S^\\top & 0\\end{pmatrix}
          \\begin{pmatrix}\\mu_S\\\\ \\lambda\\end{pmatrix} =
          \\begin{pmatrix} -c_S - H_{SU}u_U\\\\ 1 - a_U^\\top u_U\\end{pmatrix}

on the free weights S (those at 0 or at their bound :math:`u_U` fixed there; without the row
where Θ is a box or the row is not active). It is the minimizer over all of Θ exactly when
the KKT conditions hold (sufficient for a convex QP): :math:`0\\le\\mu_S\\le u_S`,
:math:`\\lambda\\ge0`, and the gradient :math:`r = H\\mu + c + \\lambda a` is :math:`\\ge 0`
on the weights at 0 and :math:`\\le 0` on those at their bound. Where they do not hold, the
next face is the one the violations point to (free weights that left their bounds fixed
there, fixed ones whose gradient would move them freed, the row freed where
:math:`\\lambda<0`), up to :data:`FACE_TRIES` faces; after that HiGHS' QP solver finds the
minimizer from scratch. Measured with five kernels: ~40 µs for a face against ~0.3 ms for
HiGHS; on digits (ten one-vs-rest classes, C = 1) 58 of 62 second-order steps end on a face.
"""

from __future__ import annotations

import numpy as np

from .lp_master import PolyhedralSet, theta_model

__all__ = ["ThetaQP", "QP_ITERATIONS"]

#: Iterations of HiGHS' QP solver at most (an active-set method: a few per kernel suffice).
QP_ITERATIONS = 1000
#: A weight within this of 0 or its bound (relative to the bound, or 1) is on that bound.
ON_BOUND = 1e-12
#: The KKT conditions' tolerance, relative to the largest term of the gradient.
KKT_TOL = 1e-9
#: Faces tried before HiGHS: the current weights' face, then the face its KKT violations
#: point to (weights that went negative fixed at 0, fixed ones the gradient frees, freed).
FACE_TRIES = 3


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
        self._highs = None
        self.face_hits = self.highs_calls = 0

    def __call__(self, mu: np.ndarray, c: np.ndarray, H: np.ndarray) -> np.ndarray | None:
        face = self.face_of(mu)
        for _ in range(FACE_TRIES):
            x, face = self.on_face(face, c, H)
            if x is not None:
                self.face_hits += 1
                return x
            if face is None:
                break
        self.highs_calls += 1
        return self.highs(c, H)

    def face_of(self, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
        """(at 0, at the bound, the row active) of the weights ``mu``."""
        at_zero = mu <= ON_BOUND * self.scale
        at_upper = ~at_zero & (mu >= self.upper - ON_BOUND * self.scale)
        return at_zero, at_upper, self.a is not None and float(self.a @ mu) >= 1.0 - ON_BOUND

    def on_face(self, face, c: np.ndarray, H: np.ndarray) -> tuple[np.ndarray | None, tuple | None]:
        """The minimizer on ``face`` if it satisfies the KKT conditions, else (None, the face
        its violations point to; None where its system is singular)."""
        at_zero, at_upper, row = face
        free = ~(at_zero | at_upper)
        x = np.where(at_upper, self.upper, 0.0)
        with np.errstate(all="ignore"):
            x_free, lam = self._face_system(H, c, x, free, row)
            if x_free is None:
                return None, None
            x[free] = x_free
            gradient = H @ x + c + (lam * self.a if row else 0.0)
        tol = KKT_TOL * max(float(np.abs(c).max()), float(np.abs(H @ x).max()), 1e-300)
        low, high = x < -ON_BOUND * self.scale, x > self.upper + ON_BOUND * self.scale
        leave_zero, leave_upper = at_zero & (gradient < -tol), at_upper & (gradient > tol)
        row_off = row and lam < -tol
        row_on = not row and self.a is not None and float(self.a @ x) > 1.0 + ON_BOUND
        if not (np.any(low | high | leave_zero | leave_upper) or row_off or row_on):
            return np.clip(x, 0.0, self.upper), None
        return None, ((at_zero & ~leave_zero) | (free & low), (at_upper & ~leave_upper) | (free & high),
                      (row and not row_off) or row_on)

    def _face_system(self, H, c, x, free, row) -> tuple[np.ndarray | None, float]:
        """:math:`(\\mu_S, \\lambda)` from the face's KKT system (None where it is singular)."""
        S = np.flatnonzero(free)
        k = S.size + row
        system, rhs = np.zeros((k, k)), np.empty(k)
        system[:S.size, :S.size] = H.take(S, axis=0).take(S, axis=1)
        rhs[:S.size] = -(c[S] + H[S] @ x)  # x: 0 on S, the bound values elsewhere
        if row:
            system[-1, :-1] = system[:-1, -1] = self.a[S]
            rhs[-1] = 1.0 - float(self.a @ x)
        if system.size == 0:
            return np.zeros(0), 0.0
        try:
            solution = np.linalg.solve(system, rhs)
        except np.linalg.LinAlgError:
            return None, 0.0
        if not np.all(np.isfinite(solution)):
            return None, 0.0
        return (solution[:-1], float(solution[-1])) if row else (solution, 0.0)

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
