"""One formulation on one backend: build, run, certify, polish (:func:`solve_once`).

:func:`mklopt.solve` (module :mod:`mklopt.exact`) picks the backend(s) and calls
this; the labels are mklopt's: ``"optimal"`` only when its own certificate
has ``rel_gap <= gap_tolerance(backend, tol)``.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import cvxpy as cp
import numpy as np

from . import backends as bk
from .certificates.bounds import zero_optimum_note
from .certificates.gap import certificate, primal_point_certificate
from .exceptions import FormulationError, SolverError
from .formulations import FORMULATIONS, MKLData
from .results.polish import weight_polish
from .results.result import MKLResult, ranked_gap
from .certificates.fingerprint import kernel_fingerprint

__all__ = ["solve_once", "gap_tolerance"]

_ACCEPTED = ("optimal", "optimal_inaccurate")


def gap_tolerance(backend: str, tol: float, cone: str | None = None) -> float:
    """Relative gap below which mklopt labels an answer ``"optimal"``: ``max(100 tol, 1e-9)``.

    The same for every backend: a first-order backend whose answer does not
    reach it is reported ``"uncertified"`` (with its certified gap), never
    ``"optimal"``. ``backend`` and ``cone`` are accepted for a per-backend
    policy but do not loosen the label.
    """
    return max(100.0 * tol, 1e-9)


def _build(form, data: MKLData):
    try:
        return form.build(data, **data.params)
    except TypeError as exc:
        raise FormulationError(f"formulation '{form.name}' got unexpected parameters {sorted(data.params)}: {exc}") from None


def _run_backend(problem: cp.Problem, name: str, solver: Any, tol: float, form_name: str, points: int) -> None:
    cone = FORMULATIONS[form_name].cone
    others = [b for b in bk.capable_backends(cone) if b != name]
    try:
        with warnings.catch_warnings():
            # CVXPY's "may be inaccurate" warning: mklopt's certificate decides instead.
            warnings.filterwarnings("ignore", message="Solution may be inaccurate")
            if isinstance(solver, str):
                problem.solve(solver=solver, **bk.solver_options(name, tol, cone, points))
            else:
                problem.solve(solver=solver)
    except cp.error.SolverError as exc:
        hint = f"try backend='{others[0]}'" if others else "no other capable backend is installed"
        raise SolverError(f"backend {name} failed on '{form_name}' ({str(exc).rstrip('.')}); {hint}.") from None
    if problem.status not in _ACCEPTED:
        raise SolverError(
            f"backend {name} returned status '{problem.status}' on '{form_name}'"
            f"; try another backend ({', '.join(others)}) or rescale the kernels (normalized('trace')).")


def solve_once(form, data: MKLData, name: str, solver: Any, tol: float) -> MKLResult:
    start = time.perf_counter()
    limit = gap_tolerance(name, tol, form.cone_for(data))
    model, cert, raw_gap, polished = _attempt(form, data, name, solver, tol, limit)
    if not (cert.consistent() and cert.rel_gap <= limit / 10) and tol > 1e-12 and bk.accuracy(name) < 1e-4:
        # Interior point: its multipliers (the weights of dual forms) are accurate to
        # about its tolerance, and one certified pair needs both sides; a second
        # solve 100x tighter costs about as much as the first.
        try:
            tight = _attempt(form, data, name, solver, max(tol * 1e-2, 1e-12), limit)
            if ranked_gap(tight[1]) < ranked_gap(cert):
                model, cert, raw_gap, polished = tight
        except SolverError:
            pass
    elapsed = time.perf_counter() - start
    ok = bool(cert.consistent() and cert.rel_gap <= limit)
    message = ("certified" if ok else cert.message if not cert.consistent() else _zero_reason(cert, data, limit) or
               f"backend status '{model.problem.status}' but mklopt's certificate has rel_gap "
               f"{cert.rel_gap:.2e} > {limit:.1e}; tighten tol or use another backend")
    info = {"backend_status": model.problem.status, "backend_value": float(model.problem.value),
            "raw_rel_gap": raw_gap, "polished": polished, "tol": limit,
            **{k: v for k, v in model.info.items() if isinstance(v, (int, float, str))}}
    return _result(form, data, cert, model.certificate_regularizer, name, elapsed, ok, message, info)


def solve_by_method(form, data: MKLData, tol: float) -> MKLResult:
    """The formulation's own exact method (no CVXPY statement), certified the same way.

    The result's ``backend`` is ``"mklopt"``; its ``backend_value`` is the certified
    primal value (there is no backend objective to compare).
    """
    start = time.perf_counter()
    limit = gap_tolerance("mklopt", tol)
    cert, reg = form.method(data, limit, **data.params)
    ok = bool(cert.consistent() and cert.rel_gap <= limit)
    message = ("certified" if ok else cert.message if not cert.consistent() else _zero_reason(cert, data, limit) or
               f"mklopt's certificate has rel_gap {cert.rel_gap:.2e} > {limit:.1e} after "
               f"{form.name}'s own method; tighten tol or raise its iteration limit")
    info = {"backend_status": "certified" if ok else "uncertified", "backend_value": float(cert.primal),
            "raw_rel_gap": cert.rel_gap, "polished": False, "tol": limit, "method": form.method.__name__}
    return _result(form, data, cert, reg, "mklopt", time.perf_counter() - start, ok, message, info)


def _zero_reason(cert, data: MKLData, limit: float) -> str:
    """Why no tolerance can be met where the optimum is zero up to rounding, or ''."""
    note = zero_optimum_note(cert.primal, cert.dual, data.C, data.n)
    return f"mklopt's certificate has rel_gap {cert.rel_gap:.2e} > {limit:.1e}: {note}" if note else ""


def _result(form, data: MKLData, cert, reg, name: str, elapsed: float, ok: bool, message: str,
            info: dict) -> MKLResult:
    return MKLResult(
        weights=cert.weights, alpha=cert.alpha, bias=cert.bias, primal=cert.primal,
        dual=cert.dual, gap=cert.gap, rel_gap=cert.rel_gap, status="optimal" if ok else "uncertified",
        backend=name, formulation=form.name, solve_time=elapsed,
        dual_coef=cert.dual_coef if cert.dual_coef is not None else data.loss.coef(cert.alpha, data.y),
        kernel_names=list(data.kernels.names),
        certificate=cert, message=message, C=data.C, regularizer=reg,
        fingerprint=kernel_fingerprint(data.kernels, data.y),
        loss=data.loss.name, loss_params=data.loss.params(),
        info={"regularizer": repr(reg), **info})


def _attempt(form, data: MKLData, name: str, solver: Any, tol: float, limit: float):
    """Build, solve at ``tol``, certify and polish: ``(model, certificate, raw rel_gap, polished)``."""
    model = _build(form, data)
    _run_backend(model.problem, name, solver, tol, form.name, data.n)
    weights, alpha, bias = model.extract()
    if weights is None or alpha is None or not (np.all(np.isfinite(weights)) and np.all(np.isfinite(alpha))):
        raise SolverError(f"backend {name} returned no finite solution for '{form.name}' (status {model.problem.status}).")
    reg = model.certificate_regularizer
    if model.certify is not None:
        cert = model.certify(weights, alpha, bias, limit)
    elif model.primal_point is not None:
        cert = primal_point_certificate(data.kernels, data.y, data.C, alpha, reg, model.primal_point())
        if not np.isinf(model.info.get("b", 0.0)):  # the weight form may certify tighter
            alt = certificate(data.kernels, data.y, weights, alpha, data.C, reg)
            cert = alt if ranked_gap(alt) < ranked_gap(cert) else cert
    else:
        cert = certificate(data.kernels, data.y, weights, alpha, data.C, reg, data.loss)
    raw_gap, polished = cert.rel_gap, False
    exact_form = model.certify is None and model.primal_point is None
    if exact_form and form.name != "svm" and not (cert.consistent() and cert.rel_gap <= limit / 10):
        cert, polished = _polish(data, cert, reg, name, tol)
    return model, cert, raw_gap, polished


def _polish(data: MKLData, cert, reg, name: str, tol: float):
    """Re-solve the SVM at the returned weights for an alpha consistent with them.

    Interior-point multipliers (the weights of dual formulations, alpha of
    primal ones) are accurate to about the solver tolerance, which the hinge
    term of the primal value amplifies. The weights are the formulation's
    answer; an exact SVM at those weights yields the alpha that certifies them.
    And the formulation's alpha (accurate) gets its best weights
    (:func:`mklopt.results.polish.weight_polish`). Returns the certificate of the pair
    with the smallest gap.
    """
    svm_form = FORMULATIONS["svm"]
    # The most accurate installed QP backend: the polish certifies the weights,
    # so it should not inherit the limits of the backend that produced them.
    capable = bk.capable_backends(svm_form.cone) or [None]
    backend = min(capable, key=lambda b: bk.accuracy(b, svm_form.cone) if b else 1.0)
    svm_name, solver = bk.select_backend(backend, svm_form.cone, "svm")
    alpha = None
    if np.all(cert.weights >= 0):  # signed weights (a spectrahedron's): the SVM form takes none
        model = svm_form.build(data, weights=cert.weights, combined=True)
        try:
            _run_backend(model.problem, svm_name, solver, tol, "svm", data.n)
            _, alpha, _ = model.extract()
        except SolverError:
            alpha = None
    if alpha is None or not np.all(np.isfinite(alpha)):
        alpha = cert.alpha
    candidates = [cert, certificate(data.kernels, data.y, cert.weights, alpha, data.C, reg, data.loss)]
    candidates += [weight_polish(data, c.alpha) for c in candidates]
    # One (weights, alpha) pair is the answer, so that certify() of the result
    # reproduces its gap: keep the pair with the smallest certified gap.
    return min((c for c in candidates if c is not None), key=ranked_gap), True
