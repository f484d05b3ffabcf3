"""``mklopt compare``: one instance, several formulations x backends, and whether they agree.

Exit codes: 0 every certified result agrees (and at least one was
certified); 1 disagreement or nothing certified; 2 usage or input error;
130 interrupted.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable

from ..exceptions import InvalidInputError, MKLError
from ._common import (EXIT_FAIL, EXIT_OK, add_instance_args, check_backend_names, fmt_weights,
                      load_instance, loss_options, norm_options, one_line, table)
from ._parsing import tolerance


def add_parser(subs: argparse._SubParsersAction) -> None:
    """Register ``compare`` on the sub-parser action ``subs``."""
    compare = subs.add_parser("compare", help="formulations x backends on one instance",
                              description="Solve one instance with several formulations and "
                              "backends; report each certificate and whether all agree. Exit "
                              "status 0 if they agree, 1 if not, 2 for bad input, 130 when "
                              "interrupted.")
    add_instance_args(compare)
    compare.add_argument("--formulations", help="comma-separated (default: all MKL formulations for p)")
    compare.add_argument("--backends", help="comma-separated (default: every installed capable one)")
    compare.add_argument("--tol", type=tolerance, help="agreement tolerance in (0, 1), relative "
                         "(default 1e-6)")
    compare.set_defaults(handler=run)


def _split(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def _formulations(args: argparse.Namespace, p: float, block_only: bool) -> list[str]:
    from ..formulations import FORMULATIONS

    if args.formulations:
        names = _split(args.formulations)
        if not names:
            raise InvalidInputError(f"--formulations names none; give comma-separated names from "
                                    f"{sorted(FORMULATIONS)}.")
        unknown = [name for name in names if name not in FORMULATIONS]
        if unknown:
            raise InvalidInputError(f"unknown formulation(s) {unknown}; choose from {sorted(FORMULATIONS)}.")
        if block_only and names != ["lp_block_primal"]:
            raise InvalidInputError(
                f"--b {args.b:g} > 2 has no weight-norm form: only lp_block_primal solves it, got {names}.")
        return names
    if block_only:
        return ["lp_block_primal"]
    names = ["qcqp_l1"] if p == 1 else []
    return names + ["lp_dual", "lp_primal", "lp_block_primal"]


def _backends(args: argparse.Namespace, cone: str) -> list[str]:
    from .. import backends as bk

    if args.backends:
        return check_backend_names(_split(args.backends))
    return bk.capable_backends(cone)


def run(args: argparse.Namespace) -> int:
    """Solve with every formulation x backend; exit status 0 iff the certified results agree."""
    from ..api import solve
    from ..formulations import FORMULATIONS

    block_only = args.b is not None and args.b > 2
    p, extra = norm_options(args, "lp_block_primal" if block_only else None)
    losses = loss_options(args)
    forms = [f for f in _formulations(args, p, block_only)  # those written for this loss
             if FORMULATIONS[f].losses is None or losses["loss"] in FORMULATIONS[f].losses]
    if not forms:
        raise InvalidInputError(f"no formulation of this comparison is written for loss '{losses['loss']}'.")
    if args.backends:
        check_backend_names(_split(args.backends))
    ks, y = load_instance(args)
    rows = [_cell(solve, ks, y, form, backend, args, p, extra)
            for form in forms for backend in _backends(args, FORMULATIONS[form].cone)]
    refused = [row for row in rows if row.get("_input_error")]
    if refused:  # bad input (a formulation that does not state this p, say), not a disagreement
        raise InvalidInputError(f"{refused[0]['formulation']}: {refused[0]['note']}")
    ok, report = agreement(rows, args.tol or 1e-6)
    print(table(rows, [("formulation", "formulation"), ("backend", "backend"), ("status", "status"),
                       ("objective", "objective"), ("dual", "dual"), ("rel_gap", "rel_gap"),
                       ("reported", "backend value"), ("time", "time[s]"), ("weights", "weights"),
                       ("note", "note")]))
    print(report)
    return EXIT_OK if ok else EXIT_FAIL


def _cell(solve: Callable, ks, y, form: str, backend: str, args, p: float, extra: dict) -> dict:
    row = {"formulation": form, "backend": backend}
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = solve(ks, y, form, C=args.C, p=p, backend=backend, tol=1e-8,
                        **(extra if form == "lp_block_primal" else {}), **loss_options(args))
    except MKLError as exc:
        row.update(status="failed", note=one_line(exc), _input_error=isinstance(exc, InvalidInputError))
        return row
    row.update(status=res.status, objective=f"{res.primal:.10g}", dual=f"{res.dual:.10g}",
               rel_gap=f"{res.rel_gap:.1e}", time=f"{time.perf_counter() - start:.2f}",
               weights=fmt_weights(res.weights), _primal=res.primal, _dual=res.dual,
               _reported=float(res.info.get("backend_value", res.primal)))
    row["reported"] = f"{row['_reported']:.10g}"
    return row


def agreement(rows: list[dict], tol: float) -> tuple[bool, str]:
    """Do the certified results agree?

    Weak duality makes ``[max dual, min primal]`` (over certified results) an
    interval containing the optimum. The certified results agree when each one's
    certified primal value (the table's "objective") is within ``tol`` (relative) of
    the best one. The value a backend reported for its own solve (the table's
    "backend value") is not mklopt's answer: one outside the interval (± tol) is
    listed as a note on that backend's accuracy, not as a disagreement.

    Returns
    -------
    (ok, report)
        Whether they agree, and a few lines saying so.
    """
    certified = [r for r in rows if r["status"] == "optimal"]
    if not certified:
        return False, "agreement: NO - no formulation/backend pair was certified."
    lower = max(r["_dual"] for r in certified)
    upper = min(r["_primal"] for r in certified)
    slack = tol * max(1.0, abs(upper))
    outside = [f"{r['formulation']}/{r['backend']}" for r in certified if r["_primal"] - upper > slack]
    off = [f"{r['formulation']}/{r['backend']} ({r['_reported']:.10g})" for r in certified
           if not lower - slack <= r["_reported"] <= upper + slack]
    spread = max(r["_primal"] for r in certified) - upper
    others = [f"{r['formulation']}/{r['backend']} ({r['status']})" for r in rows if r["status"] != "optimal"]
    ok = not outside
    lines = [f"agreement: {'YES' if ok else 'NO'} - {len(certified)} of {len(rows)} certified; "
             f"optimum in [{lower:.10g}, {upper:.10g}]; certified objectives within {spread:.2e} "
             f"of the best (tolerance {slack:.1e})"]
    if outside:
        lines.append("  disagree (certified objective above the best by more than the tolerance): "
                     + ", ".join(outside))
    if off:
        lines.append("  backend value off the certified interval (the backend's own accuracy; its "
                     "certified objective is what agrees): " + ", ".join(off))
    if others:
        lines.append("  not certified: " + ", ".join(others))
    return ok, "\n".join(lines)
