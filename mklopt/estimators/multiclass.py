"""Several binary problems of one classifier, side by side: one-vs-rest and one-vs-one.

The problems share the training kernels (threads, no copies). On the interleaved core
(``driver="chunking"``) they run side by side on numba's threads by default, each
problem's parallel loops on its share of the cores (:mod:`mklopt.drivers.core_threads`), the
problems running at once sharing the column memory (``cache_mb``; threads kept from fit to
fit, :func:`on_own_threads`); with ``n_jobs`` joblib runs them, so that
``joblib.parallel_backend("dask")`` spreads them over a Dask cluster. Either way each
problem's result is the same.

One-vs-one on kernels on the fly because their dense stack would exceed the estimators'
memory threshold (``"auto"``'s case) runs its pairs in worker processes instead (joblib's
``loky``, one per granted core, :func:`in_processes`; starting them takes a few seconds
once): each pair ships only its points' features and builds its own dense stack there.
A pair's problem is small, so most of its time is the outer loop's Python (the weight
steps, the certificates), which threads run one at a time under the GIL: letter's 26
classes at 16,000 points took 37.6 s on threads on 16 cores (23.5 s on 2), 11.7-12.6 s in
processes.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable
from typing import Any

import numba
import numpy as np

from ..drivers.chunking import CACHE_MB
from ..drivers.core_threads import core_threads, on_threads
from ..exceptions import InvalidInputError, SolverError
from ..kernels._blas import numpy_blas_only, single_blas_thread
from ..kernels._pool import on_kept_threads
from . import _base
from .one_vs_one import solve_pairs

__all__ = ["MULTICLASS", "check_schemes", "scheme", "solve_classes", "pairs_in_processes", "in_processes",
           "on_own_threads"]

#: The multiclass schemes (more than two classes).
MULTICLASS = ("auto", "ovo", "ovr", "shared")
#: The shapes of a one-vs-one ``decision_function`` (as ``SVC``'s).
DECISION_SHAPES = ("ovr", "ovo")


def check_schemes(multiclass: str, decision_function_shape: str, n_jobs: Any = None) -> None:
    """Raise :class:`~mklopt.exceptions.InvalidInputError` for a scheme or decision shape that is
    not one of :data:`MULTICLASS`, :data:`DECISION_SHAPES`, or an ``n_jobs`` that is neither None
    nor a non-zero integer (joblib's: -1 all cores)."""
    if multiclass not in MULTICLASS:
        raise InvalidInputError(f"multiclass must be one of {MULTICLASS}, got {multiclass!r}.")
    if decision_function_shape not in DECISION_SHAPES:
        raise InvalidInputError(
            f"decision_function_shape must be one of {DECISION_SHAPES}, got {decision_function_shape!r}.")
    if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0):
        raise InvalidInputError(f"n_jobs must be None or a non-zero integer (-1: all cores), got {n_jobs!r}.")


def scheme(multiclass: str, classes: int, on_the_fly: bool = False) -> str:
    """``multiclass`` with ``"auto"`` resolved: one-vs-one where the one-vs-rest problems would
    compute their kernels on the fly, else one-vs-rest.

    libsvm's one-vs-one (k(k-1)/2 problems on about 2n/k points) beats one-vs-rest (k problems
    on n points) for plain SVMs because the SMO's cost grows faster than linearly in the points.
    mklopt's problems carry a fixed cost each, though (the outer loop's weight steps and
    certificates: a few weight steps a problem whatever its size, 4-9 on digits with the
    second-order step, ~0.5 ms of each outside the SMO pairs), and on a dense stack the
    interleaved core solves a one-vs-rest class on n points in far less than quadratic time.
    Which wins then depends on how hard the classes are to separate, which is not known before
    the fit: measured on 2 cores (default kernels, C = 1, first fits), one-vs-one over
    one-vs-rest took 1.7-2.1× on digits (10 classes, 1,257 training points), 1.6-2.3× on all
    1,797 of them (pairs of ~360 points); with the points fitted class by class
    (:func:`~.one_vs_one.class_order`), 0.72 on letter's first 10 classes at 1,500 points, 0.67
    at 3,000 and 0.82 at 5,000, and on letter's 26 classes 2.3× at 1,000 points (0.75 s against
    0.33 s), 1.06× at 2,000, 0.68 at 3,000, 0.69 at 4,000 and 0.60 at 6,000 (2.5 s against
    4.2 s). The one-vs-rest problems keep an eighth of the points as support vectors on digits,
    a quarter to a third on letter; the pairs' size does not tell them apart (a rule that took
    one-vs-one for letter from 3,000 points would take it for all of digits too, at twice the
    time). On a dense stack ``"auto"`` therefore keeps one-vs-rest, and ``multiclass="ovo"``
    is the choice for classes that overlap (letter-like) from a few thousand points. Where the
    dense stack of all n points would exceed the estimators' memory threshold (2 GB) and the
    kernels are computed on the fly (``on_the_fly``), every column one-vs-rest reads costs
    :math:`O(Md)` per point over all n points, k times over, while each pair is solved on a
    dense stack of its own points, built once (:func:`~.one_vs_one.solve_pairs`): there
    one-vs-one is the faster by far (letter at 8,000 points: 7.1 s, the pairs in processes,
    against 41.7 s), and ``"auto"`` takes it.
    ``"shared"`` (one weight vector for all classes) is another model, never chosen.
    """
    if multiclass != "auto":
        return multiclass
    return "ovo" if on_the_fly else "ovr"


def solve_classes(estimator, kernel_set, y: np.ndarray) -> list:
    """The results of ``estimator``'s one-vs-rest classes or one-vs-one pairs, in order."""
    from joblib import Parallel, delayed, effective_n_jobs  # threads: the kernel stack is shared

    problems = estimator._core_problems() if estimator.n_jobs is None else estimator.classes_.size
    jobs, options, threads = estimator.n_jobs, {}, numba.get_num_threads()
    processes = False
    if estimator.driver_ == "chunking" and jobs is None:  # the compiled core: every core by default
        jobs = core_threads(problems)
        threads = max(1, threads // jobs)  # each problem's parallel loops on its share of the cores
        if jobs > 1:  # the problems at once share the column memory
            options["cache_mb"] = CACHE_MB / jobs
        processes = jobs > 1 and estimator._one_vs_one() and pairs_in_processes(kernel_set)

    def solve(kernels, y_pm):
        return on_threads(threads, estimator._solve, kernels, y_pm, "hinge", estimator.C, **options)

    def run(tasks):
        if processes:
            return in_processes(tasks, jobs)
        if estimator.n_jobs is None:  # the core's own threads: no joblib backend to honour
            return on_own_threads(tasks, jobs)
        return Parallel(n_jobs=jobs, prefer="threads")(delayed(task)() for task in tasks)

    # the core's steps want BLAS on one thread, the outer loops one threaded BLAS library;
    # set here, the problems' threads run under it (kernels._blas)
    with single_blas_thread() if estimator.driver_ == "chunking" else numpy_blas_only():
        if estimator._one_vs_one():  # on the fly, the pairs at once hold what one dense stack may
            return solve_pairs(kernel_set, y, estimator.classes_, solve, run,
                               dense_bytes=_base.LAZY_STACK_BYTES / effective_n_jobs(jobs))
        return run([(lambda c=c: solve(kernel_set, np.where(y == c, 1.0, -1.0))) for c in estimator.classes_])


def on_own_threads(tasks: list[Callable[[], Any]], jobs: int | None) -> list:
    """The tasks' results in order, on ``jobs`` threads kept from fit to fit
    (:func:`~mklopt.kernels._pool.on_kept_threads`). The core's default threads take no joblib
    backend, and joblib's thread pool costs ~11 ms a fit here (its own pool, results polled
    with sleeps), more than one of digits' ten classes; the first exception a task raises is
    raised here, as joblib would."""
    if jobs is None or jobs <= 1:  # None: one at a time, as joblib takes it
        return [task() for task in tasks]
    return on_kept_threads("problems", lambda task: task(), tasks, jobs)


def pairs_in_processes(kernel_set) -> bool:
    """Run one-vs-one's pairs in worker processes? Where the kernels are computed on the fly
    because their dense stack would exceed the memory threshold (large problems only: the
    workers take seconds to start, once), and where this process may start children (not
    in a daemonic one, such as a Dask worker's)."""
    import multiprocessing

    return (getattr(kernel_set, "lazy", False) and _base._stack_over(kernel_set.M, kernel_set.n)
            and not multiprocessing.current_process().daemon)


def _recorded(task: Callable[[], Any]) -> tuple[Any, list[tuple[str, type]]]:
    """``task()`` and the warnings it issued (a worker process's warnings stay there)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = task()
    return result, [(str(w.message), w.category) for w in caught]


def in_processes(tasks: list[Callable[[], Any]], jobs: int) -> list:
    """The tasks' results, run on ``jobs`` worker processes (joblib's ``loky``, reused from fit
    to fit); their warnings issued again here, in order.

    Raises
    ------
    SolverError
        A worker process ended abruptly (killed, out of memory).
    """
    from concurrent.futures import BrokenExecutor

    from joblib import Parallel, delayed

    try:
        done = Parallel(n_jobs=jobs, backend="loky")(delayed(_recorded)(task) for task in tasks)
    except BrokenExecutor as error:
        raise SolverError(
            f"a worker process solving the one-vs-one pairs ended abruptly ({type(error).__name__}: "
            "killed, or out of memory?); pass n_jobs=1 to solve the pairs on threads in this process, "
            "or use fewer points or kernels.") from error
    for _, caught in done:
        for message, category in caught:
            warnings.warn(message, category, stacklevel=3)
    return [result for result, _ in done]
