"""Table 1 of "Voted Kernel Regularization" (``004_*`` §6) on datasets shipped with scikit-learn.

Protocol of the paper: the data are split at random into 5 folds; for run i, fold i is
the test set, fold i+1 (mod 5) the validation set and the other folds the training
set. For each algorithm, the hyperparameters with the smallest validation error
averaged over the runs are selected, and the test error (mean and standard deviation
over the runs) and the number of support vectors at that setting are reported.

* L2-SVM: ``SVC(kernel="precomputed")`` on :math:`(x^\\top x'+1)^d`, d = 1..10,
  C ∈ {10^i : i = -4..7};
* L1-SVM: VKR with λ = 0 on a single kernel of degree d = 1..10, β ∈ {10^-i : i = 0..6};
* VKRc: VKR on all ten kernels with the penalty of Lemma 3 (``penalty="trace"``);
* VKR2: the same with Lemma 4 (``penalty="polynomial"``); λ, β ∈ {10^-i : i = 0..6}.

"Support vectors" are training points used by the predictor (for VKR: points with
some nonzero :math:`\\alpha_{k,j}`). VKR problems are solved by ``mklopt.fit(...,
"vkr_cd")`` (certified to rel_gap 1e-6; ``--solver lp`` uses the LP, same optimum).

Differences from the paper: "breastcancer" is scikit-learn's WDBC (569 points, 30
features) instead of the 699 x 9 UCI set; "ocr49" is scikit-learn's 8x8 digits 4
vs 9 (361 points, 64 features) instead of 2000 points with 196 features. Features are
scaled to [-1, 1] on the training folds and divided by sqrt(N), so that
:math:`\\|x\\|\\le1` on the training set (the paper does not state its scaling).

Run ``python examples/vkr_table1.py`` (a few minutes) or ``--small`` (seconds).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.svm import SVC

import mklopt

ALGORITHMS = ("L2 SVM", "L1 SVM", "VKR2", "VKRc")

#: Table 1 of the paper: error % mean (std) and number of support vectors mean (std).
PAPER = {
    "ocr49": {"error": {"L2 SVM": (5.05, 0.65), "L1 SVM": (3.50, 0.85), "VKR2": (2.70, 0.97), "VKRc": (3.50, 0.85)},
              "sv": {"L2 SVM": (449.8, 3.6), "L1 SVM": (140.0, 3.6), "VKR2": (6.8, 1.3), "VKRc": (164.6, 9.5)}},
    "breastcancer": {"error": {"L2 SVM": (11.45, 0.74), "L1 SVM": (12.60, 2.88), "VKR2": (11.73, 2.73), "VKRc": (11.30, 1.31)},
                     "sv": {"L2 SVM": (83.8, 10.9), "L1 SVM": (46.4, 2.4), "VKR2": (66.6, 3.9), "VKRc": (29.4, 1.9)}},
}


class Config:
    """Sizes of one run; the defaults are the paper's protocol on all points."""

    def __init__(self, folds: int = 5, degrees=tuple(range(1, 11)), vkr_exponents=tuple(range(7)),
                 svm_exponents=tuple(range(-4, 8)), max_n: int | None = None, solver: str = "cd",
                 tol: float = 1e-6, seed: int = 0, datasets=("breastcancer", "ocr49")) -> None:
        self.folds = folds                      # runs: test fold i, validation fold i+1 (mod folds)
        self.degrees = tuple(degrees)           # polynomial degrees d of (x'x' + 1)^d
        self.vkr_exponents = tuple(vkr_exponents)  # lambda, beta in {10^-i}
        self.svm_exponents = tuple(svm_exponents)  # C in {10^i}
        self.max_n = max_n                      # subsample (None: all points)
        self.solver, self.tol, self.seed = solver, tol, seed
        self.datasets = tuple(datasets)


SMALL = {"folds": 3, "degrees": (1, 2, 3), "vkr_exponents": (1, 3), "svm_exponents": (0, 2), "max_n": 90}


class Scores:
    """Validation error, test error and support-vector count per run, for one setting."""

    def __init__(self) -> None:
        self.val: list[float] = []
        self.test: list[float] = []
        self.sv: list[int] = []
        self.uncertified = 0


def load(name: str, max_n: int | None, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Features and +-1 labels of "breastcancer" (WDBC) or "ocr49" (digits 4 vs 9)."""
    if name == "breastcancer":
        X, y = load_breast_cancer(return_X_y=True)
        y = np.where(y == 1, 1, -1)
    elif name == "ocr49":
        X, digit = load_digits(return_X_y=True)
        keep = (digit == 4) | (digit == 9)
        X, y = X[keep], np.where(digit[keep] == 9, 1, -1)
    else:
        raise ValueError(f"unknown dataset {name!r}; choose 'breastcancer' or 'ocr49'.")
    order = np.random.default_rng(seed).permutation(len(y))[: max_n or len(y)]
    return X[order].astype(float), y[order]


def poly_kernels(X: np.ndarray, train: np.ndarray, degrees) -> np.ndarray:
    """:math:`(x^\\top x'+1)^d` on all points, features scaled on the training rows."""
    lo, hi = X[train].min(axis=0), X[train].max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    Z = (2.0 * (X - lo) / span - 1.0) / np.sqrt(X.shape[1])
    G = Z @ Z.T + 1.0
    return np.stack([G**d for d in degrees])


def splits(n: int, folds: int, seed: int):
    """(train, validation, test) index arrays of each run."""
    parts = np.array_split(np.random.default_rng(seed + 1).permutation(n), folds)
    for i in range(folds):
        val = (i + 1) % folds
        train = np.concatenate([parts[j] for j in range(folds) if j not in (i, val)])
        yield train, parts[val], parts[i]


def vkr_fit(K: np.ndarray, y: np.ndarray, cfg: Config, **params) -> mklopt.MKLResult:
    """One certified VKR solve on training kernels ``K`` (M, m, m)."""
    if cfg.solver == "lp":
        return mklopt.solve(K, y, "vkr_lp", tol=min(cfg.tol, 1e-8), **params)
    return mklopt.fit(K, y, "vkr_cd", tol=cfg.tol, max_iter=500, **params)


def _vkr_scores(res: mklopt.MKLResult, K: np.ndarray, y: np.ndarray, train, val, test):
    def error(rows):
        f = res.decision_function(K[:, rows][:, :, train])
        return float(np.mean(np.where(f >= 0, 1, -1) != y[rows]))

    ok = res.status in ("optimal", "converged")
    return error(val), error(test), int(np.count_nonzero(np.any(res.alpha != 0, axis=0))), ok


def run_fold(K, y, train, val, test, cfg: Config, n_features: int, table: dict) -> None:
    """Every algorithm and setting on one (train, validation, test) split."""
    Ktr, ytr = K[:, train][:, :, train], y[train]
    grid = [10.0**-e for e in cfg.vkr_exponents]
    for d_i, d in enumerate(cfg.degrees):
        for C in (10.0**e for e in cfg.svm_exponents):
            svc = SVC(kernel="precomputed", C=C).fit(Ktr[d_i], ytr)
            errs = [float(np.mean(svc.predict(K[d_i][rows][:, train]) != y[rows])) for rows in (val, test)]
            _add(table["L2 SVM"], ("d", d, "C", C), *errs, svc.support_.size, True)
        for beta in grid:
            res = vkr_fit(Ktr[d_i:d_i + 1], ytr, cfg, lam=0.0, beta=beta)
            _add(table["L1 SVM"], ("d", d, "beta", beta), *_vkr_scores(res, K[d_i:d_i + 1], y, train, val, test))
    for lam in grid:
        for beta in grid:
            for name, penalty in (("VKRc", {"penalty": "trace"}),
                                  ("VKR2", {"penalty": "polynomial", "degrees": list(cfg.degrees), "n_features": n_features})):
                res = vkr_fit(Ktr, ytr, cfg, lam=lam, beta=beta, **penalty)
                _add(table[name], ("lam", lam, "beta", beta), *_vkr_scores(res, K, y, train, val, test))


def _add(scores: dict, key, val: float, test: float, sv: int, certified: bool) -> None:
    entry = scores.setdefault(key, Scores())
    entry.val.append(val)
    entry.test.append(test)
    entry.sv.append(sv)
    entry.uncertified += not certified


def run_dataset(name: str, cfg: Config) -> dict:
    """The protocol on one dataset: per algorithm the selected setting and its scores."""
    X, y = load(name, cfg.max_n, cfg.seed)
    table = {alg: {} for alg in ALGORITHMS}
    for train, val, test in splits(len(y), cfg.folds, cfg.seed):
        run_fold(poly_kernels(X, train, cfg.degrees), y, train, val, test, cfg, X.shape[1], table)
    return {alg: _select(table[alg]) for alg in ALGORITHMS}


def _select(settings: dict) -> dict:
    key = min(settings, key=lambda k: (np.mean(settings[k].val), np.mean(settings[k].sv)))
    s = settings[key]
    return {"setting": key, "error": (100 * np.mean(s.test), 100 * np.std(s.test)),
            "sv": (float(np.mean(s.sv)), float(np.std(s.sv))),
            "uncertified": sum(v.uncertified for v in settings.values()),
            "fits": sum(len(v.val) for v in settings.values())}


def print_table(results: dict) -> None:
    """Our error and support vectors beside the paper's Table 1 rows."""
    print(f"{'dataset':13} {'algorithm':8} {'error % (std)':>15} {'paper':>15} {'SV (std)':>15} "
          f"{'paper':>15}  selected setting (uncertified fits)")
    for name, res in results.items():
        for alg in ALGORITHMS:
            r, p = res[alg], PAPER[name]
            print(f"{name:13} {alg:8} {_fmt(r['error']):>15} {_fmt(p['error'][alg]):>15} "
                  f"{_fmt(r['sv'], 1):>15} {_fmt(p['sv'][alg], 1):>15}  "
                  f"{_setting(r['setting'])} ({r['uncertified']}/{r['fits']})")


def _fmt(pair, digits: int = 2) -> str:
    return f"{pair[0]:.{digits}f} ({pair[1]:.{digits}f})"


def _setting(key) -> str:
    return ", ".join(f"{key[i]}={key[i + 1]:g}" for i in range(0, len(key), 2))


def figure(results: dict, folder: Path) -> Path:
    """Error and support vectors per algorithm, ours next to the paper's."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(len(results), 2, figsize=(10, 3.2 * len(results)), squeeze=False)
    x = np.arange(len(ALGORITHMS))
    for row, (name, res) in enumerate(results.items()):
        for col, what in enumerate(("error", "sv")):
            ax = axes[row, col]
            ours = [res[a][what] for a in ALGORITHMS]
            paper = [PAPER[name][what][a] for a in ALGORITHMS]
            ax.bar(x - 0.2, [o[0] for o in ours], 0.4, yerr=[o[1] for o in ours], label="mklopt")
            ax.bar(x + 0.2, [p[0] for p in paper], 0.4, yerr=[p[1] for p in paper], label="paper")
            ax.set_xticks(x, ALGORITHMS)
            ax.set_title(f"{name}: {'test error (%)' if what == 'error' else 'support vectors'}")
        axes[row, 0].legend()
    fig.tight_layout()
    path = folder / "vkr_table1.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(small: bool = False, out: str | Path = ".", **overrides) -> dict:
    """Run the protocol (``small``: 3 folds, 3 degrees, 2x2 grids, 90 points), print, save a PNG."""
    cfg = Config(**{**(SMALL if small else {}), **overrides})
    start = time.perf_counter()
    results = {name: run_dataset(name, cfg) for name in cfg.datasets}
    print_table(results)
    path = figure(results, Path(out))
    print(f"wrote {path} ({time.perf_counter() - start:.1f}s, solver={cfg.solver})")
    return {"results": results, "figure": path, "config": cfg}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="3 folds, degrees 1-3, 2x2 grids, 90 points")
    parser.add_argument("--out", default=".", help="folder for the PNG (default: current folder)")
    parser.add_argument("--solver", choices=("cd", "lp"), default="cd", help="VKR solver (same optimum)")
    parser.add_argument("--max-n", type=int, default=None, help="subsample each dataset to this many points")
    parser.add_argument("--datasets", nargs="+", choices=("breastcancer", "ocr49"), default=None)
    args = parser.parse_args()
    extra = {"solver": args.solver}
    if args.max_n is not None:
        extra["max_n"] = args.max_n
    if args.datasets:
        extra["datasets"] = tuple(args.datasets)
    main(small=args.small, out=args.out, **extra)
