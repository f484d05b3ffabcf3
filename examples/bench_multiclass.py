"""Several classes at a few SVMs' price: one-vs-one and one-vs-rest against ``SVC``.

``mklopt bench multiclass`` measures, in one run on this machine (models in turn in each
round, the median of ``--repeat`` rounds, after one untimed fit of each):

1. **digits** (scikit-learn's, 10 classes, 1,257 training points,
   ``train_test_split(test_size=0.3, random_state=0)``, ``StandardScaler``):
   ``MKLClassifier(C=C, multiclass=...)`` with the default kernels for ``"ovo"`` and
   ``"ovr"`` against ``SVC(kernel="rbf", C=C)``, at C = 1 and C = 100; the ratio to the
   SVC and the test accuracies. Target: the default ≤ 3× the SVC, accuracy within a point of
   it. For reference, libsvm's own SVM on the one-vs-rest problems
   (``OneVsRestClassifier(SVC)``, one kernel): what that scheme costs libsvm itself.
2. **GridSearchCV** over C ∈ {0.1, 1, 10, 100}, cv = 3, of one-vs-one and of the default
   (``multiclass="auto"``). Target ≤ 3×.
3. **UCI Multiple Features** (1,500 digits of the six views, the other 500 held out): six
   precomputed RBF view kernels (``gamma = 1 / (d_v Var)``) given as
   ``kernels="precomputed"`` (n, n, M), the same grid (one-vs-one and the default), against
   ``SVC(kernel="precomputed")`` on their sum. Target ≤ 10×.
4. **Precomputed against specs**: the digits' default kernels given as
   ``kernels="precomputed"``, an (n, n, M) array (built beforehand, not timed), against the
   same kernels given as specs (built in the fit), C = 1, default and one-vs-one. Target: not
   slower (the array is copied once into mklopt's layout, checked and normalized in place;
   the specs are built, trusted by construction).
5. **Time against classes**: digits with the first k classes, k = 2..10 (``--out`` saves
   the figure ``bench_multiclass.png``).
6. ``--letter N``: letter's 26 classes at N points (a fixed random subset, standardized,
   one fit each): one-vs-one, one-vs-rest and what ``multiclass="auto"`` picks against
   ``SVC``. From about 7,300 points the dense stack of the default kernels exceeds 2 GB and
   the kernels are computed on the fly, where ``"auto"`` takes one-vs-one, its pairs in
   worker processes (started before the clocks; the seconds they took are printed). Target
   (16,000 points, a 16-core machine) ≤ 5×.

Run: ``python examples/bench_multiclass.py`` (``mklopt bench multiclass``); ``main(small=True)`` (the tests,
the gallery): 300 digits, C = 1 only, one
round, cv = 2, 600 Multiple Features points (seconds).
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

import mklopt
from mklopt.plotting import save_figure


def _timed(model, X, y) -> float:
    """Seconds of ``model.fit(X, y)``, the first fit on X: no kernels kept from an earlier fit
    (a grid search's later fits on the same fold reuse them, as a user's do)."""
    from mklopt.estimators import forget_kernels

    forget_kernels()
    start = time.perf_counter()
    model.fit(X, y)
    return time.perf_counter() - start


def _models(C: float, svc_ovr: bool = False) -> dict:
    """The models of a digits round; ``svc_ovr``: also libsvm's SVM on one-vs-rest problems
    (``OneVsRestClassifier(SVC)``, one RBF kernel): what the one-vs-rest scheme itself costs
    libsvm, against its own one-vs-one."""
    models = {"MKL ovo": lambda: make_pipeline(StandardScaler(), mklopt.MKLClassifier(C=C, multiclass="ovo")),
              "MKL ovr": lambda: make_pipeline(StandardScaler(), mklopt.MKLClassifier(C=C, multiclass="ovr")),
              "SVC": lambda: make_pipeline(StandardScaler(), SVC(kernel="rbf", C=C))}
    if svc_ovr:
        models["SVC one-vs-rest"] = lambda: make_pipeline(StandardScaler(), OneVsRestClassifier(SVC(kernel="rbf", C=C)))
    return models


def rounds(models: dict, X, y, Xt, yt, repeat: int) -> dict:
    """Median seconds and test accuracy of each model, the models in turn in each round."""
    for make in models.values():  # warm: compiled code loaded, nothing timed
        make().fit(X[:200], y[:200])
    seconds = {label: [] for label in models}
    fitted = {}
    for _ in range(repeat):
        for label, make in models.items():
            fitted[label] = make()
            seconds[label].append(_timed(fitted[label], X, y))
    return {label: (statistics.median(seconds[label]), float(np.mean(fitted[label].predict(Xt) == yt)))
            for label in models}


def report(title: str, rows: dict) -> dict:
    base = rows["SVC"][0]
    print(title)
    for label, (seconds, accuracy) in rows.items():
        print(f"  {label:16s} {seconds:8.3f} s  {seconds / base:6.1f}x SVC  accuracy {accuracy:.3f}")
    return rows


def precomputed_against_specs(X, y, Xt, yt, repeat: int) -> dict:
    """The default kernels as specs (built in the fit) and as a precomputed (n, n, M) array."""
    from mklopt.estimators.kernel_specs import resolve_kernel_specs

    scaler = StandardScaler().fit(X)
    X, Xt = scaler.transform(X), scaler.transform(Xt)
    specs = resolve_kernel_specs(None, X)
    train = mklopt.KernelSet.from_data(X, specs, normalization=None).as_precomputed()
    test = np.moveaxis(mklopt.kernel_stack(Xt, specs, X), 0, 2)
    rows = {}
    for multiclass in ("auto", "ovo"):
        for label, data, data_t, kernels in (("specs", X, Xt, None), ("precomputed", train, test, "precomputed")):
            make = functools.partial(mklopt.MKLClassifier, kernels=kernels, multiclass=multiclass)
            make().fit(data, y)  # warm
            times = []
            for _ in range(repeat):
                model = make()
                times.append(_timed(model, data, y))
            rows[f"{multiclass} {label}"] = (statistics.median(times), float(np.mean(model.predict(data_t) == yt)))
    svc = SVC(kernel="rbf")
    rows["SVC"] = (statistics.median([_timed(svc, X, y) for _ in range(repeat)]), float(np.mean(svc.predict(Xt) == yt)))
    return rows


def precomputed_ratios(rows: dict) -> None:
    """Print each scheme's precomputed time over its specs time (target: at most 1)."""
    for multiclass in ("auto", "ovo"):
        ratio = rows[f"{multiclass} precomputed"][0] / rows[f"{multiclass} specs"][0]
        print(f"  {multiclass}: precomputed / specs = {ratio:.2f}")


def grid(X, y, Xt, yt, Cs, cv: int) -> dict:
    def searched(multiclass: str) -> GridSearchCV:
        return GridSearchCV(make_pipeline(StandardScaler(), mklopt.MKLClassifier(multiclass=multiclass)),
                            {"mklclassifier__C": Cs}, cv=cv)

    models = {"MKL ovo": searched("ovo"), "MKL auto": searched("auto"),
              "SVC": GridSearchCV(make_pipeline(StandardScaler(), SVC(kernel="rbf")), {"svc__C": Cs}, cv=cv)}
    return {label: (_timed(model, X, y), float(np.mean(model.predict(Xt) == yt))) for label, model in models.items()}


def mfeat(n: int, Cs, cv: int) -> dict:
    from mklopt.datasets import load_mfeat

    data = load_mfeat()
    order = np.random.default_rng(0).permutation(data.target.size)
    train, test = order[:n], order[n:n + max(n // 3, 100)]
    stacks = []
    for view in data.views.values():
        Z = StandardScaler().fit(view[train]).transform(view)
        gamma = 1.0 / Z.shape[1]
        sq = (Z**2).sum(1)
        stacks.append(np.exp(-gamma * np.clip(sq[:, None] + sq[None, :] - 2 * Z @ Z.T, 0, None)))
    K = np.stack(stacks, axis=2)  # (N, N, M)
    y = data.target
    K_train, K_test = K[np.ix_(train, train)], K[np.ix_(test, train)]
    rows = {}
    for multiclass in ("ovo", "auto"):
        mkl = GridSearchCV(mklopt.MKLClassifier(kernels="precomputed", multiclass=multiclass, normalization=None),
                           {"C": Cs}, cv=cv)
        rows[f"MKL {multiclass}"] = (_timed(mkl, K_train, y[train]), float(np.mean(mkl.predict(K_test) == y[test])))
    svc = GridSearchCV(SVC(kernel="precomputed"), {"C": Cs}, cv=cv)
    rows["SVC"] = (_timed(svc, K_train.sum(axis=2), y[train]),
                   float(np.mean(svc.predict(K_test.sum(axis=2)) == y[test])))
    return rows


def start_workers() -> float:
    """Start the worker processes that one-vs-one on kernels on the fly runs its pairs on
    (once a session; later fits reuse them); their seconds."""
    from mklopt.drivers.core_threads import core_threads
    from mklopt.estimators.multiclass import in_processes

    start = time.perf_counter()
    jobs = core_threads(26 * 25 // 2)
    if jobs > 1:
        in_processes([(lambda: None) for _ in range(jobs)], jobs)
    return time.perf_counter() - start


def letter(n: int, with_ovr: bool = True) -> dict:
    """One fit each of ovo, ovr (unless ``with_ovr`` is false), SVC and the default
    (``"auto"``) on ``n`` of letter's points (26 classes), accuracy on 4,000 other points,
    after the worker processes were started (untimed here, printed); prints the scheme
    ``"auto"`` picks."""
    from mklopt.datasets.loaders import load_letter_classes

    X, y = load_letter_classes()
    order = np.random.default_rng(0).permutation(y.size)
    train, test = order[:min(n, y.size - 4000)], order[-4000:]
    models = {**_models(1.0), "MKL auto": lambda: make_pipeline(StandardScaler(), mklopt.MKLClassifier())}
    if not with_ovr:
        del models["MKL ovr"]
    print(f"letter: worker processes started in {start_workers():.2f} s (once a session, before the clocks)")
    rows, fitted = {}, {label: make() for label, make in models.items()}
    for label, model in fitted.items():
        rows[label] = (_timed(model, X[train], y[train]), float(np.mean(model.predict(X[test]) == y[test])))
    print(f"letter: multiclass='auto' picks {fitted['MKL auto'][-1].multiclass_!r} at {train.size} points")
    return rows


def against_classes(X, y, classes) -> list[tuple[int, float, float, float]]:
    out = []
    for k in classes:
        keep = y < k
        seconds = [_timed(make(), X[keep], y[keep]) for make in _models(1.0).values()]
        out.append((k, *seconds))
        print(f"  {k:2d} classes: ovo {seconds[0]:.3f} s, ovr {seconds[1]:.3f} s, SVC {seconds[2]:.3f} s")
    return out


def plot(curve, path: Path) -> None:
    from mklopt.plotting import _pyplot

    fig, ax = _pyplot().subplots(figsize=(6, 3.5))
    k = [row[0] for row in curve]
    for column, label in ((1, "MKLClassifier ovo"), (2, "MKLClassifier ovr"), (3, "SVC (rbf)")):
        ax.plot(k, [row[column] for row in curve], marker="o", label=label)
    ax.set(xlabel="classes (digits 0..k-1)", ylabel="fit seconds", yscale="log", title="time against classes")
    ax.legend()
    fig.tight_layout()
    save_figure(fig, path)


def main(small: bool = False, out=None, argv=None) -> dict:
    """Command-line entry; ``small=True`` runs in seconds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds per model (default 3)")
    parser.add_argument("--out", default=None, help="folder for bench_multiclass.png")
    parser.add_argument("--letter", type=int, default=0, metavar="N",
                        help="also letter's 26 classes at N points, one fit each (e.g. 16000; default: not run)")
    args = parser.parse_args(argv if argv is not None else ([] if small else None))
    X, y = load_digits(return_X_y=True)
    if small:
        X, y = X[:300], y[:300]
    X, Xt, y, yt = train_test_split(X, y, test_size=0.3, random_state=0)
    repeat = 1 if small else max(args.repeat, 1)
    results = {}
    for C in ((1.0,) if small else (1.0, 100.0)):
        results[f"digits C={C:g}"] = report(f"digits, {len(y)} training points, C = {C:g}",
                                            rounds(_models(C, svc_ovr=True), X, y, Xt, yt, repeat))
    results["precomputed"] = report("digits' default kernels as specs and precomputed, C = 1",
                                    precomputed_against_specs(X, y, Xt, yt, repeat))
    precomputed_ratios(results["precomputed"])
    Cs, cv = ([1.0, 10.0], 2) if small else ([0.1, 1.0, 10.0, 100.0], 3)
    results["grid"] = report(f"GridSearchCV over C in {Cs}, cv = {cv}", grid(X, y, Xt, yt, Cs, cv))
    results["mfeat"] = report(f"Multiple Features, six precomputed view kernels, {600 if small else 1500} "
                              f"points, the same grid", mfeat(600 if small else 1500, Cs, cv))
    if args.letter and not small:
        results["letter"] = report(f"letter, 26 classes, {args.letter} points, C = 1", letter(args.letter))
    print("time against classes (C = 1, one fit each):")
    curve = against_classes(X, y, range(2, 11, 4 if small else 1))
    folder = out if out is not None else args.out
    if folder is not None:
        plot(curve, Path(folder) / "bench_multiclass.png")
    return results


if __name__ == "__main__":
    main()
