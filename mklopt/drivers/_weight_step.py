"""The θ-step of the interleaved core (:mod:`mklopt.drivers.chunking`): new weights from a certificate.

* For :math:`\\|\\mu\\|_p\\le1`, :math:`1<p<\\infty`: the analytic update
  :math:`\\mu_m\\propto(\\mu_m^2 s_m)^{1/(p+1)}` (M. Kloft, *ℓp-Norm Multiple Kernel
  Learning*, PhD thesis, TU Berlin 2011, Prop. 3.1), with no lower bound.
* For a polyhedral Θ (ℓ1, box, weighted simplex): the cutting-plane master
  (:class:`~mklopt.drivers.lp_master.LPMaster`) on the cuts
  :math:`\\eta \\ge D(\\alpha^r) - \\tfrac12 s(\\alpha^r)^\\top\\mu` collected so far, whose value
  is a lower bound on the optimum (the analytic step has no convergence guarantee at
  p = 1, the thesis' App. D). Beyond ``max_cuts`` cuts the one with the most slack at the
  current weights is dropped.
* For any other Θ: the regularizer's own
  :meth:`~mklopt.regularizers.Regularizer.argmin_weights`.
"""

from __future__ import annotations

import math

import numpy as np

from ..formulations import MKLData
from ..regularizers import LpBall
from ..results.result import Certificate
from .lp_master import LPMaster, polyhedral_set

__all__ = ["WeightStep"]


class WeightStep:
    """``step(mu, cert) -> (weights, lower bound)`` for the data's regularizer.

    Parameters
    ----------
    data : MKLData
        The problem (its regularizer and number of kernels).
    max_cuts : int
        Cuts kept by the polyhedral master.
    """

    def __init__(self, data: MKLData, max_cuts: int) -> None:
        self.regularizer = data.regularizer
        self.master = _master(data)
        self.max_cuts = int(max_cuts)
        self.cuts: list[tuple[float, np.ndarray]] = []

    def __call__(self, mu: np.ndarray, cert: Certificate) -> tuple[np.ndarray, float]:
        s, reg = cert.s, self.regularizer
        if not np.any(s > 0):  # alpha = 0: nothing to weigh yet
            return mu, -math.inf
        if self.master is None:
            return reg.argmin_weights(mu**2 * s), -math.inf
        self.cuts.append((cert.gain, s.copy()))
        self.master.add_cut(cert.gain, s)
        if len(self.cuts) > self.max_cuts:
            slack = [_slack(cut, mu) for cut in self.cuts]
            drop = int(np.argmax(slack))
            self.master.drop_cut(drop)
            del self.cuts[drop]
        weights, eta = self.master.solve()
        return reg.into_set(weights), eta


def _slack(cut: tuple[float, np.ndarray], mu: np.ndarray) -> float:
    offset, s = cut
    return 0.5 * float(s @ mu) - offset


def _master(data: MKLData) -> LPMaster | None:
    reg = data.regularizer
    if isinstance(reg, LpBall) and 1 < reg.p < math.inf and type(reg) is LpBall:
        return None  # the analytic step
    theta = polyhedral_set(reg, data.M)
    return None if theta is None else LPMaster(theta)
