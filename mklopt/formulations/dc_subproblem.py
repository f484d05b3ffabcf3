"""Convex subproblem of the local-Rademacher DC program (Cortes, Kloft, Mohri 2013, §3.3).

The class :math:`H_1` constrains the tail sum of the combined kernel,

.. math:: g(\\mu) = \\sum_{j>\\theta} \\lambda_j(K_\\mu) \\le 1,

a concave, positively homogeneous function of :math:`\\mu`. At a point
:math:`\\mu^0` with eigenvectors :math:`u_1, u_2, \\dots` of :math:`K_{\\mu^0}`
(descending eigenvalues), the vector

.. math:: v_m = \\sum_{j>\\theta} u_j^\\top K_m u_j
              = \\operatorname{Tr} K_m - \\sum_{j\\le\\theta} u_j^\\top K_m u_j

is a supergradient with :math:`g(\\mu)\\le\\langle v,\\mu\\rangle` for every
:math:`\\mu` and equality at :math:`\\mu^0`. The subproblem is MKL over

.. math:: \\Theta_v = \\{\\mu \\ge 0 : \\langle v, \\mu\\rangle \\le 1\\} \\subseteq H_1,

a :class:`~mklopt.regularizers.WeightedL1` ``(v)`` set, i.e. ℓ1-MKL on the
kernels :math:`K_m/v_m`. This module only computes :math:`v` and delegates
the CVXPY model to ``qcqp_l1`` (on rescaled kernels, for conditioning). The derivation is in
the catalogue page ``formulations/dc_subproblem.md``; the outer DCA loop is
the ``dca`` driver.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import cvxpy as cp
import numpy as np

from .._options import Integer, Vector
from .._validation import as_kernel_set
from ..exceptions import FormulationError, InvalidInputError, RankError
from ..kernels import KernelSet
from ..kernels.spectra import check_theta
from ..regularizers import L1, LpBall, WeightedL1
from . import qcqp_l1
from ._base import Formulation, MKLData, Model

__all__ = ["TailLinearization", "tail_sum_linearization", "check_theta", "check_weights",
           "check_no_weight_set",
           "check_supergradient", "build", "FORMULATION"]

#: A supergradient entry or tail sum below this fraction of the trace counts as zero.
RANK_TOL = 1e-10


class TailLinearization(NamedTuple):
    """Linearization of the tail sum :math:`g` at a weight vector.

    Attributes
    ----------
    v : ndarray of shape (M,)
        Supergradient :math:`v_m = \\sum_{j>\\theta} u_j^\\top K_m u_j \\ge 0`.
    g : float
        Tail sum :math:`g(\\mu) = \\sum_{j>\\theta}\\lambda_j(K_\\mu)` (equals
        :math:`\\langle v, \\mu\\rangle` up to rounding).
    """

    v: np.ndarray
    g: float


def check_weights(weights, M: int, what: str = "weights0") -> np.ndarray:
    """A copy of ``weights`` as M finite, nonnegative, not-all-zero floats."""
    mu = np.array(weights, dtype=float, copy=True).ravel()
    if mu.size != M:
        raise InvalidInputError(f"{what} must have {M} entries (one per kernel), got {mu.size}.")
    if not np.all(np.isfinite(mu)) or np.any(mu < 0) or not np.any(mu > 0):
        raise InvalidInputError(
            f"{what} must be finite, >= 0 and not all zero, got {mu}; "
            "omit it for uniform weights.")
    return mu


def tail_sum_linearization(kernels, weights, theta: int) -> TailLinearization:
    """Tail sum of :math:`K_\\mu` and its supergradient :math:`v` at ``weights``.

    .. math::

        g(\\mu) = \\sum_{j>\\theta}\\lambda_j(K_\\mu),\\qquad
        v_m = \\operatorname{Tr} K_m - \\sum_{j\\le\\theta} u_j^\\top K_m u_j,
        \\qquad g(\\mu') \\le \\langle v, \\mu'\\rangle\\ \\ \\forall \\mu'.

    Only the top-:math:`\\theta` eigenpairs of :math:`K_\\mu` are computed
    (:func:`mklopt.kernels.top_eigenvalues`); all :math:`v_m` come from one
    pass over the kernel stack (``K @ U`` as a single matrix product).

    Parameters
    ----------
    kernels : KernelSet or array of shape (M, n, n)
    weights : array of shape (M,)
        :math:`\\mu \\ge 0`, not all zero (the scale does not change ``v``).
    theta : int
        Cutoff, :math:`0 \\le \\theta < n`. ``theta = 0`` gives
        :math:`v_m = \\operatorname{Tr} K_m` for every ``weights``.

    Returns
    -------
    TailLinearization
        ``(v, g)``.
    """
    ks = as_kernel_set(kernels)
    mu = check_weights(weights, ks.M, "weights")
    theta = check_theta(theta, ks.n)
    traces = ks.traces
    if theta == 0:
        return TailLinearization(traces.copy(), float(traces @ mu))
    vals, top, trace_mu = ks.top_eigen_terms(mu, theta)
    v = np.clip(traces - top, 0.0, None)
    g = max(float(trace_mu - vals.sum()), 0.0)
    return TailLinearization(v, g)


def check_supergradient(ks: KernelSet, lin: TailLinearization, theta: int) -> None:
    """Raise :class:`RankError` naming kernels whose :math:`v_m` is numerically 0.

    With :math:`v_m = 0` the set :math:`\\Theta_v` does not bound
    :math:`\\mu_m`: the kernel lies in the span of the top-:math:`\\theta`
    eigenvectors of :math:`K_{\\mu^0}`.
    """
    bad = [m for m in range(ks.M) if not lin.v[m] > RANK_TOL * ks.traces[m]]
    if bad:
        raise RankError(
            "the linearized tail-sum constraint does not bound kernel(s) "
            + ", ".join(f"'{ks.names[m]}' (v = {lin.v[m]:.2g})" for m in bad)
            + f": they lie in the span of the top {theta} eigenvectors of the combined "
            "kernel at weights0. Choose a smaller theta, other weights0, or drop them.")


def check_no_weight_set(data: MKLData, who: str = "dc_subproblem") -> None:
    """The tail-sum constraint is the weight set: refuse a user ``p`` or regularizer."""
    reg = data.regularizer
    if not (isinstance(reg, LpBall) and reg.p == 1):
        raise FormulationError(
            f"{who} defines its own weight set Theta_v = {{mu >= 0: <v, mu> <= 1}} from the tail "
            "sum g(mu) <= 1; do not pass p or "
            f"regularizer (got {reg!r}). For lp-type tail-sum MKL (conv) use "
            "kernels.normalized('tail_sum', theta=...) with formulation='lp_dual' or mklopt.fit.")


def build(data: MKLData, theta: int = 1, weights0=None) -> Model:
    """``qcqp_l1`` over :math:`\\Theta_v`, with :math:`v` linearized at ``weights0``.

    Solved as ``qcqp_l1`` (simplex) on the kernels :math:`C K_m/v_m` with
    box :math:`0\\le\\beta\\le1` and objective scaled by :math:`C`: the
    substitutions :math:`\\tilde\\mu_m = v_m\\mu_m` and :math:`\\alpha = C\\beta`
    give the same problem and value,

    .. math:: \\max_{0\\le\\alpha\\le C,\\ y^\\top\\alpha=0} 1^\\top\\alpha
              - \\tfrac12\\max_m \\frac{s_m(\\alpha)}{v_m}
              = C\\max_{0\\le\\beta\\le1,\\ y^\\top\\beta=0}\\Big(1^\\top\\beta
              - \\tfrac12\\max_m \\frac{C}{v_m}s_m(\\beta)\\Big),

    but with :math:`\\alpha` and the quadratic terms of order one. ``qcqp_l1``
    with ``WeightedL1(v)`` on the raw kernels is the same problem and makes
    Clarabel and ECOS fail at C around n (see ``formulations/dc_subproblem.md``).
    The certificate uses ``WeightedL1(v)`` on the original kernels.

    Parameters
    ----------
    data : MKLData
    theta : int, default 1
        Tail-sum cutoff :math:`\\theta`.
    weights0 : array of shape (M,), optional
        Linearization point :math:`\\mu^0` (default uniform).

    Returns
    -------
    Model
        ``info`` records ``theta`` and ``tail_sum0`` :math:`= g(\\mu^0)`.
    """
    check_no_weight_set(data)
    mu0 = np.ones(data.M) if weights0 is None else check_weights(weights0, data.M)
    lin = tail_sum_linearization(data.kernels, mu0, theta)
    check_supergradient(data.kernels, lin, theta)
    C = data.C
    scaled = dataclasses.replace(data, kernels=_rescaled(data.kernels, C / lin.v), C=1.0,
                                 regularizer=L1(), params={})
    inner = qcqp_l1.build(scaled)
    # Same constraint objects: extract() reads their multipliers, which scale with C.
    problem = cp.Problem(cp.Maximize(C * inner.problem.objective.expr), inner.problem.constraints)

    def extract():
        simplex_weights, beta, bias = inner.extract()
        return simplex_weights / (C * lin.v), None if beta is None else C * beta, bias

    return Model(problem, extract, WeightedL1(lin.v),
                 info={"theta": int(theta), "tail_sum0": lin.g})


def _rescaled(ks: KernelSet, factor: np.ndarray) -> KernelSet:
    """Kernels :math:`c_m K_m` with factors :math:`\\sqrt{c_m} L_m` (no re-validation or re-factorization)."""
    if ks.factored:
        return ks._with([G * np.sqrt(c) for G, c in zip(ks.factors(), factor)], ks.names)
    scaled = ks._derived(ks.K * factor[:, None, None], ks.names)
    scaled._factors = {m: ks.factor(m) * np.sqrt(factor[m]) for m in range(ks.M)}
    return scaled


FORMULATION = Formulation(
    "dc_subproblem", qcqp_l1.FORMULATION.cone, build,
    "local-Rademacher DC subproblem: l1-MKL over {mu >= 0: <v, mu> <= 1}, "
    "v the tail-sum supergradient at weights0 (theta=, weights0=)",
    page="dc_subproblem.md", losses=("hinge",),
    options={"theta": Integer(0), "weights0": Vector("M", nonnegative=True)})
