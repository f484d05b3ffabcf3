"""SimpleMKL vs wrapper vs cutting plane, and the two-stage alignment weights, on digits.

Digits 8 vs 9 (scikit-learn), eight trace-normalized kernels (five RBF widths,
linear, polynomial of degree 2 and 3). First figure: the certified relative
duality gap of ℓ1-MKL (p = 1) for SimpleMKL (reduced gradient,
Rakotomamonjy et al. 2008), the analytic wrapper and the cutting plane
against iterations, seconds and SVM solves (a SimpleMKL iteration runs a
line search of several SVMs). Second figure: the weights of ℓ1-MKL next to
the two-stage weights ``align`` and ``alignf`` (Cortes, Mohri, Rostamizadeh
2012; both normalized to sum 1, as ℓ1-MKL's) and the uniform combination,
with the test accuracy of the SVM at each and its ℓ1-MKL objective.

Run ``python examples/plot_simplemkl.py --out figures``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits
from sklearn.preprocessing import StandardScaler

import mklopt
from mklopt.plotting import plot_convergence, plot_weights, save_figure

SPECS = [("rbf", {"gamma": g}) for g in (1e-3, 3e-3, 1e-2, 3e-2, 1e-1)] + [
    "linear", ("poly", {"degree": 2, "gamma": 1 / 64}), ("poly", {"degree": 3, "gamma": 1 / 64})]
LOOPS = {"simplemkl": "simplemkl", "wrapper": "wrapper", "cutting plane": "cutting_plane"}


def data(n_train: int, n_test: int, seed: int = 0):
    """Train kernels (trace n), normalized test kernels and +-1 labels for digits 8 vs 9."""
    X, y = load_digits(return_X_y=True)
    keep = np.isin(y, (8, 9))
    X, y = X[keep], np.where(y[keep] == 8, 1, -1)
    idx = np.random.default_rng(seed).permutation(len(y))[: n_train + n_test]
    scaler = StandardScaler().fit(X[idx[:n_train]])
    Xtr, Xte = scaler.transform(X[idx[:n_train]]), scaler.transform(X[idx[n_train:]])
    ks = mklopt.KernelSet.from_data(Xtr, SPECS).normalized("trace", target=n_train)
    test = ks.transform_test(mklopt.kernel_stack(Xte, SPECS, Xtr))
    return ks, y[idx[:n_train]], test, y[idx[n_train:]]


def run(n_train: int, n_test: int, C: float, tol: float, max_iter: int) -> dict:
    """The three ℓ1 loops, then the SVM at the align, alignf and uniform weights."""
    ks, y, test, y_test = data(n_train, n_test)
    loops = {name: mklopt.fit(ks, y, driver, C=C, tol=tol, max_iter=max_iter)
             for name, driver in LOOPS.items()}
    weights = {"align": mklopt.learn_weights(ks, y, "align"),
               "alignf": mklopt.learn_weights(ks, y, "alignf", norm=1),
               "uniform": np.full(ks.M, 1.0 / ks.M)}
    fixed = {name: mklopt.fit(ks, y, "wrapper", C=C, tol=tol, regularizer=mklopt.Fixed(mu))
             for name, mu in weights.items()}
    compared = {"l1-MKL (simplemkl)": loops["simplemkl"], **fixed}
    accuracy = {name: float(np.mean(np.where(r.decision_function(test) > 0, 1, -1) == y_test))
                for name, r in compared.items()}
    # the l1-MKL objective at each weight vector (all on the simplex): how far from its optimum
    objective = {name: r.primal for name, r in compared.items()}
    return {"loops": loops, "compared": compared, "accuracy": accuracy, "objective": objective,
            "tol": tol, "kernels": ks}


def figures(res: dict, folder: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    plot_convergence(res["loops"], ax=axes[:2], tol=res["tol"])
    for name, r in res["loops"].items():
        solves = [rec.get("svm_solves", rec["iteration"]) for rec in r.history]
        axes[2].plot(solves, [rec["rel_gap"] for rec in r.history], label=name)
    axes[2].set(xscale="log", yscale="log", xlabel="SVM solves", ylabel="certified relative gap")
    axes[2].axhline(res["tol"], color="gray", linestyle="--", linewidth=1)
    axes[2].grid(True, which="both", alpha=0.3)
    axes[0].set_title("l1-MKL on digits 8 vs 9: certified gap")
    fig.tight_layout()
    paths = [save_figure(fig, folder / "simplemkl_convergence.png")]
    fig, (ax_w, ax_a) = plt.subplots(1, 2, figsize=(14, 4.5), gridspec_kw={"width_ratios": [3, 1]})
    plot_weights(res["compared"], ax=ax_w)
    ax_w.set_title("kernel weights: l1-MKL vs two-stage alignment (all sum to 1)")
    names = list(res["accuracy"])
    ax_a.bar(range(len(names)), [res["accuracy"][n] for n in names], color=[f"C{k}" for k in range(len(names))])
    ax_a.set_xticks(range(len(names)), [f"{n}\nobj {res['objective'][n]:.4g}" for n in names],
                    rotation=30, ha="right", fontsize="small")
    ax_a.set_ylim(min(res["accuracy"].values()) - 0.05, 1.0)
    ax_a.set_ylabel("test accuracy")
    fig.tight_layout()
    paths.append(save_figure(fig, folder / "simplemkl_alignment_weights.png"))
    return paths


def main(small: bool = False, out: str | Path = ".") -> dict:
    """Run, print one line per method and save the PNGs in ``out``."""
    start = time.perf_counter()
    res = run(n_train=100 if small else 150, n_test=150 if small else 200, C=1.0,
              tol=1e-4 if small else 1e-6, max_iter=300 if small else 5000)
    for name, r in res["loops"].items():
        solves = r.history[-1].get("svm_solves", r.iterations)
        print(f"{name:14} status={r.status:10} iterations={r.iterations:5d} svm_solves={solves:5d} "
              f"rel_gap={r.rel_gap:.1e} time={r.solve_time:6.2f}s primal={r.primal:.8g}")
    for name, acc in res["accuracy"].items():
        print(f"{name:20} test accuracy={acc:.3f} l1-MKL objective={res['objective'][name]:.6g}")
    paths = figures(res, Path(out))
    print("wrote " + ", ".join(str(p) for p in paths) + f" ({time.perf_counter() - start:.1f}s)")
    return {**res, "figures": paths}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=".", help="folder for the PNGs (default: current folder)")
    parser.add_argument("--small", action="store_true", help="fewer points, looser tolerance (tests)")
    args = parser.parse_args()
    main(small=args.small, out=args.out)
