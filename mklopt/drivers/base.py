"""The one generic outer loop every driver specializes.

state -> step -> certificate -> stop test -> record -> callback/progress.
A driver supplies the initial weights and one ``step(weights)``; the loop
keeps the best certified bounds, the history, the stop reason and the result.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .._options import Vector
from ..certificates.gap import certificate, relative_gap
from ..formulations import MKLData
from ..certificates.bounds import zero_optimum_note
from ..results.result import Certificate, MKLResult, objective_scale, ranked_gap
from ..certificates.fingerprint import kernel_fingerprint
from ..kernels._blas import numpy_blas_only
from ..kernels._threads import numba_threads

__all__ = ["Driver", "Step", "run", "INTERIOR_MIX"]

#: Weight of the centre of Θ mixed into a warm start that has zero weights.
INTERIOR_MIX = 1e-2


@dataclass
class Step:
    """What one driver iteration produced.

    Attributes
    ----------
    alpha : ndarray
        Dual coefficients found at the current weights.
    certificate : Certificate
        mklopt's certificate of (current weights, alpha).
    next_weights : ndarray
        Weights for the next iteration.
    lower, upper : float
        Extra valid bounds on OPT (e.g. the cutting-plane master value).
    extra : dict
        Additional values recorded in the history.
    """

    alpha: np.ndarray
    certificate: Certificate
    next_weights: np.ndarray
    lower: float = -math.inf
    upper: float = math.inf
    extra: dict = field(default_factory=dict)


class Driver:
    """Base class of outer loops: subclasses implement :meth:`start` and :meth:`step`."""

    name = "driver"
    #: One line for the user guide's table of drivers: the method and where it comes from.
    method = ""
    #: One line for the same table: when to use it, its own options, what it certifies.
    notes = ""
    #: Names of the losses the driver is written for; None: any loss.
    losses: tuple[str, ...] | None = None
    #: Reads the dense (M, n, n) stack (kernels given as factors are refused).
    needs_dense = False
    #: The bounds are bounds on the global optimum (False for DCA).
    certified = True
    #: Target relative gap (set by drivers that take ``tol``).
    tol = 1e-4
    #: Set when the inner solver's precision, not the outer loop, blocks progress.
    stalled = False
    #: When the loop stops ``"stalled"`` (one line for the user guide's table of drivers).
    stall_rule = ("the inner SVM's own gap exceeds a tenth of the target while the weights did not move, "
                  "and the inner solver has no precision left to give")
    #: Why a stalled loop could go no further (the message of status ``"stalled"``).
    stall_reason = ("the inner solver's precision limits the certificate at rel_gap {rel_gap:.1e}; "
                    "use inner='cvxpy' for a tighter one")
    #: Set when the inner solver was switched to its more precise fallback.
    switched_inner = False
    #: The driver's options and what each must be (:mod:`mklopt._options`); subclasses add theirs.
    options: dict = {"init_weights": Vector("M")}
    _last_weights = None

    @classmethod
    def declared_options(cls) -> dict:
        """The options of this driver and its bases (checked by :func:`mklopt.fit` up front)."""
        merged: dict = {}
        for klass in reversed(cls.__mro__):
            merged.update(vars(klass).get("options", {}))
        return merged

    def __init__(self, data: MKLData) -> None:
        self.data = data

    def start(self) -> np.ndarray:
        """Initial weights: ``init_weights`` (a warm start) moved into Θ, else the set's
        centre :math:`\\mu_c` (:meth:`~mklopt.regularizers.base.Regularizer.centre`).

        A warm start with zero weights is moved strictly inside, to
        :math:`(1-t)\\mu + t\\mu_c` with :math:`t =` :data:`INTERIOR_MIX` (convex, so still
        in Θ): zero is a fixed point of the analytic weight step (a kernel at weight 0
        has :math:`\\|w_m\\| = 0` and stays there), so a start on the boundary can stall.
        """
        reg = self.data.regularizer
        centre = reg.centre(self.data.M)
        init = getattr(self, "init_weights", None)
        if init is None:
            return centre
        mu = reg.into_set(init)
        if np.any(mu == 0) and np.all(centre > 0):
            mu = (1.0 - INTERIOR_MIX) * mu + INTERIOR_MIX * centre
        return mu

    def step(self, weights: np.ndarray) -> Step:
        raise NotImplementedError

    def certify(self, weights: np.ndarray, alpha: np.ndarray) -> Certificate:
        d = self.data
        return certificate(d.kernels, d.y, weights, alpha, d.C, d.regularizer, d.loss)

    def svm_step(self, weights: np.ndarray) -> tuple[np.ndarray, Certificate]:
        """Inner SVM at ``weights`` and its certificate; tightens an inexact inner solver.

        :math:`P(\\mu,\\alpha) - (D(\\alpha) - \\tfrac12\\mu^\\top s(\\alpha))` is the
        inner SVM's own duality gap at these weights. When it exceeds a tenth of
        the target gap the outer bounds cannot close, so an inner solver with a
        ``tighten()`` method (libsvm) is asked for more accuracy.
        """
        alpha = self.inner(weights)
        cert = self.certify(weights, alpha)
        inner_gap = cert.primal - (cert.gain - 0.5 * float(cert.weights @ cert.s))
        if inner_gap > 0.1 * self.tol * max(abs(cert.primal), abs(cert.dual)):
            tighten = getattr(self.inner, "tighten", None)
            tightened = tighten() if tighten is not None else False
            fallback = getattr(self.inner, "fallback", None)
            if not tightened and fallback is not None:
                # libsvm at its floor (large C amplifies SMO's error): interior point from here on
                self.inner, tightened = fallback(), True
                self.switched_inner = True
            repeated = self._last_weights is not None and np.array_equal(weights, self._last_weights)
            # Same weights, same inner answer, no more accuracy to ask for: stop.
            self.stalled = repeated and not tightened
        self._last_weights = np.array(weights, copy=True)
        return alpha, cert

    def warm_start(self, previous: "Driver", result: MKLResult) -> None:
        """Start from an earlier run on the same kernels (other C or weight set): its weights.

        Drivers without ``init_weights`` ignore it; the cutting plane also keeps
        the cuts that stay valid. An inner solver that had to switch to its
        precise fallback there starts with it here.
        """
        if hasattr(self, "init_weights"):
            self.init_weights = np.asarray(result.weights, dtype=float)
        fallback = getattr(getattr(self, "inner", None), "fallback", None)
        if previous.switched_inner and fallback is not None:  # libsvm was not precise enough there
            self.inner, self.switched_inner = fallback(), True

    def converged(self, record: dict, history: list, tol: float) -> bool:
        return 0.0 <= record["rel_gap"] <= tol and record["gap"] >= 0.0

    def finish(self, result: MKLResult) -> None:
        """Hook to annotate the result (messages, driver-specific info)."""

    def confirm(self, cert: Certificate) -> Certificate:
        """The answer's final certificate (drivers that certify from running state recompute it)."""
        return cert


def run(driver: Driver, *, tol: float, max_iter: int, time_limit: float | None = None,
        callback: Callable[[dict], object] | None = None, progress: bool = False) -> MKLResult:
    """Run ``driver`` until rel_gap <= tol, ``max_iter`` or ``time_limit`` seconds.

    The answer is one candidate pair (weights, alpha): the iterate whose own
    certificate has the smallest gap, so that :func:`mklopt.certify` of the
    returned pair reproduces the reported gap. The best bounds over all
    iterates (and a cutting-plane master value) are recorded beside it
    (``upper_bound``, ``lower_bound``, ``bound_rel_gap``): they are valid
    bounds on OPT but no single pair attains them.

    ``callback(record)`` is called after each iteration; returning ``False``
    stops the loop (status ``"callback"``). A driver whose inner solver cannot
    be made more precise while the weights no longer move stops with status
    ``"stalled"``. Ctrl-C after the first iteration returns the best pair so far
    with status ``"interrupted"``. The time limit is checked after every iteration, so it is
    honoured to within one inner solve. Every BLAS library but NumPy's runs on one thread
    meanwhile (:func:`~mklopt.kernels._blas.numpy_blas_only`: two bundled OpenBLAS, each
    with its own threads, stall each other's calls when a loop alternates them), and the
    compiled loops take the threads the caller grants
    (:func:`~mklopt.kernels._threads.numba_threads`: a joblib or Dask worker's share).
    """
    with numpy_blas_only(), numba_threads():
        return _loop(driver, tol=tol, max_iter=max_iter, time_limit=time_limit, callback=callback,
                     progress=progress)


def _loop(driver: Driver, *, tol: float, max_iter: int, time_limit: float | None,
          callback: Callable[[dict], object] | None, progress: bool) -> MKLResult:
    start = time.perf_counter()
    weights = driver.start()
    upper, lower = math.inf, -math.inf
    best: Certificate | None = None
    history: list[dict] = []
    status = "max_iter"
    bar = _progress_bar(progress, max_iter, driver.name)
    try:
        for iteration in range(1, max_iter + 1):
            step = driver.step(weights)
            cert = step.certificate
            if driver.certified:
                upper = min(upper, cert.primal, step.upper)
                lower = max(lower, cert.dual, step.lower)
                best = cert if best is None or ranked_gap(cert) <= ranked_gap(best) else best
            else:
                upper, lower = min(cert.primal, step.upper), max(cert.dual, step.lower)
                best = cert
            record = _record(iteration, upper, lower, best, cert, step,
                             time.perf_counter() - start, driver.data)
            history.append(record)
            if bar is not None:
                bar.set_postfix(rel_gap=f"{record['rel_gap']:.2e}", primal=f"{best.primal:.6g}")
                bar.update(1)
            if callback is not None and callback(record) is False:
                status = "callback"
                break
            if driver.converged(record, history, tol):
                status = "converged"
                break
            if driver.stalled:
                status = "stalled"
                break
            if time_limit is not None and record["time"] >= time_limit:
                status = "time_limit"
                break
            weights = step.next_weights
    except KeyboardInterrupt:
        if best is None:
            raise
        status = "interrupted"
    finally:
        if bar is not None:
            bar.close()
    return _result(driver, best, history, status, upper, lower, time.perf_counter() - start)


def _record(iteration: int, upper: float, lower: float, best: Certificate, cert: Certificate,
            step: Step, elapsed: float, data: MKLData) -> dict:
    bound_gap = upper - lower
    return {"iteration": iteration, "primal": best.primal, "dual": best.dual, "gap": best.gap,
            "rel_gap": best.rel_gap, "upper_bound": upper, "lower_bound": lower,
            "bound_rel_gap": relative_gap(bound_gap, upper, lower, objective_scale(data.C, data.n)),
            "iterate_primal": cert.primal, "iterate_dual": cert.dual,
            "iterate_rel_gap": cert.rel_gap, "weights": cert.weights.copy(), "time": elapsed,
            **step.extra}


def _result(driver: Driver, best: Certificate, history: list, status: str, upper: float,
            lower: float, elapsed: float) -> MKLResult:
    data = driver.data
    best = driver.confirm(best)
    if not best.consistent() and status in ("converged", "max_iter", "time_limit", "stalled",
                                            "interrupted"):
        status = "uncertified"
    message = f"stopped: {status}"
    if best.message.startswith("uncertified"):
        message += f"; {best.message}"
    if driver.switched_inner:
        message += ("; libsvm could not reach the target gap at its tightest tolerance, so the "
                    "inner SVM switched to inner='cvxpy'")
    zero = "" if status == "converged" else zero_optimum_note(best.primal, best.dual, data.C, data.n)
    if status == "stalled":
        message += f" ({zero or driver.stall_reason.format(rel_gap=best.rel_gap)})"
    elif zero:
        message += f"; {zero}"
    result = MKLResult(
        weights=best.weights, alpha=best.alpha, bias=best.bias, primal=best.primal,
        dual=best.dual, gap=best.gap, rel_gap=best.rel_gap, status=status,
        iterations=len(history), history=history, formulation=driver.name, solve_time=elapsed,
        dual_coef=data.loss.coef(best.alpha, data.y), kernel_names=list(data.kernels.names),
        certificate=best, message=message, C=data.C, regularizer=data.regularizer,
        fingerprint=kernel_fingerprint(data.kernels, data.y),
        loss=data.loss.name, loss_params=data.loss.params(),
        info={"upper_bound": upper, "lower_bound": lower})
    driver.finish(result)
    return result

def _progress_bar(progress: bool, total: int, name: str):
    if not progress:
        return None
    from tqdm.auto import tqdm
    return tqdm(total=total, desc=f"mklopt {name}", unit="it")
