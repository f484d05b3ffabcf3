"""The first fit after installing against the hundredth: compile time, measured.

``mklopt bench first-fit``: ``make_pipeline(StandardScaler(), MKLClassifier())`` on
scikit-learn's digits (10 classes, 1,797 points, the default kernels), in a fresh child
process:

1. **cold**: with an empty numba cache (``NUMBA_CACHE_DIR`` a new folder): the fit compiles
   what it uses, as the first fit after ``pip install`` does;
2. **after ``mklopt compile``**: the same in a fresh process once ``mklopt compile`` has
   filled that cache (what an image or CI that runs it ahead gets);
3. **warm**: a second fit in the same process (compiled code loaded).

It prints each time and the ratios cold / warm and first-after-compile / warm, and the
seconds ``mklopt compile`` took. Each part runs in its own process so that nothing
compiled or loaded in one reaches another.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIT = """
import json, time, warnings
t0 = time.perf_counter()
import mklopt
from sklearn.datasets import load_digits
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
imported = time.perf_counter() - t0
X, y = load_digits(return_X_y=True)
times = []
for _ in range(2):
    model = make_pipeline(StandardScaler(), mklopt.MKLClassifier())
    start = time.perf_counter()
    model.fit(X, y)
    times.append(time.perf_counter() - start)
print(json.dumps({"import": imported, "first": times[0], "second": times[1]}))
"""


def child(code: str, cache: str) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"the child failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def child_here(code: str) -> dict:
    """``code`` in a child process on this environment's own numba cache."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the child failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def compile_ahead(cache: str) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "mklopt", "compile"], capture_output=True, text=True,
                          env=dict(os.environ, NUMBA_CACHE_DIR=cache))
    if done.returncode != 0:
        raise SystemExit(f"mklopt compile failed: {done.stderr.strip().splitlines()[-1:]}")
    return time.perf_counter() - start


def main(small: bool = False, out=None, argv=None) -> dict:
    """Command-line entry; ``small=True`` (the gallery's smoke run, seconds): 300 digits, in
    the current cache (nothing cold), without ``mklopt compile``."""
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(
        argv if argv is not None else ([] if small else None))
    if small:
        cache = os.environ.get("NUMBA_CACHE_DIR", "")
        code = FIT.replace("X, y = load_digits(return_X_y=True)", "X, y = load_digits(return_X_y=True)\nX, y = X[:300], y[:300]")
        cold = ahead = child(code, cache) if cache else child_here(code)
        compiled = 0.0
    else:
        with tempfile.TemporaryDirectory() as cold_cache, tempfile.TemporaryDirectory() as ahead_cache:
            cold = child(FIT, cold_cache)
            compiled = compile_ahead(ahead_cache)
            ahead = child(FIT, ahead_cache)
    warm = cold["second"]
    if out is not None:
        plot(cold, ahead, Path(out) / "bench_first_fit.png", small)
    if small:
        print(f"300 digits, MKLClassifier() default, {os.cpu_count()} cores, the current numba cache "
              "(a smoke run; without small=True the cache starts empty)")
        print(f"  first fit in a fresh process  {cold['first']:6.2f} s   {cold['first'] / warm:5.1f}x warm")
        print(f"  warm fit                      {warm:6.2f} s")
        return {"cold": cold, "compile": compiled, "ahead": ahead}
    print(f"digits, MKLClassifier() default, {os.cpu_count()} cores")
    print(f"  cold first fit (empty cache, compiles)   {cold['first']:8.2f} s   {cold['first'] / warm:6.1f}x warm")
    print(f"  mklopt compile (ahead, once)             {compiled:8.2f} s")
    print(f"  first fit after mklopt compile           {ahead['first']:8.2f} s   {ahead['first'] / warm:6.1f}x warm")
    print(f"  warm fit (second in a process)           {warm:8.2f} s")
    print(f"  import mklopt                            {cold['import']:8.2f} s")
    return {"cold": cold, "compile": compiled, "ahead": ahead}


def plot(cold: dict, ahead: dict, path: Path, small: bool) -> None:
    """Bars: the first fit with an empty cache, after ``mklopt compile``, and warm."""
    from mklopt.plotting import _pyplot, save_figure

    fig, ax = _pyplot().subplots(figsize=(6, 3))
    labels = ["first fit\n(current cache)" if small else "first fit\n(empty cache)",
              "first fit after\nmklopt compile", "warm fit"]
    seconds = [cold["first"], ahead["first"], cold["second"]]
    ax.barh(labels, seconds, color=["#c44e52", "#55a868", "#4c72b0"])
    ax.set(xlabel="seconds", title="MKLClassifier() on digits" + (" (300 points)" if small else ""))
    for y, value in enumerate(seconds):
        ax.text(value, y, f" {value:.2f} s", va="center")
    save_figure(fig, path)


if __name__ == "__main__":
    main()
