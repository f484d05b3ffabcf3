"""Weight sets beyond the ℓp balls: weighted ℓ1, user constraints, elastic net,
non-isotropic ellipsoids and a fixed combination (the penalties that are not sets are
:mod:`~mklopt.regularizers.penalties`').
"""

from __future__ import annotations

from collections.abc import Callable

import cvxpy as cp
import numpy as np
from scipy.optimize import brentq

from ..exceptions import InvalidInputError, MKLError
from .._options import real_array
from .base import Regularizer

__all__ = ["WeightedL1", "ConstraintSet", "ElasticNet", "NonIsotropic", "Fixed"]


class WeightedL1(Regularizer):
    """:math:`\\Theta_v = \\{\\mu\\ge0 : \\langle v,\\mu\\rangle\\le1\\}` with :math:`v>0`.

    ℓ1-MKL on the kernels :math:`K_m/v_m`; the DC subproblem's set.
    :math:`\\sigma(s) = \\max_m s_m/v_m`; the wrapper step is
    :math:`\\mu_m \\propto \\|w_m\\|/\\sqrt{v_m}` normalized to :math:`\\langle v,\\mu\\rangle=1`.
    """

    has_support_expr = True

    def __init__(self, v: np.ndarray) -> None:
        v = real_array(v, "WeightedL1's weights v").ravel()
        if v.size == 0 or not np.all(np.isfinite(v)) or np.any(v <= 0):
            raise InvalidInputError(f"WeightedL1 needs finite, strictly positive weights v, got {v}.")
        self.v = v
        self.name = "weighted_l1"

    def __repr__(self) -> str:
        return f"WeightedL1(v={np.array2string(self.v, precision=4)})"

    def check(self, M: int) -> None:
        self._check(M)

    def contains_zero(self, M: int) -> bool:
        return True

    def _check(self, M: int) -> None:
        if M != self.v.size:
            raise InvalidInputError(f"WeightedL1 has {self.v.size} weights v but there are {M} kernels.")

    def set_constraints(self, mu):
        self._check(mu.shape[0])
        return [self.v @ mu <= 1]

    def support(self, s):
        s = np.asarray(s, dtype=float)
        self._check(s.size)
        return max(float(np.max(s / self.v)), 0.0)

    def support_expr(self, u):
        return cp.max(cp.multiply(1.0 / self.v, u))

    def argmin_weights(self, wnorm2):
        a = np.clip(np.asarray(wnorm2, dtype=float), 0, None)
        self._check(a.size)
        if not np.any(a > 0):
            return 1.0 / (self.v * a.size)
        w = np.sqrt(a / a.max())
        mu = w / np.sqrt(self.v)
        return mu / float(self.v @ mu)

    def violation(self, mu):
        mu = np.asarray(mu, dtype=float)
        return max(float(self.v @ mu) - 1.0, float(np.max(-mu, initial=0.0)), 0.0)

    def into_set(self, mu, tol=1e-12):
        mu = np.clip(np.asarray(mu, dtype=float), 0, None)
        return mu / max(1.0, float(self.v @ mu))


class ConstraintSet(Regularizer):
    """A user-defined weight set given by CVXPY constraints.

    Parameters
    ----------
    constraints : callable
        ``constraints(mu) -> list[cp.Constraint]`` for a ``cp.Variable(M)``;
        ``mu >= 0`` is added automatically; a single constraint is accepted
        too. The set must be non-empty, bounded and DCP (checked before any
        solve); it need not contain 0.
    name : str

    Examples
    --------
    >>> enet = ConstraintSet(lambda mu: [cp.norm1(mu) + cp.sum_squares(mu) <= 1],
    ...                      name="enet")
    """

    def __init__(self, constraints: Callable[[cp.Variable], list], name: str = "user") -> None:
        if not callable(constraints):
            raise InvalidInputError("ConstraintSet needs a callable constraints(mu) -> list of CVXPY constraints.")
        self._fn = constraints
        self.name = name

    def __repr__(self) -> str:
        return f"ConstraintSet(name={self.name!r})"

    def set_constraints(self, mu):
        try:
            return self._fn(mu)
        except MKLError:
            raise
        except Exception as exc:  # the user's code: report it as their input
            raise InvalidInputError(
                f"{self.name}: constraints(mu) raised {type(exc).__name__}: {exc}") from None


class ElasticNet(ConstraintSet):
    """:math:`\\{\\mu\\ge0 : a\\|\\mu\\|_1 + b\\|\\mu\\|_2^2 \\le 1\\}`.

    Its support function is an exact 1-D Lagrangian bound: for every
    :math:`\\lambda > 0` (weak duality),

    .. math:: \\sigma(s) \\le \\lambda + \\sum_m \\frac{(s_m - \\lambda a)_+^2}{4\\lambda b},

    with equality at the root of :math:`\\sum_m (s_m^2 - \\lambda^2a^2)_+ = 4\\lambda^2 b`
    (found by bisection), so the dual value never relies on a solver.
    The rest (projection, wrapper step) is the generic machinery.
    """

    def __init__(self, a: float = 1.0, b: float = 1.0) -> None:
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b)) \
                or not (a >= 0 and b >= 0 and a + b > 0 and np.isfinite(a + b)):
            raise InvalidInputError(f"ElasticNet needs a, b >= 0 with a + b > 0, got a={a}, b={b}.")
        self.a, self.b = float(a), float(b)
        super().__init__(lambda mu: [self.a * cp.sum(mu) + self.b * cp.sum_squares(mu) <= 1],
                         name="elastic_net")

    def __repr__(self) -> str:
        return f"ElasticNet(a={self.a:g}, b={self.b:g})"

    def support(self, s):
        s = np.clip(np.asarray(s, dtype=float), 0.0, None)
        size = float(np.max(s, initial=0.0))
        if size == 0.0:
            return 0.0
        u = s / size  # sigma is positively homogeneous; u_max = 1 keeps every term finite
        if self.b == 0:
            return size / self.a
        if self.a == 0:
            return size * float(np.linalg.norm(u)) / np.sqrt(self.b)
        a, b = self.a, self.b
        hi = min(1.0 / a, float(np.linalg.norm(u)) / (2 * np.sqrt(b)))  # h(hi) <= 0 < h(0+)
        def h(t):
            return float(np.sum(np.clip(u**2 - (t * a) ** 2, 0, None))) - 4 * t * t * b

        # any lam > 0 gives an upper bound; the root of h gives the exact value
        lam = hi if h(hi) >= 0 else brentq(h, hi * 1e-300, hi, xtol=1e-300,
                                           rtol=4 * np.finfo(float).eps)
        bound = lam + float(np.sum(np.clip(u - lam * a, 0, None) ** 2)) / (4 * lam * b)
        return size * bound * (1 + 8 * s.size * np.finfo(float).eps)  # rounding of the sum


class NonIsotropic(ConstraintSet):
    """:math:`\\{\\mu\\ge0 : \\mu^\\top \\Sigma^{-1}\\mu \\le 1\\}` for a positive definite Σ (thesis §2)."""

    def __init__(self, sigma: np.ndarray) -> None:
        sigma = real_array(sigma, "NonIsotropic's Sigma")
        if sigma.ndim != 2 or sigma.shape[0] != sigma.shape[1] or not np.all(np.isfinite(sigma)):
            raise InvalidInputError(f"NonIsotropic needs a finite square matrix Sigma, got shape {sigma.shape}.")
        try:
            inv_chol = np.linalg.cholesky(np.linalg.inv(sigma))
        except np.linalg.LinAlgError:
            raise InvalidInputError("NonIsotropic needs a symmetric positive definite Sigma.") from None
        self.sigma = sigma
        super().__init__(lambda mu: [cp.sum_squares(inv_chol.T @ mu) <= 1], name="non_isotropic")


class Fixed(Regularizer):
    """The single point :math:`\\Theta=\\{\\mu^0\\}`: an SVM with a fixed kernel combination."""

    has_support_expr = True

    def __init__(self, weights: np.ndarray) -> None:
        w = real_array(weights, "fixed kernel weights").ravel()
        if w.size == 0 or not np.all(np.isfinite(w)) or np.any(w < 0):
            raise InvalidInputError(f"fixed kernel weights must be finite and >= 0, got {w}.")
        self.weights = w
        self.name = "fixed"

    def __repr__(self) -> str:
        return f"Fixed(weights={np.array2string(self.weights, precision=4)})"

    def set_constraints(self, mu):
        return [mu == self.weights]

    def support(self, s):
        return float(self.weights @ np.asarray(s, dtype=float))

    def support_expr(self, u):
        return self.weights @ u

    def argmin_weights(self, wnorm2):
        return self.weights.copy()

    def violation(self, mu):
        return float(np.max(np.abs(np.asarray(mu, float) - self.weights)))

    def into_set(self, mu, tol=1e-12):
        return self.weights.copy()

    def project(self, mu):
        return self.weights.copy()

    def check(self, M: int) -> None:
        if M != self.weights.size:
            raise InvalidInputError(f"fixed weights have {self.weights.size} entries but there are {M} kernels.")

    def contains_zero(self, M: int) -> bool:
        return not np.any(self.weights)
