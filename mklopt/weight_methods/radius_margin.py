"""Radius–margin weights: R-MKL (Do, Kalousis, Woznica & Hilario, "Margin and Radius Based
Multiple Kernel Learning", ECML PKDD 2009) and GRAM (Lauriola, Polato & Aiolli,
"Radius-Margin Ratio Optimization for Dot-Product Boolean Kernel Learning", ICANN 2017).

Both start from the radius–margin bound: the leave-one-out error of an SVM is
bounded by :math:`R^2/\\rho^2`, radius of the enclosing ball over margin.

* **R-MKL** bounds the radius of the combination by the weighted radii,
  :math:`R^2(K_\\mu)\\le\\sum_m\\mu_mR_m^2` (:math:`R^2` is a maximum of functions
  linear in :math:`K`), and, the ratio being scale-free, fixes that bound to 1:
  ℓ1-MKL over the weighted simplex :math:`\\{\\mu\\ge0:\\sum_m R_m^2\\mu_m\\le1\\}`, a convex
  problem mklopt solves and certifies exactly (``WeightedL1``, cutting plane).
* **GRAM** minimizes the ratio itself over the simplex,

  .. math:: \\min_{\\mu\\in\\Delta}\\ r(\\mu)=R^2(K_\\mu)/\\rho^2_\\lambda(K_\\mu),

  a convex function over a concave one: quasiconvex (each sublevel set
  :math:`\\{R^2-t\\rho^2\\le0\\}` is convex), so mklopt certifies it globally. For any
  :math:`\\beta\\in\\Delta,\\gamma\\in\\Gamma`, :math:`R^2(K_\\mu)\\ge a(\\beta)^\\top\\mu` and
  :math:`\\rho^2_\\lambda(K_\\mu)\\le(1-\\lambda)b(\\gamma)^\\top\\mu+\\lambda\\|\\gamma\\|^2`, with
  :math:`a_m=\\beta^\\top\\operatorname{diag}K_m-\\beta^\\top K_m\\beta`,
  :math:`b_m=\\gamma^\\top YK_mY\\gamma`; a linear-fractional function is smallest at a vertex, so

  .. math:: r^*\\ \\ge\\ \\min_m\\frac{a_m(\\beta)}{(1-\\lambda)b_m(\\gamma)+\\lambda\\|\\gamma\\|^2},

  tight at the optimum's own :math:`(\\beta,\\gamma)` (a saddle point). The algorithm is the
  paper's exponentiated gradient on :math:`\\log r` (Danskin:
  :math:`\\partial_m\\log r=a_m/R^2-(1-\\lambda)b_m/\\rho^2`) with a backtracking step;
  it stops when that certified interval is within ``tol``.
"""

from __future__ import annotations

import math

import numpy as np

from .._options import Integer, Real
from ..api import fit
from ..regularizers import WeightedL1
from ._access import binary_labels, dense_kernels
from ..certificates.bounds import closes
from ._simplex_qp import check_separable, class_margin, enclosing_radius
from .registry import WeightFit, WeightMethod, register

__all__ = ["rmkl", "gram"]


def rmkl(kernels, y, *, C: float = 1.0, tol: float = 1e-4, backend=None) -> WeightFit:
    """R-MKL weights: ℓ1-MKL over :math:`\\{\\mu\\ge0:\\sum_m R_m^2\\mu_m\\le1\\}`, certified.

    ``info`` holds the radii (each certified by its QP's gap) and the MKL
    problem's certified ``rel_gap``.
    """
    ks, K = dense_kernels(kernels, "rmkl")
    y = binary_labels(y, ks.n, "rmkl")
    balls = [enclosing_radius(K_m, backend) for K_m in K]
    radii2 = np.array([ball.value for ball in balls])
    result = fit(ks, y, "cutting_plane", C=C, regularizer=WeightedL1(radii2), tol=tol)
    info = {"method": "rmkl", "radii2": radii2, "radii2_gap": np.array([b.gap for b in balls]),
            "mkl_rel_gap": result.rel_gap, "mkl_status": result.status, "C": C}
    return WeightFit(np.asarray(result.weights, dtype=float), info)


def _terms(K: np.ndarray, y: np.ndarray, mu: np.ndarray, lam: float, backend, warm=None):
    combined = np.tensordot(mu, K, axes=1)
    ball = enclosing_radius(combined, backend, start=None if warm is None else warm[0].point)
    hull = class_margin(combined, y, lam, backend, start=None if warm is None else warm[1].point)
    a = np.einsum("mii,i->m", K, ball.point) - (K @ ball.point) @ ball.point
    signed = y * hull.point
    b = (1 - lam) * ((K @ signed) @ signed)
    c = lam * float(hull.point @ hull.point)
    return ball, hull, a, b, c


def _bounds(ball, hull, a, b, c) -> tuple[float, float]:
    low_margin = hull.value - hull.gap
    upper = (ball.value + ball.gap) / low_margin if low_margin > 0 else math.inf
    denom = b + c
    lower = float(np.min(np.where(denom > 0, a / np.where(denom > 0, denom, 1.0), np.inf)))
    return upper, max(lower, 0.0)


def gram(kernels, y, *, lam: float = 0.0, tol: float = 1e-3, max_iter: int = 200,
         backend=None) -> WeightFit:
    """GRAM weights: the certified minimum of :math:`R^2(K_\\mu)/\\rho^2_\\lambda(K_\\mu)` over the simplex.

    ``info``: ``ratio`` (upper bound at the weights), ``lower`` (global lower
    bound), ``rel_gap`` = (upper - lower) / upper, ``iterations``, ``status``
    ("certified", "max_iter" or "stalled").
    """
    ks, K = dense_kernels(kernels, "gram")
    y = binary_labels(y, ks.n, "gram")
    mu = np.full(ks.M, 1.0 / ks.M)
    state = _terms(K, y, mu, lam, backend)
    check_separable(state[1], "gram")
    upper, lower = _bounds(*state)
    step, status, it = 1.0, "max_iter", 0
    for it in range(1, max_iter + 1):
        if closes(lower, upper, tol):
            status = "certified"
            break
        ball, hull, a, b, _ = state
        grad = a / ball.value - b / hull.value
        step, trial = _eg_step(K, y, mu, grad, upper, step, lam, backend, state)
        if trial is None:
            status = "stalled"
            break
        mu, state = trial
        new_upper, new_lower = _bounds(*state)
        upper, lower = min(upper, new_upper), max(lower, new_lower)
    info = {"method": "gram", "ratio": upper, "lower": lower, "rel_gap": (upper - lower) / upper,
            "iterations": it, "status": status, "lam": lam}
    return WeightFit(mu, info)


def _eg_step(K, y, mu, grad, upper, step, lam, backend, warm):
    """Exponentiated-gradient step on the simplex, halved until the certified ratio decreases."""
    scale = float(np.max(np.abs(grad))) or 1.0
    for _ in range(30):
        trial = mu * np.exp(-(step / scale) * (grad - grad.min()))
        trial /= trial.sum()
        state = _terms(K, y, trial, lam, backend, warm)
        if _bounds(*state)[0] < upper:
            return min(2 * step, 1e3), (trial, state)
        step /= 2
    return step, None


register(WeightMethod(
    "rmkl", rmkl, targets="labels", uses_C=True,
    summary="l1-MKL over the simplex weighted by the kernels' squared radii (Do et al. 2009)",
    certified="exactly: the MKL problem's duality gap; each radius by its QP's gap",
    page="peer_methods.md", options={"C": Real(0, open="low"), "tol": Real(0, 1, open="both")}))
register(WeightMethod(
    "gram", gram, targets="labels",
    summary="minimum radius/margin ratio over the simplex (Lauriola, Polato & Aiolli 2017)",
    certified="globally: the ratio between a certified upper and lower bound (quasiconvex)",
    page="peer_methods.md", options={"lam": Real(0, 1, open="high"), "tol": Real(0, 1, open="both"),
                                     "max_iter": Integer(1)}))
