"""The first fit after installing against the hundredth: compile time, measured.

``mklopt bench first-fit``: ``make_pipeline(StandardScaler(), MKLClassifier())`` on
scikit-learn's digits (10 classes, 1,797 points, the default kernels), in a fresh child
process:

1. **cold**: with an empty numba cache (``NUMBA_CACHE_DIR`` a new folder), as the first fit
   after ``pip install`` runs: it loads the default fit's machine code that the install
   built into the package (:mod:`mklopt._compiled.ahead`);
2. **cold, compiling**: the same without that code (``MKLOPT_NO_AHEAD=1``): the fit
   compiles what it uses, as it would from a wheel built on another machine;
3. **after ``mklopt compile``**: compiling, in a fresh process once ``mklopt compile`` has
   filled its cache (what an image or CI that runs it ahead gets);
4. **warm**: a second fit in the same process (compiled code loaded).

It prints each time, its ratio to the warm fit, and the seconds ``mklopt compile`` took.
Each part runs in its own process so that nothing compiled or loaded in one reaches
another.
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
alone = time.perf_counter() - t0  # the public names load on first use
mklopt.MKLClassifier, mklopt.fit  # what a first fit loads: scikit-learn, SciPy, CVXPY, numba
from sklearn.datasets import load_digits
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
imported = time.perf_counter() - t0
from mklopt.estimators import forget_kernels
X, y = load_digits(return_X_y=True)
times = []
for _ in range(2):
    model = make_pipeline(StandardScaler(), mklopt.MKLClassifier())
    forget_kernels()  # the second fit builds its kernels too: it differs from the first by compiling only
    start = time.perf_counter()
    model.fit(X, y)
    times.append(time.perf_counter() - start)
print(json.dumps({"import": imported, "import_alone": alone, "first": times[0], "second": times[1]}))
"""


def child(code: str, cache: str | None = None, **env) -> dict:
    """``code``'s JSON line from a child process, on numba cache folder ``cache`` (None: this
    environment's own cache) with ``env`` added."""
    env = dict(os.environ, **env, **({} if cache is None else {"NUMBA_CACHE_DIR": cache}))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"the child failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def compile_ahead(cache: str) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "mklopt", "compile"], capture_output=True, text=True,
                          env=dict(os.environ, NUMBA_CACHE_DIR=cache, MKLOPT_NO_AHEAD="1"))
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
        cold = compiling = ahead = child(code, cache or None)
        compiled = 0.0
    else:
        with tempfile.TemporaryDirectory() as cache:
            cold = child(FIT, str(Path(cache) / "cold"))
            compiling = child(FIT, str(Path(cache) / "compiling"), MKLOPT_NO_AHEAD="1")
            compiled = compile_ahead(str(Path(cache) / "ahead"))
            ahead = child(FIT, str(Path(cache) / "ahead"), MKLOPT_NO_AHEAD="1")
    warm = cold["second"]
    if out is not None:
        bars = [("first fit in a\nfresh process", cold["first"], "#55a868")] if small else [
            ("first fit after\ninstalling", cold["first"], "#55a868"),
            ("first fit,\ncompiling", compiling["first"], "#c44e52"),
            ("first fit after\nmklopt compile", ahead["first"], "#8172b2")]
        plot(bars + [("warm fit", warm, "#4c72b0")], Path(out) / "bench_first_fit.png", small)
    if small:
        print(f"300 digits, MKLClassifier() default, {os.cpu_count()} cores, the current numba cache "
              "(a smoke run; without small=True the cache starts empty)")
        print(f"  first fit in a fresh process  {cold['first']:6.2f} s   {cold['first'] / warm:5.1f}x warm")
        print(f"  warm fit                      {warm:6.2f} s")
        return {"cold": cold, "compiling": compiling, "compile": compiled, "ahead": ahead}
    from mklopt._compiled.ahead import AHEAD, built_ahead

    found = built_ahead()
    print(f"digits, MKLClassifier() default, {os.cpu_count()} cores; machine code built with the package: "
          f"{len(found)} of {len(AHEAD)} functions" + ("" if found else " (none: reinstall to build it)"))
    print(f"  first fit after installing (empty cache)   {cold['first']:8.2f} s   {cold['first'] / warm:6.1f}x warm")
    print(f"  same, compiling (without the package's code) {compiling['first']:6.2f} s   "
          f"{compiling['first'] / warm:6.1f}x warm")
    print(f"  mklopt compile (everything, once)          {compiled:8.2f} s")
    print(f"  first fit after mklopt compile             {ahead['first']:8.2f} s   {ahead['first'] / warm:6.1f}x warm")
    print(f"  warm fit (second in a process)             {warm:8.2f} s")
    print(f"  import mklopt                              {cold['import_alone']:8.2f} s")
    print(f"  its libraries, loaded on first use         {cold['import'] - cold['import_alone']:8.2f} s")
    return {"cold": cold, "compiling": compiling, "compile": compiled, "ahead": ahead}


def plot(bars: list[tuple[str, float, str]], path: Path, small: bool) -> None:
    """Horizontal bars of ``(label, seconds, colour)``, the first at the top."""
    from mklopt.plotting import _pyplot, save_figure

    fig, ax = _pyplot().subplots(figsize=(6.4, 1.2 + 0.6 * len(bars)))
    bars = bars[::-1]
    ax.barh([b[0] for b in bars], [b[1] for b in bars], color=[b[2] for b in bars])
    ax.set(xlabel="seconds", title="MKLClassifier() on digits" + (" (300 points)" if small else ""),
           xlim=(0, 1.25 * max(b[1] for b in bars)))
    for y, (_, value, _) in enumerate(bars):
        ax.text(value, y, f" {value:.2f} s", va="center")
    fig.tight_layout()
    save_figure(fig, path)


if __name__ == "__main__":
    main()
