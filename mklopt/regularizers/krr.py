"""The kernel ridge regression problem with learned weights: its weight set and parameters.

Cortes, Mohri & Rostamizadeh (*L2 Regularization for Learning Kernels*, UAI 2009;
*Learning Non-Linear Combinations of Kernels*, NIPS 2009) learn the weights of
kernel ridge regression (no offset) over the shifted ℓ2 ball

.. math:: \\mathcal M = \\{\\mu\\in\\mathbb R^M : \\mu\\ge0,\\ \\|\\mu-\\mu_0\\|_2\\le\\Lambda\\},
          \\qquad \\mu_0\\ge0,\\ \\Lambda>0,

with ridge :math:`\\lambda>0` and the combination :math:`K_\\mu=\\sum_k\\mu_kK_k` (degree
:math:`d=1`) or its elementwise square :math:`(\\sum_k\\mu_kK_k)^{\\circ2}` (:math:`d=2`).
:class:`KRRProblem` holds :math:`(\\mu_0,\\Lambda,\\lambda,d)`; a result of ``krr_l2``,
``krr_projected_gradient``, ``krr_interpolated`` or ``polynomial_krr`` records it, so
that a saved result re-certifies at the problem it solved
(:func:`mklopt.certificates.krr.krr_certificate`). As a weight set it has closed forms:
the support function and the exact Euclidean projection (:func:`project_ball_orthant`).
"""

from __future__ import annotations

import numpy as np

from ..exceptions import InvalidInputError
from .base import Regularizer

__all__ = ["KRRProblem", "project_ball_orthant", "support_point"]


def project_ball_orthant(z: np.ndarray, mu0: np.ndarray, radius: float) -> np.ndarray:
    """Exact Euclidean projection of ``z`` onto :math:`\\{\\mu\\ge0:\\|\\mu-\\mu_0\\|_2\\le\\Lambda\\}`, :math:`\\mu_0\\ge0`.

    The KKT conditions of :math:`\\min\\tfrac12\\|\\mu-z\\|^2` s.t. :math:`\\mu\\ge0`,
    :math:`\\tfrac12\\|\\mu-\\mu_0\\|^2\\le\\tfrac12\\Lambda^2` (multiplier :math:`\\tau\\ge0`) give
    :math:`\\mu=\\max\\bigl(0,(z+\\tau\\mu_0)/(1+\\tau)\\bigr)`. With :math:`t=1/(1+\\tau)\\in(0,1]`
    and :math:`d=z-\\mu_0`,

    .. math:: \\mu(t)=\\max(0,\\ \\mu_0+t\\,d),\\qquad
              \\varphi(t)^2=\\|\\mu(t)-\\mu_0\\|^2=t^2\\sum_{k\\notin S(t)}d_k^2+\\sum_{k\\in S(t)}\\mu_{0,k}^2,

    where :math:`S(t)=\\{k: d_k<0,\\ t\\ge\\mu_{0,k}/(-d_k)\\}` are the clipped entries.
    :math:`\\varphi` is continuous and nondecreasing with :math:`\\varphi(0)=0`. If
    :math:`\\varphi(1)=\\|z_+-\\mu_0\\|\\le\\Lambda` the answer is :math:`z_+` (:math:`\\tau=0`);
    otherwise :math:`t` solves :math:`\\varphi(t)=\\Lambda`, found exactly on the piece
    between two sorted breakpoints :math:`\\mu_{0,k}/(-d_k)` where :math:`\\varphi^2` is the
    quadratic above (one sort and two cumulative sums, no iteration).
    """
    z = np.asarray(z, dtype=float)
    plus = np.clip(z, 0.0, None)
    if np.linalg.norm(plus - mu0) <= radius:
        return plus
    d = z - mu0
    with np.errstate(divide="ignore"):
        knots = np.where(d < 0, mu0 / np.where(d < 0, -d, 1.0), np.inf)
    order = np.argsort(knots, kind="stable")
    d2, m2 = d[order] ** 2, mu0[order] ** 2
    unclipped = np.concatenate((np.cumsum(d2[::-1])[::-1], [0.0]))  # S_j = sum_{i >= j} d2
    clipped = np.concatenate(([0.0], np.cumsum(m2)))                  # R_j = sum_{i < j} m2
    ends = np.append(knots[order], np.inf)                            # piece j ends at ends[j]
    with np.errstate(invalid="ignore", over="ignore"):
        right = np.where(unclipped > 0, ends ** 2 * unclipped, 0.0) + clipped
    j = int(np.argmax(right >= radius ** 2))
    t = np.sqrt(max(radius ** 2 - clipped[j], 0.0) / unclipped[j]) if unclipped[j] > 0 else 1.0
    mu = np.clip(mu0 + min(t, 1.0) * d, 0.0, None)
    excess = float(np.linalg.norm(mu - mu0))
    shrink = 1.0
    while excess > radius:  # rounding: pull the point back inside (a few ulps)
        shrink *= 1.0 - 4.0 * np.finfo(float).eps
        mu = np.clip(mu0 + (shrink * radius / excess) * (mu - mu0), 0.0, None)
        excess = float(np.linalg.norm(mu - mu0))
    return mu


def support_point(s: np.ndarray, mu0: np.ndarray, radius: float) -> np.ndarray:
    """:math:`\\arg\\max_{\\mu\\in\\mathcal M}s^\\top\\mu=\\mu_0+\\Lambda s/\\|s\\|` for :math:`s\\ge0` (:math:`\\mu_0` when :math:`s=0`)."""
    s = np.clip(np.asarray(s, dtype=float), 0.0, None)
    size = float(np.linalg.norm(s))
    return mu0.copy() if size == 0.0 else mu0 + (radius / size) * s


class KRRProblem(Regularizer):
    """Kernel ridge regression over :math:`\\mathcal M=\\{\\mu\\ge0:\\|\\mu-\\mu_0\\|_2\\le\\Lambda\\}`.

    Parameters
    ----------
    lam : float
        Ridge :math:`\\lambda>0`.
    mu0 : array of shape (M,), optional
        Center :math:`\\mu_0\\ge0` (default 0, then :math:`\\mathcal M` is the nonnegative part
        of the ball of radius :math:`\\Lambda`).
    radius : float
        :math:`\\Lambda>0`.
    degree : {1, 2}
        :math:`K_\\mu=\\sum_k\\mu_kK_k` or :math:`(\\sum_k\\mu_kK_k)^{\\circ2}`.

    Notes
    -----
    For :math:`s\\ge0` and :math:`\\mu_0\\ge0`,

    .. math:: \\sigma_{\\mathcal M}(s)=\\max_{\\mu\\in\\mathcal M}s^\\top\\mu=\\mu_0^\\top s+\\Lambda\\|s\\|_2 :

    the maximum over the whole ball is attained at :math:`\\mu_0+\\Lambda s/\\|s\\|`
    (Cauchy–Schwarz), which is :math:`\\ge0`, so it is also the maximum over the smaller set
    :math:`\\mathcal M`. For any :math:`s`, :math:`\\sigma_{\\mathcal M}(s)\\le\\sigma_{\\mathcal M}(s_+)`
    because :math:`\\mu\\ge0`: :meth:`support` returns that guaranteed upper bound. A
    :math:`\\mu_0` with negative entries is refused (the closed forms need :math:`\\mu_0\\ge0`).
    The object names a KRR problem; it is not a weight set for the hinge formulations
    (:meth:`set_constraints` refuses).
    """

    has_support_expr = True

    def __init__(self, lam: float = 1.0, mu0=None, radius: float = 1.0, degree: int = 1) -> None:
        self.lam = _positive(lam, "lam (the ridge lambda)")
        self.radius = _positive(radius, "radius (Lambda, the radius of the weight ball)")
        if isinstance(degree, (bool, np.bool_)) or degree not in (1, 2):
            raise InvalidInputError(f"degree must be 1 (linear combination) or 2 (its elementwise "
                                    f"square), got {degree!r}.")
        self.degree = int(degree)
        self.mu0 = None if mu0 is None else _center(mu0)
        self.name = "krr"

    def __repr__(self) -> str:
        mu0 = "0" if self.mu0 is None else np.array2string(self.mu0, precision=4)
        return (f"KRRProblem(lam={self.lam:g}, mu0={mu0}, radius={self.radius:g}, "
                f"degree={self.degree})")

    def center(self, M: int) -> np.ndarray:
        """:math:`\\mu_0` as an array of length ``M`` (checked against the number of kernels)."""
        self.check(M)
        return np.zeros(M) if self.mu0 is None else self.mu0

    # -- the weight set ---------------------------------------------------
    def check(self, M: int) -> None:
        if self.mu0 is not None and self.mu0.size != M:
            raise InvalidInputError(f"mu0 has {self.mu0.size} entries but there are {M} kernels; "
                                    "pass one center weight per kernel.")

    def set_constraints(self, mu):
        raise InvalidInputError(
            "KRRProblem names a kernel ridge regression problem (lam, mu0, radius); it is not a "
            "weight set for other formulations. Use formulation='krr_l2' or the drivers "
            "'krr_projected_gradient', 'krr_interpolated', 'polynomial_krr' with loss='squared_error'.")

    def contains_zero(self, M: int) -> bool:
        return float(np.linalg.norm(self.center(M))) <= self.radius

    def support(self, s):
        s = np.clip(np.asarray(s, dtype=float), 0.0, None)
        value = float(self.center(s.size) @ s) + self.radius * float(np.linalg.norm(s))
        return value * (1.0 + 4.0 * (s.size + 2) * np.finfo(float).eps)  # rounding of the sums

    def support_expr(self, u):
        import cvxpy as cp

        return self.center(u.shape[0]) @ u + self.radius * cp.norm(u, 2)

    def violation(self, mu):
        """Unit-free: :math:`\\max(\\|\\mu-\\mu_0\\|/\\Lambda-1,\\ \\max_k(-\\mu_k)/\\Lambda,\\ 0)`."""
        mu = np.asarray(mu, dtype=float)
        outside = float(np.linalg.norm(mu - self.center(mu.size))) / self.radius - 1.0
        return max(outside, float(np.max(-mu, initial=0.0)) / self.radius, 0.0)

    def project(self, mu):
        mu = np.asarray(mu, dtype=float)
        return project_ball_orthant(mu, self.center(mu.size), self.radius)

    def into_set(self, mu, tol=1e-12):
        """The exact projection (cheap, and the identity on points of :math:`\\mathcal M`)."""
        return self.project(mu)

    def argmin_weights(self, wnorm2):
        return self.project(np.zeros(np.asarray(wnorm2).size))  # not a wrapper set: a feasible point

    def support_point(self, s: np.ndarray) -> np.ndarray:
        """The maximizer :math:`\\mu_0+\\Lambda s/\\|s\\|` of :math:`s^\\top\\mu` over :math:`\\mathcal M` (:math:`s\\ge0`)."""
        return support_point(s, self.center(np.size(s)), self.radius)

    def decision_values(self, test_kernels, weights: np.ndarray, coef: np.ndarray) -> np.ndarray:
        """:math:`f(x)=\\bigl(\\sum_k\\mu_kK_k(x,X)\\bigr)^{\\circ d}c`, the predictor of the learned kernel (no offset).

        ``test_kernels`` is the dense (M, n_test, n_train) array (or (n_test, n_train) for M = 1).
        """
        if hasattr(test_kernels, "products"):
            raise InvalidInputError("a polynomial combination needs the dense test kernels "
                                    "(M, n_test, n_train), not test factors.")
        T = np.asarray(test_kernels, dtype=float)
        T = T[None] if T.ndim == 2 else T
        coef = np.asarray(coef, dtype=float).ravel()
        weights = np.asarray(weights, dtype=float)
        if T.ndim != 3 or T.shape[0] != weights.size or T.shape[2] != coef.size:
            raise InvalidInputError(f"test kernels must have shape (M={weights.size}, n_test, "
                                    f"n_train={coef.size}), got {T.shape}.")
        return (np.tensordot(weights, T, axes=1) ** self.degree) @ coef

    def params(self) -> dict:
        """The constructor's arguments (the spec a saved result stores)."""
        return {"lam": self.lam, "mu0": None if self.mu0 is None else self.mu0.tolist(),
                "radius": self.radius, "degree": self.degree}


def _positive(value, name: str) -> float:
    if isinstance(value, (bool, np.bool_)):
        raise InvalidInputError(f"{name} must be a positive number, got {value!r}.")
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name} must be a positive number, got {value!r}.") from None
    if not (np.isfinite(value) and value > 0):
        raise InvalidInputError(f"{name} must be positive and finite, got {value}.")
    return value


def _center(mu0) -> np.ndarray:
    try:
        mu0 = np.array(mu0, dtype=float)  # a copy: the caller's array is never kept or changed
    except (TypeError, ValueError):
        raise InvalidInputError(f"mu0 must be an array of M nonnegative numbers, got {mu0!r}.") from None
    if mu0.ndim != 1 or mu0.size == 0:
        raise InvalidInputError(f"mu0 must be a 1-D array with one weight per kernel, got shape {mu0.shape}.")
    if not np.all(np.isfinite(mu0)):
        raise InvalidInputError("mu0 contains NaN or infinite values.")
    if np.any(mu0 < 0):
        raise InvalidInputError(
            f"mu0 must be nonnegative (got min {mu0.min():.3g}): the closed-form support function "
            "and projection of {mu >= 0 : ||mu - mu0|| <= Lambda} need mu0 >= 0.")
    return mu0
