"""One exact convex solve (:func:`solve`): build, run a backend, certify, polish, verify.

Sits above formulations and certificates and below the drivers (DCA solves
its subproblems through it) and the public API.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import cvxpy as cp
import numpy as np

from . import backends as bk
from ._validation import check_tol
from .certificates import certificate, check_loss_C, primal_point_certificate
from .exceptions import (DisagreementWarning, FormulationError, InvalidInputError, KernelError,
                         MKLError, SolverError, UncertifiedWarning)
from .formulations import FORMULATIONS, MKLData
from .kernels import KernelSet
from .losses import Loss, as_loss
from .polish import weight_polish
from .regularizers import Regularizer, as_regularizer
from .result import MKLResult
from .result_io import kernel_fingerprint

__all__ = ["solve", "prepare", "gap_tolerance"]

_ACCEPTED = ("optimal", "optimal_inaccurate")


def prepare(kernels, y, *, C: float = 1.0, p: float = 1.0,
            regularizer: Regularizer | None = None, psd: bool = True,
            params: dict | None = None, loss: Loss | str = "hinge",
            needs_dense: str | None = None) -> tuple[MKLData, np.ndarray]:
    """Validate inputs into an :class:`MKLData` (and the original class labels, None for regression).

    ``needs_dense`` names a formulation or driver that reads the (M, n, n)
    stack; kernels given as factors are then refused with a clear error.
    """
    loss = as_loss(loss)
    if isinstance(kernels, KernelSet):
        ks = kernels
        if psd and not ks.psd:
            ks._require_psd("this formulation")
        if needs_dense and ks.factored:
            raise KernelError(
                f"{needs_dense} reads the dense (M, n, n) kernel stack, and these kernels are "
                "low-rank factors; pass kernels.dense() (small n), or use the wrapper, the "
                "cutting plane or the formulations lp_primal, lp_dual, qcqp_l1, svm.")
    else:
        ks = KernelSet(kernels, psd=psd, symmetric=psd)
    y_pm, classes = loss.check_labels(y, ks.n)
    C = check_loss_C(C, loss)
    reg = as_regularizer(regularizer, p)
    reg.check(ks.M)
    return MKLData(ks, y_pm, C, reg, dict(params or {}), loss), classes


def gap_tolerance(backend: str, tol: float, cone: str | None = None) -> float:
    """Relative gap below which mklopt labels an answer ``"optimal"``: ``max(100 tol, 1e-9)``.

    The same for every backend: a first-order backend whose answer does not
    reach it is reported ``"uncertified"`` (with its certified gap), never
    ``"optimal"``. ``backend`` and ``cone`` are accepted for a per-backend
    policy but do not loosen the label.
    """
    return max(100.0 * tol, 1e-9)


def solve(kernels, y, formulation: str = "lp_dual", *, C: float = 1.0, p: float = 1.0,
          regularizer: Regularizer | None = None, backend: Any = None, tol: float = 1e-8,
          verify: bool = False, loss: Loss | str = "hinge", epsilon: float | None = None,
          nu: float | None = None, **params) -> MKLResult:
    """Solve one MKL formulation exactly and certify the answer.

    Parameters
    ----------
    kernels : KernelSet, array (M, n, n) or list of (n, n) arrays
    y : array (n,)
        Two-class labels (any two values) for the hinge loss; real targets for
        ``"epsilon_insensitive"`` / ``"squared_error"``; class labels for
        ``"ovr_hinge"``; ignored (may be None) for ``"one_class"``.
    formulation : str
        One of ``mklopt.formulations.FORMULATIONS`` ("svm", "qcqp_l1",
        "lp_primal", "lp_block_primal", "lp_dual", ...).
    C : float
        Soft-margin constant, > 0.
    p : float
        **Weight norm**: :math:`\\Theta=\\{\\mu\\ge0:\\|\\mu\\|_p\\le1\\}`,
        :math:`p\\in[1,\\infty]` (block norm :math:`b = 2p/(p+1)`).
    regularizer : Regularizer, optional
        Any weight set Θ (overrides ``p``).
    backend : str or CVXPY solver, optional
        Default: the formulation's default (Clarabel for conic, HiGHS for LP).
    tol : float
        Backend tolerance.
    verify : bool
        Also solve with every other capable installed backend; the report is
        in ``result.verification`` and a :class:`DisagreementWarning` is
        issued when backends disagree or fail to certify.
    loss : str or Loss
        ``"hinge"`` (default), ``"epsilon_insensitive"`` (``epsilon=``),
        ``"squared_error"``, ``"one_class"`` (``nu=``; C must stay 1),
        ``"ovr_hinge"`` (multiclass, shared weights), or a
        :class:`~mklopt.losses.Loss` object (DESIGN §11).
    epsilon, nu : float, optional
        Parameters of the ε-insensitive and one-class losses.
    **params
        Formulation parameters (``weights=`` for "svm", ``b=`` for
        "lp_block_primal", ...).

    Returns
    -------
    MKLResult
        ``status == "optimal"`` only when mklopt's own certificate has
        ``rel_gap <= gap_tolerance(backend, tol)``.
    """
    form = _formulation(formulation)
    tol = check_tol(tol)
    if not isinstance(verify, (bool, np.bool_)):
        raise InvalidInputError(f"verify must be True or False, got {verify!r}.")
    loss = as_loss(loss, epsilon=epsilon, nu=nu)
    form.check_loss(loss)
    data, classes = prepare(kernels, y, C=C, p=p, regularizer=regularizer,
                            psd=form.needs_psd, params=params, loss=loss,
                            needs_dense=f"formulation '{form.name}'" if form.needs_dense else None)
    cone = form.cone_for(data)
    name, solver = bk.select_backend(backend, cone, form.name)
    result = _solve_once(form, data, name, solver, tol)
    if backend is None and result.status != "optimal":
        result = _fallback(form, data, result, tol, cone)
    result.classes = classes
    if verify:
        _verify(form, data, result, tol)
    elif result.status != "optimal":
        warnings.warn(f"{form.name} on {name}: {result.message}", UncertifiedWarning, stacklevel=2)
    return result


def _fallback(form, data: MKLData, first: MKLResult, tol: float, cone: str) -> MKLResult:
    """The default backend's answer did not certify: try the other accurate installed ones.

    In the default order for the cone, skipping first-order backends (SCS:
    they cannot reach an interior point's gap); the first certified answer is returned
    (its message names the default backend's gap), else the smallest gap.
    """
    order = [b for b in bk.DEFAULTS.get(cone, ()) if b in bk.capable_backends(cone)]
    order += [b for b in bk.capable_backends(cone) if b not in order]
    best = first
    for name in order:
        if name == first.backend or bk.accuracy(name, cone) >= 1e-4:  # first-order: no help
            continue
        try:
            result = _solve_once(form, data, name, name, tol)
        except SolverError:
            continue
        if result.gap < best.gap or result.status == "optimal":
            best = result
        if result.status == "optimal":
            result.message = (f"certified on {name}; the default backend {first.backend} certified "
                              f"only to rel_gap {first.rel_gap:.2e}")
            result.info["fallback_from"] = first.backend
            break
    return best


def _formulation(name: str):
    if name not in FORMULATIONS:
        raise FormulationError(f"unknown formulation {name!r}; choose one of {sorted(FORMULATIONS)}.")
    return FORMULATIONS[name]


def _build(form, data: MKLData):
    try:
        return form.build(data, **data.params)
    except TypeError as exc:
        raise FormulationError(f"formulation '{form.name}' got unexpected parameters {sorted(data.params)}: {exc}") from None


def _run_backend(problem: cp.Problem, name: str, solver: Any, tol: float, form_name: str) -> None:
    others = [b for b in bk.capable_backends(FORMULATIONS[form_name].cone) if b != name]
    try:
        with warnings.catch_warnings():
            # CVXPY's "may be inaccurate" warning: mklopt's certificate decides instead.
            warnings.filterwarnings("ignore", message="Solution may be inaccurate")
            if isinstance(solver, str):
                problem.solve(solver=solver, **bk.solver_options(name, tol))
            else:
                problem.solve(solver=solver)
    except cp.error.SolverError as exc:
        hint = f"try backend='{others[0]}'" if others else "no other capable backend is installed"
        raise SolverError(f"backend {name} failed on '{form_name}' ({str(exc).rstrip('.')}); {hint}.") from None
    if problem.status not in _ACCEPTED:
        raise SolverError(
            f"backend {name} returned status '{problem.status}' on '{form_name}'"
            f"; try another backend ({', '.join(others)}) or rescale the kernels (normalized('trace')).")


def _solve_once(form, data: MKLData, name: str, solver: Any, tol: float) -> MKLResult:
    start = time.perf_counter()
    limit = gap_tolerance(name, tol, form.cone_for(data))
    model, cert, raw_gap, polished = _attempt(form, data, name, solver, tol, limit)
    if not cert.rel_gap <= limit / 10 and tol > 1e-12 and bk.accuracy(name) < 1e-4:
        # Interior point: its multipliers (the weights of dual forms) are accurate to
        # about its tolerance, and one certified pair needs both sides; a second
        # solve 100x tighter costs about as much as the first.
        try:
            tight = _attempt(form, data, name, solver, max(tol * 1e-2, 1e-12), limit)
            if tight[1].gap < cert.gap:
                model, cert, raw_gap, polished = tight
        except SolverError:
            pass
    elapsed = time.perf_counter() - start
    ok = bool(np.isfinite(cert.rel_gap) and cert.rel_gap <= limit)
    status = "optimal" if ok else "uncertified"
    reg = model.certificate_regularizer
    message = ("certified" if ok else
               f"backend status '{model.problem.status}' but mklopt's certificate has rel_gap "
               f"{cert.rel_gap:.2e} > {limit:.1e}; tighten tol or use another backend")
    return MKLResult(
        weights=cert.weights, alpha=cert.alpha, bias=cert.bias, primal=cert.primal,
        dual=cert.dual, gap=cert.gap, rel_gap=cert.rel_gap, status=status,
        backend=name, formulation=form.name, solve_time=elapsed,
        dual_coef=cert.dual_coef if cert.dual_coef is not None else data.loss.coef(cert.alpha, data.y),
        kernel_names=list(data.kernels.names),
        certificate=cert, message=message, C=data.C, regularizer=reg,
        fingerprint=kernel_fingerprint(data.kernels, data.y),
        loss=data.loss.name, loss_params=data.loss.params(),
        info={"backend_status": model.problem.status, "backend_value": float(model.problem.value),
              "regularizer": repr(reg), "raw_rel_gap": raw_gap, "polished": polished,
              **{k: v for k, v in model.info.items() if isinstance(v, (int, float, str))}})


def _attempt(form, data: MKLData, name: str, solver: Any, tol: float, limit: float):
    """Build, solve at ``tol``, certify and polish: ``(model, certificate, raw rel_gap, polished)``."""
    model = _build(form, data)
    _run_backend(model.problem, name, solver, tol, form.name)
    weights, alpha, bias = model.extract()
    if weights is None or alpha is None or not (np.all(np.isfinite(weights)) and np.all(np.isfinite(alpha))):
        raise SolverError(f"backend {name} returned no finite solution for '{form.name}' (status {model.problem.status}).")
    reg = model.certificate_regularizer
    if model.certify is not None:
        cert = model.certify(weights, alpha, bias)
    elif model.primal_point is not None:
        cert = primal_point_certificate(data.kernels, data.y, data.C, alpha, reg, model.primal_point())
        if not np.isinf(model.info.get("b", 0.0)):  # the weight form may certify tighter
            alt = certificate(data.kernels, data.y, weights, alpha, data.C, reg)
            cert = alt if alt.rel_gap < cert.rel_gap else cert
    else:
        cert = certificate(data.kernels, data.y, weights, alpha, data.C, reg, data.loss)
    raw_gap, polished = cert.rel_gap, False
    exact_form = model.certify is None and model.primal_point is None
    if exact_form and form.name != "svm" and not cert.rel_gap <= limit / 10:
        cert, polished = _polish(data, cert, reg, name, tol)
    return model, cert, raw_gap, polished


def _polish(data: MKLData, cert, reg, name: str, tol: float):
    """Re-solve the SVM at the returned weights for an alpha consistent with them.

    Interior-point multipliers (the weights of dual formulations, alpha of
    primal ones) are accurate to about the solver tolerance, which the hinge
    term of the primal value amplifies. The weights are the formulation's
    answer; an exact SVM at those weights yields the alpha that certifies them.
    And the formulation's alpha (accurate) gets its best weights
    (:func:`mklopt.polish.weight_polish`). Returns the certificate of the pair
    with the smallest gap.
    """
    svm_form = FORMULATIONS["svm"]
    # The most accurate installed QP backend: the polish certifies the weights,
    # so it should not inherit the limits of the backend that produced them.
    capable = bk.capable_backends(svm_form.cone) or [None]
    backend = min(capable, key=lambda b: bk.accuracy(b, svm_form.cone) if b else 1.0)
    svm_name, solver = bk.select_backend(backend, svm_form.cone, "svm")
    model = svm_form.build(data, weights=cert.weights, combined=True)
    try:
        _run_backend(model.problem, svm_name, solver, tol, "svm")
        _, alpha, _ = model.extract()
    except SolverError:
        alpha = None
    if alpha is None or not np.all(np.isfinite(alpha)):
        alpha = cert.alpha
    candidates = [cert, certificate(data.kernels, data.y, cert.weights, alpha, data.C, reg, data.loss)]
    candidates += [weight_polish(data, c.alpha) for c in candidates]
    # One (weights, alpha) pair is the answer, so that certify() of the result
    # reproduces its gap: keep the pair with the smallest certified gap.
    return min((c for c in candidates if c is not None), key=lambda c: c.gap), True


def _verify(form, data: MKLData, result: MKLResult, tol: float) -> None:
    """Solve with every other capable backend and compare with mklopt's certificates."""
    report = {result.backend: _entry(result)}
    for name in bk.capable_backends(form.cone_for(data)):
        if name == result.backend:
            continue
        try:
            other = _solve_once(form, data, name, name, tol)
            report[name] = _entry(other)
        except MKLError as exc:
            report[name] = {"status": "failed", "error": str(exc)}
    certified = [r for r in report.values() if r["status"] == "optimal"]
    lower = max((r["dual"] for r in certified), default=-np.inf)
    upper = min((r["primal"] for r in certified), default=np.inf)
    problems = []
    for name, r in report.items():
        if r["status"] != "optimal":
            problems.append(f"{name}: {r['status']} ({r.get('error') or 'rel_gap %.2e' % r['rel_gap']})")
            continue
        slack = max(tol, bk.accuracy(name, form.cone_for(data))) * max(abs(upper), abs(lower)) * 10
        if not (lower - slack <= r["backend_value"] <= upper + slack):
            problems.append(f"{name}: reported objective {r['backend_value']:.10g} outside the "
                            f"certified interval [{lower:.10g}, {upper:.10g}]")
    if not certified:
        problems.append("no backend could be certified")
    result.verification = {"backends": report, "agree": not problems, "problems": problems,
                           "interval": (lower, upper)}
    if problems:
        warnings.warn(f"verify: backends disagree on '{form.name}': " + "; ".join(problems),
                      DisagreementWarning, stacklevel=3)


def _entry(res: MKLResult) -> dict:
    return {"status": res.status, "primal": res.primal, "dual": res.dual, "rel_gap": res.rel_gap,
            "backend_value": res.info["backend_value"], "time": res.solve_time,
            "weights": res.weights.tolist()}

