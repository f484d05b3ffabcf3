"""The thesis' runtime experiment (Kloft's ℓp-norm MKL thesis, TU Berlin 2011, §3.4, Fig. 3.1) for interleaved optimization.

ℓp-MKL with the hinge loss, C = 1, certified relative gap 1e-3, on UCI Letter
Recognition (A–M vs N–Z, standardized; ``mklopt.datasets.load("letter")``, the
first n points). The thesis used MNIST odd vs even, which no package mklopt uses
ships; this is a real 20,000-point set in its place.

1. **Runtime against n** (``--ns``), 50 RBF kernels with
   :math:`2\\sigma^2 \\in 1.2^0, \\dots, 1.2^{49}`, p = 4/3 and p = 1:
   ``chunking`` on kernels computed on the fly (``lazy``), ``chunking`` on the
   precomputed stack, ``wrapper`` (p = 4/3), ``cutting_plane`` and ``simplemkl``
   (p = 1) where the stack fits (``--dense-max-n``; SimpleMKL stops at
   ``--simplemkl-seconds`` and says so), one SVC on the uniform
   sum kernel (precomputed, where it fits), and one scikit-learn
   ``SVC(kernel="rbf")`` at the middle bandwidth computing its kernel on the
   fly with the same cache size (the reference of the ≤ 10× target).
2. **Runtime against M** at n = 1,000 (``--Ms``), :math:`2\\sigma^2 \\in 2^0, \\dots,
   2^{M-1}` (widths below :math:`2^{-1022}` are clipped there: those kernels are
   all-ones to rounding anyway), chunking on the fly, p = 4/3 and p = 1.
3. **Dense stacks at n = 2,000 and 5,000** (``--dense-n``), p = 4/3: chunking against the
   wrapper on the same stack, against one SVC on :math:`K_\\mu` at the weights found, and
   against what ``driver="auto"`` estimates for both on this machine's threads
   (:mod:`mklopt.estimators.cost`): its choice, and whether that was the faster.

Each measurement runs in its own process: the time is the fit alone (kernels
on the fly are built inside it, as they cost nothing up front; loading the
compiled numba code, ~0.4 s once per process, is done before), the memory is
that process's peak resident set. Ratios are printed from this one run.

Run: ``python examples/bench_chunking.py`` (``mklopt bench chunking``), or
smaller: ``--ns 1000,2000 --Ms 10,100 --dense-n 0``.
"""

from __future__ import annotations

import argparse
import json
import functools
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

TOL, C = 1e-3, 1.0


@functools.lru_cache(maxsize=1)
def _letter() -> tuple[np.ndarray, np.ndarray]:
    from mklopt.datasets import load

    return load("letter", return_X_y=True)


def letter(n: int) -> tuple[np.ndarray, np.ndarray]:
    X, y = _letter()
    X, y = X[:n], y[:n].astype(float)
    return (X - X.mean(axis=0)) / X.std(axis=0), y


def widths(M: int, base: float) -> list[float]:
    return [max(base ** -k, 2.0 ** -1022) for k in range(M)]


def run_one(method: str, n: int, M: int, p: float, base: float, cache_mb: float,
            time_limit: float = 600.0) -> dict:
    """One measurement in this process: fit time, status, gap, peak RSS."""
    import mklopt
    from sklearn.svm import SVC

    warm_up()
    X, y = letter(n)
    gammas = widths(M, base)
    specs = [("rbf", {"gamma": g}) for g in gammas]
    out: dict = {"method": method, "n": n, "M": M, "p": p}
    if method == "svc_rbf":
        start = time.perf_counter()
        SVC(kernel="rbf", gamma=gammas[M // 2], C=C, cache_size=cache_mb).fit(X, y)
        out["seconds"] = time.perf_counter() - start
    elif method == "svc_sum":
        ks = mklopt.KernelSet.from_data(X, specs)
        K = ks.combined(np.full(M, 1.0 / M))
        start = time.perf_counter()
        SVC(kernel="precomputed", C=C).fit(K, y)
        out["seconds"] = time.perf_counter() - start
    else:
        lazy = method == "chunking_lazy"
        ks = mklopt.KernelSet.from_data(X, specs, lazy=lazy)
        driver = "chunking" if method.startswith("chunking") else method
        options = {"cache_mb": cache_mb} if driver == "chunking" else {}
        start = time.perf_counter()
        result = mklopt.fit(ks, y, driver, C=C, p=p, tol=TOL, time_limit=time_limit, **options)
        out["seconds"] = time.perf_counter() - start
        out.update(status=result.status, rel_gap=result.rel_gap, iterations=result.iterations,
                   pairs=result.info.get("smo_pairs"))
        if not lazy:
            K = ks.combined(result.weights)
            start = time.perf_counter()
            SVC(kernel="precomputed", C=C, tol=1e-3).fit(K, y)
            out["svc_at_weights"] = time.perf_counter() - start
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


@functools.cache
def warm_up() -> None:
    """Load (or compile) the numba code of every kernel representation outside the timings."""
    import mklopt

    X, y = letter(60)
    dense = mklopt.KernelSet.from_data(X, ["linear", "rbf"])
    for kernels in (dense, mklopt.KernelSet.from_data(X, ["linear", "rbf"], lazy=True)):
        mklopt.fit(kernels, y, "chunking", tol=1e-2)


#: Whether each measurement runs in a fresh process (its own peak memory). ``--small``
#: measures in this process: it checks that the script runs, and the peak RSS column
#: is then this process's peak so far.
FRESH_PROCESS = True


def measure(method: str, n: int, M: int, p: float, base: float, cache_mb: float,
            time_limit: float = 600.0) -> dict:
    """:func:`run_one` in a fresh process (its own peak memory), or here when small."""
    if not FRESH_PROCESS:
        return run_one(method, n, M, p, base, cache_mb, time_limit)
    cmd = [sys.executable, str(Path(__file__).resolve()), "--single",
           json.dumps([method, n, M, p, base, cache_mb, time_limit])]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        return {"method": method, "n": n, "M": M, "p": p, "error": done.stderr.strip().splitlines()[-1:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def row(r: dict, reference: float | None) -> str:
    if "error" in r:
        return f"  {r['method']:<15} {r['n']:>6} {r['M']:>6} {r['p']:>5.3g}  failed: {r['error']}"
    ratio = f"{r['seconds'] / reference:7.1f}x" if reference else "      -"
    gap = f"{r['rel_gap']:.1e} {r['status']}" if "rel_gap" in r else ""
    return (f"  {r['method']:<15} {r['n']:>6} {r['M']:>6} {r['p']:>5.3g} {r['seconds']:9.2f}s {ratio}"
            f" {r['peak_mb']:8.0f} MB  {gap}")


def plot_runtimes(rows: list[dict], out) -> None:
    """Runtime against n, one line per (method, p), saved as ``bench_chunking.png``."""
    from pathlib import Path

    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for key in sorted({(r["method"], r["p"]) for r in rows}):
        points = sorted((r["n"], r["seconds"]) for r in rows
                        if (r["method"], r["p"]) == key and "seconds" in r)
        if points:
            label = key[0] if key[0].startswith("svc") else f"{key[0]}, p = {key[1]:.3g}"
            ax.plot(*zip(*points), marker="o", label=label)
    ax.set(xscale="log", yscale="log", xlabel="training points n", ylabel="fit time (s)",
           title="50 RBF kernels, certified gap 1e-3 (letter, A-M vs N-Z)")
    ax.legend(fontsize=8)
    Path(out).mkdir(parents=True, exist_ok=True)
    fig.savefig(Path(out) / "bench_chunking.png", dpi=110, bbox_inches="tight")
    plt.close(fig)


def main(small: bool = False, out=None, argv=None) -> list[dict]:
    """Command-line entry; ``small=True`` runs n = 300 and M = 10 (seconds)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ns", default=None, help="training sizes (default 1000,...,20000)")
    parser.add_argument("--Ms", default=None, help="numbers of kernels at n = 1000 (default 10,...,10000)")
    parser.add_argument("--dense-max-n", type=int, default=None,
                        help="largest n for methods on the precomputed stack (default 3000)")
    parser.add_argument("--dense-n", default=None, help="sizes of part 3 (default 2000,5000; 0 skips)")
    parser.add_argument("--cache-mb", type=float, default=256.0)
    parser.add_argument("--simplemkl-seconds", type=float, default=120.0,
                        help="time limit of SimpleMKL (status time_limit when reached; default 120)")
    parser.add_argument("--out", default=None, help="folder for bench_chunking.png")
    parser.add_argument("--single", help=argparse.SUPPRESS)
    args = parser.parse_args(argv if argv is not None else ([] if small else None))
    if args.single:
        print(json.dumps(run_one(*json.loads(args.single))))
        return []
    ns = args.ns or ("300" if small else "1000,2000,5000,10000,20000")
    Ms = args.Ms or ("10" if small else "10,100,1000,10000")
    dense_max_n = args.dense_max_n or (300 if small else 3000)
    global FRESH_PROCESS
    FRESH_PROCESS = not small
    if small:
        args.simplemkl_seconds = min(args.simplemkl_seconds, 5.0)
        print("(--small: every measurement in this process; peak RSS is the process's so far)")
    dense_ns = [int(v) for v in (args.dense_n or ("200" if small else "2000,5000")).split(",") if int(v)]
    rows = runtime_against_n([int(v) for v in ns.split(",") if v], dense_max_n, args.cache_mb,
                             args.simplemkl_seconds)
    runtime_against_M([int(v) for v in Ms.split(",") if v], args.cache_mb)
    if dense_ns:
        dense_comparison(dense_ns, args.cache_mb)
    if out is not None or args.out is not None:
        plot_runtimes(rows, out if out is not None else args.out)
    return rows


HEADER = (f"  {'method':<15} {'n':>6} {'M':>6} {'p':>5} {'fit':>10} {'/SVC':>8} {'peak RSS':>11}"
          "  certified gap")


def runtime_against_n(ns: list[int], dense_max_n: int, cache_mb: float,
                      simplemkl_seconds: float) -> list[dict]:
    print("1. runtime against n: 50 RBF kernels, 2 sigma^2 = 1.2^0..1.2^49; /SVC = against one "
          "SVC(kernel='rbf') at the middle width")
    print(HEADER)
    rows = []
    for n in ns:
        svc = measure("svc_rbf", n, 50, 0, 1.2, cache_mb)
        print(row(svc, None), flush=True)
        rows.append(svc)
        plan = [("chunking_lazy", 4 / 3), ("chunking_lazy", 1.0)]
        if n <= dense_max_n:
            plan += [("chunking_dense", 4 / 3), ("chunking_dense", 1.0), ("wrapper", 4 / 3),
                     ("cutting_plane", 1.0), ("simplemkl", 1.0), ("svc_sum", 0)]
        for method, p in plan:
            limit = simplemkl_seconds if method == "simplemkl" else 1800.0
            rows.append(measure(method, n, 50, p, 1.2, cache_mb, limit))
            print(row(rows[-1], svc.get("seconds")), flush=True)
    return rows


def runtime_against_M(Ms: list[int], cache_mb: float) -> None:
    print("\n2. runtime against M at n = 1000: 2 sigma^2 = 2^0..2^(M-1), chunking on the fly")
    print(HEADER)
    for M in Ms:
        for p in (4 / 3, 1.0):
            print(row(measure("chunking_lazy", 1000, M, p, 2.0, cache_mb), None), flush=True)


def dense_comparison(ns: list[int], cache_mb: float) -> None:
    import numba

    from mklopt.estimators.cost import choose_driver

    threads = numba.get_num_threads()
    print(f"\n3. dense stacks, 50 kernels, p = 4/3: chunking against the wrapper and against one SVC "
          f"on K_mu at the weights found; driver='auto''s estimates for both on {threads} threads")
    print(HEADER)
    for n in ns:
        chunk = measure("chunking_dense", n, 50, 4 / 3, 1.2, cache_mb)
        wrap = measure("wrapper", n, 50, 4 / 3, 1.2, cache_mb)
        print(row(chunk, None))
        print(row(wrap, None))
        if "error" in chunk or "error" in wrap:
            continue
        choice = choose_driver(n, 50, polyhedral=False, C=C, threads=threads)
        faster = "chunking" if chunk["seconds"] <= wrap["seconds"] else "wrapper"
        print(f"  n = {n}: wrapper / chunking = {wrap['seconds'] / chunk['seconds']:.2f}x; "
              f"chunking / SVC on K_mu = {chunk['seconds'] / chunk['svc_at_weights']:.1f}x; "
              f"auto estimates chunking {choice.core_seconds:.2f} s, wrapper {choice.outer_seconds:.2f} s "
              f"-> {choice.driver} ({'the faster' if choice.driver == faster else 'NOT the faster'})")


if __name__ == "__main__":
    main()
