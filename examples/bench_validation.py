"""Validating many small kernels: the checks a raw stack needs, against the fit they precede.

A stack a user hands over is checked before any solve: every entry finite, each
kernel symmetric, its fingerprint sketch, and an exact PSD test (a Cholesky
factorization of :math:`K_m+\\tau I`, :math:`\\tau` the rounding-noise level) for
kernels of up to 300 points, all in compiled loops over chunks of kernels on every
core. Instance: UCI sonar (208 points, standardized), M RBF kernels, each on 3
random features with a random width (:math:`\\gamma\\in[0.02, 0.7]`), C = 1. One run prints:

* ``read``: one pass over the stack by the fastest plain NumPy way (a max);
* ``validate``: ``mklopt.KernelSet(stack)`` (per kernel in ms);
* ``fit``: ``mklopt.fit(kernel_set, y, "wrapper", p=2, tol=1e-3)`` on the validated set;
* ``raw fit``: the same fit from the raw stack (validation included);
* ``validate/fit``: target at most 1 at M = 20,000 (a 6.9 GB stack);
* the cutting plane (p = 1) the same way, validated and raw, 20 iterations each (at
  thousands of kernels ℓ1's cutting plane needs more than a thousand), and ``raw / (fit
  + read + validate)``: target at most 1.5 (validation is one screen of the stack, not a
  second fit).

Run: ``python examples/bench_validation.py`` (M = 20,000; ``--M`` to change;
``--small``: M = 300; the figure goes to ``--out``, default ``figures``).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import mklopt
from mklopt.plotting import save_figure
from mklopt.datasets import load_sonar


#: Iterations of each cutting-plane fit (the same work validated and raw).
CUTTING_PLANE_ITERATIONS = 20


def sonar_stack(M: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """M RBF kernels on 3 random features each, and the labels."""
    X, y = load_sonar(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    rng = np.random.default_rng(seed)
    per_feature = (X.T[:, :, None] - X.T[:, None, :]) ** 2  # (d, n, n)
    K = np.empty((M, len(y), len(y)))
    for m in range(M):
        a, b, c = rng.choice(X.shape[1], 3, replace=False)
        np.add(per_feature[a], per_feature[b], out=K[m])
        K[m] += per_feature[c]
        K[m] *= -rng.uniform(0.05, 2.0) / 3
        np.exp(K[m], out=K[m])
    return K, y


def seconds(call) -> tuple[float, object]:
    start = time.perf_counter()
    out = call()
    return time.perf_counter() - start, out


def plot(row: dict, out) -> None:
    """Bars of the measured seconds, saved as ``bench_validation.png`` in ``out``."""
    import matplotlib.pyplot as plt

    labels = ["one read", "validation", "fit (validated)", "fit (raw stack)"]
    values = [row["read"], row["validate"], row["fit"], row["raw"]]
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.barh(labels[::-1], values[::-1])
    ax.set(xlabel="seconds", title=f"{row['M']:,} kernels on {row['n']} points ({row['GB']:.2f} GB)")
    fig.tight_layout()
    save_figure(fig, Path(out) / "bench_validation.png", dpi=100)


def main(small: bool = False, out=None, argv=None) -> dict:
    """Command-line entry; ``small=True`` runs M = 300, ``out`` is the figure's folder."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--M", type=int, default=20_000, help="number of kernels (default 20,000)")
    parser.add_argument("--small", action="store_true", help="M = 300 (seconds)")
    parser.add_argument("--out", default=None, help="folder for the figure (default: figures)")
    args = parser.parse_args(argv if argv is not None else ([] if small else None))
    M = 300 if (small or args.small) else args.M
    mklopt.compile()  # untimed: the compiled core compiled (first run) or loaded before the clocks
    K, y = sonar_stack(M)
    read, _ = seconds(lambda: float(K.max()))
    validate, kernels = seconds(lambda: mklopt.KernelSet(K))
    fit, result = seconds(lambda: mklopt.fit(kernels, y, "wrapper", C=1.0, p=2.0, tol=1e-3))
    raw, raw_result = seconds(lambda: mklopt.fit(K, y, "wrapper", C=1.0, p=2.0, tol=1e-3))
    cp = dict(C=1.0, p=1.0, tol=1e-3, max_iter=CUTTING_PLANE_ITERATIONS)
    cp_fit, cp_result = seconds(lambda: mklopt.fit(kernels, y, "cutting_plane", **cp))
    cp_raw, cp_raw_result = seconds(lambda: mklopt.fit(K, y, "cutting_plane", **cp))
    row = {"M": M, "n": K.shape[1], "GB": K.nbytes / 1e9, "read": read, "validate": validate,
           "per_kernel_ms": 1e3 * validate / M, "validated_by": kernels.validated_by, "fit": fit,
           "raw": raw, "status": result.status, "rel_gap": result.rel_gap, "iterations": result.iterations}
    print(f"{'M':>7} {'n':>4} {'GB':>5} {'read s':>7} {'validate s':>10} {'ms/kernel':>9} {'fit s':>6} "
          f"{'raw fit s':>9} {'validate/fit':>12}  status")
    print(f"{M:>7} {row['n']:>4} {row['GB']:5.2f} {read:7.2f} {validate:10.2f} {row['per_kernel_ms']:9.3f} "
          f"{fit:6.2f} {raw:9.2f} {validate / fit:12.2f}  {result.status} ({result.iterations} iterations, "
          f"rel_gap {result.rel_gap:.1e}; raw: {raw_result.status}); PSD test: {kernels.validated_by}")
    floor = cp_fit + read + validate
    row.update(cp_fit=cp_fit, cp_raw=cp_raw, cp_ratio=cp_raw / floor)
    print(f"cutting plane, p = 1: fit {cp_fit:.2f} s ({cp_result.status}, {cp_result.iterations} iterations, "
          f"rel_gap {cp_result.rel_gap:.1e}), from the raw stack {cp_raw:.2f} s ({cp_raw_result.status}); "
          f"raw / (fit + read + validate) = {cp_raw / floor:.2f} (target <= 1.5)")
    plot(row, out or args.out or "figures")
    return row


if __name__ == "__main__":
    main()
