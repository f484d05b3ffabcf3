"""Where the time goes: mklopt's outer loops against the floor of the same work in NumPy/libsvm.

Digits odd-vs-even, M RBF kernels (log-spaced widths), passed to
``mklopt.fit`` as the raw (M, n, n) NumPy stack, so validation is part of
the wall time. For each (n, M, driver, p) — wrapper p = 4/3, cutting plane
p = 1, C = 1, gap 1e-3 — the table shows

* ``wall``: the whole ``mklopt.fit(stack, y, ...)``;
* ``build``: ``KernelSet(stack)`` alone (validation);
* ``floor``: iterations x (K_mu with one GEMV + the M mat-vecs K_m c as
  one GEMV on the (M n, n) view + one ``SVC(kernel="precomputed", tol=0.1*gap)`` fit on
  K_mu), measured in the same run at (up to 8 of) the run's own weights;
* ``wall/floor``; ``solve/floor``: (wall - build) / floor, the outer loop
  alone against the same floor;
* ``peak/stack``: peak extra memory during ``fit`` (tracemalloc, a separate
  run) as a multiple of the stack's size.

Then the scikit-learn user's view: the default ``MKLClassifier`` (``driver="auto"``)
with 10 RBF kernels on the digits against one RBF ``SVC`` on the same data
(wall-time ratio, test accuracies, certified gap).

For n above the 1797 digits, points are drawn again with a little pixel noise.

Run: ``python examples/bench_perf.py --n 1000 --M 50`` (``mklopt bench perf``).
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np
from sklearn.datasets import load_digits
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVC

import mklopt

CASES = (("wrapper", 4 / 3), ("cutting_plane", 1.0))


def digits_stack(n: int, M: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Raw (M, n, n) float64 stack of RBF kernels on digits and labels odd (+1) / even (-1)."""
    X, digit = load_digits(return_X_y=True)
    rng = np.random.default_rng(seed)
    idx = rng.choice(len(digit), size=n, replace=n > len(digit))
    X = X[idx] / 16.0
    if n > len(digit):
        X = X + 0.02 * rng.standard_normal(X.shape)
    y = np.where(digit[idx] % 2 == 1, 1, -1)
    gammas = np.logspace(-3, 0, M) * 10.0 / X.shape[1]
    stack = np.empty((M, n, n))
    for m, gamma in enumerate(gammas):
        stack[m] = rbf_kernel(X, gamma=float(gamma))
    return stack, y


def time_build(stack: np.ndarray) -> float:
    start = time.perf_counter()
    mklopt.KernelSet(stack)
    return time.perf_counter() - start


def time_fit(stack, y, driver: str, p: float, tol: float, C: float):
    start = time.perf_counter()
    res = mklopt.fit(stack, y, driver, p=p, C=C, tol=tol)
    return time.perf_counter() - start, res


def peak_memory(stack, y, driver: str, p: float, tol: float, C: float) -> float:
    """Peak traced allocation during ``fit``, as a multiple of the stack's bytes."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        mklopt.fit(stack, y, driver, p=p, C=C, tol=tol)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak / stack.nbytes


def floor_time(stack: np.ndarray, y: np.ndarray, history: list, C: float, tol: float,
               samples: int = 8) -> float:
    """iterations x mean(one tensordot + one batched mat-vec + one libsvm fit) at the run's weights."""
    picks = np.unique(np.linspace(0, len(history) - 1, min(samples, len(history))).astype(int))
    K = np.empty(stack.shape[1:])
    Kc = np.empty(stack.shape[:2])
    svc = SVC(kernel="precomputed", C=C, tol=max(1e-12, min(1e-3, 0.1 * tol)))
    total = 0.0
    for i in picks:
        weights = np.asarray(history[i]["weights"], dtype=float)
        start = time.perf_counter()
        np.dot(weights, stack.reshape(stack.shape[0], -1), out=K.reshape(-1))
        svc.fit(K, y)
        coef = np.zeros(len(y))
        coef[svc.support_] = svc.dual_coef_[0]
        np.dot(stack.reshape(-1, stack.shape[2]), coef, out=Kc.reshape(-1))  # one GEMV: the fastest form
        total += time.perf_counter() - start
    return total / len(picks) * len(history)


def run(sizes, kernel_counts, C: float = 1.0, tol: float = 1e-3, memory: bool = True) -> list[dict]:
    rows = []
    header = (f"{'n':>5} {'M':>3} {'driver':>14} {'p':>5} {'iters':>5} {'wall s':>7} {'build s':>7} "
              f"{'floor s':>7} {'wall/floor':>10} {'solve/floor':>11} {'peak/stack':>10} {'rel_gap':>8} status")
    print(header)
    print("-" * len(header))
    for n in sizes:
        for M in kernel_counts:
            stack, y = digits_stack(n, M)
            build = time_build(stack)
            for driver, p in CASES:
                wall, res = time_fit(stack, y, driver, p, tol, C)
                floor = floor_time(stack, y, res.history, C, tol)
                peak = peak_memory(stack, y, driver, p, tol, C) if memory else float("nan")
                print(f"{n:5d} {M:3d} {driver:>14} {p:5.3g} {res.iterations:5d} {wall:7.3f} "
                      f"{build:7.3f} {floor:7.3f} {wall / floor:10.2f} {(wall - build) / floor:11.2f} {peak:10.2f} "
                      f"{res.rel_gap:8.1e} {res.status}", flush=True)
                rows.append(dict(n=n, M=M, driver=driver, p=p, iterations=res.iterations, wall=wall,
                                 build=build, floor=floor, ratio=wall / floor,
                                 solve_ratio=(wall - build) / floor, peak=peak,
                                 rel_gap=res.rel_gap, status=res.status))
            print(f"{'':>5} {'':>3} stack: {stack.nbytes / 1e6:.0f} MB", flush=True)
            del stack
    return rows


def estimator_vs_svc(n: int = 1000, M: int = 10, repeats: int = 3) -> dict:
    """Default ``MKLClassifier`` (M RBF kernels) against one RBF ``SVC``, same data, same run."""
    X, digit = load_digits(return_X_y=True)
    X, y = X / 16.0, np.where(digit % 2 == 1, 1, -1)
    X_tr, y_tr, X_te, y_te = X[:n], y[:n], X[n:], y[n:]
    gammas = np.logspace(-3, 0, M) * 10.0 / X.shape[1]
    specs = [("rbf", {"gamma": float(g)}) for g in gammas]
    svc_times = []
    for _ in range(repeats):
        start = time.perf_counter()
        svc = SVC(kernel="rbf", gamma="scale").fit(X_tr, y_tr)
        svc_times.append(time.perf_counter() - start)
    start = time.perf_counter()
    clf = mklopt.MKLClassifier(kernels=specs).fit(X_tr, y_tr)
    wall = time.perf_counter() - start
    row = dict(n=n, M=M, driver=clf.driver_, mkl=wall, svc=min(svc_times),
               ratio=wall / min(svc_times), rel_gap=clf.result_.rel_gap,
               mkl_accuracy=clf.score(X_te, y_te) if len(y_te) else float("nan"),
               svc_accuracy=svc.score(X_te, y_te) if len(y_te) else float("nan"))
    print(f"\nMKLClassifier() [{row['driver']}] with {M} RBF kernels on {n} digits: "
          f"{wall:.3f} s, one RBF SVC: {row['svc']:.4f} s, ratio {row['ratio']:.1f}x; "
          f"rel_gap {row['rel_gap']:.1e}; test accuracy {row['mkl_accuracy']:.3f} "
          f"(SVC {row['svc_accuracy']:.3f})", flush=True)
    return row


def plot_ratios(rows: list[dict], out) -> None:
    """Bar chart of wall time / floor per configuration, saved as ``bench_perf.png``."""
    from pathlib import Path

    from mklopt.plotting import save_ratio_bars

    labels = [f"n={r['n']} M={r['M']}\n{r['driver']} p={r['p']:.3g}" for r in rows]
    save_ratio_bars(labels, [r["ratio"] for r in rows], Path(out) / "bench_perf.png",
                    ylabel="wall time / floor", target=1.5)


def main(small: bool = False, out=None, argv=None) -> list[dict]:
    """Command-line entry; ``small=True`` runs n in {200, 400}, M in {5, 10}."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=None,
                        help="training sizes (default 500 1000 2000)")
    parser.add_argument("--M", type=int, nargs="+", default=None,
                        help="numbers of kernels (default 10 50)")
    parser.add_argument("--small", action="store_true", help="n in {200, 400}, M in {5, 10}")
    parser.add_argument("--C", type=float, default=1.0)
    parser.add_argument("--tol", type=float, default=1e-3, help="target relative gap")
    parser.add_argument("--no-memory", action="store_true", help="skip the tracemalloc run")
    parser.add_argument("--out", default=None, help="folder for bench_perf.png")
    parser.add_argument("--estimator-n", type=int, default=None,
                        help="training points of the MKLClassifier-vs-SVC comparison (default 1000)")
    args = parser.parse_args(argv if argv is not None else ([] if small else None))
    small = small or args.small
    sizes = args.n or ([200, 400] if small else [500, 1000, 2000])
    counts = args.M or ([5, 10] if small else [10, 50])
    rows = run(sizes, counts, args.C, args.tol, memory=not args.no_memory)
    estimator_vs_svc(args.estimator_n or (300 if small else 1000))
    if out is not None or args.out is not None:
        plot_ratios(rows, out if out is not None else args.out)
    return rows


if __name__ == "__main__":
    main()
