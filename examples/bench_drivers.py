"""Benchmark the outer loops against one SVC fit and against the exact one-shot solve.

Digits odd-vs-even, M-1 RBF kernels (log-spaced widths) plus a cosine-normalized
linear kernel, all trace-normalized. For each (n, M) prints the time of the
wrapper (p = 4/3) and the cutting plane (p = 1) to rel_gap 1e-3 and 1e-6,
divided by one scikit-learn SVC fit on the sum kernel, and for n <= 500 divided
by the exact one-shot solve (``mklopt.solve``). All ratios come from one run.

Run: ``python examples/bench_drivers.py --sizes 500 1000 --kernels 10 50``
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.datasets import load_digits
from sklearn.svm import SVC

import mklopt


def digits_kernels(n: int, M: int, seed: int = 0) -> tuple[mklopt.KernelSet, np.ndarray]:
    """Odd-vs-even digits: M-1 RBF kernels and one cosine-normalized linear kernel."""
    X, digit = load_digits(return_X_y=True)
    rng = np.random.default_rng(seed)
    idx = rng.choice(len(digit), size=min(n, len(digit)), replace=False)
    X = X[idx] / 16.0
    y = np.where(digit[idx] % 2 == 1, 1, -1)
    gammas = np.logspace(-3, 0, M - 1) * (1.0 / X.shape[1]) * 10
    specs = [("rbf", {"gamma": float(g)}) for g in gammas] + ["cosine"]
    return mklopt.KernelSet.from_data(X, specs, psd_tol=1e-6).normalized("trace", target=len(y)), y


def time_svc(ks: mklopt.KernelSet, y: np.ndarray, C: float) -> float:
    K = ks.combined(np.ones(ks.M) / ks.M)
    start = time.perf_counter()
    SVC(kernel="precomputed", C=C).fit(K, y)
    return time.perf_counter() - start


def time_fit(ks, y, driver: str, p: float, tol: float, C: float, inner: str) -> tuple[float, object]:
    start = time.perf_counter()
    res = mklopt.fit(ks, y, driver, p=p, tol=tol, C=C, inner=inner, max_iter=3000)
    return time.perf_counter() - start, res


def time_exact(ks, y, p: float, C: float) -> float:
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mklopt.solve(ks, y, "qcqp_l1" if p == 1 else "lp_dual", p=p, C=C)
    return time.perf_counter() - start


def run(sizes, kernel_counts, C: float = 1.0, exact_max_n: int = 500,
        cvxpy_max_n: int = 200) -> list[dict]:
    rows = []
    header = (f"{'n':>5} {'M':>3} {'driver':>14} {'p':>5} {'tol':>6} {'inner':>6} {'iters':>5} "
              f"{'time s':>8} {'/SVC':>7} {'/exact':>7} {'rel_gap':>8} status")
    print(header)
    print("-" * len(header))
    for n in sizes:
        for M in kernel_counts:
            ks, y = digits_kernels(n, M)
            svc = time_svc(ks, y, C)
            cases = [("wrapper", 4 / 3), ("cutting_plane", 1.0)]
            exact = {p: time_exact(ks, y, p, C) for _, p in cases} if ks.n <= exact_max_n else {}
            print(f"{'':>5} {'':>3} exact one-shot solves: "
                  + ", ".join(f"p={p:.3g}: {t:.2f} s" for p, t in exact.items()), flush=True)
            for driver, p in cases:
                for tol, inner in [(1e-3, "libsvm"), (1e-6, "libsvm"), (1e-6, "cvxpy")]:
                    if inner == "cvxpy" and ks.n > cvxpy_max_n:
                        continue
                    elapsed, res = time_fit(ks, y, driver, p, tol, C, inner)
                    ratio_exact = f"{elapsed / exact[p]:7.3f}" if p in exact else f"{'-':>7}"
                    print(f"{ks.n:5d} {M:3d} {driver:>14} {p:5.3g} {tol:6.0e} {inner:>6} "
                          f"{res.iterations:5d} {elapsed:8.3f} {elapsed / svc:7.1f} {ratio_exact} "
                          f"{res.rel_gap:8.1e} {res.status}", flush=True)
                    rows.append(dict(n=ks.n, M=M, driver=driver, p=p, tol=tol, inner=inner,
                                     time=elapsed, svc=svc, exact=exact.get(p), status=res.status,
                                     rel_gap=res.rel_gap, iterations=res.iterations))
            print(f"{'':>5} {'':>3} one SVC fit on the sum kernel: {svc:.4f} s")
    return rows


def plot_ratios(rows: list[dict], out) -> None:
    """Bar chart of time / one SVC fit per configuration (log scale)."""
    from pathlib import Path

    from mklopt.plotting import save_ratio_bars

    labels = [f"n={r['n']} M={r['M']}\n{r['driver']} {r['tol']:.0e} {r['inner']}" for r in rows]
    save_ratio_bars(labels, [r["time"] / r["svc"] for r in rows], Path(out) / "bench_drivers.png",
                    ylabel="time / one SVC fit", log=True)


def main(small: bool = False, out=None, argv=None) -> list[dict]:
    """Command-line entry; ``small=True`` runs one tiny configuration (smoke test)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 1000, 1797],
                        help="training sizes n (digits has 1797 points)")
    parser.add_argument("--kernels", type=int, nargs="+", default=[10, 50], help="numbers of kernels M")
    parser.add_argument("--C", type=float, default=1.0)
    parser.add_argument("--exact-max-n", type=int, default=500,
                        help="largest n for the exact one-shot solve")
    parser.add_argument("--cvxpy-max-n", type=int, default=200,
                        help="largest n for the cvxpy inner solver (an interior-point QP per iteration)")
    parser.add_argument("--out", default=None, help="folder for bench_drivers.png")
    args = parser.parse_args(argv if argv is not None else ([] if small else None))
    mklopt.compile()  # untimed: the compiled core compiled (first run) or loaded before the clocks
    if small:
        args.sizes, args.kernels, args.exact_max_n, args.cvxpy_max_n = [80], [4], 80, 80
    rows = run(args.sizes, args.kernels, args.C, args.exact_max_n, args.cvxpy_max_n)
    if out is not None or args.out is not None:
        plot_ratios(rows, out if out is not None else args.out)
    return rows


if __name__ == "__main__":
    main()
