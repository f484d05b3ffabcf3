"""Benchmark a warm-started C path against cold fits, measured in one run.

Digits odd-vs-even, ``--n`` points, ``--kernels`` kernels (RBF widths on a
log scale plus a cosine kernel), trace-normalized (Tr K_m = n);
``mklopt.path`` over 8 values of C from 1 to 10⁴ at p = 4/3 (wrapper) and
p = 1 (cutting plane) to a certified gap of ``--tol``, against (a) 8 cold
``mklopt.fit`` calls on the same validated ``KernelSet`` (the warm-start
gain alone) and (b) 8 cold fits each from the raw NumPy stack (what a loop
over ``fit`` costs, validation included). Every result must be certified:
the script exits 1 otherwise.

Run: ``python examples/bench_path.py`` (or ``mklopt bench path``); defaults
n = 600, 20 kernels, tol 1e-4.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits

import mklopt


def digits_stack(n: int, M: int) -> tuple[np.ndarray, np.ndarray]:
    """The trace-normalized (M, n, n) stack of odd-vs-even digits and the labels."""
    X, digit = load_digits(return_X_y=True)
    idx = np.random.default_rng(0).choice(len(digit), size=n, replace=False)
    X = X[idx] / 16.0
    gammas = np.logspace(-3, 0, M - 1) * 10 / X.shape[1]
    specs = [("rbf", {"gamma": float(g)}) for g in gammas] + ["cosine"]
    ks = mklopt.KernelSet.from_data(X, specs, psd_tol=1e-6).normalized("trace", target=n)
    return np.ascontiguousarray(ks.K), np.where(digit[idx] % 2 == 1, 1, -1)


def timed(call):
    start = time.perf_counter()
    out = call()
    return time.perf_counter() - start, out


def run(n: int, M: int, tol: float) -> list[dict]:
    stack, y = digits_stack(n, M)
    Cs = np.logspace(0, 4, 8)
    rows = []
    for driver, p in (("wrapper", 4 / 3), ("cutting_plane", 1.0)):
        t_path, warm = timed(lambda: mklopt.path(stack, y, driver, Cs=Cs, p=p, tol=tol))
        ks = mklopt.KernelSet(stack)
        t_cold, cold = timed(lambda: [mklopt.fit(ks, y, driver, C=C, p=p, tol=tol) for C in Cs])
        t_raw, _ = timed(lambda: [mklopt.fit(stack, y, driver, C=C, p=p, tol=tol) for C in Cs])
        agree = max(abs(a.primal - b.primal) / max(abs(a.primal), abs(b.primal)) for a, b in zip(warm, cold))
        rows.append({"driver": driver, "p": p, "path": t_path, "cold": t_cold, "cold_raw": t_raw,
                     "iter_path": sum(r.iterations for r in warm),
                     "iter_cold": sum(r.iterations for r in cold),
                     "max_gap": max(r.rel_gap for r in warm), "agree": agree,
                     "certified": all(r.rel_gap <= tol for r in warm + cold)})
    return rows


def report(rows: list[dict], n: int, M: int, tol: float) -> None:
    print(f"C path 1..1e4 (8 values), digits n = {n}, M = {M}, trace-normalized, "
          f"certified gap {tol:g}")
    print(f"{'driver':<14s}{'p':>6s}{'path[s]':>9s}{'cold[s]':>9s}{'ratio':>7s}{'raw[s]':>9s}"
          f"{'ratio':>7s}{'iters path/cold':>17s}{'max gap':>10s}{'|dP|':>9s}")
    for r in rows:
        print(f"{r['driver']:<14s}{r['p']:>6.3g}{r['path']:>9.2f}{r['cold']:>9.2f}"
              f"{r['path'] / r['cold']:>7.2f}{r['cold_raw']:>9.2f}{r['path'] / r['cold_raw']:>7.2f}"
              f"{r['iter_path']:>8d}/{r['iter_cold']:<8d}{r['max_gap']:>10.1e}{r['agree']:>9.1e}")
    print("ratio = path time / cold time (first: cold fits on one validated KernelSet; "
          "second: cold fits from the raw stack, validation each time)")


def plot_ratios(rows: list[dict], out) -> None:
    from mklopt.plotting import save_ratio_bars

    labels = [f"{r['driver']} p={r['p']:.3g}\n{cold}" for r in rows
              for cold in ("vs cold", "vs cold+validation")]
    ratios = [r["path"] / r[key] for r in rows for key in ("cold", "cold_raw")]
    save_ratio_bars(labels, ratios, Path(out) / "bench_path.png",
                    ylabel="path time / 8 cold fits", target=0.6)


def main(small: bool = False, out=None, argv=None) -> list[dict]:
    """Command-line entry; ``small=True`` runs a 120-point, 4-kernel path (smoke test)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=600)
    parser.add_argument("--kernels", type=int, default=20)
    parser.add_argument("--tol", type=float, default=1e-4)
    parser.add_argument("--out", default=None, help="folder for bench_path.png")
    args = parser.parse_args(argv if argv is not None else ([] if small else None))
    if small:
        args.n, args.kernels, args.tol = 120, 4, 1e-3
    rows = run(args.n, args.kernels, args.tol)
    report(rows, args.n, args.kernels, args.tol)
    if out is not None or args.out is not None:
        plot_ratios(rows, out if out is not None else args.out)
    if not all(r["certified"] for r in rows):
        print("NOT CERTIFIED: some fit did not reach the target gap", file=sys.stderr)
    return rows


if __name__ == "__main__":
    sys.exit(0 if all(r["certified"] for r in main()) else 1)
