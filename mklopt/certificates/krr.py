"""The certificate of kernel ridge regression with learned weights (Cortes, Mohri, Rostamizadeh 2009).

Problem (no offset), over :math:`\\mathcal M=\\{\\mu\\ge0:\\|\\mu-\\mu_0\\|_2\\le\\Lambda\\}`
(:class:`~mklopt.regularizers.krr.KRRProblem`):

.. math:: \\min_{\\mu\\in\\mathcal M}F(\\mu),\\qquad
          F(\\mu)=\\max_\\alpha\\ \\varphi(\\mu,\\alpha)=y^\\top(K_\\mu+\\lambda I)^{-1}y,\\qquad
          \\varphi(\\mu,\\alpha)=2\\alpha^\\top y-\\lambda\\alpha^\\top\\alpha-\\alpha^\\top K_\\mu\\alpha .

For any :math:`\\mu\\in\\mathcal M`, with :math:`H=K_\\mu+\\lambda I`, :math:`\\hat\\alpha` the
Cholesky solution of :math:`H\\alpha=y` and its residual :math:`r=H\\hat\\alpha-y`,

.. math:: F(\\mu)=\\varphi(\\mu,\\hat\\alpha)+r^\\top H^{-1}r\\le
          \\underbrace{\\varphi(\\mu,\\hat\\alpha)+\\|r\\|^2/\\lambda}_{U}

(:math:`\\varphi(\\mu,\\cdot)` is a concave quadratic maximized at :math:`H^{-1}y`, and
:math:`H\\succeq\\lambda I`), so :math:`U` is :math:`F(\\mu)` up to :math:`\\|r\\|^2/\\lambda` and an
upper bound on the optimum. With :math:`s_k=\\hat\\alpha^\\top K_k\\hat\\alpha\\ge0`, weak duality
(:math:`\\min_\\mu\\max_\\alpha\\varphi\\ge\\max_\\alpha\\min_\\mu\\varphi`) gives the lower bound

.. math:: L=2\\hat\\alpha^\\top y-\\lambda\\hat\\alpha^\\top\\hat\\alpha-\\sigma_{\\mathcal M}(s),\\qquad
          \\sigma_{\\mathcal M}(s)=\\mu_0^\\top s+\\Lambda\\|s\\|_2,

so :math:`\\mathrm{gap}=U-L=\\sigma_{\\mathcal M}(s)-\\mu^\\top s+\\|r\\|^2/\\lambda\\ge0`: zero exactly
when :math:`\\mu=\\mu_0+\\Lambda s/\\|s\\|` (the optimality condition). For the degree-2
combination :math:`\\tilde K_\\mu=K_\\mu^{\\circ2}` (non-convex in μ) the certificate is that of
kernel ridge regression at the fixed kernel :math:`\\tilde K_\\mu`: :math:`U` as above,
:math:`L=\\varphi(\\mu,\\hat\\alpha)`; it bounds :math:`F(\\mu)`, not the global optimum.
``rel_gap`` divides by :math:`\\max(|U|,|L|,10^{-12}\\|y\\|^2/\\lambda)`
(:math:`\\|y\\|^2/\\lambda=F(0)` is the largest value :math:`F` takes).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve

from .._validation import check_targets, check_vector
from .bounds import Certificate, relative_gap
from .gap import psd_kernel_set
from ..exceptions import KernelError, NotPSDError
from .feasibility import FEASIBILITY_TOL, relative_violation
from .._compiled.products import combine, quadratic_terms
from ..regularizers.krr import KRRProblem

__all__ = [
    "KRRPoint",
    "evaluate",
    "krr_certificate",
    "krr_objective",
    "krr_scale",
    "point_certificate",
]


@dataclass
class KRRPoint:
    """Kernel ridge regression at fixed weights: everything the certificate and the drivers need.

    Attributes
    ----------
    weights : ndarray (M,)
    alpha : ndarray (n,)
        :math:`\\hat\\alpha=(\\tilde K_\\mu+\\lambda I)^{-1}y` (Cholesky, one refinement step if needed).
    residual : float
        Bound on :math:`\\|(\\tilde K_\\mu+\\lambda I)\\hat\\alpha-y\\|`, including the rounding of its evaluation.
    gain : float
        :math:`2\\hat\\alpha^\\top y-\\lambda\\hat\\alpha^\\top\\hat\\alpha`.
    quad : float
        :math:`\\hat\\alpha^\\top\\tilde K_\\mu\\hat\\alpha`.
    s : ndarray (M,)
        :math:`-\\nabla F(\\mu)`: :math:`\\hat\\alpha^\\top K_k\\hat\\alpha` (degree 1) or
        :math:`2\\hat\\alpha^\\top(K_k\\circ K_\\mu)\\hat\\alpha` (degree 2), all :math:`\\ge0` up to rounding.
    kappa : ndarray (M,)
        :math:`\\max_{ij}|K_{k,ij}|` (for the rounding bound).
    slack : float
        :math:`\\|r\\|^2/\\lambda\\ge r^\\top(\\tilde K_\\mu+\\lambda I)^{-1}r`.
    """

    weights: np.ndarray
    alpha: np.ndarray
    residual: float
    gain: float
    quad: float
    s: np.ndarray
    kappa: np.ndarray
    slack: float

    @property
    def value(self) -> float:
        """:math:`U\\ge F(\\mu)`, equal to it up to :math:`\\|r\\|^2/\\lambda`."""
        return self.gain - self.quad + self.slack

    def stationarity(self, problem: KRRProblem) -> float:
        """Frank–Wolfe gap :math:`\\max_{\\nu\\in\\mathcal M}(\\mu-\\nu)^\\top\\nabla F(\\mu)=\\sigma_{\\mathcal M}(s)-\\mu^\\top s\\ge0`.

        Zero exactly at the stationary points of :math:`F` over :math:`\\mathcal M`; for
        degree 1 it is the certificate's gap (without the residual term).
        """
        return max(problem.support(self.s) - float(self.weights @ self.s), 0.0)


def evaluate(K: np.ndarray, y: np.ndarray, weights: np.ndarray, problem: KRRProblem,
             kappa: np.ndarray | None = None) -> KRRPoint:
    """Solve :math:`(\\tilde K_\\mu+\\lambda I)\\alpha=y` by Cholesky and collect :class:`KRRPoint`.

    :func:`~mklopt._compiled.products.combine` builds :math:`K_\\mu` from the kernels in use;
    one matrix–vector product over the (M, n·n) stack gives all :math:`s_k`
    (degree 2: :math:`\\langle K_k, K_\\mu\\circ\\hat\\alpha\\hat\\alpha^\\top\\rangle`).
    """
    lam, n = problem.lam, y.size
    mu = np.asarray(weights, dtype=float)
    Kmu = combine(K, mu)
    Kt = Kmu if problem.degree == 1 else Kmu * Kmu
    H = Kt + lam * np.eye(n)
    try:
        factor = cho_factor(H, lower=True, check_finite=False)
    except LinAlgError:
        raise NotPSDError("K_mu + lam I is not positive definite: the kernels are not PSD "
                          "(or lam is far below their rounding level); check the kernels.") from None
    alpha = cho_solve(factor, y, check_finite=False)
    r = H @ alpha - y
    if np.linalg.norm(r) > 1e-12 * np.linalg.norm(y):  # one step of iterative refinement
        alpha = alpha - cho_solve(factor, r, check_finite=False)
        r = H @ alpha - y
    gamma = (n + 2) * np.finfo(float).eps
    rounding = gamma * (np.linalg.norm(np.abs(Kt) @ np.abs(alpha)) + lam * np.linalg.norm(alpha)
                        + np.linalg.norm(y))
    if problem.degree == 1:
        s = quadratic_terms(K, alpha)[0]
        quad = float(mu @ s)
    else:
        s = 2.0 * (K.reshape(K.shape[0], -1) @ (Kmu * np.outer(alpha, alpha)).ravel())
        quad = float(alpha @ (Kt @ alpha))
    kappa = np.abs(K.reshape(K.shape[0], -1)).max(axis=1) if kappa is None else kappa
    residual = float(np.linalg.norm(r)) + float(rounding)
    return KRRPoint(mu.copy(), alpha, residual, 2.0 * float(y @ alpha) - lam * float(alpha @ alpha),
                    quad, s, kappa, residual ** 2 / lam)


def krr_scale(y: np.ndarray, problem: KRRProblem) -> float:
    """:math:`\\|y\\|^2/\\lambda=F(0)`: the objective's size that guards exact zeros in ``rel_gap``."""
    return float(y @ y) / problem.lam


def point_certificate(point: KRRPoint, y: np.ndarray, problem: KRRProblem) -> Certificate:
    """:math:`(U, L)` of an evaluated point (see the module docstring), weights assumed in :math:`\\mathcal M`."""
    upper = point.value
    lower = point.gain - (problem.support(point.s) if problem.degree == 1 else point.quad)
    gap, message = upper - lower, ""
    if gap < 0:  # only rounding may do this: widen U by its bound, else certify nothing
        bound = _rounding_bound(point, y, problem, upper, lower)
        if -gap <= bound:
            upper, gap = upper + bound, gap + bound
        else:
            message = (f"uncertified: the lower bound exceeds the upper bound by {-gap:.3g}, beyond "
                       f"the rounding bound {bound:.3g}; the kernels or y are not what was solved")
    return Certificate(primal=upper, dual=lower, gap=gap,
                       rel_gap=relative_gap(gap, upper, lower, krr_scale(y, problem)), bias=0.0,
                       weights=point.weights, alpha=point.alpha, s=point.s, dual_coef=point.alpha,
                       gain=point.gain, message=message)


def _rounding_bound(point: KRRPoint, y, problem: KRRProblem, upper: float, lower: float) -> float:
    """Floating-point error bound of :math:`U-L`: :math:`\\gamma=(n+M+2)u`, :math:`\\delta_k=\\gamma\\kappa_k\\|\\alpha\\|_1^2`."""
    a = point.alpha
    gamma = (a.size + point.s.size + 2) * np.finfo(float).eps
    delta = gamma * point.kappa * float(np.abs(a).sum()) ** 2 * problem.degree
    return (gamma * (2 * float(np.abs(y) @ np.abs(a)) + problem.lam * float(a @ a) + abs(upper)
                     + abs(lower)) + float(np.abs(point.weights) @ delta) + problem.support(delta))


def krr_certificate(kernels, y, weights, problem: KRRProblem, *, repair: bool = False,
                    feasibility_tol: float = FEASIBILITY_TOL) -> Certificate:
    """Certify weights ``weights`` (as given) for the KRR problem ``problem``.

    Parameters
    ----------
    kernels : KernelSet or array (M, n, n)
        Symmetric PSD kernels.
    y : array (n,)
        Real targets.
    weights : array (M,)
        Candidate :math:`\\mu`; its relative violation of :math:`\\mathcal M`
        (:func:`mklopt.certificates.feasibility.relative_violation`) must be at most ``feasibility_tol``
        (then the exact projection, a noise-level repair, is certified); beyond it the
        candidate is not certified (``feasible=False``) unless ``repair=True``, which
        certifies its projection and says so.
    problem : KRRProblem
        :math:`\\lambda`, :math:`\\mu_0`, :math:`\\Lambda` and the degree.

    Returns
    -------
    Certificate
        ``primal`` :math:`=U`, ``dual`` :math:`=L`, ``alpha`` :math:`=\\hat\\alpha`
        (the predictor is :math:`f(x)=\\sum_i\\hat\\alpha_i\\tilde K_\\mu(x,x_i)`, ``bias`` 0).
    """
    ks = _dense_psd(kernels)
    y = check_targets(y, ks.n)
    weights = check_vector(weights, ks.M, "weights")
    problem.check(ks.M)
    violation = relative_violation(problem, weights)
    nearest = problem.project(weights)
    cert = point_certificate(evaluate(ks.K, y, nearest, problem), y, problem)
    cert.violation = violation
    if violation <= feasibility_tol:
        return cert
    outside = f"the weights are outside {{mu >= 0 : ||mu - mu0|| <= Lambda}} by {violation:.3g} (relative)"
    if repair:
        cert.repaired, cert.message = True, f"repaired: {outside}; certified their projection onto it"
        return cert
    given = point_certificate(evaluate(ks.K, y, np.clip(weights, 0.0, None), problem), y, problem)
    given.weights, given.violation, given.feasible = weights.copy(), violation, False
    given.message = (f"not certified: {outside}; the nearest feasible point certifies at rel_gap "
                     f"{cert.rel_gap:.2e} (repair=True / --repair).")
    return given


def krr_objective(kernels, y, weights, lam: float, degree: int = 1) -> float:
    """:math:`F(\\mu)=y^\\top(\\tilde K_\\mu+\\lambda I)^{-1}y` (an upper bound within :math:`\\|r\\|^2/\\lambda`)."""
    ks = _dense_psd(kernels)
    y = check_targets(y, ks.n)
    weights = check_vector(weights, ks.M, "weights")
    return evaluate(ks.K, y, weights, KRRProblem(lam=lam, degree=degree)).value


def _dense_psd(kernels):
    """The kernels as a PSD-validated dense :class:`~mklopt.kernels.KernelSet` (:math:`H\\succeq\\lambda I` needs PSD)."""
    ks = psd_kernel_set(kernels)
    if ks.factored:
        raise KernelError("the KRR certificate reads the dense (M, n, n) kernel stack; pass "
                          "kernels.dense() for kernels given as low-rank factors.")
    return ks
