"""One-vs-one multiclass MKL, as libsvm does multiclass SVMs.

For k classes, one binary MKL problem per pair of classes (a, b), a < b, in libsvm's order
(0, 1), (0, 2), ..., (0, k-1), (1, 2), ..., (k-2, k-1): only the points of the two classes,
class a the positive one, with its own kernel weights and its own certificate. Each pair
is a subproblem of the training set (:meth:`~mklopt.kernels.KernelSet.points`: the kernels
normalized over all the training points, so one normalization serves every pair at
prediction). Prediction by votes: pair (a, b) votes for a when its decision value is
positive, else for b; the most votes win, ties going to the class of the smallest index
(libsvm's rule, which scikit-learn's ``SVC`` follows).

Why: one-vs-rest solves k problems on all n points, one-vs-one k(k-1)/2 problems on about
2n/k points each; the SMO's cost grows faster than linearly in the points, so for k >= 3
the pairs cost less in all (C.-W. Hsu and C.-J. Lin, "A comparison of methods for
multiclass support vector machines", IEEE Trans. Neural Networks 13(2), 2002).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable

import numpy as np

from ..kernels._memory import stack_bytes
from ..results.result import MKLResult
from ._checked import checked_targets

__all__ = ["class_pairs", "class_order", "pairs_order", "in_given_order", "solve_pairs", "votes", "ovr_shaped"]


def class_pairs(k: int) -> list[tuple[int, int]]:
    """The pairs (a, b), a < b, of k classes in libsvm's order."""
    return [(a, b) for a in range(k) for b in range(a + 1, k)]


def class_order(y: np.ndarray) -> np.ndarray | None:
    """The training points class by class, each class's points in their given order; None where
    they are so already, or for two classes (one problem).

    Fitted in this order, a pair's points are two runs of the dense stack's rows and columns,
    and its stack (:meth:`~mklopt.kernels.KernelSet.points`) is copied from contiguous
    segments instead of entries scattered over every row (letter's 26 classes at 3,000 points,
    one pair at a time: the pairs' copies took 0.53 s of a 2.5 s fit in the given order; on 2
    cores the fit 7 % faster at 3,000 points, 21 % at 6,000).
    """
    classes, index = np.unique(y, return_inverse=True)
    if classes.size <= 2 or np.all(index[1:] >= index[:-1]):
        return None
    return np.argsort(index, kind="stable")


def pairs_order(estimator, y: np.ndarray) -> np.ndarray | None:
    """The order a classifier fits its points in: class by class (:func:`class_order`) for
    ``multiclass="ovo"``, else as given (None). Not with ``rank`` (its landmarks are drawn
    from the points in their given order)."""
    if estimator.multiclass != "ovo" or getattr(estimator, "rank", None) is not None:
        return None
    checked_targets(estimator, y)
    return class_order(y)


def in_given_order(estimator, order: np.ndarray | None) -> None:
    """A classifier fitted with its points in ``order`` made to name them by their given
    indices: ``support_`` (then class by class, as libsvm's), and each pair's result in
    ``result_``, its ``dual_coef`` spread over the points as given, ``info["points"]`` their
    given indices (in the pair problem's order, that of its variables)."""
    if order is None:
        return
    estimator.support_ = order[estimator.support_]
    results = []
    for result in estimator.result_:
        spread = np.empty_like(result.dual_coef)
        spread[order] = result.dual_coef
        info = {**result.info, "points": order[result.info["points"]]}
        results.append(dataclasses.replace(result, dual_coef=spread, info=info))
    estimator.result_ = results


def solve_pairs(kernel_set, y: np.ndarray, classes: np.ndarray,
                solve: Callable[[object, np.ndarray], MKLResult],
                run: Callable[[list[Callable[[], MKLResult]]], list[MKLResult]],
                dense_bytes: float = 0.0) -> list[MKLResult]:
    """Each pair's binary MKL result, its dual coefficients over all training points.

    ``solve(sub_kernel_set, y_pm)`` solves one binary problem; ``run(tasks)`` runs the
    pairs' tasks (side by side on threads, or through joblib) and returns their results in
    order. A pair's problem has class a's points first, then class b's, each in their order
    here (the same problem whatever the order of the training points); its result keeps its
    own certificate (on its points, listed in that order in ``info["points"]``); its
    ``dual_coef`` is spread over all n training points (zero off the pair) so that one set of
    support vectors serves every pair at prediction.

    Kernels computed on the fly: a pair whose dense stack takes at most ``dense_bytes`` is
    solved on it (:meth:`~mklopt.kernels.lazy.LazyKernelSet.dense`, built once): its columns
    are then read, not computed again at every kernel pass (letter, 26 classes, 8,000 points:
    the pairs' gradient updates on the fly were half of the fit).
    """
    n = kernel_set.n
    members = [np.flatnonzero(y == c) for c in classes]  # a pair's points: class a's, then b's
    pairs = [((classes[a], classes[b]), np.concatenate([members[a], members[b]]))
             for a, b in class_pairs(classes.size)]

    def task(positive, index: np.ndarray) -> Callable[[], MKLResult]:
        y_pm = np.where(y[index] == positive, 1.0, -1.0)
        if getattr(kernel_set, "lazy", False):  # the pair's features, small: a process ships them alone
            return functools.partial(_solve_pair, solve, kernel_set.points(index), None, y_pm, dense_bytes)
        return functools.partial(_solve_pair, solve, kernel_set, index, y_pm, dense_bytes)  # its copy, later

    results = run([task(pair[0], index) for pair, index in pairs])
    out = []
    for (pair, index), result in zip(pairs, results):
        spread = np.zeros(n)
        spread[index] = np.asarray(result.dual_coef, dtype=float)
        info = {**result.info, "points": index, "pair": pair}
        out.append(dataclasses.replace(result, dual_coef=spread, info=info))
    return out


def _solve_pair(solve: Callable[[object, np.ndarray], MKLResult], kernels, index: np.ndarray | None,
                y_pm: np.ndarray, dense_bytes: float) -> MKLResult:
    """One pair's problem on ``kernels`` (at the points ``index``, when given), kernels on the
    fly first made a dense stack when it takes at most ``dense_bytes``."""
    if index is not None:
        kernels = kernels.points(index)
    if getattr(kernels, "lazy", False) and stack_bytes(kernels.M, kernels.n) <= dense_bytes:
        kernels = kernels.dense()
    return solve(kernels, y_pm)


def votes(scores: np.ndarray, k: int) -> np.ndarray:
    """Votes per class (n_test, k) from the pairs' decision values (n_test, pairs)."""
    counts = np.zeros((scores.shape[0], k), dtype=np.int64)
    for p, (a, b) in enumerate(class_pairs(k)):
        positive = scores[:, p] > 0
        counts[positive, a] += 1
        counts[~positive, b] += 1
    return counts


def ovr_shaped(scores: np.ndarray, k: int) -> np.ndarray:
    """One column per class from the pairs' values: the votes plus the summed confidences
    squashed into (-1/3, 1/3), so that they order classes with equal votes without overturning
    a vote (scikit-learn's ``decision_function_shape="ovr"`` of ``SVC``)."""
    confidence, counts = np.zeros((scores.shape[0], k)), np.zeros((scores.shape[0], k))
    for p, (a, b) in enumerate(class_pairs(k)):
        confidence[:, a] += scores[:, p]
        confidence[:, b] -= scores[:, p]
        counts[scores[:, p] >= 0, a] += 1  # scikit-learn's convention here: a value of 0 counts for a
        counts[scores[:, p] < 0, b] += 1
    return counts + confidence / (3.0 * (np.abs(confidence) + 1.0))
