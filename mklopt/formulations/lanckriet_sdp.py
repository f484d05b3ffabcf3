"""General linear combinations of kernels as an SDP (Lanckriet, Cristianini, Bartlett, El Ghaoui
& Jordan, JMLR 2004, Theorem 16; the learning-kernels tutorial, "Linear Combinations").

Weights of any sign over :math:`\\Theta_c=\\{\\mu: K_\\mu\\succeq0,\\ \\operatorname{Tr}K_\\mu=c\\}`
(:class:`~mklopt.regularizers.spectrahedron.Spectrahedron`). With :math:`G(K)=YKY`,

.. math::

    \\min_{\\mu,t,\\lambda,\\nu\\ge0,\\delta\\ge0}\\ \\tfrac12 t\\quad\\text{s.t.}\\quad
    K_\\mu\\succeq0,\\ \\operatorname{Tr}K_\\mu=c,\\quad
    \\begin{pmatrix}G(K_\\mu)&1+\\nu-\\delta+\\lambda y\\\\(1+\\nu-\\delta+\\lambda y)^\\top&t-2C\\delta^\\top1\\end{pmatrix}\\succeq0,

whose value is :math:`\\min_{\\mu\\in\\Theta_c}\\max_{0\\le\\alpha\\le C,\\,y^\\top\\alpha=0}
1^\\top\\alpha-\\tfrac12\\alpha^\\top G(K_\\mu)\\alpha` (mklopt's scaling: half of the paper's
:math:`\\omega_C`). By the Schur complement the second LMI says
:math:`t-2C\\delta^\\top1\\ge v^\\top G^+v` with :math:`v=1+\\nu-\\delta+\\lambda y`, and
:math:`\\alpha=G^+v` attains it: that is the ``alpha`` read out. mklopt certifies the
answer with its usual certificate over :math:`\\Theta_c` (weights of any sign allowed there).
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
from sklearn.svm import SVC

from ..bounds import ranked_gap
from ..certificates import certificate
from .._options import Real
from ..exceptions import FormulationError
from ..regularizers.spectrahedron import Spectrahedron
from ._base import Formulation, MKLData, Model

__all__ = ["FORMULATION", "build"]

#: Largest n accepted: the LMIs are (n+1) x (n+1).
MAX_N = 400


def _spectrahedron(data: MKLData, trace: float | None) -> Spectrahedron:
    reg = data.regularizer
    if isinstance(reg, Spectrahedron):
        if trace is not None and abs(trace - reg.c) > 1e-12 * reg.c:
            raise FormulationError(f"trace={trace} differs from the regularizer's trace {reg.c}; give one.")
        return reg
    return Spectrahedron(data.kernels.K, trace)


def build(data: MKLData, trace: float | None = None) -> Model:
    """Build the SDP for :func:`mklopt.solve` (``p`` unused; ``trace`` is :math:`c`, default the mean trace)."""
    if data.n > MAX_N:
        raise FormulationError(f"lanckriet_sdp has ({data.n}+1)^2 LMI entries; it is meant for n <= {MAX_N}. "
                               "Use nonnegative weights (lp_dual, cutting_plane) for larger problems.")
    theta = _spectrahedron(data, trace)
    y, C, n = data.y, data.C, data.n
    mu, t, lam = cp.Variable(data.M), cp.Variable(), cp.Variable()
    nu, delta = cp.Variable(n, nonneg=True), cp.Variable(n, nonneg=True)
    gram = cp.multiply(np.outer(y, y), theta.combined(mu))
    v = 1 + nu - delta + lam * y
    corner = cp.reshape(t - 2 * C * cp.sum(delta), (1, 1), order="C")
    lmi = cp.bmat([[gram, cp.reshape(v, (n, 1), order="C")], [cp.reshape(v, (1, n), order="C"), corner]])
    problem = cp.Problem(cp.Minimize(t / 2), [*theta.constraints(mu), (lmi + lmi.T) / 2 >> 0])

    def extract():
        if mu.value is None:
            return None, None, 0.0
        weights = np.asarray(mu.value, dtype=float)
        combined = np.tensordot(weights, data.kernels.K, axes=1)
        alpha = np.linalg.lstsq(np.outer(y, y) * combined, np.asarray(v.value), rcond=1e-12)[0]
        return weights, alpha, 0.0

    def certify(weights, alpha, bias):
        return _certify(data, theta, weights, alpha)

    return Model(problem, extract, theta, info={"trace": theta.c}, certify=certify)


def _certify(data: MKLData, theta: Spectrahedron, weights: np.ndarray, alpha: np.ndarray):
    """mklopt's certificate of the SDP's weights with the better of two alphas: the Schur
    complement's :math:`G^+v`, and libsvm's (tolerance 1e-12) at the repaired weights."""
    weights = theta.into_set(weights)
    combined = np.tensordot(weights, data.kernels.K, axes=1)
    svc = SVC(C=data.C, kernel="precomputed", tol=1e-12, max_iter=10**7).fit(combined, data.y)
    polished = np.zeros(data.n)
    polished[svc.support_] = np.abs(svc.dual_coef_[0])
    cert = min((certificate(data.kernels, data.y, weights, a, data.C, theta)
                for a in (alpha, polished)), key=ranked_gap)
    cert.feasible = theta.violation(cert.weights) <= 1e-9
    return cert


FORMULATION = Formulation(
    "lanckriet_sdp", "SDP", build,
    "general linear combination (weights of any sign), K_mu PSD with fixed trace: an SDP",
    page="lanckriet_sdp.md", losses=("hinge",), needs_dense=True,
    options={"trace": Real(0, open="low", optional=True)})
