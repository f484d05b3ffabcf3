"""The θ-step of the interleaved core (:mod:`mklopt.drivers.chunking`): new weights from a certificate.

* For :math:`\\|\\mu\\|_p\\le1`, :math:`1<p<\\infty`: the analytic update
  :math:`\\mu_m\\propto(\\mu_m^2 s_m)^{1/(p+1)}` (M. Kloft, *ℓp-Norm Multiple Kernel
  Learning*, PhD thesis, TU Berlin 2011, Prop. 3.1), with no lower bound.
* For a polyhedral Θ (ℓ1, box, weighted simplex): the cutting-plane master
  (:class:`~mklopt.drivers.lp_master.LPMaster`) on the cuts
  :math:`\\eta \\ge D(\\alpha^r) - \\tfrac12 s(\\alpha^r)^\\top\\mu` collected so far, whose value
  is a lower bound on the optimum (the analytic step has no convergence guarantee at
  p = 1, the thesis' App. D). Beyond ``max_cuts`` cuts the one with the most slack at the
  current weights is dropped. With the binary hinge loss on a dense stack the weights are
  taken from the second-order step instead (:mod:`~mklopt.drivers._newton_step`: the
  minimizer over Θ of the quadratic model of the SVM's optimum in μ) while it keeps
  improving the certified gap; the cuts are collected either way, for the lower bound and
  for the cutting plane that takes over where it does not.
* For any other Θ: the regularizer's own
  :meth:`~mklopt.regularizers.Regularizer.argmin_weights`.
"""

from __future__ import annotations

import math

import numpy as np

from ..formulations import MKLData
from ..regularizers import LpBall
from ..results.result import Certificate
from ._newton_step import SecondOrder
from .lp_master import LPMaster, PolyhedralSet, polyhedral_set

__all__ = ["WeightStep"]


class WeightStep:
    """``step(mu, cert) -> (weights, lower bound)`` for the data's regularizer.

    Parameters
    ----------
    data : MKLData
        The problem (its regularizer and number of kernels).
    max_cuts : int
        Cuts kept by the polyhedral master.
    second_order : bool
        Try the second-order step (:mod:`~mklopt.drivers._newton_step`) where it applies.
    """

    def __init__(self, data: MKLData, max_cuts: int, second_order: bool = True) -> None:
        self.regularizer = data.regularizer
        self.theta = _theta(data)
        self.master: LPMaster | None = None  # made at its first solve: a second-order step needs none
        self.max_cuts = int(max_cuts)
        self.cuts: list[tuple[float, np.ndarray]] = []
        self.second = SecondOrder.of(data) if self.theta is not None and second_order else None

    def __call__(self, mu: np.ndarray, cert: Certificate,
                 Kc: np.ndarray | None = None) -> tuple[np.ndarray, float]:
        s, reg = cert.s, self.regularizer
        if not np.any(s > 0):  # alpha = 0: nothing to weigh yet
            return mu, -math.inf
        if self.theta is None:
            return reg.argmin_weights(mu**2 * s), -math.inf
        self.cuts.append((cert.gain, s.copy()))
        if self.master is not None:
            self.master.add_cut(cert.gain, s)
        if len(self.cuts) > self.max_cuts:
            slack = [_slack(cut, mu) for cut in self.cuts]
            drop = int(np.argmax(slack))
            if self.master is not None:
                self.master.drop_cut(drop)
            del self.cuts[drop]
        second = None if self.second is None or Kc is None else self.second(mu, cert, Kc)
        if second is not None:  # the master's bound is not needed to go on: the certificate decides
            return reg.into_set(second), -math.inf
        if self.master is None:
            self.master = LPMaster(self.theta)
            for offset, terms in self.cuts:
                self.master.add_cut(offset, terms)
        weights, eta = self.master.solve()
        return reg.into_set(weights), eta


def _slack(cut: tuple[float, np.ndarray], mu: np.ndarray) -> float:
    offset, s = cut
    return 0.5 * float(s @ mu) - offset


def _theta(data: MKLData) -> PolyhedralSet | None:
    """Θ for the cutting-plane master, None for the analytic step and other weight sets."""
    reg = data.regularizer
    if isinstance(reg, LpBall) and 1 < reg.p < math.inf and type(reg) is LpBall:
        return None  # the analytic step
    return polyhedral_set(reg, data.M)
