"""Large problems on the interleaved core against an RBF SVC: 26 classes at n = 20,000, two at n = 50,000.

1. **Multiclass**: UCI Letter Recognition with its 26 classes
   (``mklopt.datasets.load_letter_classes``; the first n points, standardized), 50 RBF
   kernels with :math:`2\\sigma^2\\in1.2^0,\\dots,1.2^{49}` computed on the fly (the dense
   stack at n = 20,000 would be 160 GB), ℓp-MKL with p = 4/3, C = 1, certified relative
   gap 1e-3 per class: ``MKLClassifier(driver="chunking")``, one weight vector per class,
   the classes side by side on the core's threads. The reference is scikit-learn's
   ``SVC(kernel="rbf")`` at the middle width on the same data (one-vs-one, its own
   multiclass scheme), with the same 256 MB kernel cache. One run prints both times,
   their ratio (target ≤ 10× at n = 20,000), the largest certified gap, the test accuracy
   on the next 2,000 points (none at n = 20,000) and the peak resident memory.
2. **Binary, n = 50,000**: scikit-learn's ``make_classification`` (20 features, 10
   informative, 4 redundant, ``flip_y=0.03``, ``class_sep=1``, seed 0, standardized), the
   same 50 kernels on the fly, p = 4/3, C = 1, gap 1e-3: ``mklopt.fit`` with the
   ``"chunking"`` driver against one ``SVC(kernel="rbf")`` at the middle width (target ≤ 8×).

Each part runs in its own process (its own peak memory), after an untimed fit on 300 points
with the same kernels on the fly: the core's compiled code is loaded (on a fresh machine,
compiled: the warm-up column) before the clock starts. Run: ``python
examples/bench_large.py`` (``--n`` and ``--binary-n`` to change the sizes, ``--parts``
to pick; ``--small``: 400 points and 5 kernels, seconds, in this process).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import mklopt
from mklopt.datasets import load_letter_classes
from mklopt.plotting import save_figure

C, P, TOL, CACHE_MB, TEST = 1.0, 4 / 3, 1e-3, 256.0, 2000


def letters(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The first n points for training and the next :data:`TEST` for testing, standardized on
    the training part."""
    X, y = load_letter_classes()
    train, test = slice(0, n), slice(n, min(n + TEST, len(y)))
    mean, std = X[train].mean(axis=0), X[train].std(axis=0)
    return (X[train] - mean) / std, y[train], (X[test] - mean) / std, y[test]


def peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def widths(M: int) -> list[float]:
    return [1.2 ** -k for k in range(M)]


def synthetic(n: int) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=n, n_features=20, n_informative=10, n_redundant=4,
                               flip_y=0.03, class_sep=1.0, random_state=0)
    return (X - X.mean(axis=0)) / X.std(axis=0), np.where(y == 1, 1.0, -1.0)


def warm_up(M: int) -> float:
    """Load (or, on a fresh machine, compile) the core's numba code outside the timings, for
    kernels on the fly and for a dense stack (each compiles code of its own); its seconds."""
    X, y, _, _ = letters(300)
    specs = [("rbf", {"gamma": g}) for g in widths(M)]
    start = time.perf_counter()
    for lazy in (True, False):
        kernels = mklopt.KernelSet.from_data(X, specs, lazy=lazy)
        mklopt.fit(kernels, np.where(y == y[0], 1.0, -1.0), "chunking", C=C, p=P, tol=TOL)
    return time.perf_counter() - start


def run_binary(n: int, M: int) -> dict:
    """Part 2: one certified binary fit on the fly against one RBF SVC."""
    from sklearn.svm import SVC

    warm = warm_up(M)
    X, y = synthetic(n)
    gammas = widths(M)
    start = time.perf_counter()
    SVC(kernel="rbf", gamma=gammas[M // 2], C=C, cache_size=CACHE_MB).fit(X, y)
    svc_seconds = time.perf_counter() - start
    svc_peak = peak_gb()
    kernels = mklopt.KernelSet.from_data(X, [("rbf", {"gamma": g}) for g in gammas], lazy=True)
    start = time.perf_counter()
    result = mklopt.fit(kernels, y, "chunking", C=C, p=P, tol=TOL, cache_mb=CACHE_MB)
    mkl_seconds = time.perf_counter() - start
    return {"part": "binary", "n": n, "M": M, "classes": 2, "svc": svc_seconds, "mkl": mkl_seconds,
            "ratio": mkl_seconds / svc_seconds, "max_gap": result.rel_gap, "statuses": [result.status],
            "svc_accuracy": float("nan"), "mkl_accuracy": float("nan"), "svc_peak_gb": svc_peak,
            "peak_gb": peak_gb(), "warm_up": warm}


def run_multiclass(n: int, M: int) -> dict:
    """Part 1: the 26 letters one-vs-rest against the SVC's one-vs-one."""
    from sklearn.svm import SVC

    warm = warm_up(M)
    X, y, Xt, yt = letters(n)
    gammas = widths(M)
    start = time.perf_counter()
    svc = SVC(kernel="rbf", gamma=gammas[M // 2], C=C, cache_size=CACHE_MB).fit(X, y)
    svc_seconds = time.perf_counter() - start
    svc_peak = peak_gb()
    model = mklopt.MKLClassifier(kernels=[("rbf", {"gamma": g}) for g in gammas], normalization=None,
                                 p=P, C=C, tol=TOL, driver="chunking")
    start = time.perf_counter()
    model.fit(X, y)
    mkl_seconds = time.perf_counter() - start
    results = model.result_ if isinstance(model.result_, list) else [model.result_]
    gaps = [result.rel_gap for result in results]
    statuses = {result.status for result in results}
    return {"part": "multiclass", "n": n, "M": M, "classes": len(model.classes_), "svc": svc_seconds,
            "mkl": mkl_seconds, "ratio": mkl_seconds / svc_seconds, "max_gap": max(gaps),
            "statuses": sorted(statuses),
            "svc_accuracy": float(np.mean(svc.predict(Xt) == yt)) if len(yt) else float("nan"),
            "mkl_accuracy": float(np.mean(model.predict(Xt) == yt)) if len(yt) else float("nan"),
            "svc_peak_gb": svc_peak, "peak_gb": peak_gb(), "warm_up": warm}


def in_process(part: str, n: int, M: int, fresh: bool) -> dict:
    """One part, in a fresh process when ``fresh`` (its own peak memory)."""
    if not fresh:
        return (run_multiclass if part == "multiclass" else run_binary)(n, M)
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--single", json.dumps([part, n, M])],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"part {part} failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(rows: list[dict]) -> None:
    print(f"{'part':<10} {'n':>6} {'M':>3} {'classes':>7} {'SVC s':>7} {'MKL s':>8} {'MKL/SVC':>8} "
          f"{'max gap':>8} {'acc SVC':>7} {'acc MKL':>7} {'GB SVC':>6} {'GB MKL':>6} {'warm-up':>7}  status")
    for row in rows:
        target = 10 if row["part"] == "multiclass" else 8
        print(f"{row['part']:<10} {row['n']:>6} {row['M']:>3} {row['classes']:>7} {row['svc']:7.2f} "
              f"{row['mkl']:8.2f} {row['ratio']:7.1f}x {row['max_gap']:8.1e} {row['svc_accuracy']:7.3f} "
              f"{row['mkl_accuracy']:7.3f} {row['svc_peak_gb']:6.2f} {row['peak_gb']:6.2f} {row['warm_up']:6.1f}s  "
              f"{', '.join(row['statuses'])} (target MKL/SVC <= {target})")


def plot(rows: list[dict], out) -> None:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 1.2 + 0.9 * len(rows)))
    labels, values = [], []
    for row in rows:
        labels += [f"SVC, {row['part']} n={row['n']:,}", f"MKL, {row['part']} n={row['n']:,}"]
        values += [row["svc"], row["mkl"]]
    ax.barh(labels[::-1], values[::-1])
    ax.set(xlabel="seconds", xscale="log", title=f"{rows[0]['M']} RBF kernels on the fly against one RBF SVC")
    fig.tight_layout()
    save_figure(fig, Path(out) / "bench_large.png", dpi=100)


def main(small: bool = False, out=None, argv=None) -> list[dict]:
    """Command-line entry; ``small=True`` runs both parts at 400 points with 5 kernels."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20_000, help="letter training points (default 20,000)")
    parser.add_argument("--binary-n", type=int, default=50_000, help="synthetic points (default 50,000)")
    parser.add_argument("--parts", default="multiclass,binary", help="which parts (default both)")
    parser.add_argument("--small", action="store_true", help="400 points, 5 kernels (seconds)")
    parser.add_argument("--out", default=None, help="folder for the figure (default: figures)")
    parser.add_argument("--single", help=argparse.SUPPRESS)
    args = parser.parse_args(argv if argv is not None else ([] if small else None))
    if args.single:
        part, n, M = json.loads(args.single)
        print(json.dumps((run_multiclass if part == "multiclass" else run_binary)(n, M)))
        return []
    small = small or args.small
    sizes = {"multiclass": 400 if small else min(args.n, 20_000), "binary": 400 if small else args.binary_n}
    M = 5 if small else 50
    parts = args.parts.split(",")
    unknown = [part for part in parts if part not in sizes]
    if unknown:
        parser.error(f"--parts takes multiclass and/or binary (comma-separated), not {','.join(unknown)}")
    rows = []
    for part in parts:
        rows.append(in_process(part, sizes[part], M, fresh=not small))
        report(rows[-1:])
    if len(rows) > 1:
        print("\nall parts:")
        report(rows)
    plot(rows, out or args.out or "figures")
    return rows


if __name__ == "__main__":
    main()
