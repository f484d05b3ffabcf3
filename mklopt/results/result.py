"""The one result type of mklopt (the qpsolvers model)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..certificates.bounds import GAP_FLOOR, Certificate, objective_scale, ranked_gap, relative_gap
from ..certificates.recertify import result_loss
from ..regularizers import spec_of
from ..exceptions import InvalidInputError
from .result_io import jsonable, load_result, save_result

__all__ = ["Certificate", "MKLResult", "relative_gap", "objective_scale", "ranked_gap", "decision_values", "GAP_FLOOR"]

@dataclass
class MKLResult:
    """Result of :func:`mklopt.solve` or :func:`mklopt.fit`.

    ``mklopt.certify(kernels, y, weights, alpha, C=C, regularizer=regularizer)``
    reproduces ``primal``, ``dual``, ``gap`` and ``rel_gap``; :meth:`save` and
    :meth:`load` round-trip everything needed to re-certify and to predict.

    Attributes
    ----------
    weights : ndarray (M,)
        Kernel weights :math:`\\mu`.
    alpha : ndarray (n,), (n_classes, n) or (M, n)
        Dual coefficients :math:`\\alpha` in the loss's dual set (hinge:
        ``0 <= alpha <= C``; regression: signed); one row per class for
        ``"ovr_hinge"``; per-kernel coefficients :math:`\\alpha_{k,j}`
        (shape (M, n)) for VKR.
    bias : float or ndarray (n_classes,)
        Offset :math:`b` (:math:`-\\rho` for ``"one_class"``; one per class for ``"ovr_hinge"``).
    primal, dual, gap, rel_gap : float
        mklopt's certificate (dual <= OPT <= primal).
    status : str
        ``"optimal"`` (certified within tolerance), ``"converged"``,
        ``"max_iter"``, ``"time_limit"``, ``"uncertified"``, ...
    iterations : int
    history : list of dict
        One record per outer iteration (drivers).
    backend, formulation : str
    solve_time : float
        Seconds.
    dual_coef : ndarray (n,) or (n_classes, n)
        The decision function's coefficients :math:`c(\\alpha)` (:math:`y \\circ \\alpha` for the hinge).
    classes : ndarray (2,) or (n_classes,)
        Original labels mapped to -1 and +1 (hinge), or the classes of
        ``"ovr_hinge"``; None for regression and one-class.
    C : float
        Soft-margin constant of the problem.
    regularizer : Regularizer
        The weight set Θ (or block-norm penalty) of the problem.
    fingerprint : dict
        A sketch of the training kernels and labels: re-certifying a saved
        result against other kernels is an error, not a wrong answer.
    loss : str
        The loss's name (``"hinge"``, ``"epsilon_insensitive"``, ...).
    loss_params : dict
        Its parameters (``epsilon``, ``nu``).
    """

    weights: np.ndarray
    alpha: np.ndarray
    bias: Any
    primal: float
    dual: float
    gap: float
    rel_gap: float
    status: str
    iterations: int = 0
    history: list = field(default_factory=list)
    backend: str | None = None
    formulation: str | None = None
    solve_time: float = 0.0
    dual_coef: np.ndarray | None = None
    classes: np.ndarray | None = None
    kernel_names: list | None = None
    certificate: Certificate | None = None
    verification: dict | None = None
    message: str = ""
    info: dict = field(default_factory=dict)
    C: float | None = None
    regularizer: Any = None
    fingerprint: dict | None = None
    loss: str = "hinge"
    loss_params: dict = field(default_factory=dict)

    def save(self, path) -> None:
        """Write the result to ``path`` (``.npz``, or ``.json`` with arrays as lists) atomically;
        see :meth:`load`."""
        save_result(self, path)

    @classmethod
    def load(cls, path) -> "MKLResult":
        """Read a result written by :meth:`save` (:class:`InvalidInputError` for anything else)."""
        return cls(**load_result(path))

    @property
    def objective(self) -> float:
        """Best known estimate of the optimal value (the certified primal)."""
        return self.primal

    def decision_function(self, test_kernels) -> np.ndarray:
        """:math:`f(x) = \\sum_m \\mu_m K_m(x, X)\\,c + b`, ``c`` the dual coefficients.

        Parameters
        ----------
        test_kernels : array (M, n_test, n_train) or (n_test, n_train) when M = 1
            Kernels between test and training points, normalized like the
            training kernels (see :meth:`KernelSet.transform_test`); for
            kernels given as factors, the
            :class:`~mklopt.kernels.factorset.TestFactors` that
            :meth:`FactorKernelSet.transform_test` returns.

        Returns
        -------
        ndarray (n_test,), or (n_test, n_classes) for ``"ovr_hinge"`` (one offset per class)
        """
        test_kernels = _test_array(test_kernels)
        if getattr(self.regularizer, "degree", 1) != 1:  # polynomial_krr: (sum_m mu_m K_m(x, X))^d c
            return self.regularizer.decision_values(test_kernels, self.weights, self.dual_coef) + self.bias
        if hasattr(test_kernels, "products"):  # test factors: K_m(x, X) c without K_m(x, X)
            return _factor_decision_values(test_kernels, self.weights, np.asarray(self.dual_coef),
                                           self.bias)
        T = np.asarray(test_kernels, dtype=float)
        if T.ndim == 2:
            T = T[None]
        M, n = self.weights.size, np.shape(self.dual_coef)[-1]
        if T.ndim != 3 or T.shape[0] != M or T.shape[2] != n:
            raise InvalidInputError(
                f"test kernels must have shape (M={M}, n_test, n_train={n}), got {T.shape}.")
        return decision_values(T, self.weights, np.asarray(self.dual_coef), self.bias)

    def predict(self, test_kernels) -> np.ndarray:
        """Predictions of the result's loss: class labels (original values), targets, or ±1 for one-class."""
        f = self.decision_function(test_kernels)
        try:
            loss = result_loss(self)
        except InvalidInputError:  # a user loss that is not registered: its decision values
            return f
        return loss.predict(f, self.classes)

    def summary(self) -> str:
        w = np.array2string(np.asarray(self.weights), precision=4, suppress_small=True)
        return (f"{self.formulation} [{self.backend}] status={self.status} "
                f"primal={self.primal:.8g} dual={self.dual:.8g} gap={self.gap:.2e} rel_gap={self.rel_gap:.2e} "
                f"iterations={self.iterations} time={self.solve_time:.3f}s weights={w}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-serializable dictionary (arrays become lists)."""
        out = {}
        for key, value in asdict(self).items():
            if key == "regularizer":
                value = None if value is None else (spec_of(value) or repr(value))
            out[key] = jsonable(value)
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict())


def _factor_decision_values(test, weights: np.ndarray, coef: np.ndarray, bias) -> np.ndarray:
    """:math:`f = \\sum_m \\mu_m G_m(x) G_m^\\top c + b` from :class:`TestFactors`."""
    if test.M != weights.size or test.train.n != coef.shape[-1] or coef.ndim == 2 and np.ndim(bias) == 0:
        raise InvalidInputError(f"test factors are for M={test.M} kernels over {test.train.n} "
                                f"training points; this result has M={weights.size}, "
                                f"n={coef.shape[-1]} (per-kernel coefficients need dense kernels).")
    return np.tensordot(np.asarray(weights, dtype=float), test.products(coef), axes=1) + np.asarray(bias)


def _test_array(test_kernels):
    """Test kernels as given, checked: a training :class:`~mklopt.kernels.KernelSet` gives its
    dense stack (predictions on the training points); NaN or infinite entries are refused."""
    if getattr(test_kernels, "factored", None) is not None:  # a KernelSet (dense, lazy or factors)
        if getattr(test_kernels, "lazy", False) or getattr(test_kernels, "factored", False):
            raise InvalidInputError(
                "decision_function takes test kernels, not a kernel set on the fly or of factors: pass "
                "ks.test_kernels(X_test) (on the fly) or ks.transform_test(X_test) (factors).")
        test_kernels = test_kernels.K
    if hasattr(test_kernels, "products"):
        return test_kernels
    try:
        T = np.asarray(test_kernels, dtype=float)
    except (TypeError, ValueError):
        raise InvalidInputError("test kernels must be a real (M, n_test, n_train) array.") from None
    if not np.all(np.isfinite(T)):
        raise InvalidInputError("test kernels contain NaN or infinite values; check the test features.")
    return T


def decision_values(T: np.ndarray, weights: np.ndarray, coef: np.ndarray, bias) -> np.ndarray:
    """:math:`f = \\sum_m \\mu_m T_m c + b`, or :math:`\\sum_m T_m c_m + b` for per-kernel rows.

    ``T`` is (M, n_test, n_cols); ``coef`` is (n_cols,), or (n_tasks, n_cols)
    with one offset per task (``bias`` an array: multi-output losses, result
    (n_test, n_tasks)), or (M, n_cols) with a scalar ``bias`` (per-kernel
    coefficients: VKR, block norms b > 2). The (M, n_test, ...) products come
    first, so the test stack is never copied.
    """
    if np.ndim(bias) == 1:
        return np.einsum("m,mit->it", np.asarray(weights, dtype=float),
                         np.matmul(T, coef.T)) + np.asarray(bias)
    if coef.ndim == 2:
        return np.einsum("kij,kj->i", T, coef) + bias
    return np.asarray(weights, dtype=float) @ np.tensordot(T, coef, axes=([2], [0])) + bias
