"""The compiled SMO as the inner SVM of the outer loops, warm-started from the previous answer.

At each outer iterate the loss's dual on :math:`K_\\mu = \\sum_m \\mu_m K_m` is solved by
:func:`~mklopt._compiled.smo_qp.smo_qp` from the previous iterate's variables (feasible for
every :math:`\\mu`: the dual set does not depend on the weights), so an outer loop whose
weights move little pays a few pair updates per iteration. The stopping violation starts
at ``0.1 * tol`` (relative to the size of the gradient) and is divided by 10 whenever the
inner SVM's certified gap is above a tenth of the target, down to double precision: the
solver has no budget of precision that large C could exhaust, unlike libsvm, so the loops
never switch to an interior-point SVM for a loss the core has.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..exceptions import MKLWarning, SolverError
from ..formulations import MKLData
from .._compiled.layout import frozen
from .._compiled.smo_qp import smo_qp

__all__ = ["SmoInner", "EPS_FLOOR"]

#: The smallest stopping violation, relative to the scale of the gradient.
EPS_FLOOR = 1e-13


class SmoInner:
    """The loss's dual at fixed weights by compiled SMO (:meth:`Loss.smo_forms
    <mklopt.losses.Loss.smo_forms>`), warm-started; :math:`K_\\mu` in one reused buffer.

    Attributes
    ----------
    max_pairs : int
        Pair updates allowed in one call per output, ``max(100_000, 1000 n)``.
    budget_hits : int
        Calls that stopped at the budget (their answer is still certified by the loop).
    pairs : int
        Pair updates made so far, over all calls and outputs.
    """

    name = "smo"

    def __init__(self, data: MKLData, tol: float, max_iter: int | None = None, backend=None) -> None:
        self.data = data
        self.forms = data.loss.smo_forms(data.y, data.C)
        self.betas = [form.start.copy() for form in self.forms]
        self.bases = [form.base for form in self.forms]
        self.relative_eps = max(EPS_FLOOR, min(1e-3, 0.1 * tol))
        self.max_pairs = int(max_iter) if max_iter is not None else max(100_000, 1000 * data.n)
        self.budget_hits = self.pairs = 0
        self.buffer = np.empty((data.n, data.n))

    def tighten(self) -> bool:
        """Ten times smaller stopping violation; False at the floor of double precision."""
        if self.relative_eps <= EPS_FLOOR:
            return False
        self.relative_eps = max(self.relative_eps / 10.0, EPS_FLOOR)
        return True

    def __call__(self, weights: np.ndarray) -> np.ndarray:
        d = self.data
        K = d.kernels.combined(weights, out=self.buffer)
        if not np.isfinite(K.sum()):  # one pass, no n x n temporary (an overflow is as bad)
            raise SolverError("K_mu has non-finite entries: rescale the kernels, e.g. "
                              "KernelSet(K).normalized('trace').")
        for form, base, beta in zip(self.forms, self.bases, self.betas):
            ghat = K @ form.point_weights(beta, d.n)
            scale = max(1.0, float(np.max(np.abs(base))), float(np.max(np.abs(ghat))))
            pairs, _ = smo_qp(frozen(K), frozen(form.rows, np.int64), frozen(form.signs), frozen(base),
                              frozen(form.upper), beta, ghat,
                              self.relative_eps * scale, self.max_pairs)
            self.pairs += int(pairs)
            if pairs >= self.max_pairs:
                self._budget_hit()
        return d.loss.smo_alpha([beta.copy() for beta in self.betas], d.y)

    def _budget_hit(self) -> None:
        self.budget_hits += 1
        if self.budget_hits == 1:
            warnings.warn(
                f"the SMO inner solver stopped at its budget of {self.max_pairs} pair updates on "
                "K_mu (ill-conditioned kernels or large C); its answer is still certified, the "
                "reported gap shows how far from optimal it is. Normalize the kernels "
                "(normalized('trace')) or use inner='cvxpy' if the gap stays large.",
                MKLWarning, stacklevel=4)
