"""MEMO (Lauriola, Polato & Aiolli, "The minimum effort maximum output principle applied to
Multiple Kernel Learning", ESANN 2018): a large margin at a low complexity.

.. math::

    \\max_{\\mu\\in\\Delta}\\ J(\\mu)=\\rho^2_\\lambda(K_\\mu)+\\frac\\theta2\\,\\mu^\\top\\tilde Q\\mu,
    \\qquad \\tilde Q_{kl}=\\frac{\\langle K_k,K_l\\rangle_F}{\\tfrac1M\\sum_m\\|K_m\\|_F^2},

as MKLpy states it: for kernels of equal trace a larger
:math:`\\|K_\\mu\\|_F^2=\\mu^\\top Q\\mu` is a smaller spectral ratio
:math:`\\|K\\|_*/\\|K\\|_F`, the paper's complexity. :math:`\\rho^2_\\lambda` is concave in
:math:`\\mu` (a minimum of linear functions), the second term convex: for
:math:`\\theta=0` the problem is concave and mklopt certifies its maximum; for
:math:`\\theta>0` it is not, and mklopt reports a valid global upper bound but
certifies only stationarity (as for DCA). For any :math:`\\gamma\\in\\Gamma`,
:math:`J(\\mu)\\le(1-\\lambda)b(\\gamma)^\\top\\mu+\\lambda\\|\\gamma\\|^2+\\tfrac\\theta2\\mu^\\top\\tilde Q\\mu`,
a convex function whose maximum over the simplex is at a vertex:

.. math:: J^*\\le\\min_{\\gamma\\text{ visited}}\\ \\max_m\\ (1-\\lambda)b_m(\\gamma)+\\lambda\\|\\gamma\\|^2+\\tfrac\\theta2\\tilde Q_{mm}.

The algorithm: projected gradient ascent (Danskin:
:math:`\\nabla J=(1-\\lambda)b(\\gamma)+\\theta\\tilde Q\\mu`), Euclidean projection onto the
simplex, a step doubled on success and halved until :math:`J` increases.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._options import Integer, Real
from ..exceptions import InvalidInputError
from ._access import binary_labels, dense_kernels
from ..certificates.bounds import closes
from ._simplex_qp import check_separable, class_margin, project_simplex
from .registry import WeightFit, WeightMethod, register

__all__ = ["memo"]


def _evaluate(K, y, mu, lam, theta, Qn, backend, start=None):
    hull = class_margin(np.tensordot(mu, K, axes=1), y, lam, backend, start=start)
    signed = y * hull.point
    b = (1 - lam) * ((K @ signed) @ signed)
    c = lam * float(hull.point @ hull.point)
    value = hull.value + 0.5 * theta * float(mu @ Qn @ mu)
    lower = value - hull.gap
    upper = float(np.max(b + c + 0.5 * theta * np.diag(Qn)))
    return value, lower, upper, b + theta * (Qn @ mu), hull.point


def memo(kernels, y, *, theta: float = 0.0, lam: float = 0.0, tol: float = 1e-4,
         max_iter: int = 200, backend=None) -> WeightFit:
    """MEMO weights.

    Parameters
    ----------
    theta : float in [0, 1e12]
        Trade-off: 0 maximizes the margin only (concave: certified), larger
        values favour low-complexity combinations (non-convex: stationary point).
    lam : float in [0, 1)
        Regularization of the margin QP (0: the hard margin, as MKLpy).

    Returns
    -------
    WeightFit
        ``info``: ``objective`` (certified lower bound at the weights), ``upper``
        (global upper bound), ``rel_gap``, ``status`` ("certified" when
        ``rel_gap <= tol``; else "stationary", "max_iter" or "stalled") and ``iterations``.
    """
    for name, value, top in (("theta", theta, np.inf), ("lam", lam, 1.0)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 <= value < top:
            raise InvalidInputError(f"memo: {name} must be a number in [0, {top}), got {value!r}.")
    ks, K = dense_kernels(kernels, "memo")
    y = binary_labels(y, ks.n, "memo")
    flat = K.reshape(ks.M, -1)
    Q = flat @ flat.T
    Qn = Q / (np.trace(Q) / ks.M)
    mu = np.full(ks.M, 1.0 / ks.M)
    hull = class_margin(np.tensordot(mu, K, axes=1), y, lam, backend)
    check_separable(hull, "memo")
    value, lower, upper, grad, point = _evaluate(K, y, mu, lam, theta, Qn, backend, hull.point)
    step, status, it = 1.0, "max_iter", 0
    for it in range(1, max_iter + 1):
        if closes(lower, upper, tol):
            status = "certified"
            break
        scale = float(np.max(np.abs(grad))) or 1.0
        if np.linalg.norm(project_simplex(mu + grad / scale) - mu) <= 1e-10:
            status = "stationary"
            break
        for _ in range(30):
            trial = project_simplex(mu + (step / scale) * grad)
            result = _evaluate(K, y, trial, lam, theta, Qn, backend, point)
            if result[0] > value:
                break
            step /= 2
        else:
            status = "stalled"
            break
        mu, step = trial, min(2 * step, 1e3)
        value, lower, new_upper, grad, point = result
        upper = min(upper, new_upper)
    info = {"method": "memo", "objective": lower, "upper": upper,
            "rel_gap": (upper - lower) / abs(upper), "status": status, "iterations": it,
            "theta": theta, "lam": lam}
    return WeightFit(mu, info)


register(WeightMethod(
    "memo", memo, targets="labels",
    summary="large margin at low complexity (Lauriola, Polato & Aiolli 2018)",
    certified="theta = 0: globally (concave); theta > 0: a global upper bound and a stationary point",
    page="peer_methods.md", options={"theta": Real(0, 1e12), "lam": Real(0, 1, open="high"),
                                     "tol": Real(0, 1, open="both"), "max_iter": Integer(1)}))
