"""Where the time goes: mklopt's outer loops against the floor of the same work in NumPy/libsvm.

Two instances of n points and M RBF kernels (log-spaced widths): digits
odd-vs-even (C = 1), and a synthetic ``make_classification`` problem (20
features, 10 informative, C = 3) on which the cutting plane needs 10-20
iterations. For each (instance, driver) — wrapper p = 4/3, cutting plane
p = 1, gap 1e-3 — the table shows

* ``floor``: iterations x (K_mu from the kernels in use + the M mat-vecs
  K_m c as one GEMV on the (M n, n) view + one ``SVC(kernel="precomputed")``
  fit on K_mu) + one GEMV, measured in the same run at (up to 8 of) the run's
  own weights: the same work by the fastest plain NumPy/scikit-learn way;
* ``KernelSet/floor``: ``mklopt.fit`` on an already validated ``KernelSet``
  (what repeated fits, paths and sweeps use) against the floor (target 1.2);
* ``raw/(floor+read)``: ``mklopt.fit`` on the raw (M, n, n) NumPy stack, which
  it must validate (symmetry, finiteness, the PSD screen), against the floor
  plus one read of the stack (target 1.5);
* ``master ms``: the cutting plane's median time per master solve (target
  1 ms at M = 50; HiGHS through highspy, :mod:`mklopt.drivers.lp_master`);
* ``peak/stack``: peak extra memory during ``fit`` (tracemalloc, a separate
  run) as a multiple of the stack's size.

Then the scikit-learn user's view: the default ``MKLClassifier`` with 10 RBF
kernels on 1000 digits against one RBF ``SVC`` on the same data (target 10x),
with its parts: kernel construction, validation, the driver.

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
from scipy.linalg.blas import daxpy
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


def synthetic_stack(n: int, M: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``make_classification`` (20 features, 10 informative), RBF widths 10^-2..10^1.5."""
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=n, n_features=20, n_informative=10, random_state=seed)
    X = X / np.sqrt(X.shape[1])
    stack = np.empty((M, n, n))
    for m, gamma in enumerate(np.logspace(-2, 1.5, M)):
        stack[m] = rbf_kernel(X, gamma=float(gamma))
    return stack, np.where(y == 1, 1, -1)


#: name -> (builder, C)
INSTANCES = {"digits": (digits_stack, 1.0), "synthetic": (synthetic_stack, 3.0)}


def best_of(work, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def read_time(stack: np.ndarray) -> float:
    """One read of the stack by the fastest plain NumPy way (a max over it)."""
    return best_of(lambda: stack.max())


def time_fit(kernels, y, driver: str, p: float, tol: float, C: float, repeats: int = 2):
    """The best of ``repeats`` fits (the first also touches the stack's pages) and the result."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        res = mklopt.fit(kernels, y, driver, p=p, C=C, tol=tol)
        times.append(time.perf_counter() - start)
    return min(times), res


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
    flat = stack.reshape(-1, stack.shape[2])
    svc = SVC(kernel="precomputed", C=C, tol=max(1e-12, min(1e-3, 0.1 * tol)))
    total = 0.0
    for i in picks:
        weights = np.asarray(history[i]["weights"], dtype=float)
        total += combination_time(stack, weights, K)
        start = time.perf_counter()
        svc.fit(K, y)
        coef = np.zeros(len(y))
        coef[svc.support_] = svc.dual_coef_[0]
        np.dot(flat, coef, out=Kc.reshape(-1))  # one GEMV: the fastest form
        total += time.perf_counter() - start
    gemv = best_of(lambda: np.dot(flat, coef, out=Kc.reshape(-1)))
    return total / len(picks) * len(history) + gemv


def combination_time(stack: np.ndarray, weights: np.ndarray, K: np.ndarray) -> float:
    """K_mu into ``K`` by the faster of one GEMV over all kernels and one axpy per kernel in use."""
    flat, out = stack.reshape(stack.shape[0], -1), K.reshape(-1)
    used = np.flatnonzero(weights)

    def gemv():
        np.dot(weights, flat, out=out)

    def axpy():
        np.multiply(flat[used[0]], weights[used[0]], out=out)
        for m in used[1:]:
            daxpy(flat[m], out, a=weights[m])

    return min(best_of(gemv, 1), best_of(axpy, 1)) if used.size else best_of(gemv, 1)


def run(sizes, kernel_counts, tol: float = 1e-3, memory: bool = True,
        instances=tuple(INSTANCES)) -> list[dict]:
    rows = []
    header = (f"{'instance':>9} {'n':>5} {'M':>4} {'driver':>13} {'p':>4} {'iters':>5} {'floor s':>7} "
              f"{'KS s':>6} {'KS/floor':>8} {'raw s':>6} {'read s':>6} {'raw/(f+r)':>9} "
              f"{'master ms':>9} {'peak/stack':>10} {'rel_gap':>8}")
    print(header)
    print("-" * len(header))
    for name in instances:
        build, C = INSTANCES[name]
        for n in sizes:
            for M in kernel_counts:
                stack, y = build(n, M)
                read = read_time(stack)
                ks = mklopt.KernelSet(stack)  # validated once, outside the timings below
                for driver, p in CASES:
                    raw, _ = time_fit(stack, y, driver, p, tol, C)
                    wall, res = time_fit(ks, y, driver, p, tol, C)
                    floor = floor_time(stack, y, res.history, C, tol)
                    master = [h["master_time"] for h in res.history if "master_time" in h]
                    master_ms = 1e3 * float(np.median(master)) if master else float("nan")
                    peak = peak_memory(stack, y, driver, p, tol, C) if memory else float("nan")
                    row = dict(instance=name, n=n, M=M, driver=driver, p=p, C=C,
                               iterations=res.iterations, floor=floor, wall=wall,
                               ratio=wall / floor, raw=raw, read=read,
                               raw_ratio=raw / (floor + read), master_ms=master_ms, peak=peak,
                               rel_gap=res.rel_gap, status=res.status)
                    print(f"{name:>9} {n:5d} {M:4d} {driver:>13} {p:4.3g} {res.iterations:5d} "
                          f"{floor:7.3f} {wall:6.3f} {row['ratio']:8.2f} {raw:6.3f} {read:6.3f} "
                          f"{row['raw_ratio']:9.2f} {master_ms:9.3f} {peak:10.2f} {res.rel_gap:8.1e}",
                          flush=True)
                    rows.append(row)
                print(f"{'':>9} stack: {stack.nbytes / 1e6:.0f} MB, validated by {ks.validated_by}",
                      flush=True)
                del stack, ks
    return rows


def estimator_vs_svc(n: int = 1000, M: int = 10, repeats: int = 3) -> dict:
    """Default ``MKLClassifier`` (M RBF kernels) against one RBF ``SVC``, same data, same run."""
    from mklopt.estimators import forget_kernels

    X, digit = load_digits(return_X_y=True)
    X, y = X / 16.0, np.where(digit % 2 == 1, 1, -1)
    X_tr, y_tr, X_te, y_te = X[:n], y[:n], X[n:], y[n:]
    gammas = np.logspace(-3, 0, M) * 10.0 / X.shape[1]
    specs = [("rbf", {"gamma": float(g)}) for g in gammas]
    svc_time = best_of(lambda: SVC(kernel="rbf", gamma="scale").fit(X_tr, y_tr), repeats)
    svc = SVC(kernel="rbf", gamma="scale").fit(X_tr, y_tr)
    wall = best_of(lambda: forget_kernels() or mklopt.MKLClassifier(kernels=specs).fit(X_tr, y_tr),
                   repeats)  # the kernels built in each fit
    clf = mklopt.MKLClassifier(kernels=specs).fit(X_tr, y_tr)
    construction = best_of(lambda: mklopt.kernels.kernel_stack(X_tr, specs), repeats)
    built = best_of(lambda: mklopt.KernelSet.from_data(X_tr, specs, normalization="multiplicative"),
                    repeats)
    ks = mklopt.KernelSet.from_data(X_tr, specs, normalization="multiplicative")
    driver = best_of(lambda: mklopt.fit(ks, y_tr, clf.driver_, C=clf.C, p=clf.p, tol=1e-4), repeats)
    row = dict(n=n, M=M, driver=clf.driver_, mkl=wall, svc=svc_time, ratio=wall / svc_time,
               construction=construction, validation=built - construction, solve=driver,
               rel_gap=clf.result_.rel_gap,
               mkl_accuracy=clf.score(X_te, y_te) if len(y_te) else float("nan"),
               svc_accuracy=svc.score(X_te, y_te) if len(y_te) else float("nan"))
    print(f"\nMKLClassifier() [{row['driver']}] with {M} RBF kernels on {n} digits: "
          f"{wall:.3f} s, one RBF SVC: {row['svc']:.4f} s, ratio {row['ratio']:.1f}x (target 10x); "
          f"parts: kernels {construction:.3f} s, validation + normalization "
          f"{row['validation']:.3f} s ({ks.validated_by}), driver {driver:.3f} s; "
          f"rel_gap {row['rel_gap']:.1e}; test accuracy {row['mkl_accuracy']:.3f} "
          f"(SVC {row['svc_accuracy']:.3f})", flush=True)
    return row


def plot_ratios(rows: list[dict], out) -> None:
    """Bar chart of wall time / floor per configuration, saved as ``bench_perf.png``."""
    from pathlib import Path

    from mklopt.plotting import save_ratio_bars

    labels = [f"{r['instance']} n={r['n']} M={r['M']}\n{r['driver']} p={r['p']:.3g}" for r in rows]
    save_ratio_bars(labels, [r["ratio"] for r in rows], Path(out) / "bench_perf.png",
                    ylabel="fit on a KernelSet / floor", target=1.2)


def main(small: bool = False, out=None, argv=None) -> list[dict]:
    """Command-line entry; ``small=True`` runs n = 200, M in {5, 10}."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=None,
                        help="training sizes (default 500 1000 2000)")
    parser.add_argument("--M", type=int, nargs="+", default=None,
                        help="numbers of kernels (default 10 50)")
    parser.add_argument("--small", action="store_true", help="n = 200, M in {5, 10} (the estimator row at n = 200)")
    parser.add_argument("--instances", nargs="+", choices=sorted(INSTANCES), default=sorted(INSTANCES),
                        help="problems to run (default: both)")
    parser.add_argument("--tol", type=float, default=1e-3, help="target relative gap")
    parser.add_argument("--no-memory", action="store_true", help="skip the tracemalloc run")
    parser.add_argument("--out", default=None, help="folder for bench_perf.png")
    parser.add_argument("--estimator-n", type=int, default=None,
                        help="training points of the MKLClassifier-vs-SVC comparison (default 1000)")
    args = parser.parse_args(argv if argv is not None else ([] if small else None))
    small = small or args.small
    sizes = args.n or ([200] if small else [1000])
    counts = args.M or ([5, 10] if small else [50])
    rows = run(sizes, counts, args.tol, memory=not args.no_memory, instances=args.instances)
    estimator_vs_svc(args.estimator_n or (200 if small else 1000))
    if out is not None or args.out is not None:
        plot_ratios(rows, out if out is not None else args.out)
    return rows


if __name__ == "__main__":
    main()
