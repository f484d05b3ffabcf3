"""The ℓp balls of weights, :math:`\\Theta = \\{\\mu\\ge0 : \\|\\mu\\|_p \\le 1\\}` (p the weight norm)."""

from __future__ import annotations

import math

import cvxpy as cp
import numpy as np

from .base import Regularizer
from .norms import check_p, conic_norm, conjugate_exponent

__all__ = ["LpBall", "L1", "stable_norm"]


def stable_norm(x: np.ndarray, q: float) -> float:
    """:math:`\\|x\\|_q` without overflow for large ``q`` (scaled by :math:`\\max|x_i|`)."""
    x = np.abs(np.asarray(x, dtype=float))
    if q == 1.0:  # the plain sum while it is finite (the interleaved loop's every weight step)
        total = float(x.sum())
        if math.isfinite(total):
            return total
    top = float(x.max(initial=0.0))
    if top == 0.0 or not math.isfinite(top):
        return top
    if math.isinf(q):
        return top
    return top * float(np.sum((x / top) ** q)) ** (1.0 / q)


def _simplex_ball_projection(mu: np.ndarray) -> np.ndarray:
    """Projection onto :math:`\\{\\mu\\ge0: 1^\\top\\mu\\le1\\}` (sort-based, Held et al.)."""
    clipped = np.clip(mu, 0, None)
    if clipped.sum() <= 1.0:
        return clipped
    u = np.sort(mu)[::-1]
    count = np.arange(1, u.size + 1)
    # mu - tau_k with tau_k = (sum_{j<=k} u_j - 1)/(k+1), formed as (mu - mean_k) + 1/(k+1): the
    # difference first, so that weights like [1e16, 1] keep their unit of room (mu - tau in
    # that order rounds it away); k = 0 always qualifies
    means = np.cumsum(u) / count
    k = int(np.flatnonzero(u - means + 1.0 / count > 0)[-1])
    return np.clip((mu - means[k]) + 1.0 / (k + 1.0), 0, None)


class LpBall(Regularizer):
    """:math:`\\Theta = \\{\\mu\\ge0 : \\|\\mu\\|_p \\le 1\\}`, ``p`` the weight norm in :math:`[1,\\infty]`.

    Closed forms: :math:`\\sigma_\\Theta(s) = \\|s_+\\|_{p^*}` and the wrapper step
    :math:`\\mu_m = \\|w_m\\|^{2/(p+1)} / (\\sum_k \\|w_k\\|^{2p/(p+1)})^{1/p}`.
    """

    has_support_expr = True

    def __init__(self, p: float = 1.0) -> None:
        self.p = check_p(p)
        self.name = f"lp(p={self.p:g})"

    def __repr__(self) -> str:
        return f"LpBall(p={self.p:g})"

    def set_constraints(self, mu):
        if math.isinf(self.p):
            return [mu <= 1]
        if self.p == 1:
            return [cp.sum(mu) <= 1]
        return [conic_norm(mu, self.p, f"p = {self.p:g}") <= 1]

    def check(self, M: int) -> None:
        """Always compact, non-empty and DCP."""

    def contains_zero(self, M: int) -> bool:
        return True

    def norm(self, mu: np.ndarray) -> float:
        return stable_norm(np.maximum(mu, 0.0), self.p)  # np.clip's dispatch costs 4x: a step's call

    def support(self, s):
        return stable_norm(np.maximum(np.asarray(s, float), 0.0), conjugate_exponent(self.p))

    def support_expr(self, u):
        q = conjugate_exponent(self.p)
        if math.isinf(q):
            return cp.max(u)
        if q == 1:
            return cp.sum(u)
        return conic_norm(u, q, f"p = {self.p:g} (conjugate exponent p* = {q:.6g})")

    def argmin_weights(self, wnorm2):
        a = np.clip(np.asarray(wnorm2, dtype=float), 0, None)
        if math.isinf(self.p):
            return np.ones(a.size)
        if not np.any(a > 0):
            return np.full(a.size, a.size ** (-1.0 / self.p))
        w = np.sqrt(a / a.max())  # scale-free: avoids under/overflow of powers
        num = w ** (2.0 / (self.p + 1.0))
        return num / np.sum(w ** (2.0 * self.p / (self.p + 1.0))) ** (1.0 / self.p)

    def violation(self, mu):
        mu = np.asarray(mu, dtype=float)
        return max(self.norm(mu) - 1.0, float(np.max(-mu, initial=0.0)), 0.0)

    def into_set(self, mu, tol=1e-12):
        mu = np.maximum(np.asarray(mu, dtype=float), 0.0)
        return mu / max(1.0, self.norm(mu))

    def project(self, mu):
        mu = np.asarray(mu, dtype=float)
        if math.isinf(self.p):
            return np.clip(mu, 0.0, 1.0)
        if self.p == 1:
            return _simplex_ball_projection(mu)
        if self.p == 2:
            return self.into_set(mu)  # clip then scale is the exact projection for p = 2
        return super().project(mu)


class L1(LpBall):
    """The simplex :math:`\\{\\mu\\ge0 : \\sum_m\\mu_m\\le1\\}` (ℓ1-MKL)."""

    def __init__(self) -> None:
        super().__init__(1.0)
        self.name = "l1"

    def __repr__(self) -> str:
        return "L1()"
