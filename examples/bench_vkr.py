"""Benchmark: VKR by coordinate descent (``vkr_cd``) against the LP (``vkr_lp``, HiGHS).

Digits odd vs. even (scikit-learn), features scaled to [0, 1] and divided by sqrt(64),
polynomial kernels :math:`(x^\\top x'+1)^d`, d = 1..M, Lemma-3 penalties, λ = 1e-2,
β = 1e-3. For each training size m the script prints the wall time of
``mklopt.fit(..., "vkr_cd", tol=1e-8)`` and of ``mklopt.solve(..., "vkr_lp")`` (CVXPY
compilation included), their ratio (measured in the same run), both certified
objective values and the number of nonzero coefficients, and saves a log-log plot.

Run ``python examples/bench_vkr.py`` (m = 200, 500, 1000, M = 4; about a minute) or
``--sizes 200 500 --kernels 10``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits

import mklopt

PARAMS = {"lam": 1e-2, "beta": 1e-3, "penalty": "trace"}


def instance(m: int, M: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``m`` digits (odd vs. even) and M polynomial kernels of degrees 1..M."""
    X, digit = load_digits(return_X_y=True)
    idx = np.random.default_rng(seed).choice(len(digit), size=min(m, len(digit)), replace=False)
    Z = X[idx] / 16.0 / np.sqrt(X.shape[1])
    G = Z @ Z.T + 1.0
    return np.stack([G**d for d in range(1, M + 1)]), np.where(digit[idx] % 2 == 1, 1, -1)


def time_both(K: np.ndarray, y: np.ndarray) -> dict:
    """Wall times and certificates of both solvers on one instance."""
    start = time.perf_counter()
    cd = mklopt.fit(K, y, "vkr_cd", tol=1e-8, **PARAMS)
    t_cd = time.perf_counter() - start
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        lp = mklopt.solve(K, y, "vkr_lp", **PARAMS)
    t_lp = time.perf_counter() - start
    return {"m": K.shape[1], "M": K.shape[0], "cd": t_cd, "lp": t_lp, "ratio": t_lp / t_cd,
            "cd_primal": cd.primal, "lp_primal": lp.primal, "cd_status": cd.status,
            "lp_status": lp.status, "cd_iterations": cd.iterations,
            "cd_nnz": int(np.count_nonzero(cd.alpha)), "lp_nnz": int(np.count_nonzero(lp.alpha))}


def run(sizes, M: int) -> list[dict]:
    rows = []
    print(f"{'m':>5} {'M':>3} {'vkr_cd s':>9} {'vkr_lp s':>9} {'lp/cd':>7} {'cd objective':>15} "
          f"{'lp objective':>15} {'cd it':>5} {'nnz cd/lp':>9} status")
    for m in sizes:
        row = time_both(*instance(m, M))
        rows.append(row)
        print(f"{row['m']:5d} {row['M']:3d} {row['cd']:9.3f} {row['lp']:9.3f} {row['ratio']:7.1f} "
              f"{row['cd_primal']:15.10f} {row['lp_primal']:15.10f} {row['cd_iterations']:5d} "
              f"{row['cd_nnz']:>4d}/{row['lp_nnz']:<4d} {row['cd_status']}/{row['lp_status']}")
    return rows


def figure(rows: list[dict], folder: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(5, 3.5))
    m = [r["m"] for r in rows]
    ax.loglog(m, [r["cd"] for r in rows], "o-", label="vkr_cd (CD + corrective LPs)")
    ax.loglog(m, [r["lp"] for r in rows], "s-", label="vkr_lp (HiGHS)")
    ax.set_xlabel("training points m")
    ax.set_ylabel("seconds")
    ax.set_title(f"VKR, {rows[0]['M']} polynomial kernels")
    ax.legend()
    fig.tight_layout()
    path = folder / "bench_vkr.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(small: bool = False, out=None, argv=None) -> dict:
    """Time both solvers and save the plot in ``out`` (default: the ``--out`` argument, the
    current folder). ``argv``: the command line (``--sizes``, ``--kernels``, ``--out``;
    ``sys.argv`` when None, none with ``small``); ``small``: m = 100, 200 with 3 kernels."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=None, help="training sizes m")
    parser.add_argument("--kernels", type=int, default=4, help="number of polynomial kernels M")
    parser.add_argument("--small", action="store_true", help="m = 100, 200 with 3 kernels (tests)")
    parser.add_argument("--out", default=".", help="folder for the PNG")
    args = parser.parse_args(argv if argv is not None else ([] if small else None))
    small = small or args.small
    sizes = args.sizes or ((100, 200) if small else (200, 500, 1000))
    rows = run(sizes, 3 if small else args.kernels)
    path = figure(rows, Path(out if out is not None else args.out))
    print(f"wrote {path}")
    return {"rows": rows, "figure": path}


if __name__ == "__main__":
    main()
