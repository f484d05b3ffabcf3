"""The two small QPs of the margin and radius weight methods, certified by mklopt itself.

With labels :math:`y\\in\\{\\pm1\\}^n` and :math:`Y=\\operatorname{diag}(y)`:

.. math::

    \\rho^2_\\lambda(K) &= \\min_{\\gamma\\in\\Gamma}\\ (1-\\lambda)\\,\\gamma^\\top YKY\\gamma
        + \\lambda\\|\\gamma\\|^2,\\qquad
        \\Gamma=\\{\\gamma\\ge0:\\textstyle\\sum_{y_i=+1}\\gamma_i=1,\\ \\sum_{y_i=-1}\\gamma_i=1\\},\\\\
    R^2(K) &= \\max_{\\beta\\in\\Delta}\\ \\beta^\\top\\operatorname{diag}(K)-\\beta^\\top K\\beta,
        \\qquad \\Delta=\\{\\beta\\ge0:1^\\top\\beta=1\\}.

:math:`\\rho^2_0` is the squared distance between the convex hulls of the two
classes in feature space (the hard margin is :math:`\\rho_0/2`), :math:`R` the
radius of the smallest enclosing ball. Both are solved by mklopt's compiled
pairwise solver (:mod:`mklopt._compiled.pairwise`, warm-started by the outer loops) or, when a
``backend`` is named or the pairwise solver does not converge, by a CVXPY backend; the
answer is then made feasible (clipped, each simplex renormalized) and
certified by the Frank–Wolfe gap, valid for any convex :math:`f` over a
polytope :math:`P` at any feasible :math:`x`:

.. math:: f(x)-\\min_P f\\ \\le\\ g(x)=\\nabla f(x)^\\top x-\\min_{v\\in\\operatorname{vert}P}\\nabla f(x)^\\top v,

with the vertices of :math:`\\Gamma` one point per class, of :math:`\\Delta` the unit vectors.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import cvxpy as cp
import numpy as np

from .. import backends as bk
from ..exceptions import InvalidInputError, SolverError
from .._compiled.pairwise import pairwise_simplex_qp

__all__ = ["SimplexQP", "class_margin", "enclosing_radius", "project_simplex"]


@dataclass
class SimplexQP:
    """A certified solution of one of the two QPs.

    Attributes
    ----------
    point : ndarray (n,)
        The feasible point (:math:`\\gamma\\in\\Gamma` or :math:`\\beta\\in\\Delta`).
    value : float
        The objective at ``point``, computed exactly from the kernel.
    gap : float
        Frank–Wolfe gap: the optimum lies between ``value`` and ``value -+ gap``
        (below it for the margin, a minimum; above it for the radius, a maximum).
    backend : str
    """

    point: np.ndarray
    value: float
    gap: float
    backend: str

    @property
    def rel_gap(self) -> float:
        return self.gap / max(abs(self.value), np.finfo(float).tiny)


def project_simplex(v: np.ndarray) -> np.ndarray:
    """Euclidean projection onto :math:`\\{x\\ge0: 1^\\top x=1\\}` (sort and threshold)."""
    v = np.asarray(v, dtype=float)
    u = np.sort(v)[::-1]
    cumulative = np.cumsum(u) - 1.0
    k = np.arange(1, v.size + 1)
    last = np.flatnonzero(u - cumulative / k > 0)[-1]
    return np.maximum(v - cumulative[last] / (last + 1), 0.0)


def _renormalize(x: np.ndarray, groups: list[np.ndarray]) -> np.ndarray:
    x = np.clip(np.asarray(x, dtype=float), 0.0, None)
    for group in groups:
        total = x[group].sum()
        x[group] = x[group] / total if total > 0 else 1.0 / group.size
    return x


def _solve(problem: cp.Problem, backend, what: str) -> str:
    name, solver = bk.select_backend(backend, "QP", what)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            problem.solve(solver=solver, **bk.solver_options(name, 1e-9))
    except cp.error.SolverError as exc:
        raise SolverError(f"{what}: backend {name} failed ({exc}); try another backend.") from None
    if problem.status not in ("optimal", "optimal_inaccurate") or problem.variables()[0].value is None:
        raise SolverError(f"{what}: backend {name} ended with status {problem.status!r}.")
    return name


def class_margin(K: np.ndarray, y: np.ndarray, lam: float = 0.0, backend=None,
                 start: np.ndarray | None = None) -> SimplexQP:
    """:math:`\\rho^2_\\lambda(K)`: the (regularized) squared distance between the class hulls.

    Parameters
    ----------
    K : ndarray (n, n)
        A PSD kernel.
    y : ndarray (n,)
        Labels in :math:`\\{-1, +1\\}`, both present.
    lam : float in [0, 1]
        EasyMKL's :math:`\\lambda`: 0 is the hard margin, 1 the squared distance
        of uniform weights (class centroids) plus :math:`\\|\\gamma\\|^2`.
    backend : str, optional
        A QP-capable CVXPY backend; default the compiled pairwise solver (a CVXPY
        backend if it does not converge).
    start : ndarray (n,), optional
        A warm start for the pairwise solver (e.g. the previous outer iteration's point).
    """
    groups = [np.flatnonzero(y > 0), np.flatnonzero(y < 0)]
    point = None if backend is not None else pairwise_simplex_qp(K, y, groups, a=1 - lam, r=lam, start=start)
    name = "pairwise"
    if point is None:
        gamma = cp.Variable(y.size)
        signed = cp.multiply(y, gamma)
        objective = (1 - lam) * cp.quad_form(signed, cp.psd_wrap(K)) + lam * cp.sum_squares(gamma)
        constraints = [gamma >= 0] + [cp.sum(gamma[g]) == 1 for g in groups]
        name = _solve(cp.Problem(cp.Minimize(objective), constraints), backend, "class margin QP")
        point = gamma.value
    point = _renormalize(point, groups)
    Kv = K @ (y * point)
    value = (1 - lam) * float((y * point) @ Kv) + lam * float(point @ point)
    grad = 2 * (1 - lam) * y * Kv + 2 * lam * point
    gap = float(grad @ point) - sum(float(grad[g].min()) for g in groups)
    return SimplexQP(point, value, max(gap, 0.0), name)


def check_separable(hull: SimplexQP, method: str) -> None:
    """Refuse a margin QP whose certified lower bound is not positive: the class hulls may meet.

    Then :math:`\\rho = 0` cannot be excluded, the radius/margin ratio is unbounded and
    no weights can be certified (e.g. one point given twice with opposite labels).
    """
    if not hull.value - hull.gap > 0:
        raise InvalidInputError(
            f"{method}: the class hulls intersect in the feature space of the average kernel (margin "
            f"{max(hull.value, 0.0):.3g} is not certified positive: a point with both labels, or classes "
            "no kernel separates); set lam > 0, or remove contradictory points.")


def enclosing_radius(K: np.ndarray, backend=None, start: np.ndarray | None = None) -> SimplexQP:
    """:math:`R^2(K)`: the squared radius of the smallest ball enclosing the points in feature space.

    ``backend`` and ``start`` as in :func:`class_margin`.
    """
    n = K.shape[0]
    diag = np.diag(K).copy()
    point = None if backend is not None else pairwise_simplex_qp(K, np.ones(n), [np.arange(n)], c=-diag,
                                                                 start=start)
    name = "pairwise"
    if point is None:
        beta = cp.Variable(n)
        objective = diag @ beta - cp.quad_form(beta, cp.psd_wrap(K))
        name = _solve(cp.Problem(cp.Maximize(objective), [beta >= 0, cp.sum(beta) == 1]), backend,
                      "enclosing-ball QP")
        point = beta.value
    point = _renormalize(point, [np.arange(n)])
    Kb = K @ point
    value = float(diag @ point - point @ Kb)
    grad = diag - 2 * Kb  # of the concave objective: the gap is max_vertex - at the point
    gap = float(grad.max() - grad @ point)
    return SimplexQP(point, value, max(gap, 0.0), name)
