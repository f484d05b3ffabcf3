"""One exact convex solve (:func:`solve`): choose the backend(s), solve, fall back, verify.

The work on one backend (build, run, certify, polish) is
:func:`mklopt.backend_solve.solve_once`. Sits above formulations and
certificates and below the drivers (DCA solves its subproblems through it)
and the public API.
"""

from __future__ import annotations

import inspect

import warnings
from typing import Any

import numpy as np

from . import backends as bk
from ._options import check_options
from ._validation import check_tol
from .backend_solve import gap_tolerance, solve_by_method
from .backend_solve import solve_once as _solve_once
from .certificates.gap import check_loss_C
from .exceptions import (DisagreementWarning, FormulationError, InvalidInputError, KernelError,
                         MKLError, SolverError, UncertifiedWarning)
from .formulations import FORMULATIONS, MKLData
from .kernels import KernelSet
from .losses import Loss, as_loss
from .regularizers import Regularizer, as_regularizer
from .results.result import MKLResult

__all__ = ["solve", "prepare", "gap_tolerance"]


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
    reg.check_points(ks.n)
    return MKLData(ks, y_pm, C, reg, dict(params or {}), loss), classes


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
        ``"mklopt"``: the formulation's own exact method where it has one
        (``lanckriet_sdp``: a cutting plane with an interior-point master, the default
        above 60 points), certified the same way.
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
        :class:`~mklopt.losses.Loss` object (the Losses page).
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
    data.params = check_options(f"formulation '{form.name}'", form.options, data.params, n=data.n,
                                M=data.M)
    _check_accepted(form, data.params)
    if _by_method(form, data, backend):
        result = solve_by_method(form, data, tol)
        result.classes = classes
        if verify:
            _verify(form, data, result, tol, {result.backend: result})
        elif result.status != "optimal":
            warnings.warn(f"{form.name}: {result.message}", UncertifiedWarning, stacklevel=2)
        return result
    cone = form.cone_for(data)
    name, solver = bk.select_backend(backend, cone, form.name)
    result = _solve_once(form, data, name, solver, tol)
    solved: dict = {name: result}  # backend -> its result (or error): verify reuses them
    if backend is None and result.status != "optimal":
        result = _fallback(form, data, result, tol, cone, solved)
    result.classes = classes
    if verify:
        _verify(form, data, result, tol, solved)
    elif result.status != "optimal":
        warnings.warn(f"{form.name} on {name}: {result.message}", UncertifiedWarning, stacklevel=2)
    return result


def _by_method(form, data: MKLData, backend) -> bool:
    """``backend="mklopt"``, or the default backend above the formulation's ``method_above_n``."""
    if isinstance(backend, str) and backend.lower() == "mklopt":
        if form.method is None:
            raise FormulationError(f"formulation '{form.name}' has no method of mklopt's own; "
                                   "choose a CVXPY backend (or leave backend unset).")
        return True
    return backend is None and form.method is not None and data.n > (form.method_above_n or 0)


def _fallback(form, data: MKLData, first: MKLResult, tol: float, cone: str, solved: dict) -> MKLResult:
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
            result = solved[name] = _solve_once(form, data, name, name, tol)
        except SolverError as exc:
            solved[name] = exc
            continue
        if result.gap < best.gap or result.status == "optimal":
            best = result
        if result.status == "optimal":
            result.message = (f"certified on {name}; the default backend {first.backend} certified "
                              f"only to rel_gap {first.rel_gap:.2e}")
            result.info["fallback_from"] = first.backend
            break
    return best


def _check_accepted(form, params: dict) -> None:
    """Refuse options the formulation's ``build`` does not take (before any solve starts)."""
    signature = inspect.signature(form.build)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values()):
        return
    taken = [name for name in signature.parameters if name != "data"]
    unknown = sorted(set(params) - set(taken))
    if unknown:
        raise FormulationError(f"formulation '{form.name}' got unexpected parameters {unknown}; its "
                               f"options: {taken or 'none'}.")


def _formulation(name: str):
    if name not in FORMULATIONS:
        raise FormulationError(f"unknown formulation {name!r}; choose one of {sorted(FORMULATIONS)}.")
    return FORMULATIONS[name]


def _verify(form, data: MKLData, result: MKLResult, tol: float, solved: dict) -> None:
    """Solve with every other capable backend and compare with mklopt's certificates.

    ``solved`` holds the backends already run (the default and any fallback).
    """
    report = {result.backend: _entry(result)}
    for name in bk.capable_backends(form.cone_for(data)):
        if name == result.backend:
            continue
        try:
            other = solved[name] if name in solved else _solve_once(form, data, name, name, tol)
            if isinstance(other, MKLError):
                raise other
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

