"""``mklopt demo``: a tour of the formulations and drivers on scikit-learn's breast-cancer data.

Writes one PNG (``--out``, checked before any work, written atomically:
nothing is written when the run fails or is interrupted).

Exit codes: 0 done; 2 usage or input error (e.g. ``--out`` not a ``.png`` in
an existing folder); 130 interrupted.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ._common import EXIT_OK, check_out, fmt_weights, table

DEMO_HELP = """\
Run a small tour of mklopt on the breast-cancer data shipped with scikit-learn:
a stratified train/test split (200 training points), five trace-normalized
kernels (linear, quadratic, three RBF widths), C = 100, and these methods:

  svm (unif)         SVM on the sum kernel (exact, formulation 'svm')
  l1 exact           l1-MKL as a QCQP (formulation 'qcqp_l1')
  l1 cutting plane   SILP outer loop (driver 'cutting_plane', p = 1)
  lp wrapper         analytic wrapper, weight norm p = 4/3 (block norm b = 8/7)
  conv               tail-sum normalization (theta = 2) + l1-MKL (cutting plane)
  dc                 DC algorithm over H1 (driver 'dca', theta = 2)

It prints one table (objective = certified primal value, certified relative
duality gap, weights, test accuracy, time) and writes a PNG of the gap
curves to --out. Takes well under a minute (--small: a few seconds).

Exit status 0 when done, 2 for bad input, 130 when interrupted.
"""

SCALES_FOOTNOTE = """\
Each row minimizes its own problem, so objectives and weights are on different scales:
  objective = 1/2 sum_m ||w_m||^2/mu_m + C sum hinge over that row's weight set; a larger
  set gives a smaller optimum: svm (unif) uses all weights 1 (the p = inf ball), the
  wrapper ||mu||_(4/3) <= 1 and the l1 rows sum(mu) <= 1 (weights summing to 1), hence
  unif <= l_4/3 <= l1. conv divides each kernel by its tail sum (other kernels), and dc
  bounds the tail sum of K_mu itself (weights in units of the trace-normalized kernels)."""

DEMO_C = 100.0  # trace-normalized kernels (Tr K_m = 1) need C of the order of n
OUT_SUFFIXES = (".png",)


def add_parser(subs: argparse._SubParsersAction) -> None:
    """Register ``demo`` on the sub-parser action ``subs``."""
    demo = subs.add_parser("demo", help="tour of the formulations and drivers on breast cancer",
                           description=DEMO_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    demo.add_argument("--out", default="mklopt_demo_convergence.png", metavar="FILE.png",
                      help="where to write the convergence figure (default %(default)s)")
    demo.add_argument("--small", action="store_true", help="fewer training points (a few seconds)")
    demo.add_argument("--backend", default=None, help="conic backend of the exact solves")
    demo.set_defaults(handler=run)


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
    from ..api import fit, solve
    from ..drivers import DRIVERS

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
           "weights": fmt_weights(res.weights), "accuracy": f"{accuracy:.3f}",
           "time": f"{elapsed:.2f}", "kernel_names": names}
    if not certified:
        row["note"] = ("DCA has no global certificate; rel_gap is that of its last convex "
                       "subproblem, objective the SVM value at the returned weights")
    elif res.status not in ("optimal", "converged"):
        row["note"] = f"status {res.status}: {res.message}"
    return row


def _warm_up(methods, X_tr, y_tr, specs) -> None:
    """Each method once on 40 points, untimed: loading (or, on a fresh machine, compiling) the
    compiled core is not a fit's time, so the table's clocks start after it."""
    from ..kernels import KernelSet

    raw = KernelSet.from_data(X_tr[:40], specs)
    sets = {"trace": raw.normalized("trace"), "tail_sum": raw.normalized("tail_sum", theta=2)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _, norm, _, solver in methods:
            solver(sets[norm], y_tr[:40])


def run_demo(out: str, small: bool = False, backend: str | None = None) -> tuple[list[dict], str]:
    """Run the demo methods and write the convergence figure to ``out``.

    Parameters
    ----------
    out : str
        A ``.png`` path in an existing folder (written atomically).
    small : bool
        100 training points instead of 200.
    backend : str, optional
        Conic backend of the exact solves.

    Returns
    -------
    (rows, out)
        One table row per method, and the figure's path.
    """
    from ..kernels import KernelSet, kernel_stack

    check_out(out, OUT_SUFFIXES)
    X_tr, X_te, y_tr, y_te, specs = _demo_data(small)
    raw = KernelSet.from_data(X_tr, specs)
    sets = {"trace": raw.normalized("trace"), "tail_sum": raw.normalized("tail_sum", theta=2)}
    test = {k: ks.transform_test(kernel_stack(X_te, specs, X_tr)) for k, ks in sets.items()}
    methods = _demo_methods(backend)
    _warm_up(methods, X_tr, y_tr, specs)
    rows, results = [], {}
    for method, norm, label, solver in methods:
        start = time.perf_counter()
        res = solver(sets[norm], y_tr)
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

    from ..plotting import plot_convergence
    from ..results.result_io import atomic_write

    fig, _ = plot_convergence(results, tol=1e-4)
    try:
        atomic_write(out, lambda handle: fig.savefig(handle, dpi=110, format="png"), OUT_SUFFIXES)
    finally:
        plt.close(fig)


def run(args: argparse.Namespace) -> int:
    """The tour described in ``mklopt demo --help``."""
    start = time.perf_counter()
    rows, figure = run_demo(out=args.out, small=args.small, backend=args.backend)
    print(table(rows, [("method", "method"), ("formulation", "formulation/driver"),
                       ("backend", "backend"), ("objective", "objective"),
                       ("rel_gap", "cert. rel_gap"), ("weights", "weights"),
                       ("accuracy", "test acc."), ("time", "time[s]")]))
    print(f"kernels: {', '.join(rows[0]['kernel_names'])}")
    print(SCALES_FOOTNOTE)
    for row in rows:
        if row.get("note"):
            print(f"note ({row['method']}): {row['note']}")
    print(f"wrote {Path(figure).resolve()}   (total {time.perf_counter() - start:.1f}s)")
    return EXIT_OK
