"""The default estimator at a few SVMs' price: ``MKLClassifier()`` against ``SVC(kernel="rbf")``.

A newcomer's session on scikit-learn's 10-class digits (1,257 training points,
``train_test_split(test_size=0.3, random_state=0)``), each model in a
``Pipeline`` after ``StandardScaler``:

1. **One default fit**, at the default C = 1 and at C = 100 (``--C``):
   ``MKLClassifier(C=C)`` (five kernels, ℓ1, ``driver="auto"``: the interleaved core,
   one-vs-rest, its classes side by side on numba's threads, certified relative gap 1e-4)
   and the same with ``n_jobs=1`` (one class at a time), against
   ``SVC(kernel="rbf", C=C)`` (its own one-vs-one, libsvm's ``tol=1e-3``; 5 fits a round,
   as one takes a few hundredths of a second). Each row is the median over ``--repeat``
   rounds (default 5), the models in turn in each round, after one untimed default fit.
   Target: ≤ 10× the SVC, certified (the largest certified relative gap over the classes
   is printed).
2. **A grid search**: ``GridSearchCV`` over C ∈ {0.1, 1, 10, 100}, cv = 3, for both.
   Target: ≤ 60 s for the MKL search on a 2-core machine.

Ratios are printed from this one run; the test accuracy of each model too.

Run: ``python examples/bench_estimator.py`` (``mklopt bench estimator``); ``--small``:
400 training points, C ∈ {1, 10}, cv = 2 (seconds). The figure goes to ``--out``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numba
import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

import mklopt
from mklopt.plotting import save_figure


def timed(model, X, y) -> float:
    """Seconds of a first fit on X (no training kernels kept from an earlier fit)."""
    from mklopt.estimators import forget_kernels

    forget_kernels()
    start = time.perf_counter()
    model.fit(X, y)
    return time.perf_counter() - start


def single_fits(X, y, Xt, yt, C: float, repeat: int = 3) -> list[dict]:
    """The median of ``repeat`` default MKL fits (threads, then one class at a time) and of
    5 SVC fits per round, the models in turn in each round (a slow spell of a shared
    machine then falls on all of them)."""
    models = {"MKLClassifier()": None, "MKLClassifier(n_jobs=1)": 1}
    seconds: dict[str, list[float]] = {label: [] for label in [*models, "SVC(kernel='rbf')"]}
    fitted = {}
    for _ in range(repeat):
        for label, jobs in models.items():
            fitted[label] = make_pipeline(StandardScaler(), mklopt.MKLClassifier(C=C, n_jobs=jobs))
            seconds[label].append(timed(fitted[label], X, y))
        fitted["SVC(kernel='rbf')"] = make_pipeline(StandardScaler(), SVC(kernel="rbf", C=C))
        seconds["SVC(kernel='rbf')"] += [timed(fitted["SVC(kernel='rbf')"], X, y) for _ in range(5)]
    rows = []
    for label, model in fitted.items():
        mkl = label.startswith("MKL")
        gap = max(np.atleast_1d([r.rel_gap for r in np.atleast_1d(model[-1].result_)])) if mkl else np.nan
        rows.append({"model": label, "seconds": statistics.median(seconds[label]), "rel_gap": float(gap),
                     "accuracy": model.score(Xt, yt), "driver": model[-1].driver_ if mkl else "libsvm"})
    return rows


def grid_searches(X, y, Xt, yt, Cs, cv: int) -> list[dict]:
    rows = []
    for label, model in (("MKLClassifier()", mklopt.MKLClassifier()), ("SVC(kernel='rbf')", SVC())):
        name = type(model).__name__.lower()
        search = GridSearchCV(make_pipeline(StandardScaler(), model), {f"{name}__C": list(Cs)}, cv=cv)
        seconds = timed(search, X, y)
        rows.append({"model": f"GridSearchCV({label})", "seconds": seconds,
                     "accuracy": search.score(Xt, yt), "best_C": search.best_params_[f"{name}__C"]})
    return rows


def plot(rows: list[dict], out) -> Path:
    """Seconds of each fit and search (log scale), saved as ``bench_estimator.png``."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 0.45 * len(rows) + 1.2))
    ax.barh([r["model"] for r in rows][::-1], [r["seconds"] for r in rows][::-1])
    ax.set(xscale="log", xlabel="seconds", title="the default MKLClassifier against an RBF SVC (digits)")
    fig.tight_layout()
    return save_figure(fig, Path(out) / "bench_estimator.png", dpi=100)


def _C_values(text: str) -> tuple[float, ...]:
    """``--C``: positive numbers, comma-separated."""
    try:
        values = tuple(float(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers separated by commas, got {text!r}") from None
    if not values or not all(v > 0 for v in values):
        raise argparse.ArgumentTypeError(f"every C must be > 0, got {text!r}")
    return values


def main(small: bool = False, out=None, argv=None) -> list[dict]:
    """Command-line entry; ``small=True`` runs 400 points and a 2-value grid, ``out`` is the
    figure's folder."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", action="store_true", help="400 points, C in {1, 10}, cv = 2")
    parser.add_argument("--C", type=_C_values, default=(1.0, 100.0),
                        help="C values of the single fits, comma-separated (default 1,100)")
    parser.add_argument("--repeat", type=int, default=5,
                        help="rounds of the single fits; each row is its median (default 5)")
    parser.add_argument("--out", default=None, help="folder for the figure (default: figures)")
    args = parser.parse_args(argv if argv is not None else ([] if small else None))
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, got {args.repeat}")
    small = small or args.small
    X, y = load_digits(return_X_y=True)
    X, Xt, y, yt = train_test_split(X, y, test_size=0.3, random_state=0)
    if small:
        X, y = X[:400], y[:400]
    make_pipeline(StandardScaler(), mklopt.MKLClassifier()).fit(X, y)  # untimed: compiled code loaded
    print(f"digits: {len(y)} training points, {len(yt)} test points, 10 classes; numba threads "
          f"{numba.get_num_threads()}")
    rounds = 1 if small else args.repeat
    single = []
    for C in args.C:
        rows = single_fits(X, y, Xt, yt, C, rounds)
        svc = rows[-1]["seconds"]
        print(f"\n1. one fit at C = {C:g} (the median of {rounds} round{'s' * (rounds > 1)})\n"
              f"  {'model':<26} {'seconds':>8} {'/SVC':>7} {'max rel_gap':>12} {'accuracy':>9}  driver")
        for r in rows:
            print(f"  {r['model']:<26} {r['seconds']:8.3f} {r['seconds'] / svc:7.1f} {r['rel_gap']:12.1e} "
                  f"{r['accuracy']:9.3f}  {r['driver']}")
            r["model"] = f"{r['model']}, C={C:g}"
        single += rows
    Cs, cv = ((1.0, 10.0), 2) if small else ((0.1, 1.0, 10.0, 100.0), 3)
    searches = grid_searches(X, y, Xt, yt, Cs, cv)
    print(f"\n2. GridSearchCV over C in {list(Cs)}, cv = {cv}\n  {'model':<36} {'seconds':>8} "
          f"{'best C':>7} {'accuracy':>9}")
    for r in searches:
        print(f"  {r['model']:<36} {r['seconds']:8.2f} {r['best_C']:7g} {r['accuracy']:9.3f}")
    print(f"  MKL search / SVC search = {searches[0]['seconds'] / searches[1]['seconds']:.0f}x")
    plot(single + searches, out or args.out or "figures")
    return single + searches


if __name__ == "__main__":
    main()
