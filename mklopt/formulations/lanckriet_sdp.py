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

from ..certificates.bounds import ranked_gap
from ..certificates.gap import certificate
from .._options import Real
from ..exceptions import FormulationError
from ..regularizers.spectrahedron import Spectrahedron
from ._base import Formulation, MKLData, Model

__all__ = ["FORMULATION", "build"]

#: Largest n at which the SDP statement is solved by default: its LMIs are (n+1) x (n+1)
#: and an interior point forms an (n(n+1)/2)^2 scaling block (n = 60: ~30 s). Above it
#: (and with ``backend="mklopt"``) :func:`by_cuts` solves the same problem.
DIRECT_MAX_N = 60
#: Cutting-plane iterations of :func:`refine`, at most.
MAX_CUTS = 300


def _spectrahedron(data: MKLData, trace: float | None) -> Spectrahedron:
    reg = data.regularizer
    if isinstance(reg, Spectrahedron):
        if trace is not None and abs(trace - reg.c) > 1e-12 * reg.c:
            raise FormulationError(f"trace={trace} differs from the regularizer's trace {reg.c}; give one.")
        return reg
    return Spectrahedron(data.kernels.K, trace)


def build(data: MKLData, trace: float | None = None) -> Model:
    """Build the SDP for :func:`mklopt.solve` (``p`` unused; ``trace`` is :math:`c`, default the mean trace)."""
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

    def certify(weights, alpha, bias, limit):
        # a tenth of the limit: less and the caller re-solves the SDP 100x tighter
        return refine(data, theta, [_svm_certificate(data, theta, weights, alpha)], limit / 10)

    return Model(problem, extract, theta, info={"trace": theta.c}, certify=certify)


def _svm_certificate(data: MKLData, theta: Spectrahedron, weights: np.ndarray, alpha=None):
    """mklopt's certificate at the repaired weights with the better of libsvm's alpha
    (tolerance 1e-12) there and ``alpha`` (the SDP's Schur complement :math:`G^+v`, when given)."""
    weights = theta.into_set(weights)
    combined = np.tensordot(weights, data.kernels.K, axes=1)
    svc = SVC(C=data.C, kernel="precomputed", tol=1e-12, max_iter=10**7).fit(combined, data.y)
    polished = np.zeros(data.n)
    polished[svc.support_] = np.abs(svc.dual_coef_[0])
    cert = min((certificate(data.kernels, data.y, weights, a, data.C, theta)
                for a in ([polished] if alpha is None else [alpha, polished])), key=ranked_gap)
    cert.feasible = theta.violation(cert.weights) <= 1e-9
    return cert


def refine(data: MKLData, theta: Spectrahedron, certificates: list, limit: float,
           max_iter: int = MAX_CUTS):
    """Kelley's cutting plane over :math:`\\Theta_c` from the given certificates' cuts.

    The master :math:`\\min_{\\mu\\in\\Theta_c,\\eta}\\eta` over the cuts
    :math:`\\eta\\ge D(\\alpha^r)-\\frac12\\mu^\\top s(\\alpha^r)` is solved by a primal-dual
    interior point (:meth:`~mklopt.regularizers.spectrahedron.Spectrahedron.cut_master`), the
    oracle is libsvm at the master's weights. Each step certifies two candidates at the
    master's weights: libsvm's alpha there, and the cuts' alphas combined by the master's
    multipliers (what the master's optimum certifies: it closes the gap where the SVM value
    is not differentiable in the weights and no single SVM's alpha is the saddle point's).
    It stops at the first certificate with rel_gap <= ``limit``. An interior point's
    answer to the SDP statement is accurate to about its tolerance on these degenerate
    problems (a weight at zero on the boundary); the cuts from it finish the job.
    """
    best = min(certificates, key=ranked_gap)
    master = theta.cut_master()
    alphas = []
    for cert in certificates:
        master.add_cut(cert.gain, cert.s)
        alphas.append(cert.alpha)
    for _ in range(max_iter):
        if best.consistent() and best.rel_gap <= limit:
            break
        mu = master.solve()[0]
        aggregate = certificate(data.kernels, data.y, theta.into_set(mu),
                                master.multipliers @ np.array(alphas), data.C, theta)
        cert = _svm_certificate(data, theta, mu)
        master.add_cut(cert.gain, cert.s)
        alphas.append(cert.alpha)
        best = min(best, cert, aggregate, key=ranked_gap)
    return best


def by_cuts(data: MKLData, limit: float, trace: float | None = None):
    """The same problem without the SDP statement: :func:`refine` from the uniform
    combination. Returns the best certificate and the weight set :math:`\\Theta_c`."""
    theta = _spectrahedron(data, trace)
    return refine(data, theta, [_svm_certificate(data, theta, theta.centre(data.M))], limit), theta


FORMULATION = Formulation(
    "lanckriet_sdp", "SDP", build,
    "general linear combination (weights of any sign), K_mu PSD with fixed trace: an SDP",
    page="lanckriet_sdp.md", losses=("hinge",), needs_dense=True,
    options={"trace": Real(0, open="low", optional=True)},
    method=by_cuts, method_above_n=DIRECT_MAX_N)
