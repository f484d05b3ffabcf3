"""Conformance check of a custom solver: :func:`check_solver` certifies its answers."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..exceptions import InvalidInputError, MKLError
from .catalogue import ReferenceInstance, reference_instances

__all__ = ["InstanceCheck", "SolverReport", "check_solver"]


@dataclass
class InstanceCheck:
    """Outcome of one reference instance in :func:`check_solver`.

    ``error = (primal - optimal_value) / max(1, |optimal_value|)``: how far the
    candidate's certified primal value is from the certified optimum; ``loss``
    names the instance's loss.
    """

    name: str
    formulation: str
    optimal_value: float
    primal: float = math.nan
    dual: float = math.nan
    rel_gap: float = math.nan
    error: float = math.nan
    passed: bool = False
    time: float = 0.0
    message: str = ""
    loss: str = "hinge"


@dataclass
class SolverReport:
    """Result of :func:`check_solver`: one :class:`InstanceCheck` per instance."""

    checks: list[InstanceCheck]
    tol: float

    @property
    def passed(self) -> bool:
        """True when every instance passed."""
        return bool(self.checks) and all(c.passed for c in self.checks)

    @property
    def failures(self) -> list[InstanceCheck]:
        return [c for c in self.checks if not c.passed]

    def __iter__(self) -> Iterator[InstanceCheck]:
        return iter(self.checks)

    def __len__(self) -> int:
        return len(self.checks)

    def __getitem__(self, name: str) -> InstanceCheck:
        for check in self.checks:
            if check.name == name:
                return check
        raise KeyError(name)

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        head = (f"{'instance':<24} {'formulation':<16} {'loss':<20} {'primal':>16} {'dual':>16} "
                f"{'rel_gap':>9} {'error':>9} {'time':>7}  result")
        lines = [f"check_solver: {sum(c.passed for c in self.checks)}/{len(self.checks)} "
                 f"passed (tol {self.tol:g})", head, "-" * len(head)]
        for c in self.checks:
            verdict = "pass" if c.passed else "FAIL" + (f": {c.message}" if c.message else "")
            lines.append(f"{c.name:<24} {c.formulation:<16} {c.loss:<20} {c.primal:>16.10g} "
                         f"{c.dual:>16.10g} {c.rel_gap:>9.2e} {c.error:>9.2e} {c.time:>6.2f}s  {verdict}")
        return "\n".join(lines)


def check_solver(fn: Callable[..., Any], instances: Sequence[ReferenceInstance | str] | None = None,
                 tol: float = 1e-6) -> SolverReport:
    """Run a custom MKL solver on the reference instances and certify every answer.

    Parameters
    ----------
    fn : callable
        ``fn(kernels, y, C, **params) -> (weights, alpha)``: ``kernels`` a
        :class:`~mklopt.KernelSet` (its ``K`` is the (M, n, n) stack), ``y``
        the labels as the instance's loss takes them (:attr:`ReferenceInstance.y`:
        {-1, +1} for the hinge, real targets for regression, class labels for
        ``"ovr_hinge"``, None for ``"one_class"``), ``params`` the instance's
        :attr:`ReferenceInstance.params` (``p`` = **weight norm**, ``b`` =
        block norm, ``regularizer`` = a weight set Θ, or ``weights`` = a fixed
        combination; ``loss`` with ``epsilon`` or ``nu`` unless the loss is the
        hinge). Return kernel weights (block instances: effective weights
        :math:`\\mu_m = \\|w_m\\|/\\sqrt{s_m(\\alpha)}`) and dual coefficients in
        the loss's dual set (hinge: :math:`0 \\le \\alpha \\le C`; shape
        (n_classes, n) for ``"ovr_hinge"``).
    instances : sequence of ReferenceInstance or str, optional
        Instances or instance names; default all.
    tol : float
        An instance passes when the certificate is feasible (weights in Θ),
        its ``rel_gap <= tol`` and ``|primal - optimal_value| <= tol *
        max(1, |optimal_value|)``.

    Returns
    -------
    SolverReport
        Per instance: primal, dual, rel_gap, error vs the certified optimum,
        pass/fail (a solver that raises or returns malformed output fails
        that instance with the reason in ``message``). ``str(report)`` is a table.
    """
    if not callable(fn):
        raise InvalidInputError(f"check_solver needs a callable fn(kernels, y, C, **params), got {fn!r}.")
    if not (isinstance(tol, (int, float)) and math.isfinite(tol) and tol > 0):
        raise InvalidInputError(f"tol must be a positive finite number, got {tol!r}.")
    return SolverReport([_check_one(fn, inst, float(tol)) for inst in _resolve(instances)], float(tol))


def _resolve(instances) -> list[ReferenceInstance]:
    if instances is None:
        return reference_instances()
    if isinstance(instances, (str, ReferenceInstance)):
        instances = [instances]
    if not isinstance(instances, Sequence):
        raise InvalidInputError(f"instances must be a sequence of ReferenceInstance objects or names, "
                                f"got {instances!r}.")
    names = [i for i in instances if isinstance(i, str)]
    named = iter(reference_instances(names)) if names else iter(())
    out = []
    for item in instances:
        if isinstance(item, str):
            out.append(next(named))
        elif isinstance(item, ReferenceInstance):
            out.append(item)
        else:
            raise InvalidInputError(f"instances must be ReferenceInstance objects or names, got {item!r}.")
    if not out:
        raise InvalidInputError("no reference instances to check.")
    return out


def _copy(value: Any) -> Any:
    """A copy of an array (the solver may write into it); other values as they are."""
    return value.copy() if isinstance(value, np.ndarray) else value


def _check_one(fn: Callable[..., Any], inst: ReferenceInstance, tol: float) -> InstanceCheck:
    check = InstanceCheck(inst.name, inst.formulation, inst.optimal_value, loss=inst.loss)
    start = time.perf_counter()
    try:
        params = {k: _copy(v) for k, v in inst.params.items()}
        out = fn(inst.kernels, _copy(inst.y), inst.C, **params)
    except Exception as exc:  # a user's solver may fail in any way: report it, do not crash
        check.time = time.perf_counter() - start
        check.message = f"solver raised {type(exc).__name__}: {exc}"
        return check
    check.time = time.perf_counter() - start
    try:
        weights, alpha = _unpack(out)
        cert = inst.certify(weights, alpha)
    except MKLError as exc:
        check.message = f"invalid candidate: {exc}"
        return check
    _fill(check, cert, inst, tol)
    return check


def _unpack(out: Any) -> tuple[np.ndarray, np.ndarray]:
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise InvalidInputError(f"the solver must return (weights, alpha), got {type(out).__name__}.")
    return np.asarray(out[0], dtype=float), np.asarray(out[1], dtype=float)


def _fill(check: InstanceCheck, cert, inst: ReferenceInstance, tol: float) -> None:
    scale = max(1.0, abs(inst.optimal_value))
    check.primal, check.dual, check.rel_gap = cert.primal, cert.dual, cert.rel_gap
    check.error = (cert.primal - inst.optimal_value) / scale
    gap_ok = cert.certified(tol)  # feasible weights too: outside Θ, primal is no upper bound
    value_ok = bool(np.isfinite(check.error) and abs(check.error) <= tol)
    check.passed = gap_ok and value_ok
    if not cert.feasible:
        check.message = cert.message
    elif not gap_ok:
        check.message = f"rel_gap {cert.rel_gap:.2e} > {tol:g}"
    elif not value_ok:
        check.message = f"primal differs from the certified optimum by {check.error:.2e} (relative)"
