"""Lanckriet's SDP at scale: the SDP statement on an interior point against mklopt's own method.

The problem of Lanckriet, Cristianini, Bartlett, El Ghaoui & Jordan ("Learning the
Kernel Matrix with Semidefinite Programming", JMLR 5, 2004, Theorem 16): the SVM
with the best combination :math:`K_\\mu=\\sum_m\\mu_mK_m` of weights of any sign,
:math:`K_\\mu\\succeq0`, :math:`\\operatorname{Tr}K_\\mu=c`. Two exact methods, each
certified by mklopt's own duality gap:

* ``SDP statement``: the paper's SDP in CVXPY on Clarabel (``backend="CLARABEL"``);
  an interior point forms an :math:`(n(n+1)/2)^2` scaling block, so its time grows
  like :math:`n^6` (the default only up to 60 points);
* ``mklopt``: a cutting plane whose master over the spectrahedron (and the
  certificate's support function) is a primal-dual interior point on the kernels'
  joint range, with libsvm as the oracle (``backend="mklopt"``, the default above
  60 points).

Instances: the audit's (4 features, labels
:math:`\\operatorname{sign}(x_0+x_1^2-1+0.4\\,\\text{noise})`, linear, RBF
:math:`\\gamma=0.01` and quadratic kernels, trace n; seeds 0-2 at n = 30, seed 0 at
n = 120 and 300) and breast cancer (standardized, 5 kernels: linear, RBF 0.01,
0.1, 1, quadratic; full joint rank) at n = 60, 120 and 300; C = 1, tol 1e-8 (gap
1e-6). Targets: n = 120 in at most 10 s and n = 300 in at most 60 s. ``/SVC`` is
the time against one ``SVC(kernel="precomputed")`` on the uniform combination.

Run: ``python examples/bench_lanckriet_sdp.py`` (``--small``: the audit's seed 0 at n = 30, both methods).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.svm import SVC

import mklopt
from mklopt.plotting import save_figure

AUDIT_SPECS = [("linear", {}), ("rbf", {"gamma": 0.01}), ("poly", {"degree": 2, "coef0": 1})]
CANCER_SPECS = [("linear", {}), ("rbf", {"gamma": 0.01}), ("rbf", {"gamma": 0.1}), ("rbf", {"gamma": 1.0}),
                ("poly", {"degree": 2, "coef0": 1})]
#: Largest n at which the SDP statement is timed too (n = 60 takes about half a minute).
STATEMENT_MAX_N = 60


def audit(seed: int, n: int = 30):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4))
    y = np.sign(X[:, 0] + X[:, 1] ** 2 - 1 + 0.4 * rng.standard_normal(n))
    return mklopt.KernelSet.from_data(X, AUDIT_SPECS), y


def cancer(n: int, seed: int = 0):
    X, y = load_breast_cancer(return_X_y=True)
    idx = np.random.default_rng(seed).choice(len(y), n, replace=False)
    X = (X[idx] - X[idx].mean(0)) / X[idx].std(0)
    return mklopt.KernelSet.from_data(X, CANCER_SPECS), y[idx]


def svc_seconds(ks, y) -> float:
    uniform = mklopt.Spectrahedron(ks.K).centre(ks.M)
    start = time.perf_counter()
    SVC(C=1.0, kernel="precomputed").fit(np.tensordot(uniform, ks.K, axes=1), y)
    return time.perf_counter() - start


def run(name: str, ks, y, backend: str) -> dict:
    start = time.perf_counter()
    result = mklopt.solve(ks, y, "lanckriet_sdp", C=1.0, trace=float(ks.n), backend=backend)
    seconds = time.perf_counter() - start
    return {"instance": name, "n": ks.n, "method": "mklopt" if backend == "mklopt" else "SDP statement",
            "seconds": seconds, "status": result.status, "rel_gap": result.rel_gap, "primal": result.primal,
            "dual": result.dual}


def table(instances, statement_max_n: int) -> list[dict]:
    print(f"{'instance':<16} {'n':>4}  {'method':<14} {'seconds':>8} {'/SVC':>8}  {'status':<11} "
          f"{'rel_gap':>8}  certified interval")
    rows = []
    for name, (ks, y) in instances:
        svc = svc_seconds(ks, y)
        for backend in (["CLARABEL"] if ks.n <= statement_max_n else []) + ["mklopt"]:
            row = run(name, ks, y, backend)
            rows.append(row)
            print(f"{name:<16} {row['n']:>4}  {row['method']:<14} {row['seconds']:8.2f} "
                  f"{row['seconds'] / svc:7.0f}x  {row['status']:<11} {row['rel_gap']:8.1e}  "
                  f"[{row['dual']:.6f}, {row['primal']:.6f}]", flush=True)
    return rows


def plot(rows: list[dict], out) -> None:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for method, marker in (("SDP statement", "s"), ("mklopt", "o")):
        points = sorted((r["n"], r["seconds"]) for r in rows if r["method"] == method)
        if points:
            ax.loglog(*zip(*points), marker=marker, label=method)
    ax.set(xlabel="n", ylabel="seconds to a certified gap of 1e-6", title="Lanckriet's SDP")
    ax.legend()
    fig.tight_layout()
    save_figure(fig, Path(out) / "bench_lanckriet_sdp.png", dpi=100)


def main(small: bool = False, out=None, argv=None) -> list[dict]:
    """Command-line entry; ``small=True`` runs the audit's seed 0 at n = 30 (both methods)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", action="store_true", help="the audit's seed 0 at n = 30 only (seconds)")
    parser.add_argument("--out", default=None, help="folder for the figure")
    args = parser.parse_args(argv if argv is not None else ([] if small else None))
    small = small or args.small
    instances = [(f"audit seed {seed}", audit(seed)) for seed in ((0,) if small else (0, 1, 2))]
    instances += [] if small else [("audit seed 0", audit(0, n)) for n in (120, 300)]
    instances += [] if small else [("breast cancer", cancer(n)) for n in (60, 120, 300)]
    rows = table(instances, STATEMENT_MAX_N)
    plot(rows, out or args.out or "figures")
    return rows


if __name__ == "__main__":
    main()
