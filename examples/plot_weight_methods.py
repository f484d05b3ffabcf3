"""Every weight method on the same data: accuracy, kernels selected, time - and where two-stage fails.

Two-stage methods choose the kernel weights first (``mklopt.learn_weights``) and
then train the SVM at those weights; MKL proper (the ℓ1 cutting plane, the ℓ2
wrapper) chooses both together. Every SVM below, whichever method gave its
weights, is mklopt's certified SVM (``fit(..., "wrapper", regularizer=Fixed(mu))``,
certified rel_gap ≤ 1e-4), so the methods differ only in their weights.

Two data sets:

* **digits odd/even** - scikit-learn's 8x8 digits (pixels / 16), 1000 training
  points, the other 797 for test, 50 RBF kernels with γ log-spaced over
  1e-4 … 10, C = 1. The widest γ give near-identity kernels: on the training set
  they align almost perfectly with yyᵀ (their off-diagonal is ~0, their
  diagonal matches yyᵀ's), so ``alignf`` (and any method that rewards training
  alignment) puts its weight there and the SVM memorizes: test accuracy near
  chance. The certified ℓ1 MKL measures the margin instead and picks the
  useful widths.
* **ionosphere** - 351 x 34 (the constant attribute dropped, z-scored on the
  training part), a 70/30 stratified split, 20 RBF kernels (γ log-spaced over
  1e-3 … 10) and the linear kernel, spherically normalized (unit diagonal), C = 1.

``--small`` (what ``mklopt docs --quick`` and CI run; ``mklopt docs`` runs the full size): 300 digits training points and 20 kernels;
120 ionosphere training points and 9 kernels. GRAM and MEMO take the longest:
each of their outer steps solves simplex QPs (warm-started, compiled).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import train_test_split

import mklopt
from mklopt import datasets
from mklopt.regularizers import Fixed

TWO_STAGE = ("uniform", "align", "alignf", "easymkl", "rmkl", "gram", "memo", "pwmk", "fheuristic")
MKL = {"l1 MKL (cutting plane)": dict(driver="cutting_plane", p=1.0),
       "l2 MKL (wrapper)": dict(driver="wrapper", p=2.0)}
C = 1.0


def digits_case(small: bool):
    """Digits odd/even: (train stack, test stack, y_train, y_test)."""
    X, digit = load_digits(return_X_y=True)
    X, y = X / 16.0, np.where(digit % 2 == 1, 1.0, -1.0)
    n_train, count = (300, 20) if small else (1000, 50)
    idx = np.random.default_rng(0).permutation(len(y))
    tr, te = idx[:n_train], idx[n_train:]
    gammas = np.logspace(-4, 1, count)
    train = np.stack([rbf_kernel(X[tr], gamma=g) for g in gammas])
    test = np.stack([rbf_kernel(X[te], X[tr], gamma=g) for g in gammas])
    return mklopt.KernelSet(train), test, y[tr], y[te]


def ionosphere_case(small: bool):
    """Ionosphere, 70/30: RBF kernels and the linear kernel, unit diagonal."""
    X, y = datasets.load("ionosphere", return_X_y=True)
    tr, te = train_test_split(np.arange(len(y)), train_size=120 if small else 0.7, stratify=y,
                              random_state=0)
    mean, sd = X[tr].mean(0), X[tr].std(0)
    Z = (X[:, sd > 0] - mean[sd > 0]) / sd[sd > 0]
    gammas = np.logspace(-3, 1, 8 if small else 20)

    def stack(A, B):
        return np.stack([rbf_kernel(A, B, gamma=g) for g in gammas] + [A @ B.T])

    ks = mklopt.KernelSet(stack(Z[tr], Z[tr])).normalized("spherical")
    test_diag = np.stack([np.ones(len(te))] * len(gammas) + [np.einsum("ij,ij->i", Z[te], Z[te])])
    return ks, ks.transform_test(stack(Z[te], Z[tr]), test_diag=test_diag), y[tr], y[te]


def evaluate(ks: mklopt.KernelSet, test: np.ndarray, y: np.ndarray, y_test: np.ndarray,
             methods: tuple = TWO_STAGE + tuple(MKL)) -> dict:
    """Per method: test accuracy, kernels selected, seconds (weights + SVM), the SVM's certified gap."""
    rows = {}
    for method in methods:
        start = time.perf_counter()
        if method in MKL:
            res = mklopt.fit(ks, y, MKL[method]["driver"], p=MKL[method]["p"], C=C, tol=1e-4, max_iter=500)
        else:
            options = {"C": C} if method in ("rmkl", "pwmk") else {}
            mu = (np.full(ks.M, 1.0 / ks.M) if method == "uniform"
                  else mklopt.learn_weights(ks, y, method, **options))
            res = mklopt.fit(ks, y, "wrapper", regularizer=Fixed(mu), C=C, tol=1e-4)
        seconds = time.perf_counter() - start
        w = np.asarray(res.weights, dtype=float)
        accuracy = float(np.mean(np.where(res.decision_function(test) >= 0, 1.0, -1.0) == y_test))
        rows[method] = {"accuracy": accuracy, "kernels": int(np.sum(w > 1e-6 * w.max())),
                        "time": seconds, "rel_gap": float(res.rel_gap), "status": res.status}
    return rows


def figure(results: dict, folder: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(len(results), 3, figsize=(13, 3.4 * len(results)), squeeze=False)
    for row, (name, rows) in enumerate(results.items()):
        methods = list(rows)
        colors = ["#d65f5f" if m in MKL else "#4878cf" for m in methods]
        for col, (stat, label) in enumerate((("accuracy", "test accuracy"), ("kernels", "kernels selected"),
                                             ("time", "seconds (weights + SVM)"))):
            ax = axes[row, col]
            ax.barh(np.arange(len(methods)), [rows[m][stat] for m in methods], color=colors)
            ax.set_yticks(np.arange(len(methods)), methods if col == 0 else [""] * len(methods), fontsize=8)
            ax.invert_yaxis()
            ax.set_title(f"{name}: {label}", fontsize=9)
            if stat == "time":
                ax.set_xscale("log")
    fig.tight_layout()
    path = folder / "weight_methods.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main(small: bool = False, out: str | Path = ".") -> dict:
    """Run both cases, print the table, save ``weight_methods.png`` under ``out``."""
    cases = {"digits odd/even": digits_case(small), "ionosphere": ionosphere_case(small)}
    results = {}
    for name, (ks, test, y, y_test) in cases.items():
        results[name] = evaluate(ks, test, y, y_test)
        print(f"--- {name}: n = {ks.n}, M = {ks.M}, C = {C:g}; test points {len(y_test)}")
        print(f"{'method':26}{'accuracy':>9}{'kernels':>9}{'time s':>9}{'SVM gap':>10}  status")
        for method, r in results[name].items():
            print(f"{method:26}{r['accuracy']:9.3f}{r['kernels']:9d}{r['time']:9.2f}{r['rel_gap']:10.1e}  "
                  f"{r['status']}")
    path = figure(results, Path(out))
    print(f"wrote {path}")
    return {"results": results, "figure": path}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="300 digits training points, 20 kernels")
    parser.add_argument("--out", default=".", help="folder for the PNG")
    args = parser.parse_args()
    main(small=args.small, out=args.out)
