"""SimpleMKL: reduced-gradient descent on the simplex (Rakotomamonjy, Bach, Canu, Grandvalet 2008).

ℓ1-MKL (``p = 1``) as the smooth problem

.. math:: \\min_{\\mu\\ge0,\\ 1^\\top\\mu=1} J(\\mu),\\qquad
          J(\\mu)=\\max_{\\alpha\\in A_\\ell} D_\\ell(\\alpha)-\\tfrac12\\sum_m\\mu_m s_m(\\alpha),

the SVM optimal value at :math:`K_\\mu` (any loss of the generic dual; the hinge:
:math:`D=1^\\top\\alpha`). By Danskin's theorem :math:`\\partial J/\\partial\\mu_m=-\\tfrac12 s_m(\\alpha^*)`.
With :math:`k=\\arg\\max_m\\mu_m` and the reduced gradient :math:`r_m=\\partial_m J-\\partial_k J`,
the descent direction is

.. math:: D_m = \\begin{cases} 0 & \\mu_m = 0 \\text{ and } r_m \\ge 0,\\\\
                 -r_m & \\text{otherwise } (m\\ne k),\\end{cases}\\qquad
          D_k = -\\sum_{m\\ne k} D_m .

Along :math:`D` the weight :math:`\\nu=\\arg\\min_{D_m<0}-\\mu_m/D_m` reaches zero first at
:math:`\\gamma_{\\max}`; while :math:`J` there is lower, the iterate moves there,
:math:`D_\\nu` is set to 0 and :math:`D_k` takes up the difference (so
:math:`1^\\top D=0`). Then a golden-section search over :math:`[0,\\gamma_{\\max}]` (to
``line_search_tol`` of the interval, the toolbox's ``goldensearch_deltmax``; further
while no point beats the start) picks the step. Every SVM solve goes through
:meth:`Driver.svm_step`, so every trial point is certified; the iteration reports the
trial pair with the smallest gap and the best bounds of all trials.
"""

from __future__ import annotations

import math

import numpy as np

from .._options import Real
from ..exceptions import InvalidInputError
from ..formulations import MKLData
from ..regularizers import LpBall
from ..results.result import Certificate, ranked_gap
from .base import Driver, Step
from .inner import make_inner

__all__ = ["SimpleMKL", "descent_direction", "max_step"]

_GOLDEN = (1.0 + math.sqrt(5.0)) / 2.0
#: Golden-section interval (relative to gamma_max) below which the search gives up.
_MIN_WIDTH = 1e-10


def descent_direction(weights: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """SimpleMKL's reduced-gradient descent direction on the simplex (eq. 12 of the paper).

    .. math:: r_m = g_m - g_k,\\ k=\\arg\\max_m\\mu_m;\\quad
              D_m = -r_m\\,[\\mu_m>0 \\text{ or } r_m<0]\\ (m\\ne k),\\quad D_k=-\\sum_{m\\ne k}D_m .

    Parameters
    ----------
    weights : ndarray (M,)
        Current point of the simplex.
    grad : ndarray (M,)
        :math:`\\nabla J(\\mu) = -\\tfrac12 s(\\alpha)`.

    Returns
    -------
    ndarray (M,)
        A direction with :math:`1^\\top D = 0` and :math:`\\nabla J^\\top D \\le 0`.
    """
    k = int(np.argmax(weights))
    reduced = grad - grad[k]
    direction = np.where((weights > 0) | (reduced < 0), -reduced, 0.0)
    direction[k] = 0.0
    direction[k] = -direction.sum()
    return direction


def max_step(weights: np.ndarray, direction: np.ndarray) -> tuple[float, int]:
    """Largest step keeping the weights nonnegative and the index that reaches zero (-1 if none).

    .. math:: \\gamma_{\\max}=\\min_{D_m<0} -\\mu_m/D_m .
    """
    neg = np.flatnonzero(direction < 0)
    if neg.size == 0:
        return math.inf, -1
    ratios = -weights[neg] / direction[neg]
    j = int(np.argmin(ratios))
    return float(ratios[j]), int(neg[j])


class SimpleMKL(Driver):
    """Reduced-gradient ℓ1-MKL on the simplex (``mklopt.fit(..., "simplemkl")``).

    Parameters
    ----------
    data : MKLData
        Weight set: the ℓ1 ball only (``p=1``, the default); any loss.
    inner : {"smo", "libsvm", "cvxpy"} or callable
        SVM solver at fixed weights (:func:`~mklopt.drivers.inner.make_inner`).
    tol : float
        Target certified relative gap (the stop test of :func:`~mklopt.drivers.base.run`).
    backend : str, optional
        Backend of the ``"cvxpy"`` inner solver.
    line_search_tol : float in (0, 1], default 0.1
        Golden-section stopping width relative to :math:`\\gamma_{\\max}` (SimpleMKL
        toolbox ``goldensearch_deltmax``).
    init_weights : array (M,), optional
        Start (scaled onto :math:`1^\\top\\mu=1`); default uniform :math:`1/M`.
    """

    method = ("SimpleMKL (Rakotomamonjy et al., JMLR 2008): reduced gradient on the simplex with a "
              "line search")
    notes = "p = 1; more SVM solves than the cutting plane (one per line-search trial)"

    stall_rule = "two line searches in a row found no descent at the inner SVM's finest precision"

    name = "simplemkl"
    options = {"line_search_tol": Real(0, 1, open="low")}

    def __init__(self, data: MKLData, *, inner="smo", tol: float = 1e-4, backend=None,
                 line_search_tol: float = 0.1, init_weights=None) -> None:
        super().__init__(data)
        reg = data.regularizer
        if not (isinstance(reg, LpBall) and reg.p == 1):
            raise InvalidInputError(
                f"driver 'simplemkl' descends on the simplex (l1-MKL, p=1) only, got {reg!r}; "
                "use driver='wrapper' or 'cutting_plane' for other p or regularizers.")
        if not (isinstance(line_search_tol, (int, float)) and 0 < line_search_tol <= 1):
            raise InvalidInputError(f"line_search_tol must be in (0, 1], got {line_search_tol!r}.")
        self.tol, self.line_search_tol = tol, float(line_search_tol)
        self.inner = make_inner(inner, data, tol, backend)
        self.init_weights = init_weights
        self.svm_solves = 0
        self._cached: tuple[np.ndarray, np.ndarray, Certificate] | None = None
        self._still = 0

    # ------------------------------------------------------------- helpers
    def start(self) -> np.ndarray:
        M = self.data.M
        if self.init_weights is None:
            return np.full(M, 1.0 / M)
        mu = np.clip(np.asarray(self.init_weights, dtype=float).ravel(), 0, None)
        if mu.size != M or not np.all(np.isfinite(mu)) or mu.sum() <= 0:
            raise InvalidInputError(f"init_weights must be {M} finite nonnegative numbers, not all 0.")
        return mu / mu.sum()

    def _evaluate(self, weights: np.ndarray) -> tuple[float, np.ndarray, Certificate]:
        """SVM at ``weights``: :math:`J(\\mu)` as the inner dual value, alpha, certificate."""
        alpha, cert = self.svm_step(weights)
        self.svm_solves += 1
        value = cert.gain - 0.5 * float(cert.weights @ cert.s)
        return value, alpha, cert

    def _at(self, weights: np.ndarray):
        """The SVM at the current point: reused from the last line search when it moved there."""
        cached = self._cached
        if cached is not None and self._still == 0 and np.array_equal(cached[0], weights):
            return cached[1]
        return self._evaluate(weights)

    # ---------------------------------------------------------------- step
    def step(self, weights: np.ndarray) -> Step:
        value, alpha, cert = self._at(weights)
        trials = [(value, alpha, cert)]
        direction = descent_direction(weights, -0.5 * cert.s)
        point, gamma = self._search(weights, value, direction, trials)
        moved = not np.array_equal(point[0], weights)
        self._still = 0 if moved else self._still + 1
        self._cached = (point[0], point[1])
        if not moved and getattr(self.inner, "tighten", lambda: False)():
            # no descent may be the SVM's imprecision: retry with a more precise SVM
            self._still, self._cached = 0, None
        self.stalled = self._still >= 2  # twice no descent at the SVM's best precision
        best = min((t[2] for t in trials), key=ranked_gap)
        extra = {"objective": value, "step": gamma, "svm_solves": self.svm_solves,
                 "line_search_evaluations": len(trials) - 1}
        return Step(best.alpha, best, point[0], lower=max(t[2].dual for t in trials),
                    upper=min(t[2].primal for t in trials), extra=extra)

    def _search(self, weights, value, direction, trials):
        """Descent-direction update, then golden section: ``((mu, (J, alpha, cert)), step)``."""
        mu, current, D = weights, trials[0], direction.copy()
        travelled = 0.0
        while True:
            gmax, nu = max_step(mu, D)
            if nu < 0 or gmax <= 0:  # no direction left (optimal up to the gradient) or degenerate
                return (mu, current), travelled
            far = self._project(mu + gmax * D, nu)
            far_eval = self._evaluate(far)
            trials.append(far_eval)
            if far_eval[0] >= current[0]:
                break
            mu, current, travelled = far, far_eval, travelled + gmax
            D[nu] = 0.0
            k = int(np.argmax(mu))
            D[k] -= D.sum()  # keep 1'D = 0 (the toolbox's desc(coord) = -sum(others))
        if float(current[2].s @ D) <= 0:  # J's slope -s'D/2 at mu is >= 0: no descent along D
            return (mu, current), travelled
        gamma, best = self._golden(mu, D, gmax, current, far_eval, trials)
        if best is current:
            return (mu, current), travelled
        return (self._project(mu + gamma * D), best), travelled + gamma

    def _golden(self, mu, D, gmax, at_zero, at_max, trials):
        """Golden-section search of :math:`J(\\mu+\\gamma D)` on :math:`[0,\\gamma_{\\max}]`."""
        a, b = 0.0, gmax
        c, d = b - (b - a) / _GOLDEN, a + (b - a) / _GOLDEN
        fc, fd = self._trial(mu, D, c, trials), self._trial(mu, D, d, trials)
        points = [(0.0, at_zero), (gmax, at_max), (c, fc), (d, fd)]
        while True:
            best_gamma, best = min(points, key=lambda t: t[1][0])
            width = b - a
            if width <= _MIN_WIDTH * gmax or (best is not at_zero and width <= self.line_search_tol
                                               * min(gmax, best_gamma)):
                return best_gamma, best
            if fc[0] < fd[0]:
                b, d, fd = d, c, fc
                c = b - (b - a) / _GOLDEN
                fc = self._trial(mu, D, c, trials)
                points.append((c, fc))
            else:
                a, c, fc = c, d, fd
                d = a + (b - a) / _GOLDEN
                fd = self._trial(mu, D, d, trials)
                points.append((d, fd))

    def _trial(self, mu, D, gamma, trials):
        out = self._evaluate(self._project(mu + gamma * D))
        trials.append(out)
        return out

    @staticmethod
    def _project(mu: np.ndarray, zero: int = -1) -> np.ndarray:
        """Back onto the simplex face :math:`1^\\top\\mu = 1` (rounding only): clip, zero ``zero``, rescale."""
        mu = np.clip(mu, 0.0, None)
        if zero >= 0:
            mu[zero] = 0.0
        return mu / mu.sum()

    def finish(self, result) -> None:
        result.info.update(svm_solves=self.svm_solves)
        result.message += f"; {self.svm_solves} SVM solves (line searches included)"
