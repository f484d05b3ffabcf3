"""ε-SVR in the interleaved core against scikit-learn's ``SVR(kernel="rbf")``.

The standard regression benchmark, scikit-learn's ``make_friedman1`` (10 features, 5 of
them informative, noise 1, seed 0), standardized features and targets; 50 RBF kernels
:math:`2\\sigma^2 \\in 1.2^0, \\dots, 1.2^{49}` computed on the fly (no n × n matrix),
p = 4/3, C = 1, ε = 0.1, certified relative gap 1e-3, 256 MB of column cache. The
reference is one ``SVR(kernel="rbf")`` at the middle width with the same C, ε and cache
(the target: the MKL fit ≤ 10× that SVR at n = 20,000).

Both run in this process, the SVR first; the memory column is the process's peak
resident set after each fit (so the MKL row includes the SVR's peak). The compiled code
is loaded before the timings. Ratios are printed from this one run.

Run: ``python examples/bench_svr.py`` (``mklopt bench svr``; ``--ns 2000,8000``);
``--small``: n = 300, 10 kernels. The figure goes to ``--out``.
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import make_friedman1
from sklearn.svm import SVR

import mklopt
from mklopt.plotting import save_figure
from mklopt.losses import as_loss

C, EPSILON, TOL, CACHE_MB = 1.0, 0.1, 1e-3, 256.0


def friedman(n: int) -> tuple[np.ndarray, np.ndarray]:
    X, y = make_friedman1(n, noise=1.0, random_state=0)
    return (X - X.mean(0)) / X.std(0), (y - y.mean()) / y.std()


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(n: int, M: int) -> dict:
    """One SVR and one ε-SVR MKL fit on n points; seconds, gap, peak memory."""
    X, y = friedman(n)
    gammas = [1.2 ** -k for k in range(M)]
    start = time.perf_counter()
    SVR(kernel="rbf", gamma=gammas[M // 2], C=C, epsilon=EPSILON, cache_size=CACHE_MB).fit(X, y)
    svr = time.perf_counter() - start
    svr_mb = peak_mb()
    kernels = mklopt.KernelSet.from_data(X, [("rbf", {"gamma": g}) for g in gammas], lazy=True)
    start = time.perf_counter()
    result = mklopt.fit(kernels, y, "chunking", loss=as_loss("epsilon_insensitive", epsilon=EPSILON),
                        p=4 / 3, C=C, tol=TOL, cache_mb=CACHE_MB)
    seconds = time.perf_counter() - start
    return {"n": n, "M": M, "svr": svr, "svr_mb": svr_mb, "seconds": seconds, "mb": peak_mb(),
            "status": result.status, "rel_gap": result.rel_gap, "iterations": result.iterations}


def plot(rows: list[dict], out) -> Path:
    """Fit time against n for both, saved as ``bench_svr.png``."""
    import matplotlib.pyplot as plt

    ns = [r["n"] for r in rows]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(ns, [r["seconds"] for r in rows], marker="o", label="ε-SVR MKL, 50 kernels (chunking)")
    ax.plot(ns, [r["svr"] for r in rows], marker="s", label="SVR(kernel='rbf'), one kernel")
    ax.set(xscale="log", yscale="log", xlabel="training points n", ylabel="fit time (s)",
           title="make_friedman1, certified gap 1e-3")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return save_figure(fig, Path(out) / "bench_svr.png", dpi=100)


def main(small: bool = False, out=None, argv=None) -> list[dict]:
    """Command-line entry; ``small=True`` runs n = 300 with 10 kernels, ``out`` is the figure's folder."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", action="store_true", help="n = 300, 10 kernels (seconds)")
    parser.add_argument("--ns", default="2000,8000,20000", help="training sizes")
    parser.add_argument("--out", default=None, help="folder for the figure (default: figures)")
    args = parser.parse_args(argv if argv is not None else ([] if small else None))
    small = small or args.small
    ns, M = ([300], 10) if small else ([int(v) for v in args.ns.split(",") if v], 50)
    X, y = friedman(100)
    mklopt.fit(mklopt.KernelSet.from_data(X, ["rbf"], lazy=True), y, "chunking",
               loss="epsilon_insensitive", tol=1e-2)  # compiled code loaded
    print(f"{'n':>6} {'M':>4} {'SVR':>8} {'MKL':>9} {'MKL/SVR':>8} {'peak after SVR':>15} "
          f"{'after MKL':>10}  certified gap")
    rows = []
    for n in ns:
        r = measure(n, M)
        rows.append(r)
        print(f"{n:6d} {M:4d} {r['svr']:7.2f}s {r['seconds']:8.1f}s {r['seconds'] / r['svr']:7.1f}x "
              f"{r['svr_mb']:12.0f} MB {r['mb']:7.0f} MB  {r['rel_gap']:.1e} {r['status']} "
              f"({r['iterations']} iterations)", flush=True)
    plot(rows, out or args.out or "figures")
    return rows


if __name__ == "__main__":
    main()
