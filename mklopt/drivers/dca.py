"""DCA for local-Rademacher MKL over :math:`H_1` (Cortes, Kloft, Mohri 2013, §3.3, Alg. 1).

Problem (7) of the paper, with :math:`J(\\mu)` the SVM (hinge, bias) optimum on
:math:`K_\\mu`:

.. math:: \\min_{\\mu\\ge0} J(\\mu) \\quad\\text{s.t.}\\quad
          g(\\mu) = \\sum_{j>\\theta}\\lambda_j(K_\\mu) \\le 1 .

:math:`g` is concave and positively homogeneous, so at the current weights
:math:`\\mu^k` its supergradient :math:`v^k` gives :math:`g(\\mu)\\le\\langle v^k,\\mu\\rangle`
with equality at :math:`\\mu^k`. One outer step solves the convex subproblem

.. math:: \\mu^{k+1} \\in \\arg\\min_{\\mu\\ge0,\\ \\langle v^k,\\mu\\rangle\\le1} J(\\mu),

either exactly (``inner="exact"``: formulation ``dc_subproblem`` on any
SOCP backend) or by the paper's alternation (``inner="wrapper"``: the
:class:`~mklopt.drivers.wrapper.Wrapper` on ``WeightedL1(v)``, SVM step then
:math:`\\mu_m\\propto\\|w_m\\|/\\sqrt{v_m}` normalized to :math:`\\langle v,\\mu\\rangle=1`).
Every iterate is feasible (:math:`g(\\mu^{k+1})\\le\\langle v^k,\\mu^{k+1}\\rangle\\le1`)
and :math:`J(\\mu^{k+1})\\le J(\\mu^k)` (:math:`\\mu^k` is feasible for the subproblem).
The loop stops when the relative objective decrease and the relative weight
change both fall below ``tol``. DCA converges to a critical point, not
necessarily a global minimum: the reported dual value and gap certify only
the last convex subproblem.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .._options import Integer, Real
from .. import backends as bk
from ..exceptions import InvalidInputError, RankError
from ..formulations import FORMULATIONS, MKLData
from ..formulations.dc_subproblem import (RANK_TOL, TailLinearization, check_no_weight_set,
                                          check_supergradient,
                                          check_theta, check_weights, tail_sum_linearization)
from ..regularizers import WeightedL1
from ..exact import solve
from ..results.result import MKLResult
from .base import Driver, Step, run
from .inner import make_inner
from .wrapper import Wrapper

__all__ = ["DCA"]

_WRAPPER_ALIASES = ("smo", "libsvm", "cvxpy")


class ExactSubproblem:
    """Solve the subproblem with :func:`mklopt.solve` (``dc_subproblem``), certified."""

    def __init__(self, data: MKLData, theta: int, backend, tol: float) -> None:
        self.data, self.theta, self.tol = data, theta, tol
        # (registry name, what solve() accepts): a name, or a CVXPY solver instance
        self.name, self.backend = bk.select_backend(backend, FORMULATIONS["dc_subproblem"].cone,
                                                    "dc_subproblem")
        if backend is None:  # the default: solve() may fall back to another accurate backend
            self.backend = None

    def __call__(self, weights: np.ndarray, lin: TailLinearization) -> tuple[MKLResult, int]:

        d = self.data
        res = solve(d.kernels, d.y, "dc_subproblem", C=d.C, backend=self.backend, tol=self.tol,
                    theta=self.theta, weights0=weights)
        return res, 1


class WrapperSubproblem:
    """Solve the subproblem with the wrapper on ``WeightedL1(v)``, warm-started at the current weights."""

    def __init__(self, data: MKLData, svm, backend, tol: float, max_iter: int) -> None:
        if max_iter < 2:
            raise InvalidInputError(
                f"inner_max_iter must be >= 2 (one SVM at the current weights, one at the "
                f"updated ones), got {max_iter}.")
        self.data, self.tol, self.max_iter = data, tol, int(max_iter)
        self.svm = make_inner(svm, data, tol, backend)  # built once, reused by every wrapper run
        self.name = f"wrapper/{getattr(self.svm, 'name', 'custom')}"

    def __call__(self, weights: np.ndarray, lin: TailLinearization) -> tuple[MKLResult, int]:
        sub = dataclasses.replace(self.data, regularizer=WeightedL1(lin.v), params={})
        loop = Wrapper(sub, inner=self.svm, init_weights=weights)
        res = run(loop, tol=self.tol, max_iter=self.max_iter)
        return res, res.iterations


class DCA(Driver):
    """DC algorithm for MKL with a tail-sum constraint :math:`g(\\mu)\\le1`.

    Parameters
    ----------
    data : MKLData
        Kernels as given (do not normalize them by the tail sum: :math:`H_1`
        has its own scale, :math:`g(\\mu)\\le1`). ``p``/``regularizer`` must
        be left at their defaults.
    theta : int
        Tail-sum cutoff :math:`\\theta\\ge0` (``theta=0`` is trace-constrained
        ℓ1-MKL, solved in one step).
    inner : {"exact", "wrapper", "smo", "libsvm", "cvxpy"}, default "exact"
        Subproblem solver. ``"smo"``/``"libsvm"``/``"cvxpy"`` (the SVM solver names
        :func:`mklopt.fit` passes by default) mean ``"wrapper"`` with that SVM.
    tol : float
        Stop when the relative objective decrease
        :math:`(P^{k-1}-P^k)/\\max(1,|P^k|)` and the weight change
        :math:`\\|\\mu^{k+1}-\\mu^k\\|_\\infty/\\|\\mu^{k+1}\\|_\\infty` are both
        :math:`\\le` ``tol``.
    backend : str, optional
        Conic backend of the exact subproblem, or of the ``"cvxpy"`` SVM.
    svm : {"smo", "libsvm", "cvxpy"} or callable, optional
        SVM solver of the wrapper (default ``"smo"``).
    inner_tol : float, optional
        Subproblem accuracy: backend tolerance for ``"exact"`` (default
        1e-8), certified relative gap for ``"wrapper"`` (default
        ``max(tol/10, 1e-7)``; libsvm certifies down to about 1e-7).
    inner_max_iter : int, default 1000
        Wrapper iterations per subproblem (>= 2; 2 is the paper's Algorithm
        1: one SVM and one weight update per linearization).
    init_weights : array of shape (M,), optional
        Starting direction (default uniform); scaled so that :math:`g(\\mu^0)=1`.
    """

    method = ("DC algorithm over H1 (Cortes, Kloft & Mohri, NIPS 2013): linearize the tail sum, solve"
              " the convex subproblem")
    notes = "`theta=`; a critical point, no global certificate (said in the result)"

    stall_rule = ("never: it stops when the objective's decrease and the weights' change fall below tol; a "
                  "convex subproblem whose loop stalls (the wrapper's rule) ends with its interval")

    name = "dca"
    losses = ("hinge",)
    options = {"theta": Integer(0), "inner_tol": Real(0, 1, open="both", optional=True),
               "inner_max_iter": Integer(2)}
    certified = False
    needs_psd = True

    def __init__(self, data: MKLData, *, theta: int, inner="exact", tol: float = 1e-4,
                 backend=None, svm=None, inner_tol: float | None = None,
                 inner_max_iter: int = 1000, init_weights=None) -> None:
        super().__init__(data)
        check_no_weight_set(data, "the dca driver")
        self.theta = check_theta(theta, data.n)
        data.kernels.checked_tail_sums(self.theta)  # H1 cannot bound a kernel of rank <= theta
        self.inner = _make_subproblem(data, self.theta, inner, svm, backend, tol, inner_tol,
                                      inner_max_iter)
        self.init_weights = (None if init_weights is None
                             else check_weights(init_weights, data.M, "init_weights"))
        self._lin: tuple[np.ndarray, TailLinearization] | None = None
        self._last_primal = math.inf

    # ------------------------------------------------------------ helpers
    def linearize(self, weights: np.ndarray) -> TailLinearization:
        """:func:`tail_sum_linearization` at ``weights``, cached for the last point."""
        if self._lin is not None and np.array_equal(self._lin[0], weights):
            return self._lin[1]
        lin = tail_sum_linearization(self.data.kernels, weights, self.theta)
        self._lin = (np.array(weights, dtype=float, copy=True), lin)
        return lin

    # --------------------------------------------------------------- loop
    def start(self) -> np.ndarray:
        """Uniform weights (or ``init_weights``) scaled so that :math:`g(\\mu^0) = 1`."""
        mu = np.ones(self.data.M) if self.init_weights is None else self.init_weights
        g = self.linearize(mu).g
        if not g > RANK_TOL * float(self.data.kernels.traces @ mu):
            raise RankError(
                f"the starting combination has rank <= theta={self.theta} (tail sum {g:.3g}); "
                "choose a smaller theta or other init_weights.")
        return mu / g

    def step(self, weights: np.ndarray) -> Step:
        lin = self.linearize(weights)
        check_supergradient(self.data.kernels, lin, self.theta)
        res, inner_iterations = self.inner(weights, lin)
        cert = res.certificate
        new = cert.weights
        tail = self.linearize(new).g
        change = float(np.max(np.abs(new - weights)) / max(float(np.max(np.abs(new))), 1e-300))
        decrease = self._last_primal - cert.primal
        self._last_primal = cert.primal
        extra = {"tail_sum": tail, "tail_sum_start": lin.g, "subproblem_rel_gap": res.rel_gap,
                 "subproblem_gap": res.gap, "subproblem_status": res.status,
                 "subproblem_backend": getattr(res, "backend", self.inner.name),
                 "weight_change": change, "objective_decrease": decrease,
                 "inner_iterations": inner_iterations, "v": lin.v.copy()}
        # res.dual: the subproblem's best lower bound (the wrapper keeps it across iterates)
        return Step(cert.alpha, cert, new, lower=res.dual, extra=extra)

    def converged(self, record: dict, history: list, tol: float) -> bool:
        if len(history) < 2:
            return False
        scale = max(1.0, abs(record["iterate_primal"]))
        return record["objective_decrease"] <= tol * scale and record["weight_change"] <= tol

    def finish(self, result: MKLResult) -> None:
        last = result.history[-1]
        result.message += (
            f"; DCA (theta={self.theta}, inner={self.inner.name}) stopped at a critical point of "
            "the non-convex DC problem, which has no global certificate: primal is the objective "
            f"at the returned weights (feasible, tail sum {last['tail_sum']:.6g} <= 1); dual and "
            "gap certify only the last convex subproblem")
        result.info.update(theta=self.theta, tail_sum=last["tail_sum"], inner=self.inner.name,
                           certified_globally=False)
        # The pair returned is the last subproblem's, certified over its own weight set:
        # that set is what the result records, so that a saved result re-certifies as reported.
        result.regularizer = WeightedL1(last["v"])
        result.message += "; weight set: the last subproblem's {mu >= 0 : <v, mu> <= 1}"


def _make_subproblem(data: MKLData, theta: int, inner, svm, backend, tol: float,
                     inner_tol: float | None, inner_max_iter: int):
    if inner in _WRAPPER_ALIASES:
        if svm is not None and svm != inner:
            raise InvalidInputError(f"inner={inner!r} and svm={svm!r} disagree; pass inner='wrapper', svm=...")
        inner, svm = "wrapper", inner
    if inner == "exact":
        if svm is not None:
            raise InvalidInputError("svm= only applies to inner='wrapper'.")
        return ExactSubproblem(data, theta, backend, 1e-8 if inner_tol is None else inner_tol)
    if inner == "wrapper":
        sub_tol = max(0.1 * tol, 1e-7) if inner_tol is None else inner_tol
        return WrapperSubproblem(data, svm or "smo", backend, sub_tol, inner_max_iter)
    raise InvalidInputError(
        f"unknown dca inner solver {inner!r}; use 'exact' (dc_subproblem on a conic backend) "
        "or 'wrapper' (with svm='smo', 'libsvm' or 'cvxpy').")
