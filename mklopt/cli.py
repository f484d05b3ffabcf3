"""The ``mklopt`` command line: demo, solve, compare, verify, bench.

Every subcommand prints a short report. Bad input ends with one line on
stderr (``mklopt: error: ...``) and exit status 2; ``verify`` exits 1 when
the candidate is not certified within ``--tol`` and ``compare`` exits 1 when
backends or formulations disagree.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from .exceptions import InvalidInputError, MKLError

__all__ = ["main", "build_parser", "parse_kernel_spec", "parse_number"]

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2

DEMO_HELP = """\
Run a small tour of mklopt on the breast-cancer data shipped with scikit-learn:
a stratified train/test split (200 training points), five trace-normalized
kernels (linear, quadratic, three RBF widths), C = 100, and these methods:

  svm (unif)         SVM on the sum kernel (exact, formulation 'svm')
  l1 exact           l1-MKL as a QCQP (formulation 'qcqp_l1')
  l1 cutting plane   SILP outer loop (driver 'cutting_plane', p = 1)
  lp wrapper         analytic wrapper, weight norm p = 4/3 (block norm b = 8/7)
  conv               tail-sum normalization (theta = 2) + l1-MKL (cutting plane)
  dc                 DC algorithm over H1 (driver 'dca', theta = 2), if installed

It prints one table (objective = certified primal value, certified relative
duality gap, weights, test accuracy, time) and writes a PNG of the gap
curves to --out. Takes well under a minute (--small: a few seconds).
"""


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are a single line."""

    def error(self, message: str):  # noqa: D401 - argparse API
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see --help)\n")


# --------------------------------------------------------------------- parsing
def parse_number(text: str) -> float:
    """A float, ``inf`` or a fraction such as ``4/3``."""
    text = str(text).strip()
    if text.lower() in ("inf", "infinity", "+inf"):
        return math.inf
    try:
        return float(Fraction(text)) if "/" in text else float(text)
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"not a number: {text!r} (use e.g. 1, 4/3, inf)") from None


def _value(text: str) -> Any:
    """An int, a float (``4/3`` and ``inf`` accepted) or else the string itself."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return parse_number(text)
    except argparse.ArgumentTypeError:
        return text


def parse_kernel_spec(text: str) -> Any:
    """``rbf:gamma=0.1``, ``poly:degree=3,coef0=1`` or ``linear`` -> a kernel spec."""
    name, _, rest = text.partition(":")
    if not name:
        raise argparse.ArgumentTypeError(f"bad kernel spec {text!r}; use e.g. rbf:gamma=0.1 or linear")
    params = {}
    for item in filter(None, rest.split(",")):
        key, eq, val = item.partition("=")
        if not eq or not key:
            raise argparse.ArgumentTypeError(f"bad kernel parameter {item!r} in {text!r}; use key=value")
        params[key.strip()] = _value(val.strip())
    return (name, params) if params else name


def _param(text: str) -> tuple[str, Any]:
    key, eq, val = text.partition("=")
    if not eq or not key:
        raise argparse.ArgumentTypeError(f"bad --param {text!r}; use key=value (e.g. b=4)")
    return key.strip(), _value(val.strip())


# -------------------------------------------------------------------- instance
def _add_instance_args(sub: argparse.ArgumentParser) -> None:
    src = sub.add_mutually_exclusive_group(required=True)
    src.add_argument("--kernels", metavar="FILE.npz",
                     help="kernel matrices: arrays K (M, n, n) and y (n,)")
    src.add_argument("--data", metavar="FILE.npz",
                     help="features: arrays X (n, d) and y (n,); kernels from --kernel")
    sub.add_argument("--kernel", action="append", type=parse_kernel_spec, default=None,
                     metavar="SPEC", help="with --data: kernel spec, repeatable, e.g. "
                     "--kernel linear --kernel rbf:gamma=0.1 --kernel poly:degree=3 "
                     "(default: linear, quadratic and three RBF widths)")
    sub.add_argument("--normalize", choices=["trace", "multiplicative", "spherical", "tail_sum"],
                     help="normalize the kernels first (tail_sum uses --theta)")
    sub.add_argument("--theta", type=int, default=2, help="tail-sum cutoff (default 2)")
    sub.add_argument("--C", type=parse_number, default=1.0, help="soft-margin constant (default 1)")
    norm = sub.add_mutually_exclusive_group()
    norm.add_argument("--p", type=parse_number, default=None,
                      help="WEIGHT norm p in [1, inf]: ||mu||_p <= 1 (default 1; '4/3' and 'inf' work)")
    norm.add_argument("--b", type=parse_number, default=None,
                      help="thesis BLOCK norm b >= 1 instead of --p: b <= 2 means p = b/(2-b); "
                      "b > 2 needs --formulation lp_block_primal")


def _load_npz(path: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as data:
        missing = [k for k in keys if k not in data.files]
        if missing:
            raise InvalidInputError(f"{path} has no array(s) {missing} (it has {data.files}).")
        return {k: np.asarray(data[k]) for k in keys}


def load_instance(args: argparse.Namespace, psd: bool = True):
    """The (KernelSet, y) described by ``--kernels``/``--data`` and ``--normalize``.

    ``psd=False`` (formulations such as ``vkr_lp``) accepts indefinite and
    asymmetric kernels.
    """
    from .estimators import resolve_kernel_specs
    from .kernels import KernelSet

    checks = {"psd": psd, "symmetric": psd}
    if args.kernels:
        arrays = _load_npz(args.kernels, ["K", "y"])
        ks = KernelSet(arrays["K"], **checks)
    else:
        arrays = _load_npz(args.data, ["X", "y"])
        X = np.asarray(arrays["X"], dtype=float)
        if X.ndim != 2:
            raise InvalidInputError(f"X in {args.data} must be 2-D (n, d), got shape {X.shape}.")
        ks = KernelSet.from_data(X, resolve_kernel_specs(args.kernel, X), **checks)
    if args.normalize:
        ks = ks.normalized(args.normalize, theta=args.theta if args.normalize == "tail_sum" else None)
    return ks, arrays["y"]


def _norm_options(args: argparse.Namespace, formulation: str | None) -> tuple[float, dict]:
    """``(p, extra params)`` from ``--p``/``--b`` (block norms > 2 go to lp_block_primal)."""
    from .regularizers import weight_from_block_norm

    if args.b is None:
        return (1.0 if args.p is None else args.p), {}
    if formulation == "lp_block_primal":
        return 1.0, {"b": args.b}
    return weight_from_block_norm(args.b), {}


# ---------------------------------------------------------------------- output
def write_result(result, path: str) -> None:
    """Write a result as JSON or ``.npz``, atomically (temporary file + ``os.replace``)."""
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix not in (".json", ".npz"):
        raise InvalidInputError(f"--out must end in .json or .npz, got {path!r}.")
    folder = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            if suffix == ".json":
                handle.write(json.dumps(result.to_dict(), indent=1).encode())
            else:
                np.savez(handle, **_npz_fields(result))
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp creates 0600; give the usual permissions
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _npz_fields(result) -> dict[str, np.ndarray]:
    fields = {"weights": result.weights, "alpha": result.alpha, "bias": result.bias,
              "primal": result.primal, "dual": result.dual, "gap": result.gap,
              "rel_gap": result.rel_gap, "status": result.status,
              "formulation": str(result.formulation), "backend": str(result.backend),
              "iterations": result.iterations, "solve_time": result.solve_time}
    if result.dual_coef is not None:
        fields["dual_coef"] = result.dual_coef
    if result.history:
        fields["history_rel_gap"] = np.array([r["rel_gap"] for r in result.history])
        fields["history_time"] = np.array([r["time"] for r in result.history])
    return {k: np.asarray(v) for k, v in fields.items()}


def _fmt_weights(weights, limit: int = 6) -> str:
    w = np.asarray(weights, dtype=float).ravel()
    if w.ndim != 1 or w.size == 0:
        return "-"
    text = " ".join(f"{v:.3f}" for v in w[:limit])
    return text + (" ..." if w.size > limit else "")


def _table(rows: list[dict], columns: list[tuple[str, str]]) -> str:
    """Plain-text table: ``columns`` is a list of (key, header)."""
    cells = [[str(row.get(key, "")) for key, _ in columns] for row in rows]
    widths = [max(len(head), *(len(c[i]) for c in cells)) for i, (_, head) in enumerate(columns)]
    line = "  ".join(head.ljust(w) for (_, head), w in zip(columns, widths))
    rule = "  ".join("-" * w for w in widths)
    body = ["  ".join(c.ljust(w) for c, w in zip(cell, widths)) for cell in cells]
    return "\n".join([line, rule, *body])


# ------------------------------------------------------------------- commands
def _needs_psd(args: argparse.Namespace) -> bool:
    """Whether the requested formulation or driver needs PSD kernels."""
    from .drivers import DRIVERS
    from .formulations import FORMULATIONS

    if args.driver:
        return bool(getattr(DRIVERS.get(args.driver), "needs_psd", True))
    form = FORMULATIONS.get(args.formulation or "lp_dual")
    return bool(getattr(form, "needs_psd", True))


def cmd_solve(args: argparse.Namespace) -> int:
    """Solve one instance with a formulation or a driver and report the certificate."""
    from .api import fit, solve

    ks, y = load_instance(args, psd=_needs_psd(args))
    if args.driver:
        p, extra = _norm_options(args, None)
        params = dict(args.param or [])
        if args.driver == "dca":
            params.setdefault("theta", args.theta)
        result = fit(ks, y, args.driver, C=args.C, p=p, tol=args.tol or 1e-4,
                     max_iter=args.max_iter, backend=args.backend, **params)
    else:
        formulation = args.formulation or "lp_dual"
        p, extra = _norm_options(args, formulation)
        params = {**extra, **dict(args.param or [])}
        if formulation == "dc_subproblem":
            params.setdefault("theta", args.theta)
        result = solve(ks, y, formulation, C=args.C, p=p, backend=args.backend,
                       tol=args.tol or 1e-8, **params)
    print(result.summary())
    if args.out:
        write_result(result, args.out)
        print(f"wrote {args.out}")
    return EXIT_OK


def _compare_formulations(args: argparse.Namespace, p: float, block_only: bool) -> list[str]:
    if args.formulations:
        names = [f.strip() for f in args.formulations.split(",") if f.strip()]
        if block_only and names != ["lp_block_primal"]:
            raise InvalidInputError(
                f"--b {args.b:g} > 2 has no weight-norm form: only lp_block_primal solves it, got {names}.")
        return names
    if block_only:
        return ["lp_block_primal"]
    names = ["qcqp_l1"] if p == 1 else []
    return names + ["lp_dual", "lp_primal", "lp_block_primal"]


def _compare_backends(args: argparse.Namespace, cone: str) -> list[str]:
    from . import backends as bk

    if args.backends:
        return [b.strip().upper() for b in args.backends.split(",") if b.strip()]
    return bk.capable_backends(cone)


def cmd_compare(args: argparse.Namespace) -> int:
    """Solve one instance with formulations x backends and report whether they agree."""
    from .api import solve
    from .formulations import FORMULATIONS

    ks, y = load_instance(args)
    block_only = args.b is not None and args.b > 2
    p, extra = _norm_options(args, "lp_block_primal" if block_only else None)
    rows = []
    for form in _compare_formulations(args, p, block_only):
        if form not in FORMULATIONS:
            raise InvalidInputError(f"unknown formulation {form!r}; choose from {sorted(FORMULATIONS)}.")
        for backend in _compare_backends(args, FORMULATIONS[form].cone):
            rows.append(_compare_cell(solve, ks, y, form, backend, args, p, extra))
    ok, report = _agreement(rows, args.tol or 1e-6)
    print(_table(rows, [("formulation", "formulation"), ("backend", "backend"), ("status", "status"),
                        ("objective", "objective"), ("dual", "dual"), ("rel_gap", "rel_gap"),
                        ("time", "time[s]"), ("weights", "weights"), ("note", "note")]))
    print(report)
    return EXIT_OK if ok else EXIT_FAIL


def _compare_cell(solve: Callable, ks, y, form: str, backend: str, args, p: float, extra: dict) -> dict:
    row = {"formulation": form, "backend": backend}
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = solve(ks, y, form, C=args.C, p=p, backend=backend, tol=1e-8,
                        **(extra if form == "lp_block_primal" else {}))
    except MKLError as exc:
        row.update(status="failed", note=_one_line(exc))
        return row
    row.update(status=res.status, objective=f"{res.primal:.10g}", dual=f"{res.dual:.10g}",
               rel_gap=f"{res.rel_gap:.1e}", time=f"{time.perf_counter() - start:.2f}",
               weights=_fmt_weights(res.weights), _primal=res.primal, _dual=res.dual,
               _reported=float(res.info.get("backend_value", res.primal)))
    return row


def _agreement(rows: list[dict], tol: float) -> tuple[bool, str]:
    """Do the certified results agree?

    Weak duality makes ``[max dual, min primal]`` (over certified results) an
    interval containing the optimum. A certified result agrees when its own
    certified primal value is within ``tol`` (relative) of the best one and
    the objective value its backend reported lies in the interval (± tol).
    """
    certified = [r for r in rows if r["status"] == "optimal"]
    if not certified:
        return False, "agreement: NO - no formulation/backend pair was certified."
    lower = max(r["_dual"] for r in certified)
    upper = min(r["_primal"] for r in certified)
    slack = tol * max(1.0, abs(upper))
    outside = [f"{r['formulation']}/{r['backend']}" for r in certified
               if r["_primal"] - upper > slack
               or not lower - slack <= r["_reported"] <= upper + slack]
    spread = max(r["_primal"] for r in certified) - upper
    others = [f"{r['formulation']}/{r['backend']} ({r['status']})" for r in rows if r["status"] != "optimal"]
    ok = not outside
    lines = [f"agreement: {'YES' if ok else 'NO'} - {len(certified)} of {len(rows)} certified; "
             f"optimum in [{lower:.10g}, {upper:.10g}]; certified objectives within {spread:.2e} "
             f"of the best (tolerance {slack:.1e})"]
    if outside:
        lines.append("  disagree (objective or backend value off the certified interval): " + ", ".join(outside))
    if others:
        lines.append("  not certified: " + ", ".join(others))
    return ok, "\n".join(lines)


def _load_candidate(path: str) -> dict[str, np.ndarray]:
    if path.lower().endswith(".json"):
        with open(path) as handle:
            data = json.load(handle)
        if not isinstance(data, dict):
            raise InvalidInputError(f"{path} must hold a JSON object with 'weights' and 'alpha'.")
        missing = [k for k in ("weights", "alpha") if k not in data]
        if missing:
            raise InvalidInputError(f"{path} has no field(s) {missing}; it needs 'weights' and 'alpha'.")
        return {k: np.asarray(data[k], dtype=float) for k in ("weights", "alpha")}
    return _load_npz(path, ["weights", "alpha"])


def cmd_verify(args: argparse.Namespace) -> int:
    """Certify a candidate (weights, alpha); exit 0 iff its relative gap is <= --tol."""
    from .certificates import certify

    ks, y = load_instance(args)
    cand = _load_candidate(args.candidate)
    p, _ = _norm_options(args, None)
    cert = certify(ks, y, cand["weights"], cand["alpha"], C=args.C, p=p)
    tol = args.tol or 1e-6
    ok = bool(cert.rel_gap <= tol)
    print(f"primal {cert.primal:.12g}  dual {cert.dual:.12g}  gap {cert.gap:.3e}  "
          f"rel_gap {cert.rel_gap:.3e}  bias {cert.bias:.6g}")
    print(f"{'CERTIFIED' if ok else 'NOT CERTIFIED'}: rel_gap {cert.rel_gap:.2e} "
          f"{'<=' if ok else '>'} tol {tol:g}")
    return EXIT_OK if ok else EXIT_FAIL


def examples_dir() -> Path:
    """The source checkout's ``examples/`` folder (next to the package directory)."""
    folder = Path(__file__).resolve().parent.parent / "examples"
    if not folder.is_dir():
        raise InvalidInputError(
            f"mklopt bench runs the scripts in examples/, which is not next to the installed "
            f"package ({folder} does not exist); use a source checkout installed with "
            "'pip install -e .'.")
    return folder


def cmd_bench(args: argparse.Namespace) -> int:
    """Run ``examples/bench_<name>.py`` with the remaining arguments."""
    folder = examples_dir()
    script = folder / f"bench_{args.name}.py"
    if not script.is_file():
        found = sorted(s.stem[len("bench_"):] for s in folder.glob("bench_*.py"))
        raise InvalidInputError(f"no benchmark {args.name!r} in {folder}; available: {found or 'none'}.")
    extra = list(args.args)
    if extra[:1] == ["--"]:
        extra = extra[1:]
    return subprocess.call([sys.executable, str(script), *extra])


# ------------------------------------------------------------------------ demo
DEMO_C = 100.0  # trace-normalized kernels (Tr K_m = 1) need C of the order of n


def _demo_data(small: bool, seed: int = 0):
    """Standardized breast-cancer train/test split and the five demo kernel specs."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    X, y = load_breast_cancer(return_X_y=True)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, train_size=100 if small else 200,
                                              random_state=seed, stratify=y)
    scaler = StandardScaler().fit(X_tr)
    g = 1.0 / X.shape[1]
    specs = [("linear", {}), ("poly", {"degree": 2, "gamma": g, "coef0": 1.0}),
             ("rbf", {"gamma": g / 10}), ("rbf", {"gamma": g}), ("rbf", {"gamma": 10 * g})]
    return scaler.transform(X_tr), scaler.transform(X_te), y_tr, y_te, specs


def _demo_methods(backend: str | None) -> list[tuple[str, str, str, Callable]]:
    """(method, kernel normalization, formulation/driver label, run(ks, y)) of the demo."""
    from .api import fit, solve
    from .drivers import DRIVERS

    C, tol = DEMO_C, 1e-4
    methods = [
        ("svm (unif)", "trace", "svm", lambda ks, y: solve(ks, y, "svm", C=C, backend=backend)),
        ("l1 exact", "trace", "qcqp_l1", lambda ks, y: solve(ks, y, "qcqp_l1", C=C, backend=backend)),
        ("l1 cutting plane", "trace", "cutting_plane",
         lambda ks, y: fit(ks, y, "cutting_plane", C=C, p=1, tol=tol)),
        ("lp wrapper p=4/3", "trace", "wrapper",
         lambda ks, y: fit(ks, y, "wrapper", C=C, p=4 / 3, tol=tol)),
        ("conv (theta=2)", "tail_sum", "cutting_plane",
         lambda ks, y: fit(ks, y, "cutting_plane", C=C, p=1, tol=tol)),
    ]
    if "dca" in DRIVERS:
        methods.append(("dc (theta=2)", "trace", "dca",
                        lambda ks, y: fit(ks, y, "dca", C=C, theta=2, tol=tol, backend=backend)))
    return methods


def _demo_row(method: str, label: str, res, accuracy: float, elapsed: float, names) -> dict:
    certified = res.info.get("certified_globally", True) is not False
    row = {"method": method, "formulation": label, "backend": str(res.backend),
           "objective": f"{res.primal:.6f}",
           "rel_gap": f"{res.rel_gap:.1e}" + ("" if certified else " (sub)"),
           "weights": _fmt_weights(res.weights), "accuracy": f"{accuracy:.3f}",
           "time": f"{elapsed:.2f}", "kernel_names": names}
    if not certified:
        row["note"] = ("DCA has no global certificate; rel_gap is that of its last convex "
                       "subproblem, objective the SVM value at the returned weights")
    elif res.status not in ("optimal", "converged"):
        row["note"] = f"status {res.status}: {res.message}"
    return row


def run_demo(out: str, small: bool = False, backend: str | None = None) -> tuple[list[dict], str]:
    """Run the demo methods, write the convergence figure to ``out``; returns (rows, out)."""
    from .kernels import KernelSet, kernel_stack

    X_tr, X_te, y_tr, y_te, specs = _demo_data(small)
    raw = KernelSet.from_data(X_tr, specs)
    sets = {"trace": raw.normalized("trace"), "tail_sum": raw.normalized("tail_sum", theta=2)}
    test = {k: ks.transform_test(kernel_stack(X_te, specs, X_tr)) for k, ks in sets.items()}
    rows, results = [], {}
    for method, norm, label, run in _demo_methods(backend):
        start = time.perf_counter()
        res = run(sets[norm], y_tr)
        elapsed = time.perf_counter() - start
        accuracy = float(np.mean(res.predict(test[norm]) == y_te))
        rows.append(_demo_row(method, label, res, accuracy, elapsed, raw.names))
        results[method] = res
    _demo_figure(results, out)
    return rows, out


def _demo_figure(results: dict, out: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .plotting import plot_convergence

    fig, _ = plot_convergence(results, tol=1e-4)
    try:
        fig.savefig(out, dpi=110)
    finally:
        plt.close(fig)


def cmd_demo(args: argparse.Namespace) -> int:
    """The tour described in ``mklopt demo --help``."""
    start = time.perf_counter()
    rows, figure = run_demo(out=args.out, small=args.small, backend=args.backend)
    print(_table(rows, [("method", "method"), ("formulation", "formulation/driver"),
                        ("backend", "backend"), ("objective", "objective"),
                        ("rel_gap", "cert. rel_gap"), ("weights", "weights"),
                        ("accuracy", "test acc."), ("time", "time[s]")]))
    print(f"kernels: {', '.join(rows[0]['kernel_names'])}")
    for row in rows:
        if row.get("note"):
            print(f"note ({row['method']}): {row['note']}")
    print(f"wrote {figure}   (total {time.perf_counter() - start:.1f}s)")
    return EXIT_OK


# --------------------------------------------------------------------- parser
def build_parser() -> argparse.ArgumentParser:
    """The ``mklopt`` argument parser (one sub-parser per command)."""
    from . import __version__

    parser = _Parser(prog="mklopt", description="Multiple Kernel Learning with certified duality gaps. "
                     "p always means the WEIGHT norm ||mu||_p <= 1 (block norm b = 2p/(p+1)).",
                     epilog="Run 'mklopt COMMAND --help' for the options of a command.")
    parser.add_argument("--version", action="version", version=f"mklopt {__version__}")
    subs = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    subs.required = True
    for add in (_add_demo, _add_solve, _add_compare, _add_verify, _add_bench):
        add(subs)
    return parser


def _add_demo(subs) -> None:
    demo = subs.add_parser("demo", help="tour of the formulations and drivers on breast cancer",
                           description=DEMO_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    demo.add_argument("--out", default="mklopt_demo_convergence.png", metavar="FILE.png",
                      help="where to write the convergence figure (default %(default)s)")
    demo.add_argument("--small", action="store_true", help="fewer training points (a few seconds)")
    demo.add_argument("--backend", default=None, help="conic backend of the exact solves")
    demo.set_defaults(handler=cmd_demo)


def _add_solve(subs) -> None:
    solve = subs.add_parser("solve", help="solve one instance (a formulation or a driver)",
                            description="Solve one MKL instance exactly (--formulation) or with an "
                            "outer loop (--driver) and print the certified result.")
    _add_instance_args(solve)
    how = solve.add_mutually_exclusive_group()
    how.add_argument("--formulation", help="exact formulation (default lp_dual): svm, qcqp_l1, "
                     "lp_primal, lp_block_primal, lp_dual, dc_subproblem, vkr_lp, ...")
    how.add_argument("--driver", help="outer loop instead: wrapper, cutting_plane, dca, ...")
    solve.add_argument("--backend", help="CVXPY backend (CLARABEL, ECOS, SCS, HIGHS, ...)")
    solve.add_argument("--tol", type=parse_number, help="backend tolerance (exact, default 1e-8) "
                       "or certified rel_gap (driver, default 1e-4)")
    solve.add_argument("--max-iter", type=int, default=None, help="driver iteration cap")
    solve.add_argument("--param", action="append", type=_param, metavar="KEY=VALUE",
                       help="extra formulation/driver parameter, repeatable (e.g. b=4, max_cuts=50)")
    solve.add_argument("--out", metavar="FILE", help="write the result to FILE.json or FILE.npz (atomic)")
    solve.set_defaults(handler=cmd_solve)


def _add_compare(subs) -> None:
    compare = subs.add_parser("compare", help="formulations x backends on one instance",
                              description="Solve one instance with several formulations and "
                              "backends; report each certificate and whether all agree (exit 1 if not).")
    _add_instance_args(compare)
    compare.add_argument("--formulations", help="comma-separated (default: all MKL formulations for p)")
    compare.add_argument("--backends", help="comma-separated (default: every installed capable one)")
    compare.add_argument("--tol", type=parse_number, help="agreement tolerance, relative (default 1e-6)")
    compare.set_defaults(handler=cmd_compare)


def _add_verify(subs) -> None:
    verify = subs.add_parser("verify", help="certify a candidate solution (exit 0 iff rel_gap <= tol)",
                             description="Compute mklopt's certificate (primal, dual, gap) of a "
                             "candidate (weights, alpha) from your own solver.")
    _add_instance_args(verify)
    verify.add_argument("--candidate", required=True, metavar="FILE",
                        help=".npz or .json with 'weights' (M,) and 'alpha' (n,) "
                        "(the output of 'mklopt solve --out' works)")
    verify.add_argument("--tol", type=parse_number, help="required relative gap (default 1e-6)")
    verify.set_defaults(handler=cmd_verify)


def _add_bench(subs) -> None:
    bench = subs.add_parser("bench", help="run a benchmark script from examples/ (exact, drivers, vkr)",
                            description="Run examples/bench_NAME.py of a source checkout; "
                            "arguments after NAME are passed to the script.")
    bench.add_argument("name", help="benchmark name: exact, drivers, vkr, ...")
    bench.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")
    bench.set_defaults(handler=cmd_bench)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"mklopt: warning: {_one_line(message)}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mklopt`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    previous = warnings.showwarning
    warnings.showwarning = _show_warning
    try:
        return int(args.handler(args) or EXIT_OK)
    except (MKLError, ValueError, OSError, KeyError) as exc:
        print(f"mklopt {args.command}: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        warnings.showwarning = previous


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
