"""Local Rademacher MKL (``conv`` and ``dc``) against unif, ℓ1 and ℓ2 on UCI sets from mklopt.datasets.

The protocol of Cortes, Kloft & Mohri (2013), §5.1 and Figure 2, on real data
that ship with mklopt. The paper's own data sets (the TSS promoter data with
its five sequence kernels, and the protein subcellular localisation sets) are
not shipped in any package mklopt uses, so this is **not** a reproduction of its numbers: every
label names the data set actually used (default ``ionosphere`` and
``diabetes``, Pima; see :mod:`mklopt.datasets`).

Kernels (five per data set, on features standardized with the training rows):
polynomial of degree 2 and 3 (:math:`(x^\\top x'/d+1)^k`) and Gaussian with
:math:`\\gamma\\in\\{0.1, 1, 10\\}/d`. Compared methods:

* ``unif``: SVM on the uniform combination,
* ``l1`` and ``l2``: ℓp-MKL with weight norm p = 1, 2 (:math:`\\|\\mu\\|_p\\le1`),
* ``conv``: tail-sum normalization :math:`K_m/\\sum_{j>\\theta}\\lambda_j(K_m)`
  followed by ℓ1-MKL (``ks.normalized("tail_sum", theta=θ)`` then ``fit``),
* ``dc``: the DC algorithm over :math:`\\{\\sum_{j>\\theta}\\lambda_j(K_\\mu)\\le1\\}`
  (``fit(ks, y, "dca", theta=θ, inner="wrapper")``: the paper's alternation,
  SVM by libsvm then :math:`\\mu_m\\propto\\|w_m\\|/\\sqrt{v_m}`).

As in the paper: n random training points, the rest split in equal halves
into validation and test sets, θ ∈ {1, 2, 4, 8, 16} chosen by validation AUC,
test AUC as mean ± std over repeated random splits, kernels of equal trace.
Deviations: C is fixed (``C = C0 * n`` for trace-1 kernels, i.e. C0 for
trace-n kernels; the paper also selects C ∈ {10^-2..10^2}), and there are
``--repeats`` splits (default 5) instead of 100.

Run ``python examples/plot_local_rademacher.py [--small] [--datasets ...] [--out DIR]``;
``local_rademacher.png`` has one row per data set: test AUCs (left), kernel
weights as shares of the combined kernel's trace with each kernel's
single-kernel AUC (center), each kernel's tail sum against θ (right).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel
from sklearn.svm import SVC

import mklopt
from mklopt import datasets
from mklopt.plotting import plot_tail_sums

THETAS = (1, 2, 4, 8, 16)
METHODS = ("unif", "l1", "l2", "conv", "dc")
KERNELS = ("poly2", "poly3", "rbf0.1", "rbf1", "rbf10")
DEFAULT_DATASETS = ("ionosphere", "diabetes")


# ---------------------------------------------------------------- data
def _kernel(name: str, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    d = A.shape[1]
    if name.startswith("poly"):
        return polynomial_kernel(A, B, degree=int(name[4:]), gamma=1.0 / d, coef0=1.0)
    return rbf_kernel(A, B, gamma=float(name[3:]) / d)


def split(n_total: int, n_train: int, seed: int, n_eval: int | None = None) -> tuple[np.ndarray, ...]:
    """Training indices and the rest (or ``2 * n_eval`` of it) halved into validation and test."""
    perm = np.random.default_rng(seed).permutation(n_total)
    rest = perm[n_train:] if n_eval is None else perm[n_train:n_train + 2 * n_eval]
    half = rest.size // 2
    return perm[:n_train], rest[:half], rest[half:]


def make_kernels(X: np.ndarray, train: np.ndarray,
                 others: dict[str, np.ndarray]) -> tuple[mklopt.KernelSet, dict[str, np.ndarray]]:
    """Trace-1 training kernels and raw other-vs-train stacks (standardized on the training rows)."""
    sd = X[train].std(axis=0)
    Z = (X - X[train].mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    train_k = [_kernel(k, Z[train], Z[train]) for k in KERNELS]
    other_k = {key: np.stack([_kernel(k, Z[idx], Z[train]) for k in KERNELS]) for key, idx in others.items()}
    return mklopt.KernelSet(np.stack(train_k), names=list(KERNELS)).normalized("trace"), other_k


# ------------------------------------------------------------- methods
def _scores(result: mklopt.MKLResult, ks: mklopt.KernelSet, T: np.ndarray) -> np.ndarray:
    return result.decision_function(ks.transform_test(T))


def _trace_shares(result: mklopt.MKLResult, ks: mklopt.KernelSet) -> np.ndarray:
    share = np.asarray(result.weights) * ks.traces
    return share / share.sum()


def fit_conv(ks, y, C: float, theta: int) -> tuple[mklopt.MKLResult, mklopt.KernelSet]:
    """conv: tail-sum normalization, then ℓ1-MKL (cutting plane on libsvm)."""
    conv = ks.normalized("tail_sum", theta=theta)
    return mklopt.fit(conv, y, "cutting_plane", C=C, tol=1e-4), conv


def fit_dc(ks, y, C: float, theta: int) -> tuple[mklopt.MKLResult, mklopt.KernelSet]:
    """dc: DCA over the tail-sum class H1 with the paper's wrapper alternation."""
    return mklopt.fit(ks, y, "dca", theta=theta, C=C, inner="wrapper", svm="libsvm", tol=1e-3), ks


def select_theta(fit_one, ks, y, C, T_val, y_val) -> tuple[int, dict]:
    """θ with the best validation AUC; returns it and every validation AUC."""
    aucs, fits = {}, {}
    for theta in THETAS:
        result, kset = fit_one(ks, y, C, theta)
        aucs[theta] = roc_auc_score(y_val, _scores(result, kset, T_val))
        fits[theta] = (result, kset)
    best = max(aucs, key=lambda t: (aucs[t], -t))
    return best, {"val_auc": aucs, "fit": fits[best]}


def run_methods(ks, y, C: float, T_val, y_val) -> dict:
    """Fit every method (θ by validation for conv and dc); values: (result, kernel set, info)."""
    M = ks.M
    out = {
        "unif": (mklopt.solve(ks, y, "svm", C=C, weights=np.full(M, 1.0 / M)), ks, {}),
        "l1": (mklopt.fit(ks, y, "cutting_plane", C=C, tol=1e-4), ks, {}),
        "l2": (mklopt.fit(ks, y, "wrapper", p=2, C=C, tol=1e-4), ks, {}),
    }
    for name, fit_one in (("conv", fit_conv), ("dc", fit_dc)):
        theta, info = select_theta(fit_one, ks, y, C, T_val, y_val)
        result, kset = info.pop("fit")
        out[name] = (result, kset, {"theta": theta, **info})
    return out


def single_kernel_auc(ks, y, C: float, T: np.ndarray, y_test: np.ndarray) -> np.ndarray:
    """Test AUC of an SVM on each kernel alone."""
    aucs = []
    for m in range(ks.M):
        svc = SVC(kernel="precomputed", C=C).fit(ks.K[m], y)
        aucs.append(roc_auc_score(y_test, svc.decision_function(T[m] * ks.scales[m])))
    return np.array(aucs)


def one_split(X, y_all, n_train: int, C0: float, seed: int, n_eval: int | None) -> dict:
    """Every method on one random split; test AUC, accuracy, trace shares, θ."""
    train, val, test = split(len(y_all), n_train, seed, n_eval)
    ks, T = make_kernels(X, train, {"val": val, "test": test})
    y, C = y_all[train], C0 * n_train
    methods = {}
    for name, (result, kset, info) in run_methods(ks, y, C, T["val"], y_all[val]).items():
        predicted = result.predict(kset.transform_test(T["test"]))
        methods[name] = {"test_auc": roc_auc_score(y_all[test], _scores(result, kset, T["test"])),
                         "test_accuracy": float(np.mean(predicted == y_all[test])),
                         "trace_shares": _trace_shares(result, kset), **info}
    return {"methods": methods, "ks": ks, "sizes": (train.size, val.size, test.size),
            "single_auc": single_kernel_auc(ks, y, C, T["test"], y_all[test])}


def run_dataset(name: str, n_train: int, repeats: int, C0: float, seed: int, n_eval: int | None) -> dict:
    """Repeated random splits of one data set, summarized per method."""
    X, y_all = datasets.load(name, return_X_y=True)
    runs = [one_split(X, y_all, n_train, C0, seed + r, n_eval) for r in range(repeats)]
    methods = {}
    for m in METHODS:
        per = [run["methods"][m] for run in runs]
        auc = np.array([p["test_auc"] for p in per])
        methods[m] = {"test_auc": float(auc.mean()), "test_auc_std": float(auc.std()),
                      "test_accuracy": float(np.mean([p["test_accuracy"] for p in per])),
                      "trace_shares": np.mean([p["trace_shares"] for p in per], axis=0)}
        if "theta" in per[0]:
            methods[m]["thetas"] = [p["theta"] for p in per]
            methods[m]["theta"] = Counter(methods[m]["thetas"]).most_common(1)[0][0]
    ks = runs[0]["ks"]
    return {"label": f"{name} ({len(y_all)}x{X.shape[1]}, UCI via mklopt.datasets)", "n_train": n_train,
            "sizes": runs[0]["sizes"], "repeats": repeats, "C": C0 * n_train, "methods": methods,
            "kernels": list(ks.names), "single_auc": np.mean([r["single_auc"] for r in runs], axis=0),
            "tail_sums": {t: ks.tail_sums(t) for t in (0, *THETAS)}, "ks": ks}


# ---------------------------------------------------------------- plot
def plot(report: dict, path: Path) -> None:
    """One row per data set: test AUCs, trace shares, tail sums against θ."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = report["datasets"]
    fig, axes = plt.subplots(len(rows), 3, figsize=(15, 4.2 * len(rows)), squeeze=False)
    for ax_row, data in zip(axes, rows.values()):
        _plot_row(ax_row, data)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _plot_row(axes, data: dict) -> None:
    methods = data["methods"]
    aucs = [100 * methods[m]["test_auc"] for m in METHODS]
    stds = [100 * methods[m]["test_auc_std"] for m in METHODS]
    labels = [m if "thetas" not in methods[m] else f"{m}\nθ: {','.join(map(str, methods[m]['thetas']))}"
              for m in METHODS]
    axes[0].bar(labels, aucs, yerr=stds, color="tab:blue")
    axes[0].set_ylim(max(0.0, min(aucs) - max(stds) - 2.0), min(100.0, max(aucs) + max(stds) + 1.0))
    axes[0].set_ylabel("test AUC (%)")
    axes[0].set_title(f"{data['label']}\nn_train = {data['n_train']}, {data['repeats']} splits", fontsize=9)
    for i, a in enumerate(aucs):
        axes[0].text(i, a, f"{a:.2f}", ha="center", va="bottom", fontsize=8)
    width = 0.8 / len(METHODS)
    x = np.arange(len(data["kernels"]))
    for i, m in enumerate(METHODS):
        axes[1].bar(x + (i - 2) * width, methods[m]["trace_shares"], width, label=m)
    axes[1].set_xticks(x, [f"{n}\n{100 * a:.1f}" for n, a in zip(data["kernels"], data["single_auc"])])
    axes[1].set_ylabel("share of Tr K_μ")
    axes[1].set_title(f"{data['label'].split(' ')[0]}: kernel weights (below: single-kernel AUC)", fontsize=9)
    axes[1].legend(fontsize=8)
    plot_tail_sums(data["ks"], 32, ax=axes[2])  # trace-1 kernels: relative = absolute
    axes[2].set_title(f"{data['label'].split(' ')[0]}: tail sum vs cutoff θ (as the paper's Fig. 2, right)",
                      fontsize=9)
    axes[2].legend(fontsize=8)


# ---------------------------------------------------------------- main
def main(small: bool = False, out: str | Path = ".", datasets_: tuple[str, ...] | None = None,
         n_train: int | None = None, repeats: int | None = None, seed: int = 0, C0: float = 1.0,
         verbose: bool = True) -> dict:
    """Run the comparison, save ``local_rademacher.png`` under ``out`` and return a report.

    Parameters
    ----------
    small : bool
        Smoke-test size: ionosphere only, 50 training points, 100 + 100 for
        validation and test, one split (seconds).
    out : str or Path
        Output directory (created if missing).
    datasets_ : tuple of str, optional
        Names from :mod:`mklopt.datasets` (default ionosphere and diabetes).
    n_train, repeats : int, optional
        Training size (default 100, as the paper's smallest n) and number of splits (default 5).
    seed : int
        Seed of the first split (split r uses ``seed + r``).
    C0 : float
        SVM constant for unit-diagonal kernels; every method uses ``C = C0 * n``.

    Returns
    -------
    dict
        ``report["datasets"][name]`` has ``methods`` (test AUC mean/std, accuracy,
        trace shares, θ), ``single_auc``, ``tail_sums``; ``report["figure"]`` the PNG.
    """
    start = time.perf_counter()
    names = datasets_ or (("ionosphere",) if small else DEFAULT_DATASETS)
    n_train = n_train or (50 if small else 100)
    repeats = repeats or (1 if small else 5)
    n_eval = 100 if small else None
    report = {"datasets": {name: run_dataset(name, n_train, repeats, C0, seed, n_eval) for name in names}}
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    report["figure"] = out / "local_rademacher.png"
    plot(report, report["figure"])
    report["seconds"] = time.perf_counter() - start
    if verbose:
        print_report(report)
    return report


def print_report(report: dict) -> None:
    """Per data set: test AUC (mean ± std), accuracy, θ and trace shares of every method."""
    print("Data: UCI sets from mklopt.datasets; the paper's TSS and protein data are not "
          "shipped in any package mklopt uses, so these are not the paper's numbers.")
    for data in report["datasets"].values():
        n_tr, n_val, n_te = data["sizes"]
        print(f"\n{data['label']}: n_train = {n_tr}, validation {n_val}, test {n_te}, "
              f"{data['repeats']} splits, C = {data['C']:g}")
        print("kernels:", ", ".join(f"{k} (single AUC {100 * a:.1f})"
                                    for k, a in zip(data["kernels"], data["single_auc"])))
        for name, m in data["methods"].items():
            theta = f" theta={','.join(map(str, m['thetas'])):<9}" if "thetas" in m else " " * 16
            shares = np.array2string(m["trace_shares"], precision=3, suppress_small=True)
            print(f"{name:5s}{theta} test AUC {100 * m['test_auc']:.2f} ± {100 * m['test_auc_std']:.2f}  "
                  f"accuracy {100 * m['test_accuracy']:.2f}  trace shares {shares}")
    print(f"figure: {report['figure']}  ({report['seconds']:.1f} s)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", "--quick", action="store_true", help="smoke-test size (seconds)")
    parser.add_argument("--out", default=".", help="directory for local_rademacher.png")
    parser.add_argument("--datasets", nargs="+", choices=sorted(datasets.DATASETS), default=None)
    parser.add_argument("--n-train", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--C0", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    main(small=args.small, out=args.out, datasets_=tuple(args.datasets) if args.datasets else None,
         n_train=args.n_train, repeats=args.repeats, seed=args.seed, C0=args.C0)
