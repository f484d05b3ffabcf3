"""Reference instances with certified solutions, and a conformance check for custom solvers.

The catalogue folder (top-level ``formulations/``, shipped in a wheel as
``mklopt._catalogue``) holds ``reference_instances.json``: small, seeded MKL
problems built from datasets shipped with scikit-learn, each with a certified
optimum (weights, alpha, bias, primal and dual value, relative gap at most
:data:`CERTIFY_TOL` by mklopt's own certificate) and cross-checks against a
second formulation and other backends.

* :func:`reference_instances` rebuilds the kernels deterministically and
  returns :class:`ReferenceInstance` objects.
* :func:`check_solver` runs a user's solver on them and certifies every
  candidate with :func:`mklopt.certify`.
* :func:`build_reference_instances` regenerates the JSON document
  (``examples/make_reference_instances.py`` writes it).

Throughout, **p is the weight norm** (:math:`\\|\\mu\\|_p \\le 1`) and ``b`` the
thesis' block norm (:math:`\\|w\\|_{2,b}`); :math:`b = 2p/(p+1)`.

Examples
--------
>>> import mklopt
>>> from mklopt.testing import reference_instances, check_solver
>>> inst = reference_instances()[0]
>>> def my_solver(kernels, y, C, **params):
...     res = mklopt.solve(kernels, y, inst.formulation, C=C, **params)
...     return res.weights, res.alpha
>>> print(check_solver(my_solver, [inst]))  # doctest: +SKIP
"""

from __future__ import annotations

import importlib.resources
import json
import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .api import solve
from .certificates import certify
from .exceptions import InvalidInputError, MKLError, SolverError
from .kernels import KernelSet
from .regularizers import (BlockNorm, ElasticNet, Fixed, LpBall, Regularizer, WeightedL1,
                           as_regularizer)

__all__ = [
    "ReferenceInstance", "reference_instances", "load_catalogue", "catalogue_path",
    "check_solver", "SolverReport", "InstanceCheck", "build_reference_instances",
    "dumps_catalogue", "REFERENCE_DEFINITIONS", "CERTIFY_TOL", "CROSS_CHECK_TOL",
]

#: File name of the certified reference instances inside the catalogue folder.
CATALOGUE_FILE = "reference_instances.json"
#: Relative gap every stored certificate reaches (mklopt's own certificate).
CERTIFY_TOL = 1e-9
#: Relative agreement required between the stored optimum and every cross-check.
CROSS_CHECK_TOL = 1e-8
#: Backend tolerance used to compute the stored optima.
REFERENCE_SOLVER_TOL = 1e-10

_DATASETS = ("breast_cancer", "iris", "wine", "digits")


# --------------------------------------------------------------------------- locate
def catalogue_path(filename: str = CATALOGUE_FILE) -> Path:
    """Path of a file of the formulation catalogue.

    Looks in the installed package ``mklopt._catalogue`` (a wheel), then in
    the top-level ``formulations/`` folder of a source or editable checkout.

    Raises
    ------
    FileNotFoundError
        When neither location has the file.
    """
    try:
        candidate = Path(str(importlib.resources.files("mklopt._catalogue") / filename))
        if candidate.is_file():
            return candidate
    except (ModuleNotFoundError, TypeError):
        pass  # editable installs cannot map the namespace sub-package
    import mklopt

    candidate = Path(mklopt.__file__).resolve().parent.parent / "formulations" / filename
    if candidate.is_file():
        return candidate
    raise FileNotFoundError(
        f"catalogue file {filename!r} not found in mklopt._catalogue nor in {candidate.parent}; "
        "regenerate it with examples/make_reference_instances.py.")


def load_catalogue(path: str | Path | None = None) -> dict:
    """The JSON document of reference instances (default: :func:`catalogue_path`)."""
    path = catalogue_path() if path is None else Path(path)
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


# --------------------------------------------------------------------------- data
def _load_dataset(name: str) -> tuple[np.ndarray, np.ndarray]:
    from sklearn import datasets

    if name not in _DATASETS:
        raise InvalidInputError(f"unknown reference dataset {name!r}; choose one of {_DATASETS}.")
    X, target = getattr(datasets, f"load_{name}")(return_X_y=True)
    return np.asarray(X, dtype=float), np.asarray(target)


def draw_indices(target: np.ndarray, classes: Sequence[int], n_per_class: int,
                 seed: int) -> np.ndarray:
    """Sorted sample indices: ``n_per_class`` points of each class, drawn without replacement."""
    rng = np.random.default_rng(seed)
    parts = [rng.choice(np.flatnonzero(target == c), n_per_class, replace=False) for c in classes]
    return np.sort(np.concatenate(parts))


def standardize(X: np.ndarray) -> np.ndarray:
    """Z-score the columns (population std; constant columns are only centered)."""
    std = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(std > 0, std, 1.0)


def _features(definition: dict) -> np.ndarray:
    X, _ = _load_dataset(definition["dataset"])
    X = X[np.asarray(definition["sample"]["indices"], dtype=int)]
    if definition.get("features", "standardize") == "standardize":
        return standardize(X)
    if definition["features"] == "raw":
        return X
    raise InvalidInputError(f"unknown feature preprocessing {definition['features']!r}.")


def build_kernels(definition: dict) -> KernelSet:
    """The instance's kernel set, rebuilt deterministically from its definition."""
    specs = [(metric, dict(params)) for metric, params in definition["kernels"]]
    ks = KernelSet.from_data(_features(definition), specs)
    norm = definition.get("normalization") or {}
    if not norm:
        return ks
    options = {k: v for k, v in norm.items() if k != "method"}
    return ks.normalized(norm["method"], **options)


def build_labels(definition: dict) -> np.ndarray:
    """Labels in {-1, +1}: ``+1`` for ``definition['positive_class']``."""
    _, target = _load_dataset(definition["dataset"])
    target = target[np.asarray(definition["sample"]["indices"], dtype=int)]
    return np.where(target == definition["positive_class"], 1.0, -1.0)


# --------------------------------------------------------------------------- params
_REGULARIZERS: dict[str, Callable[..., Regularizer]] = {
    "elastic_net": lambda a=1.0, b=1.0: ElasticNet(a, b),
    "weighted_l1": lambda v: WeightedL1(np.asarray(v, dtype=float)),
    "lp": lambda p: LpBall(p),
    "fixed": lambda weights: Fixed(np.asarray(weights, dtype=float)),
}


def decode_params(raw: dict) -> dict:
    """Turn JSON parameters into :func:`mklopt.solve` keyword arguments.

    ``{"regularizer": {"name": "elastic_net", "a": 1, "b": 1}}`` becomes an
    :class:`~mklopt.ElasticNet`; ``weights`` becomes an array; ``p`` (weight
    norm) and ``b`` (block norm) stay floats.
    """
    params = dict(raw)
    if "regularizer" in params:
        spec = dict(params["regularizer"])
        name = spec.pop("name", None)
        if name not in _REGULARIZERS:
            raise InvalidInputError(f"unknown regularizer {name!r}; known: {sorted(_REGULARIZERS)}.")
        params["regularizer"] = _REGULARIZERS[name](**spec)
    if "weights" in params:
        params["weights"] = np.asarray(params["weights"], dtype=float)
    return params


def certificate_regularizer(params: dict) -> Regularizer:
    """The penalty the certificate of a problem with these (decoded) parameters uses.

    ``weights`` -> the fixed combination, ``b`` -> :class:`~mklopt.BlockNorm`,
    ``regularizer`` -> itself, else the ℓp ball of weight norm ``p`` (default 1).
    """
    if "weights" in params:
        return Fixed(params["weights"])
    if "b" in params:
        return BlockNorm(params["b"])
    return as_regularizer(params.get("regularizer"), params.get("p", 1.0))


# --------------------------------------------------------------------------- instances
@dataclass(eq=False)
class ReferenceInstance:
    """One reference problem with its certified optimum.

    Attributes
    ----------
    name, formulation : str
        Instance name; formulation that certified the optimum (pass it to
        :func:`mklopt.solve` to re-solve).
    kernels : KernelSet
        Rebuilt deterministically from the definition.
    y : ndarray (n,)
        Labels in {-1, +1}.
    C : float
    params : dict
        The problem's parameters, ready for ``mklopt.solve(..., **params)``
        and for a user's solver: ``p`` (weight norm), ``b`` (block norm),
        ``regularizer`` (a :class:`~mklopt.Regularizer`) or ``weights`` (the
        fixed combination of an SVM instance).
    optimal_value, dual_value, rel_gap : float
        Certified primal value of the stored candidate, its dual value
        (:math:`\\text{dual} \\le \\text{OPT} \\le \\text{optimal\\_value}`) and
        their relative gap.
    weights, alpha : ndarray
        The certified candidate (block instances: effective weights
        :math:`\\mu_m = \\|w_m\\|/\\sqrt{s_m(\\alpha)}`).
    bias : float
    definition : dict
        The raw JSON record (dataset, indices, kernel specs, cross-checks, ...).
    """

    name: str
    formulation: str
    kernels: KernelSet
    y: np.ndarray
    C: float
    params: dict
    optimal_value: float
    dual_value: float
    rel_gap: float
    weights: np.ndarray
    alpha: np.ndarray
    bias: float
    definition: dict = field(repr=False)

    @property
    def p(self) -> float | None:
        """Weight norm :math:`p` (None unless the instance is an ℓp ball)."""
        reg = self.regularizer
        return reg.p if isinstance(reg, LpBall) else None

    @property
    def b(self) -> float | None:
        """Block norm :math:`b` (given, or :math:`2p/(p+1)` for an ℓp instance)."""
        reg = self.regularizer
        if isinstance(reg, BlockNorm):
            return reg.b
        return None if self.p is None else (2.0 if math.isinf(self.p) else 2 * self.p / (self.p + 1))

    @property
    def regularizer(self) -> Regularizer:
        """Weight set Θ (or block-norm penalty) the certificate uses."""
        return certificate_regularizer(self.params)

    def certify(self, weights: np.ndarray, alpha: np.ndarray):
        """mklopt's certificate (:class:`~mklopt.Certificate`) of a candidate on this instance."""
        return certify(self.kernels, self.y, weights, alpha, C=self.C, regularizer=self.regularizer)

    def solve(self, **options):
        """``mklopt.solve`` on this instance with its own formulation (``options``: backend, tol...)."""
        return solve(self.kernels, self.y, self.formulation, C=self.C, **self.params, **options)


def instance_from_record(record: dict) -> ReferenceInstance:
    """Build a :class:`ReferenceInstance` from one JSON record."""
    cert = record["certified"]
    return ReferenceInstance(
        name=record["name"], formulation=record["formulation"], kernels=build_kernels(record),
        y=build_labels(record), C=float(record["C"]), params=decode_params(record["params"]),
        optimal_value=float(cert["optimal_value"]), dual_value=float(cert["dual_value"]),
        rel_gap=float(cert["rel_gap"]), weights=np.asarray(cert["weights"], dtype=float),
        alpha=np.asarray(cert["alpha"], dtype=float), bias=float(cert["bias"]), definition=record)


def reference_instances(names: Sequence[str] | None = None, *,
                        path: str | Path | None = None) -> list[ReferenceInstance]:
    """The certified reference instances (all, or those named).

    Parameters
    ----------
    names : sequence of str, optional
        Instance names; default all, in catalogue order.
    path : path, optional
        Another JSON document in the same format.

    Returns
    -------
    list of ReferenceInstance
    """
    records = load_catalogue(path)["instances"]
    if names is not None:
        if isinstance(names, str):
            names = [names]
        known = [r["name"] for r in records]
        missing = [n for n in names if n not in known]
        if missing:
            raise InvalidInputError(f"unknown reference instance(s) {missing}; known: {known}.")
        records = [records[known.index(n)] for n in names]
    return [instance_from_record(r) for r in records]


# --------------------------------------------------------------------------- check_solver
@dataclass
class InstanceCheck:
    """Outcome of one reference instance in :func:`check_solver`.

    ``error = (primal - optimal_value) / max(1, |optimal_value|)``: how far the
    candidate's certified primal value is from the certified optimum.
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
        head = (f"{'instance':<24} {'formulation':<16} {'primal':>16} {'dual':>16} "
                f"{'rel_gap':>9} {'error':>9} {'time':>7}  result")
        lines = [f"check_solver: {sum(c.passed for c in self.checks)}/{len(self.checks)} "
                 f"passed (tol {self.tol:g})", head, "-" * len(head)]
        for c in self.checks:
            verdict = "pass" if c.passed else "FAIL" + (f": {c.message}" if c.message else "")
            lines.append(f"{c.name:<24} {c.formulation:<16} {c.primal:>16.10g} {c.dual:>16.10g} "
                         f"{c.rel_gap:>9.2e} {c.error:>9.2e} {c.time:>6.2f}s  {verdict}")
        return "\n".join(lines)


def check_solver(fn: Callable[..., Any], instances: Sequence[ReferenceInstance | str] | None = None,
                 tol: float = 1e-6) -> SolverReport:
    """Run a custom MKL solver on the reference instances and certify every answer.

    Parameters
    ----------
    fn : callable
        ``fn(kernels, y, C, **params) -> (weights, alpha)``: ``kernels`` a
        :class:`~mklopt.KernelSet` (its ``K`` is the (M, n, n) stack), ``y`` in
        {-1, +1}, ``params`` the instance's :attr:`ReferenceInstance.params`
        (``p`` = **weight norm**, ``b`` = block norm, ``regularizer`` = a
        weight set Θ, or ``weights`` = a fixed combination). Return kernel
        weights (block instances: effective weights
        :math:`\\mu_m = \\|w_m\\|/\\sqrt{s_m(\\alpha)}`) and dual coefficients
        :math:`0 \\le \\alpha \\le C`.
    instances : sequence of ReferenceInstance or str, optional
        Instances or instance names; default all.
    tol : float
        An instance passes when the certificate's ``rel_gap <= tol`` and
        ``|primal - optimal_value| <= tol * max(1, |optimal_value|)``.

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


def _check_one(fn: Callable[..., Any], inst: ReferenceInstance, tol: float) -> InstanceCheck:
    check = InstanceCheck(inst.name, inst.formulation, inst.optimal_value)
    start = time.perf_counter()
    try:
        params = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in inst.params.items()}
        out = fn(inst.kernels, inst.y.copy(), inst.C, **params)
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
    gap_ok = bool(np.isfinite(cert.rel_gap) and cert.rel_gap <= tol)
    value_ok = bool(np.isfinite(check.error) and abs(check.error) <= tol)
    check.passed = gap_ok and value_ok
    if not gap_ok:
        check.message = f"rel_gap {cert.rel_gap:.2e} > {tol:g}"
    elif not value_ok:
        check.message = f"primal differs from the certified optimum by {check.error:.2e} (relative)"


# --------------------------------------------------------------------------- generator
def _rbf(gamma: float) -> list:
    return ["rbf", {"gamma": gamma}]


def _poly(degree: int, gamma: float, coef0: float = 1.0) -> list:
    return ["poly", {"degree": degree, "gamma": gamma, "coef0": coef0}]


#: Definitions of the reference instances (inputs of :func:`build_reference_instances`).
#: ``cross_checks`` name other formulations/backends that must reach the same
#: optimum to :data:`CROSS_CHECK_TOL`.
REFERENCE_DEFINITIONS: tuple[dict, ...] = (
    {"name": "svm_breast_cancer", "family": "svm, fixed weights",
     "formulation": "svm", "dataset": "breast_cancer", "classes": [0, 1], "positive_class": 1,
     "n_per_class": 30, "seed": 0,
     "kernels": [["linear", {}], _rbf(0.01), _rbf(0.1), _poly(2, 1 / 30)],
     "C": 1.0, "params": {"weights": [0.4, 0.3, 0.2, 0.1]},
     "cross_checks": [{"formulation": "lp_dual",
                       "params": {"regularizer": {"name": "fixed", "weights": [0.4, 0.3, 0.2, 0.1]}}},
                      {"backend": "ECOS", "tol": 1e-9}, {"backend": "HIGHS", "tol": 1e-8},
                      {"backend": "SCS"}]},
    {"name": "l1_iris", "family": "l1-MKL (QCQP)",
     "formulation": "qcqp_l1", "dataset": "iris", "classes": [1, 2], "positive_class": 2,
     "n_per_class": 25, "seed": 1,
     "kernels": [["linear", {}], _rbf(0.1), _rbf(1.0), _poly(3, 0.25)],
     "C": 0.3, "params": {"p": 1.0},
     # lp_dual's weights (multipliers of max_m s_m) come out of Clarabel accurate to
     # ~4e-8 here, so one (weights, alpha) pair certifies at 3e-8: checked at tol 1e-9.
     "cross_checks": [{"formulation": "lp_dual", "tol": 1e-9}, {"formulation": "lp_primal"},
                      {"formulation": "lp_block_primal", "params": {"b": 1.0}}, {"backend": "ECOS", "tol": 1e-9},
                      {"backend": "SCS"}, {"formulation": "lp_dual", "backend": "SCS"}]},
    {"name": "lp43_wine", "family": "lp-MKL, p = 4/3",
     "formulation": "lp_dual", "dataset": "wine", "classes": [0, 1], "positive_class": 1,
     "n_per_class": 30, "seed": 2,
     "kernels": [["linear", {}], _rbf(0.01), _rbf(0.1), _poly(2, 1 / 13)],
     "C": 0.5, "params": {"p": 4 / 3},
     "cross_checks": [{"formulation": "lp_primal"},
                      {"formulation": "lp_block_primal", "params": {"b": 8 / 7}}, {"backend": "ECOS", "tol": 1e-9},
                      {"backend": "SCS"}]},
    {"name": "lp2_digits", "family": "lp-MKL, p = 2",
     "formulation": "lp_dual", "dataset": "digits", "classes": [3, 8], "positive_class": 8,
     "n_per_class": 35, "seed": 3,
     "kernels": [["linear", {}], _rbf(0.001), _rbf(0.01), _rbf(0.05), _poly(2, 1 / 64)],
     "C": 0.5, "params": {"p": 2.0},
     "cross_checks": [{"formulation": "lp_primal"},
                      {"formulation": "lp_block_primal", "params": {"b": 4 / 3}}, {"backend": "ECOS", "tol": 1e-9},
                      {"backend": "SCS"}]},
    {"name": "block3_breast_cancer", "family": "block norm b = 3 (primal only)",
     "formulation": "lp_block_primal", "dataset": "breast_cancer", "classes": [0, 1],
     "positive_class": 1, "n_per_class": 20, "seed": 4,
     "kernels": [["linear", {}], _rbf(0.03), _poly(2, 1 / 30)],
     "C": 0.3, "params": {"b": 3.0},
     "cross_checks": [{"backend": "ECOS", "tol": 1e-9}, {"backend": "SCS"}]},
    {"name": "enet_wine", "family": "user-defined set: elastic net",
     "formulation": "lp_primal", "dataset": "wine", "classes": [1, 2], "positive_class": 2,
     "n_per_class": 25, "seed": 5,
     "kernels": [["linear", {}], _rbf(0.02), _rbf(0.2), _poly(2, 1 / 13)],
     "C": 0.5, "params": {"regularizer": {"name": "elastic_net", "a": 1.0, "b": 1.0}},
     "cross_checks": [{"backend": "ECOS", "tol": 1e-9}, {"backend": "SCS"}]},
)


def _record_inputs(definition: dict) -> dict:
    """The JSON record of an instance's inputs (draws the sample indices)."""
    _, target = _load_dataset(definition["dataset"])
    indices = draw_indices(target, definition["classes"], definition["n_per_class"], definition["seed"])
    n = int(indices.size)
    return {
        "name": definition["name"], "family": definition["family"],
        "formulation": definition["formulation"], "dataset": definition["dataset"],
        "classes": list(definition["classes"]), "positive_class": definition["positive_class"],
        "sample": {"seed": definition["seed"], "n_per_class": definition["n_per_class"],
                   "indices": indices.tolist()},
        "features": "standardize", "kernels": definition["kernels"],
        "normalization": {"method": "trace", "target": float(n)},
        "C": definition["C"], "params": definition["params"], "n": n,
        "M": len(definition["kernels"]),
    }


def _solve_spec(record: dict, spec: dict, tol: float):
    """``mklopt.solve`` of the record with a spec's formulation, parameters, backend and tol."""
    params = decode_params(spec.get("params", record["params"]))
    return solve(build_kernels(record), build_labels(record),
                 spec.get("formulation", record["formulation"]), C=record["C"],
                 backend=spec.get("backend", "CLARABEL"), tol=spec.get("tol", tol), **params)


def _best_candidate(record: dict, results: list):
    """The candidate ``(weights, alpha)`` with the smallest self-contained certificate.

    Every result's own ``(weights, alpha)`` is re-certified under the
    instance's penalty, so the stored candidate alone reproduces the stored
    primal, dual and gap (a result may report bounds from two candidates).
    """
    kernels, y = build_kernels(record), build_labels(record)
    reg = certificate_regularizer(decode_params(record["params"]))
    certs = [certify(kernels, y, r.weights, r.alpha, C=record["C"], regularizer=reg) for r in results]
    best = min(range(len(results)), key=lambda k: certs[k].rel_gap)
    return results[best], certs[best]


def _certified(result, cert, tol: float) -> dict:
    return {"optimal_value": cert.primal, "dual_value": cert.dual, "rel_gap": cert.rel_gap,
            "weights": cert.weights.tolist(), "alpha": cert.alpha.tolist(), "bias": cert.bias,
            "formulation": result.formulation, "backend": result.backend, "tol": tol,
            "backend_status": result.info["backend_status"]}


def _cross_entry(spec: dict, record: dict, res, best, tol: float) -> dict:
    """How another solve compares with the stored certificate ``best``.

    It agrees when mklopt certified it, its backend's objective value equals
    the stored optimum to :data:`CROSS_CHECK_TOL` (relative), and its
    certified interval [dual, primal] intersects the stored one.
    """
    scale = max(1.0, abs(best.primal))
    value = res.info["backend_value"]
    entry = {"formulation": res.formulation, "backend": res.backend, "tol": spec.get("tol", tol),
             "params": spec.get("params", record["params"]), "backend_value": value,
             "difference": (value - best.primal) / scale, "primal": res.primal, "dual": res.dual,
             "rel_gap": res.rel_gap, "status": res.status,
             "backend_status": res.info["backend_status"],
             "max_weight_difference": float(np.max(np.abs(res.weights - best.weights)))}
    overlap = res.dual <= best.primal + 1e-12 * scale and best.dual <= res.primal + 1e-12 * scale
    entry["agrees"] = bool(res.status == "optimal" and overlap
                           and abs(entry["difference"]) <= CROSS_CHECK_TOL)
    return entry


def build_instance(definition: dict, tol: float = REFERENCE_SOLVER_TOL) -> dict:
    """Solve one definition to a certified optimum and cross-check it; the JSON record.

    The definition's formulation is solved on Clarabel at ``tol``, each
    cross-check as it specifies; the stored candidate is the one whose own
    certificate is tightest.

    Raises
    ------
    SolverError
        When no candidate reaches :data:`CERTIFY_TOL` or a cross-check
        disagrees beyond :data:`CROSS_CHECK_TOL`.
    """
    record = _record_inputs(definition)
    specs = [{}, *definition.get("cross_checks", ())]
    results = [_solve_spec(record, spec, tol) for spec in specs]
    result, best = _best_candidate(record, results)
    if not best.rel_gap <= CERTIFY_TOL:
        raise SolverError(f"{record['name']}: best certified rel_gap {best.rel_gap:.2e} > {CERTIFY_TOL:g}.")
    record["certified"] = _certified(result, best, tol)
    record["cross_checks"] = [_cross_entry(spec, record, res, best, tol)
                              for spec, res in zip(specs[1:], results[1:])]
    bad = [c for c in record["cross_checks"] if not c["agrees"]]
    if bad:
        raise SolverError(f"{record['name']}: cross-checks disagree: {bad}")
    return record


def build_reference_instances(definitions: Sequence[dict] = REFERENCE_DEFINITIONS, *,
                              tol: float = REFERENCE_SOLVER_TOL) -> dict:
    """Regenerate the catalogue document of certified reference instances.

    Parameters
    ----------
    definitions : sequence of dict
        Instance definitions (default :data:`REFERENCE_DEFINITIONS`).
    tol : float
        Backend tolerance of the reference solves (Clarabel).

    Returns
    -------
    dict
        JSON-serializable document ``{"format", "certify_tol", "cross_check_tol",
        "versions", "instances": [...]}``; write it with :func:`dumps_catalogue`.
    """
    import cvxpy
    import sklearn

    import mklopt

    return {"format": 1, "certify_tol": CERTIFY_TOL, "cross_check_tol": CROSS_CHECK_TOL,
            "versions": {"mklopt": mklopt.__version__, "cvxpy": cvxpy.__version__,
                         "numpy": np.__version__, "scikit-learn": sklearn.__version__},
            "instances": [build_instance(d, tol) for d in definitions]}


def dumps_catalogue(document: dict, width: int = 100) -> str:
    """JSON text for the catalogue: short items and lists of numbers on one line."""
    return _dump(document, 0, width) + "\n"


def _dump(obj: Any, level: int, width: int) -> str:
    flat = json.dumps(obj)
    numbers = isinstance(obj, list) and all(isinstance(v, (int, float)) for v in obj)
    if not isinstance(obj, (dict, list)) or numbers or len(flat) + 2 * level <= width:
        return flat
    pad = " " * (level + 1)
    if isinstance(obj, dict):
        items = [f"{pad}{json.dumps(k)}: {_dump(v, level + 1, width)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * level + "}"
    items = [pad + _dump(v, level + 1, width) for v in obj]
    return "[\n" + ",\n".join(items) + "\n" + " " * level + "]"
