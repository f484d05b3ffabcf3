"""The SimpleMKL paper's table on its own data: SILP, SimpleMKL and four more, every answer certified.

Rakotomamonjy, Bach, Canu, Grandvalet, "SimpleMKL", JMLR 9 (2008) 2491-2521, compare
SILP, SimpleMKL and a gradient descent on UCI Liver, Pima, Ionosphere, Wpbc and Sonar.
Where the numbers come from (no other paper number is printed):

* The paper's rows for **Pima** (ℓ = 538, M = 117) and **Sonar** (ℓ = 146, M = 793) -
  kernels selected, accuracy %, time (s), SVM evaluations, mean ± std - as reprinted in
  Cortes, Mohri and Rostamizadeh's *Learning Kernels* tutorial (ICML 2011, section
  "SimpleMKL"). The paper's Liver, Ionosphere and Wpbc rows are not reprinted there, so
  those sets are run and printed without paper numbers. Wpbc is not shipped in any package
  mklopt uses, so it is not run.
* The protocol, from the authors' toolbox script ``exmklclass.m`` (public copies
  ``maxis1718/SimpleMKL`` and ``shiyj27/SimpleMKL``; ``svmkernel.m``, ``normalizemeanstd.m``,
  ``UnitTraceNormalization.m``, ``CreateDataAppTest.m``, ``mklsvm.m``): Gaussian kernels
  :math:`\\exp(-\\|x-x'\\|^2/2\\sigma^2)`, σ ∈ {0.5, 1, 2, 5, 7, 10, 12, 15, 17, 20}, and
  polynomial kernels of degree 1 (:math:`x^\\top x'`), 2 and 3 (:math:`(x^\\top x'+1)^d`), on
  all variables and on each single variable (M = 13 (d + 1)); features z-scored with the
  training mean and std; each kernel divided by its training trace; C = 100; 20 random
  stratified 70 %/30 % splits; stop when the relative duality gap is below 0.01; a kernel
  counts as selected when its weight (weights sum to 1) exceeds 1e-8 (``numericalprecision``).
  ℓ = round(0.7 n) reproduces the paper's ℓ for Pima and Sonar.

Methods (mklopt, p = 1 unless fixed weights): ``SILP`` = ``fit(..., "cutting_plane")``,
``SimpleMKL`` = ``fit(..., "simplemkl")``, ``wrapper``, ``chunking`` (interleaved SMO:
no separate SVM solves, so "-" under SVM evaluations), ``EasyMKL`` =
``learn_weights(..., "easymkl")`` then the SVM at those weights, and ``uniform`` (the
average kernel). SVM evaluations: SILP and the wrapper one per iteration, SimpleMKL its
``info["svm_solves"]`` (line searches included), fixed weights one exact solve. The SVM at
fixed weights is ``solve(..., "svm")`` on the one combined kernel :math:`K_\\mu` (the same
problem as ``weights=mu`` on the stack, whose CVXPY model has M factor blocks).

Deviations, always: Ionosphere's constant attribute (0 in every row) is dropped, so
M = 13 · 34 = 442; Sonar's values are KEEL's 3-decimal rounding of UCI's; no 1e-8 ridge on
K_μ (the toolbox adds one); times are this machine's (the paper's: MATLAB, 2008). The
printed header lists every flag that differs from the protocol.

Run ``python examples/simplemkl_table.py`` (the protocol: hours), ``--datasets sonar
--runs 2`` (minutes) or ``--small`` (seconds: 80-point subsamples of Pima and Sonar, 20
kernels; the paper's rows are printed beside them for reference, marked as the full
protocol's). Results of a full run: the site's Benchmarks page.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np
from sklearn.model_selection import train_test_split

import mklopt
from mklopt import datasets

METHODS = ("SILP", "SimpleMKL", "wrapper", "chunking", "EasyMKL", "uniform")
DRIVERS = {"SILP": "cutting_plane", "SimpleMKL": "simplemkl", "wrapper": "wrapper", "chunking": "chunking"}
STATS = ("accuracy", "kernels", "svm", "time")
PAPER_NAME = {"bupa": "Liver", "diabetes": "Pima", "ionosphere": "Ionosphere", "sonar": "Sonar"}
#: The learning-kernels tutorial, "SimpleMKL": (mean, std) of kernels selected, accuracy %, time s, SVM evaluations.
PAPER = {
    "diabetes": {"SILP": ((11.6, 1.0), (76.5, 2.3), (224, 37), (95.6, 13)),
                 "SimpleMKL": ((14.7, 1.4), (76.5, 2.6), (79.0, 13), (314, 44)),
                 "grad. desc.": ((14.8, 1.4), (75.5, 2.5), (219, 24), (873, 147))},
    "sonar": {"SILP": ((33.5, 3.8), (80.5, 5.1), (2290, 864), (903, 187)),
              "SimpleMKL": ((36.7, 5.1), (80.6, 5.1), (163, 93), (2770, 1560)),
              "grad. desc.": ((35.7, 3.9), (80.2, 4.7), (469, 90), (7630, 2600))},
}
PAPER_SIZE = {"diabetes": (538, 117), "sonar": (146, 793)}  # (ℓ, M) as printed


@dataclass(frozen=True)
class Config:
    """One run's settings; the defaults are the paper's protocol."""

    datasets: tuple = ("bupa", "diabetes", "ionosphere", "sonar")
    runs: int = 20                      # random 70/30 splits
    widths: tuple = (0.5, 1, 2, 5, 7, 10, 12, 15, 17, 20)  # Gaussian sigma
    degrees: tuple = (1, 2, 3)          # polynomial degrees
    single: int | None = None           # single-variable kernels on the first k variables (None: all)
    train: float = 0.7
    C: float = 100.0
    tol: float = 0.01                   # certified relative gap
    max_n: int | None = None            # stratified subsample of each set (None: all points)
    select: float = 1e-8                # weight (sum 1) above which a kernel counts as selected
    max_iter: int = 10_000              # outer iterations before a run stops uncertified
    methods: tuple = METHODS
    seed: int = 0


PROTOCOL = Config()
SMALL = {"datasets": ("diabetes", "sonar"), "runs": 2, "widths": (1.0, 5.0, 20.0), "degrees": (1, 2),
         "single": 3, "max_n": 80}


def deviations(cfg: Config) -> list[str]:
    """The flags that differ from the protocol (the data sets and methods run are not deviations)."""
    return [f"{f.name}={getattr(cfg, f.name)} (paper: {getattr(PROTOCOL, f.name)})" for f in fields(Config)
            if f.name not in ("datasets", "methods", "seed", "max_iter") and getattr(cfg, f.name) != getattr(PROTOCOL, f.name)]


def paper_rows(name: str, cfg: Config) -> dict | None:
    """The paper's rows for these data, or None when the setting is not the paper's (runs aside)."""
    same = all(getattr(cfg, f) == getattr(PROTOCOL, f) for f in ("widths", "degrees", "single", "train", "C",
                                                                 "max_n", "tol"))
    return PAPER.get(name) if same else None


def load(name: str, cfg: Config) -> tuple[np.ndarray, np.ndarray]:
    """Features and ±1 labels, a stratified subsample of ``max_n`` points when asked."""
    X, y = datasets.load(name, return_X_y=True)
    if cfg.max_n and cfg.max_n < len(y):
        keep, _ = train_test_split(np.arange(len(y)), train_size=cfg.max_n, stratify=y, random_state=cfg.seed)
        X, y = X[np.sort(keep)], y[np.sort(keep)]
    return X, y


def kernels(A: np.ndarray, B: np.ndarray, cfg: Config) -> np.ndarray:
    """The raw kernel stack between rows of ``A`` and ``B``: per variable group, Gaussians then polynomials."""
    groups = [slice(None)] + [slice(j, j + 1) for j in range(A.shape[1] if cfg.single is None
                                                             else min(cfg.single, A.shape[1]))]
    out = []
    for cols in groups:
        a, b = A[:, cols], B[:, cols]
        G = a @ b.T
        D = np.maximum((a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2.0 * G, 0.0)
        out += [np.exp(-D / (2.0 * s * s)) for s in cfg.widths]
        out += [G if d == 1 else (G + 1.0) ** d for d in cfg.degrees]
    return np.stack(out)


def run_method(method: str, ks: mklopt.KernelSet, y: np.ndarray, cfg: Config) -> tuple[mklopt.MKLResult, np.ndarray, int | None]:
    """(result, kernel weights, SVM evaluations) of one method on the training kernels."""
    if method in DRIVERS:
        res = mklopt.fit(ks, y, DRIVERS[method], p=1, C=cfg.C, tol=cfg.tol, max_iter=cfg.max_iter)
        evals = None if method == "chunking" else int(res.info.get("svm_solves", res.iterations))
        return res, res.weights, evals
    mu = np.asarray(mklopt.learn_weights(ks, y, "easymkl") if method == "EasyMKL" else np.full(ks.M, 1 / ks.M))
    return mklopt.solve(mklopt.KernelSet(ks.combined(mu)[None]), y, "svm", C=cfg.C), mu, 1  # SVM on K_mu


def run_split(X: np.ndarray, y: np.ndarray, run: int, cfg: Config, methods: tuple) -> dict:
    """One random split: z-scores, trace-normalized kernels, every method, test accuracy."""
    n = len(y)
    train, test = train_test_split(np.arange(n), train_size=int(np.floor(cfg.train * n + 0.5)),
                                   stratify=y, random_state=cfg.seed + run)
    mean, sd = X[train].mean(axis=0), X[train].std(axis=0, ddof=1)
    Z = (X[:, sd > 0] - mean[sd > 0]) / sd[sd > 0]  # constant columns dropped
    ks = mklopt.KernelSet(kernels(Z[train], Z[train], cfg)).normalized("trace")
    T = ks.transform_test(kernels(Z[test], Z[train], cfg))
    rows = {"_size": (len(train), ks.M)}
    for method in methods:
        start = time.perf_counter()
        res, mu, evals = run_method(method, ks, y[train], cfg)
        seconds = time.perf_counter() - start
        f = res.decision_function(T if res.weights.size == ks.M else np.tensordot(mu, T, axes=1)[None])
        rows[method] = {"accuracy": 100.0 * np.mean(np.where(f >= 0, 1, -1) == y[test]),
                        "kernels": int(np.sum(mu / mu.sum() > cfg.select)), "svm": evals, "time": seconds,
                        "rel_gap": res.rel_gap, "status": res.status, "primal": res.primal,
                        "dual": res.dual, "iterations": res.iterations}
    return rows


def run_dataset(name: str, cfg: Config) -> dict:
    """Every run on one data set: the per-run rows and their summary per method."""
    methods = cfg.methods
    X, y = load(name, cfg)
    runs, start = [], time.perf_counter()
    for run in range(cfg.runs):
        runs.append(run_split(X, y, run, cfg, methods))
        print(f"[{name}: run {run + 1}/{cfg.runs} done, {time.perf_counter() - start:.0f}s]", flush=True)
    summary = {m: summarize([r[m] for r in runs]) for m in methods}
    return {"runs": runs, "summary": summary, "n": len(y), "d": X.shape[1], "size": runs[0]["_size"]}


def summarize(rows: list[dict]) -> dict:
    """Mean and std of each statistic (None where not measured), worst gap, converged runs."""
    out = {s: None if rows[0][s] is None else (float(np.mean([r[s] for r in rows])),
                                               float(np.std([r[s] for r in rows]))) for s in STATS}
    out["rel_gap"] = max(r["rel_gap"] for r in rows)
    out["converged"] = sum(r["status"] in ("converged", "optimal") for r in rows)
    return out


def flags(ours: dict, paper: tuple) -> list[str]:
    """Statistics whose mean is farther from the paper's than the paper's std."""
    return [s for s, (pm, ps) in zip(("kernels", "accuracy", "time", "svm"), paper)
            if ours[s] is not None and abs(ours[s][0] - pm) > ps]


def _pm(pair, digits: int | None = 1) -> str:
    """``mean ± std``; ``digits=None`` prints the numbers as given (the paper's)."""
    if pair is None:
        return "-"
    return f"{pair[0]:g} ± {pair[1]:g}" if digits is None else f"{pair[0]:.{digits}f} ± {pair[1]:.{digits}f}"


_HEAD = f"{'method':12}{'accuracy %':>14}{'kernels':>14}{'SVM evals':>16}{'time s':>14}"


def print_table(results: dict, cfg: Config) -> None:
    """Our rows, then the paper's for the same data (compared where the setting is its own)."""
    dev = deviations(cfg)
    print(f"SimpleMKL table: {cfg.runs} runs, C={cfg.C:g}, tol={cfg.tol:g}; deviations from the protocol "
          f"(besides those always made: see the module docstring): {'' if dev else 'none'}")
    for flag in dev:
        print(f"  - {flag}")
    for name, res in results.items():
        paper, known = paper_rows(name, cfg), PAPER.get(name)
        size = f"ℓ={res['size'][0]}, M={res['size'][1]}"
        print(f"\n--- {name} ({res['n']}x{res['d']}{', subsample' if cfg.max_n else ''}; {size})")
        print(f"{_HEAD}{'max gap':>9}{'conv.':>7}" + ("  off the paper (> its std)" if paper else ""))
        for method, s in res["summary"].items():
            p = paper.get(method) if paper else None
            print(f"{method:12}{_pm(s['accuracy']):>14}{_pm(s['kernels']):>14}{_pm(s['svm'], 0):>16}"
                  f"{_pm(s['time']):>14}{s['rel_gap']:>9.1e}{s['converged']:>4}/{cfg.runs:<2}"
                  + (f"  {', '.join(flags(s, p))}" if p else ""))
        if not known:
            print(f"paper: no numbers for {PAPER_NAME.get(name, name)} (not in the tutorial's reprint)")
            continue
        ell, M = PAPER_SIZE[name]
        setting = "the same setting" if paper else "the full protocol, not this run's setting: for reference"
        print(f"paper, {PAPER_NAME[name]} (ℓ={ell}, M={M}; {setting}):")
        for method, (k, a, t, e) in known.items():
            print(f"{method:12}{_pm(a, None):>14}{_pm(k, None):>14}{_pm(e, None):>16}{_pm(t, None):>14}")


def figure(results: dict, cfg: Config, folder: Path) -> Path:
    """Accuracy and kernels selected per method, with the paper's SILP/SimpleMKL where it has them."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(len(results), 2, figsize=(11, 3.0 * len(results)), squeeze=False)
    for row, (name, res) in enumerate(results.items()):
        methods, paper = list(res["summary"]), PAPER.get(name, {})
        for col, (stat, label) in enumerate((("accuracy", "test accuracy (%)"), ("kernels", "kernels selected"))):
            ax, x = axes[row, col], np.arange(len(methods))
            ax.bar(x, [res["summary"][m][stat][0] for m in methods],
                   yerr=[res["summary"][m][stat][1] for m in methods], color="#4878cf", label="mklopt")
            marks = [(i, paper[m][1 if stat == "accuracy" else 0]) for i, m in enumerate(methods) if m in paper]
            if marks:
                ax.errorbar([i for i, _ in marks], [p[0] for _, p in marks], yerr=[p[1] for _, p in marks],
                            fmt="D", color="#d65f5f",
                            label=f"paper ({PAPER_NAME[name]}{'' if paper_rows(name, cfg) else ', full protocol'})")
                ax.legend(fontsize=8)
            if stat == "accuracy":
                ax.set_ylim(max(0.0, min(res["summary"][m][stat][0] for m in methods) - 25.0), 100.0)
            ax.set_xticks(x, methods, fontsize=8)
            ax.set_title(f"{name}: {label}, {cfg.runs} runs", fontsize=9)
    fig.tight_layout()
    path = folder / "simplemkl_table.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main(small: bool = False, out: str | Path = ".", **overrides) -> dict:
    """Run the protocol, print the table and save ``simplemkl_table.png`` under ``out``.

    Parameters
    ----------
    small : bool
        Seconds-long run: Pima and Sonar subsampled to 80 points, 2 runs, 20 kernels
        (σ ∈ {1, 5, 20}, degrees 1-2, all variables and the first 3); the paper's rows
        are printed for reference, marked as the full protocol's.
    out : str or Path
        Folder for the PNG.
    **overrides
        Fields of :class:`Config` (datasets, runs, tol, max_n, methods, ...).

    Returns
    -------
    dict
        ``results`` (per data set: per-run rows and the summary), ``figure``, ``config``.
    """
    cfg = Config(**{**(SMALL if small else {}), **overrides})
    start = time.perf_counter()
    results = {name: run_dataset(name, cfg) for name in cfg.datasets}
    print_table(results, cfg)
    path = figure(results, cfg, Path(out))
    print(f"wrote {path} ({time.perf_counter() - start:.1f}s)")
    return {"results": results, "figure": path, "config": cfg}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", "--quick", action="store_true",
                        help="80-point subsamples of Pima and Sonar, 20 kernels (seconds; what CI runs)")
    parser.add_argument("--out", default=".", help="folder for the PNG (default: current folder)")
    parser.add_argument("--datasets", nargs="+", choices=sorted(PAPER_NAME), default=None)
    parser.add_argument("--runs", type=int, default=None, help="random splits (paper: 20)")
    parser.add_argument("--tol", type=float, default=None, help="certified relative gap (paper: 0.01)")
    parser.add_argument("--max-n", type=int, default=None, help="subsample each set (no paper numbers then)")
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=None)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    extra = {k: v for k, v in {"datasets": tuple(args.datasets) if args.datasets else None, "runs": args.runs,
                               "tol": args.tol, "max_n": args.max_n, "seed": args.seed,
                               "methods": tuple(args.methods) if args.methods else None}.items() if v is not None}
    main(small=args.small, out=args.out, **extra)
