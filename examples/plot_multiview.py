"""Several data sources: one kernel per view of UCI Multiple Features, against single views.

UCI Multiple Features (2,000 handwritten digits, 200 per class) describes each digit in six
views: Fourier coefficients (fou, 76), profile correlations (fac, 216), Karhunen-Loève
coefficients (kar, 64), morphological features (mor, 6), pixel averages (pix, 240) and
Zernike moments (zer, 47). Multiple kernel learning fuses them the classic way (Lanckriet
et al., "A statistical framework for genomic data fusion", Bioinformatics 2004): one linear
kernel per view, normalized to unit diagonal, and weights learned with the SVM.

Protocol (two binary tasks: even vs odd digits, 0-4 vs 5-9): per repetition, a stratified
third of the digits is held out for testing; on the rest, C ∈ {0.01, 0.1, 1, 10, 100} is
chosen by 5×2 cross-validation (five random halvings, each half validating the other) and
the model refitted at that C. Rows:

* **best single view** - the view and C with the best cross-validated accuracy, an SVM on it;
* **concatenated views** - one linear SVM on all 649 features (standardized on the training
  part);
* **uniform average** - an SVM on the mean of the six kernels;
* **ℓ1-MKL** (cutting plane), **SimpleMKL** (its reduced gradient on the same problem),
  **ℓ2-MKL** (the wrapper, p = 2) - certified to a relative gap of 1e-3;
* **alignment** - centred-alignment weights (Cortes, Mohri & Rostamizadeh, "Algorithms for
  learning kernels based on centered alignment", JMLR 2012), then an SVM at them.

Columns: test accuracy (mean ± std over repetitions), support vectors (% of the training
part), active kernels (weight > 1e-3 of the largest), the final fit's time. The figure shows
the learned weight of each view. Every MKL row is an :class:`mklopt.MKLClassifier` on the
precomputed kernels (``kernels="precomputed"``), every single-stage SVM scikit-learn's ``SVC``.

``--small`` (what the site's gallery runs, always): 450 digits, one repetition, 2×2 cross-validation over
C ∈ {0.1, 10}. The full run (3 repetitions) takes about 15 minutes on two cores; its table
is on the Benchmarks page.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.svm import SVC

import mklopt
from mklopt.datasets import load_mfeat

C_GRID = (0.01, 0.1, 1.0, 10.0, 100.0)
TASKS = {"even vs odd": lambda digit: np.where(digit % 2 == 0, 1, -1),
         "0-4 vs 5-9": lambda digit: np.where(digit <= 4, 1, -1)}
#: The MKL rows: (label, estimator options).
MKL_ROWS = (("l1-MKL (cutting plane)", dict(driver="cutting_plane", p=1.0)),
            ("SimpleMKL", dict(driver="simplemkl", p=1.0)),
            ("l2-MKL (wrapper)", dict(driver="wrapper", p=2.0)))
TOL = 1e-3


def view_kernels(views: dict[str, np.ndarray]) -> tuple[list[str], np.ndarray]:
    """One linear kernel per view with unit diagonal, shape (n, n, M) (the estimators' layout)."""
    names, stack = [], []
    for name, X in views.items():
        K = X @ X.T
        d = np.sqrt(np.diag(K))
        stack.append(K / np.outer(d, d))
        names.append(name)
    return names, np.stack(stack, axis=-1)


def splits(y: np.ndarray, folds: int, repeats: int, seed: int):
    """5x2-style cross-validation: ``repeats`` random halvings (``folds`` = 2), both halves."""
    for r in range(repeats):
        yield from StratifiedKFold(folds, shuffle=True, random_state=seed + r).split(np.zeros(y.size), y)


def svc_score(K: np.ndarray, y: np.ndarray, train, test, C: float) -> float:
    svm = SVC(kernel="precomputed", C=C).fit(K[np.ix_(train, train)], y[train])
    return float(svm.score(K[np.ix_(test, train)], y[test]))


def mkl_model(C: float, options: dict) -> mklopt.MKLClassifier:
    return mklopt.MKLClassifier(kernels="precomputed", normalization=None, C=C, tol=TOL, **options)


def mkl_score(K: np.ndarray, y: np.ndarray, train, test, C: float, options: dict) -> float:
    model = mkl_model(C, options).fit(K[np.ix_(train, train)], y[train])
    return float(model.score(K[np.ix_(test, train)], y[test]))


def choose_C(score, y: np.ndarray, grid, folds: int, repeats: int, seed: int) -> tuple[float, float]:
    """(best C, its mean validation accuracy) of ``score(train, test, C)`` over the splits."""
    results = {C: np.mean([score(tr, te, C) for tr, te in splits(y, folds, repeats, seed)]) for C in grid}
    best = max(grid, key=lambda C: (results[C], -C))  # ties: the smaller C
    return best, float(results[best])


def evaluate(K: np.ndarray, Xc: np.ndarray, y: np.ndarray, names: list[str], train, test,
             grid, folds: int, cv_repeats: int, seed: int) -> list[dict]:
    """Every row on one train/test split."""
    Ktr, ytr = K[np.ix_(train, train)], y[train]
    rows = []

    def single_stage(label: str, kernel: np.ndarray, weights=None) -> None:
        inner = kernel[np.ix_(train, train)]
        C, _ = choose_C(lambda tr, te, C: svc_score(inner, ytr, tr, te, C), ytr, grid, folds, cv_repeats, seed)
        start = time.perf_counter()
        svm = SVC(kernel="precomputed", C=C).fit(inner, ytr)
        elapsed = time.perf_counter() - start
        rows.append(dict(method=label, C=C, accuracy=float(svm.score(kernel[np.ix_(test, train)], y[test])),
                         sv=100.0 * svm.support_.size / train.size, weights=weights, time=elapsed))

    best = max(range(len(names)), key=lambda m: choose_C(
        lambda tr, te, C: svc_score(Ktr[:, :, m], ytr, tr, te, C), ytr, grid, folds, cv_repeats, seed)[1])
    single_stage(f"best single view ({names[best]})", K[:, :, best], np.eye(len(names))[best])
    mean, std = Xc[train].mean(axis=0), Xc[train].std(axis=0)
    Z = (Xc - mean) / np.where(std > 0, std, 1.0)
    single_stage("concatenated views", Z @ Z.T)
    single_stage("uniform average", K.mean(axis=2), np.full(len(names), 1.0 / len(names)))
    for label, options in MKL_ROWS:
        C, _ = choose_C(lambda tr, te, C: mkl_score(Ktr, ytr, tr, te, C, options), ytr, grid, folds,
                        cv_repeats, seed)
        start = time.perf_counter()
        model = mkl_model(C, options).fit(Ktr, ytr)
        elapsed = time.perf_counter() - start
        rows.append(dict(method=label, C=C, accuracy=float(model.score(K[np.ix_(test, train)], y[test])),
                         sv=100.0 * model.support_.size / train.size, weights=np.asarray(model.weights_),
                         time=elapsed, certified=model.result_.status == "converged"))
    mu = mklopt.learn_weights(np.moveaxis(Ktr, 2, 0), ytr, "align")
    single_stage("alignment weights", K @ mu, mu)
    return rows


def active(weights) -> str:
    if weights is None:
        return "-"
    w = np.asarray(weights, dtype=float)
    return str(int(np.sum(w > 1e-3 * w.max())))


def summarize(runs: list[list[dict]]) -> list[dict]:
    """Mean ± std over repetitions, row by row (rows keep their order)."""
    table = []
    for k, first in enumerate(runs[0]):
        rows = [run[k] for run in runs]
        weights = [r["weights"] for r in rows if r["weights"] is not None]
        table.append(dict(method=first["method"].split(" (")[0] if first["method"].startswith("best") else first["method"],
                          accuracy=np.mean([r["accuracy"] for r in rows]),
                          std=np.std([r["accuracy"] for r in rows]),
                          sv=np.mean([r["sv"] for r in rows]),
                          active=f"{np.mean([int(active(w)) for w in weights]):g}" if weights else "-",
                          weights=np.mean(weights, axis=0) if weights else None,
                          time=np.mean([r["time"] for r in rows]),
                          C=[r["C"] for r in rows], chosen=[r["method"] for r in rows],
                          certified=all(r.get("certified", True) for r in rows)))
    return table


def print_table(task: str, table: list[dict], n_train: int) -> None:
    print(f"\n{task}: {n_train} training digits, test accuracy over the held-out third")
    print(f"  {'method':24s} {'accuracy':>15s} {'SV %':>6s} {'active':>6s} {'time s':>7s}  C")
    for row in table:
        print(f"  {row['method']:24s} {row['accuracy']:8.4f} ± {row['std']:.4f} {row['sv']:6.1f} "
              f"{row['active']:>6s} {row['time']:7.2f}  {','.join(f'{c:g}' for c in row['C'])}")
    chosen = {c for row in table for c in row["chosen"] if c.startswith("best")}
    print("  single view chosen: " + "; ".join(sorted(chosen)))
    uncertified = [row["method"] for row in table if not row["certified"]]
    if uncertified:
        print(f"  NOT certified to rel_gap {TOL:g}: {', '.join(uncertified)}")


def plot_weights(results: dict[str, list[dict]], names: list[str], out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(5.2 * len(results), 3.4), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, (task, table) in zip(axes, results.items()):
        learned = [row for row in table if row["weights"] is not None and "single" not in row["method"]
                   and "uniform" not in row["method"]]
        width = 0.8 / len(learned)
        for k, row in enumerate(learned):
            w = row["weights"] / row["weights"].sum()
            ax.bar(np.arange(len(names)) + (k - (len(learned) - 1) / 2) * width, w, width, label=row["method"])
        ax.set_xticks(np.arange(len(names)), names)
        ax.set_title(task)
        ax.set_xlabel("view")
    axes[0].set_ylabel("weight (sum 1)")
    axes[-1].legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    path = out / "multiview_weights.png"
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def main(small: bool = False, out=None, argv=None) -> dict[str, list[dict]]:
    """Run both tasks and print the tables; ``small=True`` is the gallery's size (seconds)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="450 digits, one repetition, 2x2 CV")
    parser.add_argument("--repeats", type=int, default=None, help="train/test repetitions (default 3)")
    parser.add_argument("--out", default=".", help="folder for the figure")
    args = parser.parse_args(argv if argv is not None else ([] if small else None))
    small = small or args.small
    out = Path(out if out is not None else args.out)
    out.mkdir(parents=True, exist_ok=True)
    repeats = args.repeats or (1 if small else 3)
    grid, cv_repeats = ((0.1, 10.0), 2) if small else (C_GRID, 5)

    data = load_mfeat()
    rng = np.random.default_rng(0)
    keep = np.sort(rng.choice(data.target.size, 450, replace=False)) if small else np.arange(data.target.size)
    views = {name: X[keep] for name, X in data.views.items()}
    names, K = view_kernels(views)
    Xc = np.hstack(list(views.values()))
    results = {}
    for task, labels in TASKS.items():
        y = labels(data.target[keep])
        runs = []
        for r in range(repeats):
            train, test = train_test_split(np.arange(y.size), test_size=1 / 3, stratify=y, random_state=r)
            runs.append(evaluate(K, Xc, y, names, train, test, grid, 2, cv_repeats, seed=10 * r))
        results[task] = summarize(runs)
        print_table(task, results[task], train.size)
    print(f"\nC chosen by {cv_repeats}x2 cross-validation over {', '.join(f'{c:g}' for c in grid)}; "
          f"{repeats} repetition(s); MKL rows certified to rel_gap {TOL:g}.")
    print(f"figure: {plot_weights(results, names, out).resolve()}")
    return results


if __name__ == "__main__":
    main()
