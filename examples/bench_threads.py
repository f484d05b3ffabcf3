"""How one interleaved-core fit scales with the cores, and what shrinking saves.

One problem, not several side by side: UCI Letter Recognition (A–M vs N–Z, the first
n points, standardized; ``mklopt.datasets.load("letter")``), 50 RBF kernels with
:math:`2\\sigma^2\\in1.2^0,\\dots,1.2^{49}` computed on the fly, ℓp-MKL with p = 4/3,
C = 1, certified relative gap 1e-3, ``mklopt.fit(..., "chunking")``.

1. **Threads**: the same fit on 1, 2, 4, ... threads up to the machine's cores
   (``--threads``), each in its own process started with ``NUMBA_NUM_THREADS`` set; the
   table prints the threads the process used (numba's count and threading layer), the
   fit time, the speedup over one thread and the SMO pairs (the same on every row: the
   pairs do not depend on the number of threads).
2. **Shrinking**: the fit on one thread and on all of them with ``shrinking=False``.

On a shared machine whose speed drifts between runs, ``--repeat R`` runs R rounds over
the thread counts in turn (1, 2, ..., 1, 2, ...: a slow spell falls on every count) and
each row is the round with the median time; the rounds are printed as they finish.

3. **Contention** (``--busy``): the same thread counts again while one other process keeps a
   core busy (a Python loop this script starts and stops), then the ratio of each count's
   time idle and busy. Two threads must not be slower than one there: the compiled loops
   wait passively (``OMP_WAIT_POLICY=PASSIVE``, set by mklopt on import). Measured on 2 cores,
   n = 4,000, 20 kernels (``--n 4000 --M 20 --threads 1,2 --busy``): see the Benchmarks page.

4. **Grid search** (``--grid``): ``GridSearchCV(make_pipeline(StandardScaler(), MKLClassifier()),
   C in {0.1, 1, 10, 100}, cv = 3)`` on binary digits (odd/even) with ``n_jobs=1`` and
   ``n_jobs=2``, idle and beside one busy process, rounds in turn after one untimed search
   each (which starts joblib's worker processes). A fit in a worker takes its share of the
   cores, so ``n_jobs=2`` must not be slower than ``n_jobs=1`` on 2 cores.

Run: ``python examples/bench_threads.py`` (``mklopt bench threads``); ``--n`` changes
the size (default 20,000), ``--small`` runs 400 points and 5 kernels in this process.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from mklopt.plotting import save_figure

TOL, C, P = 1e-3, 1.0, 4 / 3


def letter(n: int) -> tuple[np.ndarray, np.ndarray]:
    from mklopt.datasets import load

    X, y = load("letter", return_X_y=True)
    X, y = X[:n], y[:n].astype(float)
    return (X - X.mean(axis=0)) / X.std(axis=0), y


def run_one(n: int, M: int, shrinking: bool) -> dict:
    """One fit in this process on numba's current thread count."""
    import numba

    import mklopt

    X, y = letter(n)
    specs = [("rbf", {"gamma": 1.2 ** -k}) for k in range(M)]
    warm = mklopt.KernelSet.from_data(X[:60], specs, lazy=True)
    mklopt.fit(warm, y[:60], "chunking", p=P, tol=1e-2)  # load the compiled code outside the timing
    kernels = mklopt.KernelSet.from_data(X, specs, lazy=True)
    start = time.perf_counter()
    result = mklopt.fit(kernels, y, "chunking", C=C, p=P, tol=TOL, shrinking=shrinking)
    seconds = time.perf_counter() - start
    return {"threads": numba.get_num_threads(), "layer": numba.threading_layer(), "n": n, "M": M,
            "shrinking": shrinking, "seconds": seconds, "pairs": result.info["smo_pairs"],
            "iterations": result.iterations, "status": result.status, "rel_gap": result.rel_gap}


def measure(threads: int, n: int, M: int, shrinking: bool, fresh: bool) -> dict:
    """:func:`run_one` in a process started with ``NUMBA_NUM_THREADS=threads`` (or here)."""
    if not fresh:
        import numba

        before = numba.get_num_threads()
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        try:
            return run_one(n, M, shrinking)
        finally:
            numba.set_num_threads(before)
    env = dict(os.environ, NUMBA_NUM_THREADS=str(threads))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--single", json.dumps([n, M, shrinking])]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        return {"threads": threads, "shrinking": shrinking, "error": done.stderr.strip().splitlines()[-1:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def thread_counts(spec: str | None) -> list[int]:
    if spec:
        return [int(v) for v in spec.split(",") if v]
    cores, counts = os.cpu_count() or 1, [1]
    while counts[-1] * 2 <= cores:
        counts.append(counts[-1] * 2)
    return counts + ([cores] if counts[-1] != cores else [])


def line(r: dict, speedup: float | None) -> str:
    if "error" in r:
        return f"  {r['threads']:>7}  failed: {r['error']}"
    speedup = f"{speedup:7.2f}x" if speedup else "      -"
    return (f"  {r['threads']:>7} {r['layer']:>6} {str(r['shrinking']):>9} {r['seconds']:9.2f}s {speedup}"
            f" {r['pairs']:>8} {r['iterations']:>6}  {r['rel_gap']:.1e} {r['status']}")


def rounds(counts: list[int], n: int, M: int, repeat: int, fresh: bool) -> list[list[dict]]:
    """Each thread count's fits (shrinking on) over ``repeat`` rounds taken in turn."""
    runs: list[list[dict]] = [[] for _ in counts]
    for round_ in range(repeat):
        for threads, done in zip(counts, runs):
            done.append(measure(threads, n, M, True, fresh))
            r = done[-1]
            if repeat == 1:  # the table's rows as they finish
                print(line(r, _ratio(runs[0][-1], r)), flush=True)
            else:
                took = f"{r['seconds']:.2f}s" if "seconds" in r else f"failed: {r['error']}"
                print(f"  round {round_ + 1}: {threads} thread(s) {took}", flush=True)
    return runs


def median_run(runs: list[dict]) -> dict:
    """The run with the median time (the upper median of an even count); a failed run if any failed."""
    failed = [r for r in runs if "seconds" not in r]
    return failed[0] if failed else sorted(runs, key=lambda r: r["seconds"])[len(runs) // 2]


def _ratio(slow: dict, fast: dict) -> float | None:
    """``slow``'s time over ``fast``'s, when both ran."""
    return slow["seconds"] / fast["seconds"] if "seconds" in slow and "seconds" in fast else None


def main(small: bool = False, out=None, argv=None) -> list[dict]:
    """Command-line entry; ``small=True``: 400 points, 5 kernels, in this process (seconds)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=None, help="training points (default 20000)")
    parser.add_argument("--M", type=int, default=None, help="RBF kernels (default 50)")
    parser.add_argument("--threads", default=None, help="thread counts (default 1, 2, 4, ... cores)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="rounds over the thread counts; each row is the median round (default 1)")
    parser.add_argument("--out", default=None, help="folder for bench_threads.png")
    parser.add_argument("--busy", action="store_true",
                        help="measure the thread counts again with one other busy process (contention)")
    parser.add_argument("--grid", action="store_true",
                        help="only the grid search with n_jobs=1 and 2, idle and beside a busy process")
    parser.add_argument("--single", help=argparse.SUPPRESS)
    args = parser.parse_args(argv if argv is not None else ([] if small else None))
    if args.single:
        print(json.dumps(run_one(*json.loads(args.single))))
        return []
    if args.grid:
        return grid_searches(max(args.repeat, 1))
    n, M = args.n or (400 if small else 20_000), args.M or (5 if small else 50)
    counts = thread_counts(args.threads or ("1,2" if small else None))
    print(f"letter A-M vs N-Z, n = {n}, {M} RBF kernels on the fly, p = 4/3, C = 1, gap {TOL:g}; "
          f"{os.cpu_count()} cores")
    print(f"  {'threads':>7} {'layer':>6} {'shrinking':>9} {'fit':>10} {'speedup':>8} {'pairs':>8} "
          f"{'iters':>6}  certified gap")
    runs = rounds(counts, n, M, max(args.repeat, 1), not small)
    rows = [median_run(done) for done in runs]
    if args.repeat > 1:
        for r in rows:
            print(line(r, _ratio(rows[0], r)), flush=True)
        for threads, done in list(zip(counts, runs))[1:]:
            ratios = [_ratio(one, r) for one, r in zip(runs[0], done)]
            print(f"  {threads} threads, speedup in each round: "
                  + ", ".join(f"{v:.2f}x" if v else "-" for v in ratios))
    if args.busy:
        busy_rows = contention(counts, n, M, max(args.repeat, 1), not small, rows)
        rows += busy_rows
        if args.threads:  # the contention figures alone were asked for
            return rows
    print("  shrinking off (speedup column: this row's time over the time with shrinking):")
    for threads in sorted({counts[0], counts[-1]}):
        rows.append(measure(threads, n, M, False, not small))
        on = next((r for r in rows if r.get("threads") == threads and r.get("shrinking")), {})
        print(line(rows[-1], _ratio(rows[-1], on)), flush=True)
    folder = out if out is not None else args.out
    if folder is not None:
        plot(rows, Path(folder) / "bench_threads.png")
    return rows


BUSY_LOOP = "import time\nend = time.time() + 3600\nwhile time.time() < end:\n    pass\n"


def contention(counts: list[int], n: int, M: int, repeat: int, fresh: bool, idle: list[dict]) -> list[dict]:
    """The thread counts' fits while one other process spins on a core; prints the ratios."""
    print("  with one other busy process:", flush=True)
    busy = subprocess.Popen([sys.executable, "-c", BUSY_LOOP])
    try:
        rows = [median_run(done) for done in rounds(counts, n, M, repeat, fresh)]
    finally:
        busy.kill()
        busy.wait()
    for r in rows:
        r["busy"] = True
        if repeat > 1:
            print(line(r, _ratio(rows[0], r)), flush=True)
    for threads, quiet, loaded in zip(counts, idle, rows):
        print(f"  {threads} thread(s): busy / idle = {_fmt(_ratio(loaded, quiet))}; "
              f"{threads} vs 1 thread: idle {_fmt(_ratio(idle[0], quiet))}, busy {_fmt(_ratio(rows[0], loaded))}")
    return rows


def grid_searches(repeat: int) -> list[dict]:
    """``GridSearchCV`` of the default pipeline with ``n_jobs`` 1 and 2, idle and busy; prints
    each round and the median ratio n_jobs=2 / n_jobs=1."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    import mklopt
    from mklopt.estimators import forget_kernels

    X, y = load_digits(return_X_y=True)
    y = y % 2

    def search(jobs: int) -> float:
        model = make_pipeline(StandardScaler(), mklopt.MKLClassifier())
        forget_kernels()  # each search starts without the last one's kernels
        start = time.perf_counter()
        GridSearchCV(model, {"mklclassifier__C": [0.1, 1, 10, 100]}, cv=3, n_jobs=jobs).fit(X, y)
        return time.perf_counter() - start

    print(f"binary digits, GridSearchCV(StandardScaler + MKLClassifier(), 4 C, cv = 3); {os.cpu_count()} cores")
    rows = []
    for label in ("idle", "busy"):
        busy = subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) if label == "busy" else None
        try:
            search(1), search(2)  # untimed: compiled code loaded, joblib's workers started
            times = {1: [], 2: []}
            for round_ in range(repeat):
                for jobs in (1, 2):
                    times[jobs].append(search(jobs))
                print(f"  {label}, round {round_ + 1}: n_jobs=1 {times[1][-1]:.2f}s, n_jobs=2 {times[2][-1]:.2f}s",
                      flush=True)
        finally:
            if busy is not None:
                busy.kill()
                busy.wait()
        one, two = float(np.median(times[1])), float(np.median(times[2]))
        print(f"  {label}: n_jobs=1 {one:.2f}s, n_jobs=2 {two:.2f}s (medians): n_jobs=2 / n_jobs=1 = {two / one:.2f}")
        rows.append({"load": label, "n_jobs=1": one, "n_jobs=2": two})
    return rows


def _fmt(ratio: float | None) -> str:
    return f"{ratio:.2f}x" if ratio else "-"


def plot(rows: list[dict], path: Path) -> None:
    from mklopt.plotting import _pyplot

    fig, ax = _pyplot().subplots(figsize=(6, 4))
    timed = sorted((r["threads"], r["seconds"]) for r in rows
                   if r.get("shrinking") and "seconds" in r and not r.get("busy"))
    if timed:
        threads, seconds = zip(*timed)
        ax.plot(threads, [seconds[0] / s for s in seconds], marker="o", label="measured")
        ax.plot(threads, threads, ls=":", color="gray", label="linear")
    ax.set(xlabel="threads", ylabel="speedup over one thread", title="one interleaved-core fit")
    ax.legend()
    save_figure(fig, path)


if __name__ == "__main__":
    main()
