"""Heuristic weights, one score per kernel: PWMK and FHeuristic.

* **PWMK** (Tanabe, Ho, Nguyen & Kawasaki, "Simple but effective methods for combining
  kernels in computational biology", IEEE RIVF 2008): each kernel's cross-validated
  accuracy :math:`a_m` with an SVM on it alone, shifted by a fraction
  :math:`\\delta` of the worst,

  .. math:: \\mu_m\\propto a_m-\\delta\\min_l a_l,\\qquad \\delta\\in[0,1].

* **FHeuristic** (Qiu & Lane, "A framework for multiple kernel support vector regression
  and its applications to siRNA efficacy prediction", IEEE/ACM TCBB 6(2), 2009): each
  kernel's (uncentered) alignment with the target kernel,

  .. math:: \\mu_m\\propto A(K_m,yy^\\top)=\\frac{y^\\top K_my}{n\\,\\|K_m\\|_F}.

Neither solves an optimization problem, so there is nothing to certify before
the SVM at the weights (certified like every mklopt result). The folds of PWMK
are scikit-learn's ``StratifiedKFold`` without shuffling: the weights are deterministic.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.linalg
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.svm import SVC

from .._options import Choice, Integer, Real
from ..exceptions import InvalidInputError, SolverError
from ._access import binary_labels, dense_kernels, normalized
from .registry import WeightFit, WeightMethod, register

__all__ = ["pwmk", "fheuristic"]


def pwmk(kernels, y, *, C: float = 1.0, delta: float = 0.0, cv: int = 3) -> WeightFit:
    """PWMK weights from each kernel's ``cv``-fold accuracy with ``SVC(C=C, kernel="precomputed")``."""
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or not 0 <= delta <= 1:
        raise InvalidInputError(f"pwmk: delta must be a number in [0, 1], got {delta!r}.")
    if isinstance(cv, bool) or not isinstance(cv, numbers.Integral) or cv < 2:
        raise InvalidInputError(f"pwmk: cv must be an integer >= 2, got {cv!r}.")
    ks, K = dense_kernels(kernels, "pwmk")
    y = binary_labels(y, ks.n, "pwmk")
    if min(np.sum(y > 0), np.sum(y < 0)) < cv:
        raise InvalidInputError(f"pwmk: {cv}-fold cross-validation needs at least {cv} points "
                                "of each class; lower cv.")
    folds = StratifiedKFold(n_splits=int(cv))
    accuracy = np.array([_accuracy(K[m], y, C, folds, ks.names[m]) for m in range(ks.M)])
    scores = accuracy - delta * accuracy.min()
    if not np.any(scores > 0):  # delta = 1 and every kernel equally good
        scores = np.ones(ks.M)
    info = {"method": "pwmk", "accuracy": accuracy, "delta": delta, "cv": int(cv), "C": C}
    return WeightFit(normalized(scores, 1, "pwmk"), info)


def _accuracy(K_m: np.ndarray, y: np.ndarray, C: float, folds, name: str) -> float:
    """Kernel ``name``'s mean cross-validated accuracy with ``SVC(C, kernel="precomputed")``."""
    try:
        return float(cross_val_score(SVC(C=C, kernel="precomputed"), K_m, y, cv=folds, error_score="raise").mean())
    except ValueError as exc:  # libsvm's coefficients overflow on kernels of ~1e100
        raise SolverError(f"pwmk: libsvm could not fit kernel '{name}' ({' '.join(str(exc).split())}); normalize "
                          "the kernels first (KernelSet.normalized('trace')).") from None


def fheuristic(kernels, y, *, norm: int = 1) -> WeightFit:
    """FHeuristic weights: the uncentered alignments :math:`y^\\top K_my/(n\\|K_m\\|_F)`, the norm
    BLAS's scaled one (NumPy's squares the entries: 0 for a kernel of 1e-200, and 0/0 weights)."""
    ks, K = dense_kernels(kernels, "fheuristic")
    y = binary_labels(y, ks.n, "fheuristic")
    alignment = np.array([_alignment(K_m, y) for K_m in K])
    info = {"method": "fheuristic", "alignment": alignment}
    return WeightFit(normalized(np.clip(alignment, 0.0, None), norm, "fheuristic"), info)


def _alignment(K_m: np.ndarray, y: np.ndarray) -> float:
    """:math:`y^\\top K y/(n\\|K\\|_F)` of one kernel (0 for a zero kernel)."""
    frobenius = float(scipy.linalg.blas.dnrm2(K_m.ravel()))
    return float((K_m @ y) @ y) / frobenius / y.size if frobenius > 0 else 0.0


register(WeightMethod(
    "pwmk", pwmk, targets="labels", uses_C=True,
    summary="each kernel's cross-validated SVM accuracy (Tanabe et al. 2008)",
    certified="nothing to certify before the SVM at the weights (a heuristic)",
    page="peer_methods.md", options={"C": Real(0, open="low"), "delta": Real(0, 1), "cv": Integer(2)}))
register(WeightMethod(
    "fheuristic", fheuristic, targets="labels",
    summary="each kernel's alignment with yy' (Qiu & Lane 2009)",
    certified="nothing to certify before the SVM at the weights (a heuristic)",
    page="peer_methods.md", options={"norm": Choice((1, 2))}))
