"""What every formulation module shares: the problem data and the built model."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import cvxpy as cp
import numpy as np

from ..kernels import KernelSet
from ..regularizers import Regularizer


@dataclass
class MKLData:
    """Validated inputs of one MKL problem.

    ``y`` is in {-1, +1}; ``regularizer`` is the weight set Θ.
    """

    kernels: KernelSet
    y: np.ndarray
    C: float
    regularizer: Regularizer
    params: dict = field(default_factory=dict)

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
    #: Optional formulation-specific certificate ``certify(weights, alpha, bias)
    #: -> Certificate`` (e.g. the VKR LP); the generic MKL certificate otherwise.
    certify: Callable[..., Any] | None = None
    #: Optional ``primal_point() -> PrimalPoint`` for primal formulations whose
    #: solution has no kernel-weight form: the certificate's upper bound then
    #: comes from the primal point itself.
    primal_point: Callable[[], "PrimalPoint"] | None = None


@dataclass
class PrimalPoint:
    """A primal solution in function form: :math:`f = \\sum_m K_m \\beta_m` on the training set."""

    penalty: float
    outputs: np.ndarray
    weights: np.ndarray
    coef: np.ndarray


@dataclass(frozen=True)
class Formulation:
    """A formulation: its name, cone class, builder and catalogue page."""

    name: str
    cone: str
    build: Callable[..., Model]
    summary: str
    needs_psd: bool = True
    page: str = ""

    def cone_for(self, data: MKLData) -> str:
        return self.cone


def dual_box(data: MKLData) -> tuple[cp.Variable, cp.Expression, list]:
    """The SVM dual variable, ``y * alpha`` and the box/equality constraints."""
    alpha = cp.Variable(data.n, name="alpha")
    return alpha, cp.multiply(data.y, alpha), [alpha >= 0, alpha <= data.C, data.y @ alpha == 0]


def quad_terms(factors: list[np.ndarray], coef: cp.Expression) -> list[cp.Expression]:
    """:math:`s_m = \\|L_m^\\top (y\\circ\\alpha)\\|^2` for each kernel (never a Gram quad_form)."""
    return [cp.sum_squares(L.T @ coef) for L in factors]


def margin_problem(data: MKLData):
    """Primal margin variables: stacked factor ``L``, blocks ``w_m``, bias, slacks.

    Returns ``(w_blocks, b, xi, margin_constraint, hinge_term)`` with the
    constraint :math:`y_i(\\sum_m L_m[i,:] w_m + b) \\ge 1 - \\xi_i` whose dual
    values are :math:`\\alpha`.
    """
    factors = data.factors()
    sizes = [L.shape[1] for L in factors]
    L = np.hstack(factors)
    w = cp.Variable(L.shape[1], name="w")
    b = cp.Variable(name="b")
    xi = cp.Variable(data.n, nonneg=True, name="xi")
    margin = cp.multiply(data.y, L @ w + b) >= 1 - xi
    bounds = np.concatenate(([0], np.cumsum(sizes)))
    blocks = [w[bounds[m]:bounds[m + 1]] for m in range(data.M)]
    return blocks, b, xi, margin, data.C * cp.sum(xi)


def dual_values(constraints: list) -> np.ndarray:
    return np.array([float(np.asarray(c.dual_value).ravel()[0]) for c in constraints])
