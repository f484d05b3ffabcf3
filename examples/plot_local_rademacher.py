"""Local Rademacher MKL (``conv`` and ``dc``) on five feature views of digits.

Reproduces the setting of Cortes, Kloft & Mohri (2013), §5.1 and Figure 2,
on data shipped with scikit-learn: the binary task "digit < 5" with five
kernels, one per feature view of the 8x8 images (pixels, row sums, column
sums, gradient magnitudes, a 4x4 downsample). Compared methods:

* ``unif``: SVM on the uniform combination,
* ``l1`` and ``l2``: ℓp-MKL with weight norm p = 1, 2 (:math:`\\|\\mu\\|_p\\le1`),
* ``conv``: tail-sum normalization :math:`K_m/\\sum_{j>\\theta}\\lambda_j(K_m)`
  followed by ℓ1-MKL (``ks.normalized("tail_sum", theta=θ)`` then ``fit``),
* ``dc``: the DC algorithm over :math:`\\{\\sum_{j>\\theta}\\lambda_j(K_\\mu)\\le1\\}`
  (``fit(ks, y, "dca", theta=θ, inner="wrapper")``: the paper's alternation,
  SVM by libsvm then :math:`\\mu_m\\propto\\|w_m\\|/\\sqrt{v_m}`, run on each
  linearized subproblem to a certified gap of tol/10),

with θ chosen on a validation split from {1, 2, 4, 8, 16} by AUC. Every
method sees kernels of unit scale (trace 1, resp. tail sum 1) and the same
``C = C0 * n``, so ``C0 = 1`` is the usual SVM constant for unit-diagonal
kernels and θ = 0 would make ``conv`` and ``dc`` coincide with ``l1``.

Run ``python examples/plot_local_rademacher.py [--small] [--out DIR]``; the
figure ``local_rademacher.png`` has the test AUCs (left), the kernel weights
as shares of the combined kernel's trace with each kernel's single-kernel
AUC (center), and each kernel's tail sum against the cutoff θ (right, as in
the paper's Figure 2).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits
from sklearn.metrics import roc_auc_score
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel
from sklearn.svm import SVC

import mklopt
from mklopt.plotting import plot_tail_sums

THETAS = (1, 2, 4, 8, 16)
METHODS = ("unif", "l1", "l2", "conv", "dc")


# ---------------------------------------------------------------- data
def digit_views(images: np.ndarray) -> dict[str, np.ndarray]:
    """Five feature views of 8x8 digit images (values in [0, 16])."""
    img = images / 16.0
    n = img.shape[0]
    grad = np.hstack([np.abs(np.diff(img, axis=2)).reshape(n, -1),
                      np.abs(np.diff(img, axis=1)).reshape(n, -1)])
    return {"pixels": img.reshape(n, -1), "rows": img.sum(axis=2), "cols": img.sum(axis=1),
            "gradient": grad, "coarse": img.reshape(n, 4, 2, 4, 2).mean(axis=(2, 4)).reshape(n, -1)}


def _kernel(name: str, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    gamma = 1.0 / A.shape[1]
    if name == "coarse":
        return polynomial_kernel(A, B, degree=2, gamma=gamma, coef0=1.0)
    return rbf_kernel(A, B, gamma=gamma)


def split(n_total: int, n_train: int, n_val: int, n_test: int, seed: int) -> tuple[np.ndarray, ...]:
    perm = np.random.default_rng(seed).permutation(n_total)
    a, b = n_train, n_train + n_val
    return perm[:a], perm[a:b], perm[b:b + n_test]


def make_kernels(views: dict[str, np.ndarray], train: np.ndarray,
                 others: dict[str, np.ndarray]) -> tuple[mklopt.KernelSet, dict[str, np.ndarray]]:
    """Trace-1 training kernels and raw test-vs-train stacks (standardized on the training rows)."""
    train_k, other_k = [], {key: [] for key in others}
    for name, F in views.items():
        mean, std = F[train].mean(axis=0), F[train].std(axis=0) + 1e-9
        Z = (F - mean) / std
        train_k.append(_kernel(name, Z[train], Z[train]))
        for key, idx in others.items():
            other_k[key].append(_kernel(name, Z[idx], Z[train]))
    ks = mklopt.KernelSet(np.stack(train_k), names=list(views)).normalized("trace")
    return ks, {key: np.stack(v) for key, v in other_k.items()}


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


# ---------------------------------------------------------------- plot
def plot(report: dict, ks: mklopt.KernelSet, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    aucs = [100 * report["methods"][m]["test_auc"] for m in METHODS]
    labels = [m if m not in ("conv", "dc") else f"{m}\n(θ={report['methods'][m]['theta']})"
              for m in METHODS]
    axes[0].bar(labels, aucs, color="tab:blue")
    axes[0].set_ylim(min(aucs) - 1.0, min(100.0, max(aucs) + 0.5))
    axes[0].set_ylabel("test AUC (%)")
    axes[0].set_title(f"digit < 5, n = {report['n_train']}")
    for i, a in enumerate(aucs):
        axes[0].text(i, a, f"{a:.2f}", ha="center", va="bottom", fontsize=8)
    width = 0.8 / len(METHODS)
    x = np.arange(ks.M)
    for i, m in enumerate(METHODS):
        axes[1].bar(x + (i - 2) * width, report["methods"][m]["trace_shares"], width, label=m)
    axes[1].set_xticks(x, [f"{n}\n{100 * a:.1f}" for n, a in zip(ks.names, report["single_auc"])])
    axes[1].set_ylabel("share of Tr K_μ")
    axes[1].set_title("kernel weights (below: single-kernel AUC)")
    axes[1].legend(fontsize=8)
    plot_tail_sums(ks, 32, ax=axes[2])  # trace-1 kernels: relative = absolute
    axes[2].set_title("tail sum vs cutoff θ (paper's Figure 2, right)")
    axes[2].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ---------------------------------------------------------------- main
def main(small: bool = False, out: str | Path = ".", seed: int = 0, C0: float = 1.0,
         verbose: bool = True) -> dict:
    """Run the comparison, save ``local_rademacher.png`` under ``out`` and return a report.

    Parameters
    ----------
    small : bool
        Smoke-test size (60 training points, < 30 s) instead of 150.
    out : str or Path
        Output directory (created if missing).
    seed : int
        Train/validation/test split seed.
    C0 : float
        SVM constant for unit-diagonal kernels; every method uses ``C = C0 * n``.
    """
    start = time.perf_counter()
    digits = load_digits()
    y_all = (digits.target < 5).astype(int)
    n_train, n_val, n_test = (60, 200, 400) if small else (150, 300, 800)
    train, val, test = split(y_all.size, n_train, n_val, n_test, seed)
    ks, T = make_kernels(digit_views(digits.images), train, {"val": val, "test": test})
    y, C = y_all[train], C0 * n_train
    fits = run_methods(ks, y, C, T["val"], y_all[val])
    methods = {}
    for name, (result, kset, info) in fits.items():
        scores = _scores(result, kset, T["test"])
        predicted = result.predict(kset.transform_test(T["test"]))
        methods[name] = {"test_auc": roc_auc_score(y_all[test], scores),
                         "test_accuracy": float(np.mean(predicted == y_all[test])),
                         "weights": np.asarray(result.weights),
                         "trace_shares": _trace_shares(result, kset), **info}
    report = {"n_train": n_train, "C": C, "methods": methods, "kernels": list(ks.names),
              "single_auc": single_kernel_auc(ks, y, C, T["test"], y_all[test]),
              "tail_sums": {t: ks.tail_sums(t) for t in (0, *THETAS)}}
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    report["figure"] = out / "local_rademacher.png"
    plot(report, ks, report["figure"])
    report["seconds"] = time.perf_counter() - start
    if verbose:
        print_report(report)
    return report


def print_report(report: dict) -> None:
    print(f"digit < 5: n_train = {report['n_train']}, C = {report['C']:g}")
    print("kernels:", ", ".join(f"{k} (single AUC {100 * a:.1f})"
                                for k, a in zip(report["kernels"], report["single_auc"])))
    for name, m in report["methods"].items():
        theta = f" theta={m['theta']:<2d}" if "theta" in m else " " * 9
        shares = np.array2string(m["trace_shares"], precision=3, suppress_small=True)
        print(f"{name:5s}{theta} test AUC {100 * m['test_auc']:.2f}  accuracy "
              f"{100 * m['test_accuracy']:.2f}  trace shares {shares}")
        if "val_auc" in m:
            print("            validation AUC by theta:",
                  ", ".join(f"{t}: {100 * a:.2f}" for t, a in m["val_auc"].items()))
    print("tail sums (trace-1 kernels) at theta = "
          + "; ".join(f"{t}: {np.array2string(v, precision=3)}" for t, v in report["tail_sums"].items()))
    print(f"figure: {report['figure']}  ({report['seconds']:.1f} s)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="smoke-test size (< 30 s)")
    parser.add_argument("--out", default=".", help="directory for local_rademacher.png")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    main(small=args.small, out=args.out, seed=args.seed)
