"""The one result type of mklopt (the qpsolvers model)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .exceptions import InvalidInputError

__all__ = ["Certificate", "MKLResult", "relative_gap", "objective_scale", "ranked_gap", "decision_values", "GAP_FLOOR"]

#: ``rel_gap`` divides by ``max(|P|, |G|, GAP_FLOOR * scale)``; the floor only guards exact zeros.
GAP_FLOOR = 1e-12


def objective_scale(C: float, n: int) -> float:
    """:math:`\\min(C, 1)\\,n`: the size of an objective that only guards exact zeros.

    For :math:`C \\le 1` it is the hinge primal value at :math:`w = 0, b = 0`.
    It does not grow with :math:`C` beyond :math:`n`: as :math:`C\\to\\infty` the
    optimum stays bounded (the hard-margin or interpolating solution), and a
    floor of :math:`10^{-12} C n` (round 2) at :math:`C = 10^{30}` passed a
    squared-loss answer with :math:`P = 2.3\\cdot10^{6}`, :math:`G = 17` as
    ``rel_gap`` 1e-13.
    """
    return min(float(C), 1.0) * float(n)


def relative_gap(gap: float, primal: float, dual: float, scale: float) -> float:
    """:math:`(P - G) / \\max(|P|, |G|, 10^{-12}\\,\\text{scale})`.

    Relative to the problem's own value; ``scale`` is a data-derived size of
    the objective (:func:`objective_scale`), used only so that exact zeros do
    not divide by zero.
    """
    if not np.isfinite(gap):
        return float(gap) if not np.isnan(gap) else np.inf
    return float(gap) / max(abs(primal), abs(dual), GAP_FLOOR * scale, np.finfo(float).tiny)



@dataclass
class Certificate:
    """mklopt's own optimality certificate for a candidate (DESIGN §6).

    When ``feasible``, ``dual <= OPT <= primal`` holds (weak duality);
    ``gap = primal - dual`` and ``rel_gap = gap / max(|primal|, |dual|, 1e-12 min(C, 1) n)``.
    An infeasible candidate (``feasible=False``) is never certified: its dual
    value is still a lower bound, its primal value is not an upper bound.

    Attributes
    ----------
    primal : float
        :math:`P = \\tfrac12\\sum_m\\mu_m s_m(\\alpha) + C\\min_b\\sum_i\\ell(y_i, f_i+b)`
        (hinge: :math:`\\ell = \\max(0, 1-y_i(f_i+b))`).
    dual : float
        :math:`G = D_\\ell(\\alpha) - \\tfrac12\\sigma_\\Theta(s(\\alpha))` (hinge: :math:`D = 1^\\top\\alpha`).
    bias : float or ndarray
        The exact best offset :math:`b^*` of the loss (:math:`-\\rho` for one-class; one per class
        for ``"ovr_hinge"``).
    weights, alpha : ndarray
        The candidate weights (noise-level repairs only, or the projection onto
        Θ when ``repaired``) and alpha projected onto the dual-feasible set.
    violation : float
        Violation of Θ by the weights *as given*, relative to the scale of the weights and
        of Θ (:func:`mklopt.certificates.relative_violation`).
    feasible : bool
        ``violation <= feasibility_tol`` (or the weights were repaired).
    repaired : bool
        The certificate is about the projection of the weights onto Θ.
    message : str
        Why the candidate is not certified / what was repaired (empty otherwise).
    """

    primal: float
    dual: float
    gap: float
    rel_gap: float
    bias: float
    weights: np.ndarray
    alpha: np.ndarray
    #: Quadratic terms :math:`s_m(\\alpha)` at the projected alpha (reused by drivers).
    s: np.ndarray | None = None
    #: Decision-function coefficients when they are not :math:`y\\circ\\alpha`
    #: (per-kernel rows, shape (M, n), for primal-point certificates).
    dual_coef: np.ndarray | None = None
    #: The loss's part :math:`D(\\alpha)` of the dual value (``1'alpha`` for the hinge).
    gain: float | None = None
    violation: float = 0.0
    feasible: bool = True
    repaired: bool = False
    message: str = ""

    def certified(self, tol: float = 1e-6) -> bool:
        """The verdict: feasible, consistent and ``0 <= rel_gap <= tol``."""
        return bool(self.feasible and self.consistent() and self.rel_gap <= tol)

    def consistent(self) -> bool:
        """Weak duality holds as computed: a finite ``gap >= 0``.

        The certificate widens a negative gap within the rounding bound of its
        arithmetic to zero; a gap still negative means the dual value exceeds
        the primal value beyond what rounding explains (an under- or overflow,
        or a bug), and nothing is certified (``message`` names the cause).
        """
        return bool(np.isfinite(self.gap) and np.isfinite(self.rel_gap) and self.gap >= 0)

    def __repr__(self) -> str:
        extra = "" if self.feasible else f", feasible=False, violation={self.violation:.3g}"
        extra += "" if self.consistent() else ", consistent=False"
        return (f"Certificate(primal={self.primal:.10g}, dual={self.dual:.10g}, "
                f"gap={self.gap:.3g}, rel_gap={self.rel_gap:.3g}{extra})")


def ranked_gap(cert: Certificate) -> float:
    """The gap to rank candidates by: ``gap``, or ``+inf`` when the certificate is inconsistent."""
    return float(cert.gap) if cert.consistent() else np.inf


@dataclass
class MKLResult:
    """Result of :func:`mklopt.solve` or :func:`mklopt.fit`.

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

    ``certify(kernels, y, weights, alpha, C=C, regularizer=regularizer)``
    reproduces ``primal``, ``dual``, ``gap`` and ``rel_gap``; :meth:`save` /
    :meth:`load` round-trip everything needed to re-certify and to predict.
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
        """Write the result to ``path`` (``.npz``) atomically; see :meth:`load`."""
        from .result_io import save_result
        save_result(self, path)

    @classmethod
    def load(cls, path) -> "MKLResult":
        """Read a result written by :meth:`save` (:class:`InvalidInputError` for anything else)."""
        from .result_io import load_result
        return load_result(path)

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
        from .certificates import result_loss

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
                value = None if value is None else (value.to_spec() or repr(value))
            out[key] = _jsonable(value)
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict())


def _jsonable(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (np.floating, np.integer)):
        return value.item()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and not np.isfinite(value):
        return str(value)
    return value


def _factor_decision_values(test, weights: np.ndarray, coef: np.ndarray, bias) -> np.ndarray:
    """:math:`f = \\sum_m \\mu_m G_m(x) G_m^\\top c + b` from :class:`TestFactors`."""
    if test.M != weights.size or test.train.n != coef.shape[-1] or coef.ndim == 2 and np.ndim(bias) == 0:
        raise InvalidInputError(f"test factors are for M={test.M} kernels over {test.train.n} "
                                f"training points; this result has M={weights.size}, "
                                f"n={coef.shape[-1]} (per-kernel coefficients need dense kernels).")
    return np.tensordot(np.asarray(weights, dtype=float), test.products(coef), axes=1) + np.asarray(bias)


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
