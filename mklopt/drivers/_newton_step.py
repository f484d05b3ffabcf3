"""A second-order θ-step for a polyhedral Θ (ℓ1, box, weighted simplex) and the binary hinge loss.

The SVM's dual optimum at weights μ, :math:`J(\\mu) = \\max_\\alpha 1^\\top\\alpha -
\\tfrac12\\sum_m\\mu_m s_m(\\alpha)`, is convex in μ and MKL minimizes it over Θ. At the SVM
solution α its gradient is :math:`\\nabla J = -\\tfrac12 s(\\alpha)`; where the set F of free
variables (:math:`0<\\alpha_i<C`) does not change, α on F moves linearly with μ and

.. math::

    \\nabla^2 J = B^\\top X,\\qquad
    \\begin{pmatrix} Q_{FF} & y_F\\\\ y_F^\\top & 0\\end{pmatrix}
    \\begin{pmatrix} X\\\\ z^\\top\\end{pmatrix} = \\begin{pmatrix} B\\\\ 0\\end{pmatrix},

with :math:`Q_{FF} = (YK_\\mu Y)_{FF}` and the columns :math:`b_m = y_F\\circ(K_m(y\\circ\\alpha))_F`
(the per-kernel gradients the interleaved core keeps). The step is the minimizer over Θ of the
quadratic model,

.. math:: \\min_{\\mu'\\in\\Theta}\\ -\\tfrac12 s^\\top(\\mu'-\\mu) + \\tfrac12(\\mu'-\\mu)^\\top\\nabla^2J\\,(\\mu'-\\mu),

a QP in M variables (:mod:`~mklopt.drivers._theta_qp`: on the face of Θ of the current
weights in closed form where the KKT conditions certify it, else HiGHS). This is HessianMKL (O. Chapelle and A. Rakotomamonjy, "Second
order optimization of kernel parameters", NIPS 2008 Workshop on Kernel Learning): where the
cutting plane zig-zags around an optimum inside Θ (UCI Multiple Features, six view kernels:
50-90 weight steps per class), its steps reach the certificate in a handful. Nothing here is
trusted: the certificate decides, and the driver falls back to the cutting plane where a
step does not help (:class:`~mklopt.drivers._weight_step.WeightStep`).
"""

from __future__ import annotations

import numpy as np

from .._compiled.blocks import gather_block
from .._compiled.layout import frozen
from .._compiled.newton_model import MODELLED, NOT_DEFINITE, floored, model_hessian
from ..kernels._stack import dense_stack
from ._core_certificates import svm_gap
from ._theta_qp import ThetaQP
from .lp_master import PolyhedralSet

__all__ = ["NewtonStep", "SecondOrder", "MAX_FREE", "PATIENCE", "SETTLED", "moved_share"]

#: Second-order steps in a row that may leave the best certified gap where it was before
#: the cutting plane takes over for good.
PATIENCE = 5
#: Weights that moved by at most this share of their ℓ1 norm in a step are settled.
SETTLED = 3e-3
#: The SVM's own gap at μ above this share of the certified gap: the SVM, not the weights,
#: is what is left to solve there.
SVM_SHARE = 0.5
#: Free variables at most: the bordered system is dense, :math:`O(|F|^3)` (at 800, ~5 ms on
#: one core; at 1,600 eight times that). At C = 100 digits' classes have 400-800 near their
#: optimum: with 400 the model was missing there, and the cutting plane's weights from those
#: steps undid the SVM's progress (10 classes: 106 steps, 92 with 800). Letter's one-vs-rest
#: classes (overlapping: a quarter to a third of the points support vectors) have 800-1,600
#: free variables at C = 1 from 3,000 points: with 800 the model was missing for most of
#: their steps and the cutting plane's jumps held the best gap still for up to 15 steps; with
#: 1,600 the 26 classes took 284 steps instead of 413 at 3,000 points (3.09 -> 2.88 s, one at a
#: time), 393 instead of 649 at 6,000 (10.9 -> 9.1 s), and at C = 100 on 2,000 points 392
#: instead of 611 (4.9 -> 3.7 s); digits and Multiple Features (at most 800) are unchanged.
#: 3,200 took 8.5 s at 6,000 points, a model then costing up to ~0.4 s: not taken.
MAX_FREE = 1600
#: Smallest eigenvalue of the model's Hessian relative to its largest.
FLOOR = 1e-8
#: Ridge on :math:`Q_{FF}` relative to its mean diagonal (a low-rank K_mu, e.g. linear).
RIDGE = 1e-10


class NewtonStep:
    """The quadratic model on a dense stack: ``hessian(mu, alpha, Kc)``, then ``step(mu, s, H)``
    for the model's minimizer over Θ (either None where it cannot be had).

    Parameters
    ----------
    theta : PolyhedralSet
        Θ.
    K : ndarray of shape (M, n, n)
        The training kernels.
    y : ndarray of shape (n,)
        Labels ±1.
    C : float
        The box of α.
    """

    def __init__(self, theta: PolyhedralSet, K: np.ndarray, y: np.ndarray, C: float) -> None:
        self.stack, self.y, self.C = frozen(K), y, float(C)
        self.M = K.shape[0]
        self.qp = ThetaQP(theta)

    def hessian(self, mu: np.ndarray, alpha: np.ndarray, Kc: np.ndarray | None = None) -> np.ndarray | None:
        """:math:`\\nabla^2 J` at (μ, α), or None where F is empty or larger than :data:`MAX_FREE`.

        ``Kc``: the gradients :math:`K_m(y\\circ\\alpha)` (M, n) where they are known; else
        their rows F are computed from the support vectors."""
        free = np.flatnonzero((alpha > 1e-12 * self.C) & (alpha < (1.0 - 1e-12) * self.C))
        if free.size == 0 or free.size > MAX_FREE:
            return None
        yF = self.y[free]
        B = np.ascontiguousarray(self._gradient_rows(free, alpha, Kc).T * yF[:, None])  # (|F|, M)
        used = np.flatnonzero(mu > 0)
        Q, H = np.empty((free.size, free.size)), np.empty((self.M, self.M))
        status = model_hessian(self.stack, used, frozen(mu[used]), free.astype(np.int64, copy=False), yF, B,
                               RIDGE, FLOOR, Q, H)
        if status == MODELLED:
            return H
        if status != NOT_DEFINITE:
            return None
        # a poor model (a low-rank K_mu) only costs a step, the certificate decides: no warnings
        with np.errstate(all="ignore"):
            raw = _bordered_by_lu(Q, yF, B)
        return H if raw is not None and np.all(np.isfinite(raw)) and floored(raw, FLOOR, H) else None

    def _gradient_rows(self, free: np.ndarray, alpha: np.ndarray, Kc: np.ndarray | None) -> np.ndarray:
        """:math:`(K_m(y\\circ\\alpha))_F`, shape (M, |F|)."""
        if Kc is not None:
            return Kc[:, free]
        support = np.flatnonzero(alpha)
        coef = self.y[support] * alpha[support]
        block = np.empty((self.M, free.size, support.size))
        gather_block(self.stack, free.astype(np.int64, copy=False), support.astype(np.int64, copy=False), block)
        return block @ coef  # the |F| x |SV| block only

    def __call__(self, mu: np.ndarray, s: np.ndarray, H: np.ndarray) -> np.ndarray | None:
        """The minimizer of the quadratic model over Θ (None where HiGHS does not end optimal)."""
        return self.qp(mu, -0.5 * s - H @ mu, H)


def _bordered_by_lu(Q: np.ndarray, yF: np.ndarray, B: np.ndarray) -> np.ndarray | None:
    """:math:`B^\\top X` of the bordered system by its LU, where :math:`Q_{FF}` is not numerically
    positive definite (:func:`~mklopt._compiled.newton_model.model_hessian` takes the Cholesky
    factor and the Schur complement of the border otherwise); None where it is singular."""
    k = yF.size
    bordered = np.zeros((k + 1, k + 1))
    bordered[:k, :k], bordered[:k, k], bordered[k, :k] = Q, yF, yF
    try:
        X = np.linalg.solve(bordered, np.vstack([B, np.zeros((1, B.shape[1]))]))
    except np.linalg.LinAlgError:
        return None
    return B.T @ X[:k]


class SecondOrder:
    """The second-order step and its safeguard: ``step(mu, cert, Kc) -> weights or None``.

    None (the cutting plane's weights then) where the model cannot be made (no free
    variable, too many, a QP HiGHS does not solve), and for good once :data:`PATIENCE`
    model steps in a row were followed by no better certified gap. Where the model cannot be
    made at a step while the SVM's own gap at μ is most of the gap (the interleaved core's
    α still far from the SVM at these weights: at C = 100 the free variables may outnumber
    :data:`MAX_FREE` for a few steps), the weights stay where the model put them (``mu``):
    the cutting plane's weights from cuts of such α moved them off the optimum and
    undid the SVM's progress (digits, C = 100: one class 25 steps, 12 after it). The SVM's
    gap shrinks at fixed weights, so this holds only for a while. For the same reason the
    model is not made at all while its last step left the weights settled (moved by at
    most :data:`SETTLED` of their norm) and the SVM's gap is most of the gap: near the
    optimum the SVM's refinements at fixed weights are half of a fit's steps (digits,
    C = 100), and each model would be a Cholesky factorization of :math:`Q_{FF}` that
    leaves the weights where they are.
    """

    def __init__(self, step: NewtonStep) -> None:
        self.step = step
        self.best_gap, self.idle = np.inf, 0
        self.modelled = self.used = False  # the last step, any step so far, from the model
        self.settled = False  # the last model step left the weights where they were

    @classmethod
    def of(cls, data) -> "SecondOrder | None":
        """The safeguarded step for ``data`` where it applies: the binary hinge loss on a dense
        stack, a polyhedral Θ."""
        from .lp_master import polyhedral_set

        theta = polyhedral_set(data.regularizer, data.M)
        if theta is None or data.loss.name != "hinge" or not dense_stack(data.kernels):
            return None
        return cls(NewtonStep(theta, data.kernels.K, np.asarray(data.y, dtype=float), data.C))

    def __call__(self, mu: np.ndarray, cert, Kc: np.ndarray | None = None) -> np.ndarray | None:
        if self.step is None:
            return None
        if cert.rel_gap < self.best_gap:
            self.best_gap, self.idle = cert.rel_gap, 0
        elif self.modelled:
            self.idle += 1
        if self.idle > PATIENCE:
            self.step = None
            return None
        svm_behind = svm_gap(mu, cert) > SVM_SHARE * (cert.primal - cert.dual)
        if self.settled and svm_behind:
            self.modelled = False
            return np.array(mu, dtype=float)
        H = self.step.hessian(mu, cert.alpha, Kc)
        weights = None if H is None else self.step(mu, cert.s, H)
        self.modelled = weights is not None
        self.used = self.used or self.modelled
        self.settled = self.modelled and moved_share(weights, mu) <= SETTLED
        if weights is None and self.used and svm_behind:
            return np.array(mu, dtype=float)  # let the SVM catch up at these weights
        return weights


def moved_share(new: np.ndarray, old: np.ndarray) -> float:
    """How far the weights moved, as a share of their ℓ1 norm."""
    return float(np.abs(new - old).sum()) / max(float(np.abs(old).sum()), 1e-300)
