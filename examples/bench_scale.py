"""Benchmark MKL on low-rank kernel factors at large n, against one LinearSVC.

A synthetic ``make_classification`` problem (20 features, 10 informative,
``random_state=0``); M = 10 RBF kernels (widths on a log scale) as Nyström
factors of rank 100 each (``KernelSet.from_data(X, specs, rank=100)``),
trace-normalized (Tr K_m = n). For each n, in one run:

* ``mklopt.fit(factors, y, "wrapper", p=2, C=1, tol=1e-3)``: wall time,
  outer iterations, certified relative gap, liblinear calls and active-set QPs;
* the reference: one ``LinearSVC(loss="hinge")`` (scikit-learn's liblinear,
  default tolerance) on the uniformly combined features
  :math:`[G_1, \\dots, G_M]/\\sqrt{M}`;
* peak extra memory during ``fit`` as a multiple of the factors' size:
  ``tracemalloc`` (NumPy and Python allocations) and the growth of the
  process's peak resident set (``ru_maxrss``, which also sees liblinear's
  own copy of the data). Each n runs in a fresh process so that the peak is
  its own.

Run: ``python examples/bench_scale.py`` (n = 10⁴ and 10⁵; ``--sizes`` to
change) or ``mklopt bench scale``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

import mklopt

RANK, KERNELS = 100, 10


def problem(n: int, rank: int = RANK, M: int = KERNELS):
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=n, n_features=20, n_informative=10, random_state=0)
    specs = [("rbf", {"gamma": float(g)}) for g in np.logspace(-3, 0, M)]
    ks = mklopt.KernelSet.from_data(X, specs, rank=rank).normalized("trace", target=n)
    return ks, np.where(y == 1, 1, -1)


def measure(n: int, rank: int, M: int) -> dict:
    """One configuration, in this process."""
    from sklearn.svm import LinearSVC

    ks, y = problem(n, rank, M)
    Z = ks.combined_factor(np.full(ks.M, 1.0 / ks.M))
    start = time.perf_counter()
    LinearSVC(loss="hinge", C=1.0).fit(Z, y)
    t_svc = time.perf_counter() - start
    del Z
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    tracemalloc.start()
    start = time.perf_counter()
    res = mklopt.fit(ks, y, "wrapper", p=2, C=1.0, tol=1e-3)
    wall = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    rss_growth = max(0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - rss_before)
    return {"n": n, "M": M, "rank": rank, "wall": wall, "svc": t_svc,
            "iterations": res.iterations, "rel_gap": res.rel_gap, "status": res.status,
            "factors_mb": ks.G.nbytes / 2**20, "tracemalloc_x": peak / ks.G.nbytes,
            "rss_x": rss_growth / ks.G.nbytes}


def report(rows: list[dict]) -> None:
    print(f"wrapper p=2, C=1, certified gap 1e-3; M = {rows[0]['M']} Nystroem factors of rank "
          f"{rows[0]['rank']}; make_classification(random_state=0)")
    print(f"{'n':>8s}{'fit[s]':>9s}{'SVC[s]':>9s}{'ratio':>7s}{'iters':>7s}{'rel_gap':>10s}"
          f"{'factors MB':>12s}{'peak/fac (tracemalloc)':>24s}{'(rss)':>7s}")
    for r in rows:
        print(f"{r['n']:>8d}{r['wall']:>9.2f}{r['svc']:>9.2f}{r['wall'] / r['svc']:>7.1f}"
              f"{r['iterations']:>7d}{r['rel_gap']:>10.1e}{r['factors_mb']:>12.1f}"
              f"{r['tracemalloc_x']:>24.2f}{r['rss_x']:>7.2f}")
    print("ratio = mklopt.fit time / one LinearSVC(loss='hinge') on the uniformly combined features")


def plot(rows: list[dict], out) -> None:
    from mklopt.plotting import save_ratio_bars

    save_ratio_bars([f"n={r['n']}" for r in rows], [r["wall"] / r["svc"] for r in rows],
                    Path(out) / "bench_scale.png", ylabel="fit time / one LinearSVC", target=15)


def main(small: bool = False, out=None, argv=None) -> list[dict]:
    """Command-line entry; ``small=True`` runs n = 2000, rank 20, 4 kernels in this process."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--rank", type=int, default=RANK)
    parser.add_argument("--kernels", type=int, default=KERNELS)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # child process: one n, JSON out
    parser.add_argument("--out", default=None, help="folder for bench_scale.png")
    args = parser.parse_args(argv if argv is not None else ([] if small else None))
    mklopt.compile()  # untimed: the compiled core compiled (first run) or loaded before the clocks
    if args.one:
        print(json.dumps(measure(args.one, args.rank, args.kernels)))
        return []
    if small:
        rows = [measure(2000, 20, 4)]
    else:
        rows = [json.loads(subprocess.check_output(
            [sys.executable, __file__, "--one", str(n), "--rank", str(args.rank),
             "--kernels", str(args.kernels)], text=True).strip().splitlines()[-1])
            for n in args.sizes]
    report(rows)
    if out is not None or args.out is not None:
        plot(rows, out if out is not None else args.out)
    return rows


if __name__ == "__main__":
    main()
