"""Several binary problems of one classifier, side by side: one-vs-rest and one-vs-one.

The problems share the training kernels (threads, no copies). On the interleaved core
(``driver="chunking"``) they run side by side on numba's threads by default, each
problem's parallel loops on its share of the cores (:mod:`mklopt.drivers.core_threads`),
and on kernels on the fly the problems running at once share the column memory; with
``n_jobs`` joblib runs them, so that ``joblib.parallel_backend("dask")`` spreads them over a
Dask cluster. Either way each problem's result is the same.
"""

from __future__ import annotations

import numba
import numpy as np

from ..drivers.chunking import CACHE_MB
from ..drivers.core_threads import core_threads, on_threads
from ..kernels._blas import numpy_blas_only, single_blas_thread
from .one_vs_one import solve_pairs

__all__ = ["MULTICLASS", "scheme", "solve_classes"]

#: The multiclass schemes (more than two classes).
MULTICLASS = ("auto", "ovo", "ovr", "shared")


def scheme(multiclass: str, classes: int) -> str:
    """``multiclass`` with ``"auto"`` resolved: one-vs-rest, in this release.

    The SMO's cost grows faster than linearly in the points, so libsvm's one-vs-one (k(k-1)/2
    problems on about 2n/k points) beats one-vs-rest (k problems on n points) for plain SVMs.
    mklopt's problems carry a fixed cost each, though (the outer loop's weight steps and
    certificates: about 14 weight steps a problem whatever its size, ~0.6 ms of each outside
    the SMO pairs), and the interleaved core solves a one-vs-rest class on n points in far less
    than the quadratic time: measured on 2 cores (default kernels; ``mklopt bench
    multiclass``), digits (10 classes, 1,257 points) one-vs-one 0.43 s against one-vs-rest
    0.22 s at C = 1 (0.56 s against 0.38 s at C = 100), letter (26 classes, 6,000 points)
    6.8 s against 6.9 s. So ``"auto"`` is one-vs-rest until the
    fixed cost of a problem comes down; ``"ovo"`` gives libsvm's scheme (and its votes) on
    request. ``"shared"`` (one weight vector for all classes) is another model, never chosen.
    """
    if multiclass != "auto":
        return multiclass
    return "ovr"


def solve_classes(estimator, kernel_set, y: np.ndarray) -> list:
    """The results of ``estimator``'s one-vs-rest classes or one-vs-one pairs, in order."""
    from joblib import Parallel, delayed  # threads: the kernel stack is shared

    problems = estimator._core_problems() if estimator.n_jobs is None else estimator.classes_.size
    jobs, options, threads = estimator.n_jobs, {}, numba.get_num_threads()
    if estimator.driver_ == "chunking" and jobs is None:  # the compiled core: every core by default
        jobs = core_threads(problems)
        threads = max(1, threads // jobs)  # each problem's parallel loops on its share of the cores
        if jobs > 1 and getattr(kernel_set, "lazy", False):  # the problems at once share the column memory
            options["cache_mb"] = CACHE_MB / jobs

    def solve(kernels, y_pm):
        return on_threads(threads, estimator._solve, kernels, y_pm, "hinge", estimator.C, **options)

    def run(tasks):
        return Parallel(n_jobs=jobs, prefer="threads")(delayed(task)() for task in tasks)

    # the core's steps want BLAS on one thread, the outer loops one threaded BLAS library;
    # set here, the problems' threads run under it (kernels._blas)
    with single_blas_thread() if estimator.driver_ == "chunking" else numpy_blas_only():
        if estimator._one_vs_one():
            return solve_pairs(kernel_set, y, estimator.classes_, solve, run)
        return run([(lambda c=c: solve(kernel_set, np.where(y == c, 1.0, -1.0))) for c in estimator.classes_])
