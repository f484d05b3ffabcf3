"""MKL beyond binary classification: regression on diabetes, shared-weight multiclass on digits.

**Regression.** scikit-learn's diabetes data (442 patients, 10 features,
a disease-progression target) with five kernels (linear, quadratic, three RBF
widths), multiplicatively normalized. ``MKLRegressor`` learns ℓ4/3-MKL
support vector regression (ε-insensitive loss) and ℓ2-MKL kernel ridge
regression (squared loss); each result carries its certified duality gap.
The baseline is an RBF ``SVR`` whose width, C and ε are tuned by 5-fold
cross-validation on the training set (the MKL models' C and ε likewise;
their kernel weights are learned); all models are scored by R² on the same
held-out test set. The times include the cross-validation.

**Multiclass.** scikit-learn's 8×8 digits (10 classes) with four kernels:
one-vs-rest MKL (a weight vector per class, 10 problems) against one
problem with the ``"ovr_hinge"`` loss (one weight vector shared by all
classes). The figure shows the learned kernel weights of both.

Run ``python examples/plot_losses.py --out figures`` (about a minute);
``--small`` uses fewer points, a smaller grid and 3-fold cross-validation.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_diabetes, load_digits
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVR

from mklopt import MKLClassifier, MKLRegressor

RBF_WIDTHS = (0.01, 0.1, 1.0)


def regression(small: bool) -> list[dict]:
    X, y = load_diabetes(return_X_y=True)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, train_size=150 if small else 300,
                                              random_state=0)
    kernels = ["linear", ("poly", {"degree": 2, "coef0": 1.0})] + [("rbf", {"gamma": g}) for g in RBF_WIDTHS]
    rows = []
    models = {  # C (and epsilon) chosen by 5-fold CV on the training set, as for the baseline
        "MKL SVR, p = 4/3": (MKLRegressor(kernels=kernels, p=4 / 3),
                             {"mklregressor__C": [1.0, 10.0, 100.0], "mklregressor__epsilon": [1.0, 10.0]}),
        "MKL ridge, p = 2": (MKLRegressor(kernels=kernels, loss="squared_error", p=2.0,
                                          driver="wrapper", tol=1e-6),
                             {"mklregressor__C": [0.03, 0.1, 0.3, 1.0]}),
    }
    for name, (model, model_grid) in models.items():
        start = time.perf_counter()
        if small:
            model_grid = {k: v[1:3] if k.endswith("__C") else v[-1:] for k, v in model_grid.items()}
        search = GridSearchCV(make_pipeline(StandardScaler(), model), model_grid,
                              cv=3 if small else 5).fit(X_tr, y_tr)
        fitted = search.best_estimator_[-1]
        rows.append({"model": f"{name}, {_short(search.best_params_)}", "R2": search.score(X_te, y_te),
                     "time": time.perf_counter() - start, "rel_gap": fitted.result_.rel_gap,
                     "weights": fitted.weights_, "names": fitted.kernel_names_})
    grid = {"svr__gamma": [0.003, 0.01, 0.03, 0.1], "svr__C": [10.0, 100.0, 1000.0],
            "svr__epsilon": [1.0, 10.0]}
    if small:
        grid = {"svr__gamma": [0.01, 0.1], "svr__C": [100.0], "svr__epsilon": [10.0]}
    start = time.perf_counter()
    search = GridSearchCV(make_pipeline(StandardScaler(), SVR(kernel="rbf")), grid,
                          cv=3 if small else 5).fit(X_tr, y_tr)
    rows.append({"model": f"RBF SVR, {_short(search.best_params_)}", "R2": search.score(X_te, y_te),
                 "time": time.perf_counter() - start, "rel_gap": np.nan, "weights": None, "names": None})
    return rows


def _short(params: dict) -> str:
    return ", ".join(f"{k.split('__')[-1]}={v:g}" for k, v in params.items())


def multiclass(small: bool):
    X, y = load_digits(return_X_y=True)
    X_tr, X_te, y_tr, y_te = train_test_split(X / 16.0, y, train_size=300 if small else 600,
                                              test_size=500, random_state=0)
    kernels = [("rbf", {"gamma": g}) for g in (0.005, 0.02, 0.08)] + ["linear"]
    out = {}
    for mode in ("ovr", "shared"):
        start = time.perf_counter()
        clf = MKLClassifier(kernels=kernels, multiclass=mode, p=2.0, C=10.0).fit(X_tr, y_tr)
        results = clf.result_ if isinstance(clf.result_, list) else [clf.result_]
        out[mode] = {"accuracy": clf.score(X_te, y_te), "time": time.perf_counter() - start,
                     "rel_gap": max(r.rel_gap for r in results), "weights": np.atleast_2d(clf.weights_),
                     "names": clf.kernel_names_}
    return out


def plot(rows: list[dict], classes: dict, out: Path) -> Path:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    mkl = [r for r in rows if r["weights"] is not None]
    width = 0.8 / len(mkl)
    for k, row in enumerate(mkl):
        left.bar(np.arange(len(row["names"])) + k * width, row["weights"], width,
                 label=f"{row['model']} (R² {row['R2']:.2f})")
    left.set_xticks(np.arange(len(mkl[0]["names"])) + 0.4 - width / 2, mkl[0]["names"], rotation=30, ha="right")
    left.set_title("diabetes: kernel weights")
    left.legend(fontsize=8)
    ovr, shared = classes["ovr"], classes["shared"]
    names = shared["names"]
    right.boxplot(ovr["weights"], positions=np.arange(len(names)), widths=0.5)
    right.plot(np.arange(len(names)), shared["weights"][0], "o", color="C3", label="shared (ovr_hinge)")
    right.set_xticks(np.arange(len(names)), names, rotation=30, ha="right")
    right.set_title(f"digits: one-vs-rest weights (box, 10 classes) vs shared\n"
                    f"accuracy ovr {ovr['accuracy']:.3f}, shared {shared['accuracy']:.3f}")
    right.legend(fontsize=8)
    fig.tight_layout()
    out.mkdir(parents=True, exist_ok=True)
    path = out / "losses.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main(small: bool = False, out: str | Path = "figures") -> dict:
    """Run both experiments, print their tables and save ``losses.png`` in ``out``."""
    rows = regression(small)
    print("diabetes regression (R² on held-out data; times include 5-fold CV)")
    for row in rows:
        gap = "" if np.isnan(row["rel_gap"]) else f"  certified rel_gap {row['rel_gap']:.1e}"
        print(f"  {row['model']:<48s} R² {row['R2']:.3f}  {row['time']:6.2f} s{gap}")
        if row["weights"] is not None:
            print("    weights " + ", ".join(f"{n} {w:.3f}" for n, w in zip(row["names"], row["weights"])))
    classes = multiclass(small)
    print("digits, 10 classes (accuracy on 500 held-out digits)")
    for mode, res in classes.items():
        print(f"  {mode:<7s} accuracy {res['accuracy']:.3f}  {res['time']:6.2f} s  "
              f"max certified rel_gap {res['rel_gap']:.1e}")
    print(f"figure: {plot(rows, classes, Path(out))}")
    return {"regression": rows, "multiclass": classes}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="fewer points, smaller grids (tests)")
    parser.add_argument("--out", default="figures", help="folder of the figure")
    args = parser.parse_args()
    main(small=args.small, out=args.out)
