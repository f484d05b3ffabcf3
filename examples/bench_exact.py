"""Benchmark the exact one-shot solves (``mklopt.solve``) per backend and formulation.

Digits odd-vs-even, M = 10 RBF kernels of log-spaced widths, trace-normalized
to ``Tr K_m = n`` (so ``K_m(x, x) = 1``), C = 1. For each n the script prints the
wall time of every (formulation, backend) pair and its ratio to one
scikit-learn ``SVC(kernel="precomputed")`` fit on the plain sum kernel (median
of five fits), plus mklopt's certified relative gap and status. The kernel
factors (one eigendecomposition per kernel, shared by all formulations) are
computed once per n and reported separately. All ratios come from one run.

A pair whose time, extrapolated from the previous size as O(n^3), would exceed
the budget (default 120 s) is skipped and reported as such. A bar chart of the
ratios is saved as ``bench_exact.png`` (folder ``--out``).

Run: ``python examples/bench_exact.py --sizes 100 200 500 --backends CLARABEL ECOS``
"""

from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np
from sklearn.datasets import load_digits
from sklearn.svm import SVC

import mklopt
from mklopt.backends import capable_backends
from mklopt.formulations import FORMULATIONS
from mklopt.regularizers import block_from_weight_norm

P_LP = 4.0 / 3.0  # weight norm of the lp formulations (block norm b = 8/7)
#: (label, formulation, solve keyword arguments)
CASES = [
    ("svm (sum kernel)", "svm", {}),
    ("qcqp_l1", "qcqp_l1", {}),
    ("lp_dual p=1", "lp_dual", {"p": 1.0}),
    ("lp_dual p=4/3", "lp_dual", {"p": P_LP}),
    ("lp_primal p=4/3", "lp_primal", {"p": P_LP}),
    ("lp_block_primal b=8/7", "lp_block_primal", {"b": block_from_weight_norm(P_LP)}),
]


def digits_kernels(n: int, M: int = 10, seed: int = 0) -> tuple[mklopt.KernelSet, np.ndarray]:
    """Odd-vs-even digits with M RBF kernels (widths log-spaced over three decades).

    Parameters
    ----------
    n : int
        Number of points (random subset, fixed seed).
    M : int
        Number of kernels.

    Returns
    -------
    (KernelSet, ndarray)
        Trace-normalized kernels (``Tr K_m = n``) and labels in {-1, +1}.
    """
    X, digit = load_digits(return_X_y=True)
    idx = np.random.default_rng(seed).choice(len(digit), size=min(n, len(digit)), replace=False)
    X = X[idx] / 16.0
    y = np.where(digit[idx] % 2 == 1, 1, -1)
    gammas = np.logspace(-2, 1, M) / X.shape[1]
    specs = [("rbf", {"gamma": float(g)}) for g in gammas]
    return mklopt.KernelSet.from_data(X, specs).normalized("trace", target=len(y)), y


def time_svc(ks: mklopt.KernelSet, y: np.ndarray, C: float, repeats: int = 5) -> float:
    """Seconds of one SVC fit on the plain sum kernel (scikit-learn's default tol 1e-3).

    The median of ``repeats`` fits: one fit takes milliseconds, too short to time once.
    """
    K = ks.combined(np.ones(ks.M))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        SVC(kernel="precomputed", C=C).fit(K, y)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def time_solve(ks, y, formulation: str, backend: str, C: float, params: dict):
    """Wall time of ``mklopt.solve`` (build, backend, certificate) and its result or error."""
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = mklopt.solve(ks, y, formulation, C=C, backend=backend, **params)
        return time.perf_counter() - start, result, ""
    except mklopt.MKLError as exc:
        return time.perf_counter() - start, None, type(exc).__name__


def backends_for(formulation: str, wanted: list[str] | None) -> list[str]:
    capable = capable_backends(FORMULATIONS[formulation].cone)
    return [b for b in capable if wanted is None or b in wanted]


def run(sizes: list[int], backends: list[str] | None, budget: float, C: float = 1.0) -> list[dict]:
    """Time every case at every size and print one table row per (n, formulation, backend)."""
    header = (f"{'n':>4} {'M':>3} {'formulation':>22} {'backend':>9} {'time s':>8} "
              f"{'/SVC':>8} {'rel_gap':>8} status")
    print(header)
    print("-" * len(header))
    rows, last = [], {}
    for n in sizes:
        ks, y = digits_kernels(n)
        start = time.perf_counter()
        ks.factors()
        factor_time = time.perf_counter() - start
        svc = time_svc(ks, y, C)
        print(f"{ks.n:4d} {ks.M:3d} {'(kernel factors, once)':>22} {'-':>9} {factor_time:8.3f} "
              f"{factor_time / svc:8.1f} {'-':>8} -")
        print(f"{ks.n:4d} {ks.M:3d} {'(SVC on sum kernel)':>22} {'libsvm':>9} {svc:8.3f} "
              f"{1.0:8.1f} {'-':>8} -", flush=True)
        for label, formulation, params in CASES:
            for backend in backends_for(formulation, backends):
                key = (label, backend)
                if key in last:
                    n_prev, t_prev = last[key]
                    estimate = t_prev * (ks.n / n_prev) ** 3
                    if estimate > budget:
                        print(f"{ks.n:4d} {ks.M:3d} {label:>22} {backend:>9} {'skipped':>8} "
                              f"{'':>8} {'':>8} est. {estimate:.0f} s > {budget:.0f} s budget")
                        last[key] = (ks.n, estimate)
                        continue
                elapsed, result, error = time_solve(ks, y, formulation, backend, C, params)
                last[key] = (ks.n, elapsed)
                gap = f"{result.rel_gap:8.1e}" if result is not None else f"{'-':>8}"
                status = result.status if result is not None else f"error ({error})"
                print(f"{ks.n:4d} {ks.M:3d} {label:>22} {backend:>9} {elapsed:8.3f} "
                      f"{elapsed / svc:8.1f} {gap} {status}", flush=True)
                rows.append(dict(n=ks.n, M=ks.M, case=label, backend=backend, time=elapsed,
                                 svc=svc, rel_gap=None if result is None else result.rel_gap,
                                 status=status))
    return rows


def plot(rows: list[dict], path) -> None:
    """Bar chart of time / SVC per case (log scale), one panel per n, one colour per backend."""
    import matplotlib.pyplot as plt

    sizes = sorted({r["n"] for r in rows})
    labels = [label for label, _, _ in CASES]
    backends = sorted({r["backend"] for r in rows if r["rel_gap"] is not None})  # solved at least once
    fig, axes = plt.subplots(1, len(sizes), figsize=(6 * len(sizes), 4), squeeze=False)
    width = 0.8 / max(1, len(backends))
    for ax, n in zip(axes[0], sizes):
        for k, backend in enumerate(backends):
            ratio = {r["case"]: r["time"] / r["svc"] for r in rows
                     if r["n"] == n and r["backend"] == backend and r["rel_gap"] is not None}
            xs = [i + k * width for i, label in enumerate(labels) if label in ratio]
            ax.bar(xs, [ratio[label] for label in labels if label in ratio], width, label=backend,
                   color=plt.cm.tab10(k))
        ax.set_yscale("log")
        ax.set_xticks(np.arange(len(labels)) + 0.4 - width / 2, labels, rotation=35, ha="right",
                      fontsize=8)
        ax.set_title(f"n = {n}, M = {rows[0]['M']}")
        ax.set_ylabel("exact solve time / one SVC fit")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=None,
                        help="numbers of points n (default: 100 200 500; 40 with small=True)")
    parser.add_argument("--backends", nargs="+", default=None, type=str.upper,
                        help="backends to time (default: every installed capable one)")
    parser.add_argument("--budget", type=float, default=120.0,
                        help="skip a case whose extrapolated time exceeds this many seconds")
    parser.add_argument("--C", type=float, default=1.0, help="soft-margin constant")
    parser.add_argument("--out", default=".", help="folder for bench_exact.png")
    return parser


def main(small: bool = False, out=None, argv=None) -> list[dict]:
    """Run the benchmark, print the table and save ``bench_exact.png`` in ``out`` (default: the
    ``--out`` argument, the current folder).

    ``argv``: the command line (``--sizes``, ``--backends``, ``--budget``, ``--C``, ``--out``;
    ``sys.argv`` when None, none with ``small``). ``small``: a seconds-long smoke run (n = 40,
    Clarabel and ECOS only, 10 s budget).

    Returns
    -------
    list of dict
        One row per timed (n, case, backend).
    """
    from pathlib import Path

    parser = _parser()
    args = parser.parse_args(argv if argv is not None else ([] if small else None))
    unknown = [b for b in args.backends or [] if b not in mklopt.available_backends()]
    if unknown:
        parser.error(f"not installed: {unknown}; installed: {mklopt.available_backends()}")
    if not math.isfinite(args.budget) or args.budget <= 0:
        parser.error("--budget must be a positive number of seconds")
    sizes, backends, budget = args.sizes, args.backends, args.budget
    if small:
        sizes = sizes or [40]
        backends = backends or [b for b in ("CLARABEL", "ECOS") if b in mklopt.available_backends()]
        budget = min(budget, 10.0)
    rows = run(sorted(sizes or [100, 200, 500]), backends, budget, C=args.C)
    folder = Path(out if out is not None else args.out)
    folder.mkdir(parents=True, exist_ok=True)
    if rows:
        plot(rows, folder / "bench_exact.png")
    return rows


if __name__ == "__main__":
    main()
