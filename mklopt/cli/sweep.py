"""``mklopt sweep``: cross-validated grid search over C, p and kernel sets on Dask.

Runs :func:`mklopt.model_selection.sweep` on a local cluster of worker processes, or on a
running scheduler (``--scheduler``): one Dask task per (grid point, fold), every
finished fit appended at once to ``OUT.fits.csv`` beside ``--out``; ``--resume``
continues an interrupted sweep from it. Writes one CSV row per grid point to
``--out`` (checked before any work, written atomically).

Exit codes: 0 done; 2 usage or input error (bad option or file, bad
``--out``, dask not installed, scheduler unreachable); 130 interrupted.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from ..exceptions import InvalidInputError
from ._common import EXIT_OK, check_out, load_npz, table
from ._parsing import _integer, parse_kernel_spec, positive_float, positive_int, weight_norm

SWEEP_HELP = """\
Cross-validated grid search of an MKLClassifier over C x p x kernel sets:
every (grid point, fold) fit is a task on a Dask cluster, scored exactly as
scikit-learn's GridSearchCV scores it. By default a local cluster of --workers
single-threaded worker processes is started and closed; --scheduler connects
to a running one instead (started with 'dask scheduler' and
'dask worker tcp://HOST:8786' on each machine; it is left running).

The data go to every worker, so a worker that dies loses nothing: its fits run
again elsewhere. Each finished fit is appended at once to OUT.fits.csv (beside
--out): fold, fit time, score, certified rel_gap and status. If the sweep
stops (Ctrl-C, a crash, every worker gone), run the same command with --resume:
only the missing fits run, and the table is the one of an uninterrupted sweep
(a log written for other data, grid or folds is refused). --search halving
uses scikit-learn's successive halving (HalvingGridSearchCV) for large grids.

Data: --data FILE.npz with arrays X (n, d) and y (n,), used as given (scale
the features beforehand). Without --data: scikit-learn's breast-cancer data
(569 points, 30 features), standardized.

A progress bar of fits done / total with its ETA goes to stderr (--quiet: off),
with the Dask dashboard link while the cluster runs (live with bokeh>=3.1).
It prints the best parameters and their mean cross-validated score and writes
one CSV row per grid point to --out: param_C, param_p, param_kernels (when --kernels-set is
given), mean_test_score, std_test_score, rank_test_score, mean_fit_time.
Needs the dask extra: pip install -e ".[dask]".

Exit status 0 when done, 2 for bad input (also: dask missing, scheduler
unreachable, no worker left: the message says how many fits are saved), 130
when interrupted (the finished fits stay in OUT.fits.csv).
"""

OUT_SUFFIXES = (".csv",)


def _number_list(item: Callable[[str], float]) -> Callable[[str], list[float]]:
    """An argparse type: a comma-separated list of ``item`` values."""
    def parse(text: str) -> list[float]:
        values = [item(part) for part in str(text).split(",") if part.strip()]
        if not values:
            raise argparse.ArgumentTypeError(f"empty list {text!r}; use e.g. 0.1,1,10")
        return values
    return parse


def kernel_set(text: str) -> list:
    """``"linear;rbf:gamma=0.1"`` -> a list of kernel specs (one kernel set of the grid)."""
    specs = [parse_kernel_spec(part.strip()) for part in str(text).split(";") if part.strip()]
    if not specs:
        raise argparse.ArgumentTypeError(f"empty kernel set {text!r}; "
                                         "use e.g. 'linear;rbf:gamma=0.1'")
    return specs


def folds(text: str) -> int:
    """A number of cross-validation folds, an integer >= 2."""
    return _integer(text, 2, "a number of folds >= 2")


def add_parser(subs: argparse._SubParsersAction) -> None:
    """Register ``sweep`` on the sub-parser action ``subs``."""
    sub = subs.add_parser("sweep", help="distributed cross-validated grid search (C, p, kernel sets)",
                          description=SWEEP_HELP,
                          formatter_class=argparse.RawDescriptionHelpFormatter)
    sub.add_argument("--data", metavar="FILE.npz",
                     help="features: arrays X (n, d) and y (n,) "
                     "(default: breast cancer, standardized)")
    sub.add_argument("--C", type=_number_list(positive_float), default=[0.1, 1.0, 10.0],
                     metavar="LIST", help="soft-margin constants, comma-separated (default 0.1,1,10)")
    sub.add_argument("--p", type=_number_list(weight_norm), default=[1.0, 4 / 3, 2.0],
                     metavar="LIST", help="weight norms p >= 1, comma-separated (default 1,4/3,2)")
    sub.add_argument("--kernels-set", dest="kernel_sets", action="append", type=kernel_set,
                     default=None, metavar="SPECS",
                     help="a kernel set, specs separated by ';' (repeatable: one grid value each), "
                     "e.g. --kernels-set 'linear;rbf:gamma=0.1' --kernels-set 'linear;poly:degree=2' "
                     "(default: MKLClassifier's linear, quadratic and three RBF widths)")
    sub.add_argument("--driver", default="auto",
                     help="MKLClassifier driver: auto, exact, wrapper, cutting_plane, ... "
                     "(default auto)")
    sub.add_argument("--tol", type=positive_float, default=None,
                     help="MKLClassifier tol (default: the driver's)")
    sub.add_argument("--scoring", default=None,
                     help="a scikit-learn scorer name, e.g. roc_auc (default: accuracy)")
    sub.add_argument("--cv", type=folds, default=5, help="cross-validation folds (default 5)")
    sub.add_argument("--scheduler", default=None, metavar="ADDRESS",
                     help="a running Dask scheduler, e.g. tcp://host:8786 (default: a local cluster)")
    sub.add_argument("--workers", type=positive_int, default=2,
                     help="worker processes of the local cluster "
                     "(default 2; ignored with --scheduler)")
    sub.add_argument("--connect-timeout", type=positive_float, default=10.0, metavar="SECONDS",
                     help="seconds to wait for --scheduler (default 10)")
    sub.add_argument("--out", default="mklopt_sweep.csv", metavar="FILE.csv",
                     help="where to write the results table (default %(default)s); every "
                     "finished fit goes to FILE.fits.csv at once")
    sub.add_argument("--resume", action="store_true",
                     help="continue the interrupted sweep logged in FILE.fits.csv (same data, grid, "
                     "folds): only the missing fits run")
    sub.add_argument("--search", choices=["grid", "halving"], default="grid",
                     help="grid (default) or successive halving (HalvingGridSearchCV; no log)")
    sub.add_argument("--quiet", action="store_true", help="no progress bar")
    sub.set_defaults(handler=run)


def _short(value):
    """Floats with 4 significant digits for the printed table (the CSV keeps them all)."""
    return f"{value:.4g}" if isinstance(value, float) else value


def load_data(path: str | None) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` of ``--data``, or the standardized breast-cancer data."""
    if path is None:
        from sklearn.datasets import load_breast_cancer
        from sklearn.preprocessing import StandardScaler

        X, y = load_breast_cancer(return_X_y=True)
        return StandardScaler().fit_transform(X), y
    arrays = load_npz(path, ["X", "y"])
    X, y = arrays["X"], arrays["y"]
    if X.ndim != 2 or X.dtype.kind not in "biuf":
        raise InvalidInputError(f"X in {path} must be a 2-D (n, d) numeric array, "
                                f"got shape {X.shape} and dtype {X.dtype}.")
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise InvalidInputError(f"y in {path} must be 1-D with one label per row of X "
                                f"(X has {X.shape[0]} rows, y has shape {y.shape}).")
    return X.astype(float), y


def run(args: argparse.Namespace) -> int:
    """The sweep described in ``mklopt sweep --help``."""
    from ..estimators import MKLClassifier
    from ..model_selection.search import sweep
    from ..model_selection.sweep_log import fits_path

    start = time.perf_counter()
    out = check_out(args.out, OUT_SUFFIXES)
    if args.scoring is not None:
        from sklearn.metrics import get_scorer

        try:
            get_scorer(args.scoring)
        except ValueError:
            raise InvalidInputError(f"unknown --scoring {args.scoring!r}; use a scikit-learn "
                                    "scorer name such as accuracy, roc_auc, f1.") from None
    estimator = MKLClassifier(driver=args.driver, tol=args.tol)
    estimator._check_common_params()  # an unknown --driver fails here, not in every fit
    X, y = load_data(args.data)
    grid = {"C": args.C, "p": args.p}
    if args.kernel_sets:
        grid["kernels"] = args.kernel_sets
    log = fits_path(out)
    if args.resume and not log.exists():
        raise InvalidInputError(f"--resume: there is no log {log} of an earlier run of this sweep.")
    grid_search = args.search == "grid"
    res = sweep(X, y, grid, estimator=estimator, cv=args.cv, scheduler=args.scheduler,
                n_workers=args.workers, scoring=args.scoring, progress=not args.quiet,
                connect_timeout=args.connect_timeout, search=args.search,
                log=log if grid_search and not args.resume else None,
                resume=log if grid_search and args.resume else None)
    res.to_csv(out)
    rows = sorted(res.rows, key=lambda row: row["rank_test_score"])
    shown = [{key: _short(value) for key, value in row.items()} for row in rows[:10]]
    print(table(shown, [(key, key) for key in rows[0]]))
    if len(rows) > len(shown):
        print(f"... {len(rows) - len(shown)} more rows in {out}")
    best_row = res.rows[res.best_index]
    best = ", ".join(f"{key[len('param_'):]}={_short(value)}" for key, value in best_row.items()
                     if key.startswith("param_"))
    print(f"best params: {best}")
    metric = args.scoring or "accuracy"
    print(f"best score : {res.best_score_:.4f} (mean {metric} over {args.cv} folds)")
    if args.scheduler:
        print(f"dashboard  : {res.dashboard_link}")
    ran = f"{res.n_fits} fits" if res.n_run == res.n_fits else f"{res.n_run} of {res.n_fits} fits"
    print(f"wrote {out} ({len(rows)} rows; {ran} in {time.perf_counter() - start:.1f} s"
          + (f"; per-fit log {res.log})" if res.log else ")"))
    return EXIT_OK
