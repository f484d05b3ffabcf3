"""What every formulation module shares: the problem data and the built model."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import cvxpy as cp
import numpy as np

from ..exceptions import FormulationError
from ..kernels import KernelSet
from ..losses import DualPart, Hinge, Loss, PrimalPart
from ..regularizers import Regularizer
from ..certificates.gap import PrimalPoint


@dataclass
class MKLData:
    """Validated inputs of one MKL problem.

    ``y`` is in the loss's internal form (±1 for the hinge, one ±1 row per
    class for ``ovr_hinge``, real targets for regression); ``regularizer`` is
    the weight set Θ.
    """

    kernels: KernelSet
    y: np.ndarray
    C: float
    regularizer: Regularizer
    params: dict = field(default_factory=dict)
    loss: Loss = field(default_factory=Hinge)

    @property
    def n(self) -> int:
        return self.kernels.n

    @property
    def M(self) -> int:
        return self.kernels.M

    def factors(self) -> list[np.ndarray]:
        return self.kernels.factors()


@dataclass
class Model:
    """A built CVXPY problem plus how to read an MKL candidate out of it.

    Attributes
    ----------
    problem : cp.Problem
    extract : callable
        ``extract() -> (weights, alpha, bias)`` after a solve.
    certificate_regularizer : Regularizer
        The penalty the certificate uses (Θ, or a block norm).
    """

    problem: cp.Problem
    extract: Callable[[], tuple[np.ndarray, np.ndarray, float]]
    certificate_regularizer: Regularizer | None
    info: dict[str, Any] = field(default_factory=dict)
    #: Optional formulation-specific certificate ``certify(weights, alpha, bias, limit)
    #: -> Certificate`` (e.g. the VKR LP; ``limit`` is the relative gap the answer must
    #: reach to be certified); the generic MKL certificate otherwise.
    certify: Callable[..., Any] | None = None
    #: Optional ``primal_point() -> PrimalPoint`` for primal formulations whose
    #: solution has no kernel-weight form: the certificate's upper bound then
    #: comes from the primal point itself.
    primal_point: Callable[[], "PrimalPoint"] | None = None


@dataclass(frozen=True)
class Formulation:
    """A formulation: its name, cone class, builder and catalogue page."""

    name: str
    cone: str
    build: Callable[..., Model]
    summary: str
    needs_psd: bool = True
    page: str = ""
    #: Names of the losses it is written for; None: any :class:`~mklopt.losses.Loss`.
    losses: tuple[str, ...] | None = None
    #: Reads the dense (M, n, n) stack (kernels given as factors are refused).
    needs_dense: bool = False
    #: Its parameters and what each must be (:mod:`mklopt._options`), checked before building.
    options: dict = field(default_factory=dict)
    #: Optional exact method for the same problem without the CVXPY statement,
    #: ``method(data, limit, **params) -> (Certificate, Regularizer)``: run by
    #: ``backend="mklopt"``, and by default above ``method_above_n`` points.
    method: Callable[..., Any] | None = None
    method_above_n: int | None = None

    def cone_for(self, data: MKLData) -> str:
        return self.cone

    def check_loss(self, loss: Loss) -> None:
        if self.losses is not None and loss.name not in self.losses:
            raise FormulationError(
                f"formulation '{self.name}' is written for loss {' or '.join(self.losses)}, not "
                f"'{loss.name}'; use 'lp_primal', 'lp_dual', 'qcqp_l1' or 'svm' (any loss).")


def refuse_signed(data: MKLData, name: str) -> None:
    """A :class:`~mklopt.exceptions.FormulationError` for a weight set with signed weights (the
    spectrahedron): the kernel-weight forms divide by :math:`\\mu_m` or take its multipliers,
    which are nonnegative, so they would solve over its nonnegative part only."""
    if getattr(data.regularizer, "signed", False):
        raise FormulationError(
            f"{name} takes nonnegative kernel weights, but {data.regularizer!r} allows signed ones (a PSD "
            "combination); use formulation='lanckriet_sdp', or driver='cutting_plane'.")


def dual_part(data: MKLData) -> DualPart:
    """The loss's dual variable, coefficients :math:`c(\\alpha)`, gain and dual constraints."""
    return data.loss.dual_part(data.y, data.C)


def quad_terms(factors: list[np.ndarray], coef: cp.Expression) -> list[cp.Expression]:
    """:math:`s_m = \\|L_m^\\top c\\|^2` for each kernel (never a Gram quad_form).

    ``coef`` is :math:`c(\\alpha)`: a vector, or one row per task (then
    :math:`s_m = \\|L_m^\\top C^\\top\\|_F^2 = \\sum_t c_t^\\top K_m c_t`).
    """
    coef = coef.T if len(coef.shape) == 2 else coef
    return [cp.sum_squares(L.T @ coef) for L in factors]


def primal_blocks(data: MKLData):
    """Primal weight blocks :math:`w_m` (one column per task) and the outputs they give.

    Returns ``(blocks, outputs)`` with :math:`f = \\sum_m L_m w_m`, shaped like
    the labels (``(n,)`` or ``(T, n)``); the loss adds its offset and data term.
    """
    factors = data.factors()
    sizes = [L.shape[1] for L in factors]
    L = np.hstack(factors)
    tasks = data.loss.n_tasks(data.y)
    w = cp.Variable(L.shape[1] if tasks == 1 else (L.shape[1], tasks), name="w")
    outputs = L @ w if tasks == 1 else (L @ w).T
    bounds = np.concatenate(([0], np.cumsum(sizes)))
    blocks = [w[bounds[m]:bounds[m + 1]] for m in range(data.M)]
    return blocks, outputs


def primal_part(data: MKLData, outputs: cp.Expression) -> PrimalPart:
    """The loss's data term on ``outputs`` (its offset a variable inside)."""
    return data.loss.primal_part(outputs, data.y, data.C)


def dual_values(constraints: list) -> np.ndarray:
    return np.array([float(np.asarray(c.dual_value).ravel()[0]) for c in constraints])
