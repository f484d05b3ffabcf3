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
HiGHS' QP solver finds the minimizer from scratch). Measured with five kernels: ~40 µs a face against ~0.3-0.6 ms for HiGHS.
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
        self._highs = None
        self.face_hits = self.highs_calls = 0

    def __call__(self, mu: np.ndarray, c: np.ndarray, H: np.ndarray) -> np.ndarray | None:
        x, face = self.start(mu)
        with np.errstate(all="ignore"):
            for _ in range(MAX_FACES):
                at_zero, at_upper, row = face
                free = ~(at_zero | at_upper)
                target = np.where(at_upper, self.upper, 0.0)
                target_free, lam = self._face_system(H, c, target, free, row)
                if target_free is None:
                    break
                target[free] = target_free
                x, blocking = self._towards(x, target, face, free)
                if blocking is not None:
                    face = blocking
                    continue
                leaving = self._leaving(face, x, lam, c, H)
                if leaving is None:
                    self.face_hits += 1
                    return np.clip(x, 0.0, self.upper)
                face = leaving
        self.highs_calls += 1
        return self.highs(c, H)

    def start(self, mu: np.ndarray) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray, bool]]:
        """The weights ``mu`` with those on a bound put exactly there, and their face."""
        face = self.face_of(mu)
        x = np.clip(np.asarray(mu, dtype=float), 0.0, self.upper)
        x[face[0]], x[face[1]] = 0.0, self.upper[face[1]]
        return x, face

    def face_of(self, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
        """(at 0, at the bound, the row active) of the weights ``mu``."""
        at_zero = mu <= ON_BOUND * self.scale
        at_upper = ~at_zero & (mu >= self.upper - ON_BOUND * self.scale)
        return at_zero, at_upper, self.a is not None and float(self.a @ mu) >= 1.0 - ON_BOUND

    def _towards(self, x: np.ndarray, target: np.ndarray, face,
                 free: np.ndarray) -> tuple[np.ndarray, tuple | None]:
        """The point of Θ farthest along from ``x`` to ``target`` (at most ``target``), and the face
        with the bound or row that stops the step added (None where none does); ``free``: the
        weights off the face's bounds."""
        at_zero, at_upper, row = face
        step = target - x
        down, up = free & (step < 0.0), free & (step > 0.0) & np.isfinite(self.upper)
        limits = np.full(self.M, np.inf)
        limits[down] = x[down] / -step[down]
        limits[up] = (self.upper[up] - x[up]) / step[up]
        row_limit = np.inf
        if not row and self.a is not None and float(self.a @ step) > 0.0:
            row_limit = max(1.0 - float(self.a @ x), 0.0) / float(self.a @ step)
        blocked = int(np.argmin(limits))
        length = min(limits[blocked], row_limit)
        if length >= 1.0:
            return target, None
        x = x + length * step
        if row_limit <= limits[blocked]:
            return x, (at_zero, at_upper, True)
        at_zero, at_upper = at_zero.copy(), at_upper.copy()
        if down[blocked]:
            at_zero[blocked], x[blocked] = True, 0.0
        else:
            at_upper[blocked], x[blocked] = True, self.upper[blocked]
        return x, (at_zero, at_upper, row)

    def _leaving(self, face, x: np.ndarray, lam: float, c: np.ndarray, H: np.ndarray) -> tuple | None:
        """The face without the constraint whose multiplier at the face's minimizer ``x`` is the
        most negative; None where none is (``x`` is the minimizer over Θ)."""
        at_zero, at_upper, row = face
        Hx = H @ x
        gradient = Hx + c + (lam * self.a if row else 0.0)
        tol = KKT_TOL * max(float(np.abs(c).max()), float(np.abs(Hx).max()), 1e-300)
        multipliers = np.where(at_zero, gradient, np.where(at_upper, -gradient, np.inf))
        worst = int(np.argmin(multipliers))
        if min(multipliers[worst], lam if row else np.inf) >= -tol:
            return None
        if row and lam < multipliers[worst]:
            return at_zero, at_upper, False
        at_zero, at_upper = at_zero.copy(), at_upper.copy()
        at_zero[worst] = at_upper[worst] = False
        return at_zero, at_upper, row

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
