"""``mklopt verify``: certify a candidate solution (weights, alpha) against an instance.

The candidate is either a saved result (``mklopt solve --out FILE.npz`` or
:meth:`MKLResult.save`), which records C, the weight set and a fingerprint
of its kernels, so no ``--C``/``--p`` is needed (flags that contradict the
file, or other kernels, are an input error); or a hand-made ``.json``/``.npz``
with ``weights`` (M,) and ``alpha`` (n,), certified with ``--C``/``--p``
(default 1). The candidate is certified *as given*: weights outside the
weight set are never CERTIFIED unless ``--repair`` asks to certify their
projection onto it.

Exit codes: 0 CERTIFIED (feasible and rel_gap <= ``--tol``: by default the
tolerance a saved result was solved to, else 1e-6);
1 NOT CERTIFIED (also a saved result whose weights and alpha no longer give the gap its file
reports, when its own tolerance is used; a saved tolerance is taken up to 1e-2); 2 usage or
input error, or a damaged result file; 3 CERTIFIED LOCALLY (a saved result
of a method with no global certificate, DCA: its last convex subproblem is
certified); 70 internal error; 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import math
from typing import Any

import numpy as np

from ..exceptions import InvalidInputError
from ._common import (CORRUPT_FILE_ERRORS, EXIT_FAIL, EXIT_LOCAL, EXIT_OK, add_instance_args,
                      load_instance, load_npz, loss_options, norm_options, one_line, open_npz)
from ._parsing import tolerance

DEFAULT_TOL = 1e-6
#: The loosest tolerance taken from a saved file without ``--tol``.
MAX_SAVED_TOL = 1e-2
#: The array :meth:`MKLResult.save` writes besides weights and alpha.
SAVED_RESULT_KEY = "meta"


def add_parser(subs: argparse._SubParsersAction) -> None:
    """Register ``verify`` on the sub-parser action ``subs``."""
    verify = subs.add_parser("verify", help="certify a candidate solution (exit 0 iff certified)",
                             description="Compute mklopt's certificate (primal, dual, gap, "
                             "feasibility) of a candidate (weights, alpha): a result saved by "
                             "'mklopt solve --out FILE.npz' (C and p come from the file) or your "
                             "own solver's .json/.npz. Exit status 0 if CERTIFIED (feasible and "
                             "rel_gap <= --tol), 1 if NOT CERTIFIED, 2 for bad input, 3 if "
                             "CERTIFIED LOCALLY (DCA: the last convex subproblem; no global "
                             "certificate exists), 70 for an internal error, 130 when interrupted.")
    add_instance_args(verify, from_file=True)
    verify.add_argument("--candidate", required=True, metavar="FILE",
                        help="a saved result (.npz from 'mklopt solve --out'), or a .json/.npz "
                        "with 'weights' (M,) and 'alpha' (n,)")
    verify.add_argument("--tol", type=tolerance, default=None,
                        help="required relative gap, in (0, 1) (default: the tolerance a saved "
                        f"result was solved to, else {DEFAULT_TOL:g})")
    verify.add_argument("--repair", action="store_true",
                        help="certify the projection of the weights onto the weight set "
                        "instead of the weights as given")
    verify.set_defaults(handler=run)


def load_candidate(path: str) -> Any:
    """A saved :class:`MKLResult`, or ``{"weights", "alpha"}`` arrays of a hand-made candidate.

    Raises
    ------
    InvalidInputError
        One line naming the file and what is wrong with it.
    """
    from ..results.result import MKLResult
    from ..results.result_io import is_saved_result

    if path.lower().endswith(".json"):
        data = _load_json(path)
        return MKLResult.load(path) if is_saved_result(data) else _arrays(data, path)
    with open_npz(path) as data:
        saved = SAVED_RESULT_KEY in data.files
    return MKLResult.load(path) if saved else load_npz(path, ["weights", "alpha"])


def _load_json(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except OSError as exc:
        raise InvalidInputError(f"cannot read {path}: {exc.strerror or one_line(exc)}.") from None
    except CORRUPT_FILE_ERRORS as exc:
        raise InvalidInputError(f"{path} is not valid JSON ({one_line(exc)}).") from None


def _arrays(data: Any, path: str) -> dict[str, np.ndarray]:
    """The ``weights`` and ``alpha`` of a hand-made JSON candidate."""
    if not isinstance(data, dict):
        raise InvalidInputError(f"{path} must hold a JSON object with 'weights' and 'alpha'.")
    missing = [k for k in ("weights", "alpha") if k not in data]
    if missing:
        raise InvalidInputError(f"{path} has no field(s) {missing}; it needs 'weights' and 'alpha'.")
    nulls = [k for k in ("weights", "alpha") if _holds_null(data[k])]
    if nulls:
        raise InvalidInputError(f"{' and '.join(repr(k) for k in nulls)} in {path} hold(s) null; "
                                "give a number for every entry.")
    try:
        return {k: np.asarray(data[k], dtype=float) for k in ("weights", "alpha")}
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"'weights' and 'alpha' in {path} must be lists of numbers "
                                f"({one_line(exc)}).") from None


def _holds_null(value: Any) -> bool:
    """Whether a JSON value is null or a list with a null anywhere inside."""
    return value is None or (isinstance(value, list) and any(_holds_null(v) for v in value))


def certify_candidate(args: argparse.Namespace, ks, y, candidate):
    """The :class:`Certificate` of ``candidate`` (saved result or arrays) on ``(ks, y)``."""
    from ..certificates.gap import certify
    from ..certificates.recertify import certify_result

    given_p = None if args.p is None and args.b is None else norm_options(args, None)[0]
    if isinstance(candidate, dict):
        return certify(ks, y, candidate["weights"], candidate["alpha"],
                       C=1.0 if args.C is None else args.C,
                       p=1.0 if given_p is None else given_p, repair=args.repair,
                       **loss_options(args))
    losses = loss_options(args, default=None)
    if losses.get("epsilon") is not None or losses.get("nu") is not None:
        raise InvalidInputError("a saved result carries its loss parameters; drop --epsilon/--nu.")
    return certify_result(ks, y, candidate, C=args.C, p=given_p, repair=args.repair,
                          loss=losses.get("loss"))


def verdict(cert, tol: float, local: bool = False) -> tuple[bool, str]:
    """``(certified, one line)``: ``CERTIFIED: ...`` or ``NOT CERTIFIED: <why>``.

    ``local``: the candidate is a method's last convex subproblem (DCA), so a
    certificate holds for that subproblem only (``CERTIFIED LOCALLY``).
    """
    if cert.certified_locally(tol) and (local or cert.certified(tol)):
        note = f" ({one_line(cert.message)})" if cert.repaired and cert.message else ""
        if local:
            return True, (f"CERTIFIED LOCALLY: the last convex subproblem, rel_gap {cert.rel_gap:.2e} "
                          f"<= tol {tol:g}; the method has no global certificate{note}")
        return True, f"CERTIFIED: feasible and rel_gap {cert.rel_gap:.2e} <= tol {tol:g}{note}"
    if not cert.feasible:
        why = one_line(cert.message) if cert.message else (
            f"the weights violate the weight set by {cert.violation:.3g}")
        prefix = "not certified: "
        return False, "NOT CERTIFIED: " + (why[len(prefix):] if why.lower().startswith(prefix) else why)
    if not cert.consistent() and cert.message:
        return False, "NOT CERTIFIED: " + one_line(cert.message).removeprefix("uncertified: ")
    if not math.isfinite(cert.rel_gap):
        return False, f"NOT CERTIFIED: rel_gap is {cert.rel_gap} (no finite bound)"
    return False, f"NOT CERTIFIED: rel_gap {cert.rel_gap:.2e} > tol {tol:g}"


def run(args: argparse.Namespace) -> int:
    """Certify the candidate; exit status 0 iff it is feasible and rel_gap <= ``--tol``."""
    candidate = load_candidate(args.candidate)
    ks, y = load_instance(args)
    cert = certify_candidate(args, ks, y, candidate)
    saved = not isinstance(candidate, dict)
    local = saved and candidate.info.get("certified_globally") is False
    tol, source = tolerance_of(args.tol, candidate if saved else None)
    ok, line = verdict(cert, tol, local)
    if ok and saved and args.tol is None and not reproduces(cert, candidate):
        ok, line = False, (f"NOT CERTIFIED: the file reports rel_gap {candidate.rel_gap:.3e}, but its weights "
                           f"and alpha give {cert.rel_gap:.3e}: the result was changed after it was solved")
    print(f"primal {cert.primal:.12g}  dual {cert.dual:.12g}  gap {cert.gap:.3e}  "
          f"rel_gap {cert.rel_gap:.3e}  bias {_numbers(cert.bias)}")
    print(f"violation {cert.violation:.3e}  feasible {'yes' if cert.feasible else 'no'}"
          + ("  (weights repaired: projected onto the weight set)" if cert.repaired else ""))
    if saved:  # what the certificate took from the file
        weight_set = candidate.info.get("regularizer_repr") or repr(candidate.regularizer)
        params = "".join(f", {k} {v:g}" for k, v in (candidate.loss_params or {}).items())
        print(f"from the saved result: C {candidate.C:g}, weight set {weight_set}, loss {candidate.loss}{params}")
    print(f"tol {tol:g} ({source})")
    print(line)
    return (EXIT_LOCAL if local else EXIT_OK) if ok else EXIT_FAIL


def tolerance_of(given: float | None, result) -> tuple[float, str]:
    """``(tol, where it came from)``: ``--tol``; else a saved result's own tolerance, at most
    :data:`MAX_SAVED_TOL` (the file is not trusted to set its own bar); else the default."""
    if given is not None:
        return given, "--tol"
    own = None if result is None else result.info.get("tol")
    if own is None:
        return DEFAULT_TOL, "the default"
    if own > MAX_SAVED_TOL:
        return MAX_SAVED_TOL, (f"the file's own {own:g} capped at {MAX_SAVED_TOL:g}; "
                               "pass --tol to accept a looser gap")
    return float(own), "the tolerance the result was solved to"


def reproduces(cert, result) -> bool:
    """Whether the candidate's certificate reproduces the gap its file reports (as a saved
    result does, to rounding), so that a saved tolerance can be taken at its word."""
    reported = float(result.rel_gap)
    if not math.isfinite(reported):
        return False
    return cert.rel_gap <= max(10.0 * abs(reported), reported + 1e-9)


def _numbers(value) -> str:
    """A number, or the numbers of an array (one offset per class), in ``%.6g``."""
    values = np.atleast_1d(np.asarray(value, dtype=float))
    text = " ".join(f"{v:.6g}" for v in values)
    return text if np.ndim(value) == 0 else f"[{text}]"
