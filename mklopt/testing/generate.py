"""Regenerate the catalogue document: solve, certify and cross-check every definition."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..api import solve
from ..certificates.gap import certify
from ..exceptions import SolverError
from .catalogue import certificate_regularizer, decode_params, solver_params
from .data import build_kernels, build_labels, draw_indices, draw_sample, field, load_dataset, loss_of
from .definitions import REFERENCE_DEFINITIONS

__all__ = ["CERTIFY_TOL", "CROSS_CHECK_TOL", "REFERENCE_SOLVER_TOL", "build_instance",
           "build_reference_instances", "dumps_catalogue"]

#: Relative gap every stored certificate reaches (mklopt's own certificate).
CERTIFY_TOL = 1e-9
#: Relative agreement required between the stored optimum and every cross-check.
CROSS_CHECK_TOL = 1e-8
#: Backend tolerance used to compute the stored optima.
REFERENCE_SOLVER_TOL = 1e-10


def _sample_entry(definition: dict, target: np.ndarray) -> dict:
    """The record's sample: ``n_per_class`` of each class, or ``n`` points (regression)."""
    seed = definition["seed"]
    if "classes" in definition:
        n_per_class = definition["n_per_class"]
        indices = draw_indices(target, definition["classes"], n_per_class, seed)
        return {"seed": seed, "n_per_class": n_per_class, "indices": indices.tolist()}
    indices = draw_sample(target.size, definition["n"], seed)
    return {"seed": seed, "n": definition["n"], "indices": indices.tolist()}


def _record_inputs(definition: dict) -> dict:
    """The JSON record of an instance's inputs (draws the sample indices)."""
    _, target = load_dataset(field(definition, "dataset"))
    record = {key: field(definition, key) for key in ("name", "family", "formulation", "dataset")}
    if "classes" in definition:
        record["classes"] = list(definition["classes"])
    if "positive_class" in definition:
        record["positive_class"] = definition["positive_class"]
    sample = _sample_entry(definition, target)
    n = len(sample["indices"])
    record.update({"sample": sample, "features": "standardize", "kernels": field(definition, "kernels"),
                   "normalization": {"method": "trace", "target": float(n)},
                   "C": field(definition, "C"), "params": field(definition, "params")})
    if "loss" in definition:
        record["loss"] = definition["loss"]
    record.update({"n": n, "M": len(definition["kernels"])})
    return record


def _solve_spec(record: dict, spec: dict, tol: float):
    """``mklopt.solve`` of the record with a spec's formulation, parameters, backend and tol."""
    params = solver_params(record, spec.get("params"))
    return solve(build_kernels(record), build_labels(record),
                 spec.get("formulation", record["formulation"]), C=record["C"],
                 backend=spec.get("backend", "CLARABEL"), tol=spec.get("tol", tol), **params)


def _best_candidate(record: dict, results: list):
    """The candidate ``(weights, alpha)`` with the smallest self-contained certificate.

    Every result's own ``(weights, alpha)`` is re-certified under the
    instance's penalty and loss, so the stored candidate alone reproduces the
    stored primal, dual and gap (a result may report bounds from two candidates).
    """
    kernels, y = build_kernels(record), build_labels(record)
    reg = certificate_regularizer(decode_params(record["params"]))
    loss, options = loss_of(record)
    certs = [certify(kernels, y, r.weights, r.alpha, C=record["C"], regularizer=reg, loss=loss,
                     **options) for r in results]
    best = min(range(len(results)), key=lambda k: certs[k].rel_gap)
    return results[best], certs[best]


def _certified(result, cert, tol: float) -> dict:
    return {"optimal_value": cert.primal, "dual_value": cert.dual, "rel_gap": cert.rel_gap,
            "weights": cert.weights.tolist(), "alpha": cert.alpha.tolist(),
            "bias": np.asarray(cert.bias).tolist(), "formulation": result.formulation,
            "backend": result.backend, "tol": tol, "backend_status": result.info["backend_status"]}


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
                              tol: float = REFERENCE_SOLVER_TOL,
                              keep: Mapping[str, dict] | None = None) -> dict:
    """Regenerate the catalogue document of certified reference instances.

    Parameters
    ----------
    definitions : sequence of dict
        Instance definitions (default :data:`REFERENCE_DEFINITIONS`).
    tol : float
        Backend tolerance of the reference solves (Clarabel).
    keep : mapping of str to dict, optional
        Stored records, by instance name, to take as they are instead of
        rebuilding their definitions (to add instances without moving the
        others' optima by solver noise).

    Returns
    -------
    dict
        JSON-serializable document ``{"format", "certify_tol", "cross_check_tol",
        "versions", "instances": [...]}`` (records in definition order);
        write it with :func:`dumps_catalogue`.
    """
    import cvxpy
    import sklearn

    from .._version import __version__

    keep = keep or {}
    return {"format": 1, "certify_tol": CERTIFY_TOL, "cross_check_tol": CROSS_CHECK_TOL,
            "versions": {"mklopt": __version__, "cvxpy": cvxpy.__version__,
                         "numpy": np.__version__, "scikit-learn": sklearn.__version__},
            "instances": [keep[d["name"]] if d["name"] in keep else build_instance(d, tol)
                          for d in definitions]}


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
