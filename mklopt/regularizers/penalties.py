"""Penalties that are not weight sets: the block norm and the VKR LP's per-kernel ℓ1 weights.

Only :math:`\\mu \\ge 0` constrains the weights of these problems, so no outer loop runs on
them; they name the problem a result solved, so that its certificate can be recomputed.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..exceptions import InvalidInputError
from .._options import real_array
from .base import Regularizer
from .norms import conjugate_exponent

__all__ = ["Penalty", "BlockNorm", "VKRPenalty"]


class Penalty(Regularizer):
    """Base of the penalties that are not weight sets (only non-negativity constrains mu).

    They name the problem a result solved so that its certificate can be
    recomputed; the weights they report need only be non-negative. An outer loop cannot
    run on one (:attr:`instead` says what to do).
    """

    #: What to use instead of an outer loop (:func:`mklopt.fit`), which moves the weights
    #: within a bounded set: here only :math:`\mu \ge 0` would bound them.
    instead = "solve its formulation with mklopt.solve"

    def set_constraints(self, mu):
        return []

    def violation(self, mu):
        return float(np.max(-np.asarray(mu, float), initial=0.0))

    def into_set(self, mu, tol=1e-12):
        return np.clip(np.asarray(mu, dtype=float), 0, None)

    def project(self, mu):
        return self.into_set(mu)

    def check(self, M: int) -> None:
        """A penalty, not a set: nothing to check."""

    def contains_zero(self, M: int) -> bool:
        return True


class BlockNorm(Penalty):
    """Block-norm penalty :math:`\\tfrac12\\|w\\|_{2,b}^2` (thesis convention), any :math:`b\\ge1`.

    Not a weight set: it supplies the certificate of ``lp_block_primal``.
    With effective weights :math:`\\mu` (so :math:`w_m=\\mu_m L_m^\\top(y\\circ\\alpha)`),

    .. math:: P_{\\text{pen}} = \\tfrac12\\Big(\\sum_m (\\mu_m\\sqrt{s_m})^b\\Big)^{2/b},\\qquad
              D_{\\text{pen}} = \\tfrac12\\Big(\\sum_m s_m^{b^*/2}\\Big)^{2/b^*}.

    The dual is a valid (Lagrange) lower bound for every ``b``; for ``b <= 2``
    it equals the weight-norm dual with :math:`p = b/(2-b)`.
    """

    instead = ("solve it with mklopt.solve(kernels, y, 'lp_block_primal', regularizer=BlockNorm(b)), or run "
               "the loop on the same problem as a weight norm (b < 2): p=b/(2-b)")

    def __init__(self, b: float) -> None:
        if isinstance(b, (bool, np.bool_)) or not isinstance(b, numbers.Real) or not b >= 1:
            raise InvalidInputError(f"block norm b must be a number >= 1, got {b!r}.")
        self.b = float(b)
        self.name = f"block(b={self.b:g})"

    def primal_penalty(self, mu, s):
        norms = np.asarray(mu) * np.sqrt(np.clip(s, 0, None))
        return 0.5 * float(np.linalg.norm(norms, ord=self.b)) ** 2

    def dual_penalty(self, s):
        q = conjugate_exponent(self.b)
        return 0.5 * float(np.linalg.norm(np.sqrt(np.clip(s, 0, None)), ord=q)) ** 2

    def __repr__(self) -> str:
        return f"BlockNorm(b={self.b:g})"


class VKRPenalty(Penalty):
    """The per-kernel ℓ1 weights :math:`\\Lambda_k = \\lambda r_k + \\beta` of the VKR LP.

    Not a weight set: like :class:`BlockNorm` it names the problem a result
    solved (``vkr_lp``, ``vkr_cd``), so that a saved result re-certifies with
    :func:`mklopt.certificates.vkr.vkr_certificate` at the :math:`\\Lambda` it was solved with.
    """

    instead = "use VKRClassifier, mklopt.solve(kernels, y, 'vkr_lp', ...) or the driver 'vkr_cd'"

    def __init__(self, Lam) -> None:
        Lam = real_array(Lam, "VKR penalties Lambda_k").ravel()
        if Lam.size == 0 or not np.all(np.isfinite(Lam)) or np.any(Lam < 0):
            raise InvalidInputError("VKR penalties Lambda_k must be finite and nonnegative.")
        self.Lam = Lam
        self.name = "vkr"

    def __repr__(self) -> str:
        return f"VKRPenalty(Lam={np.array2string(self.Lam, precision=4)})"

