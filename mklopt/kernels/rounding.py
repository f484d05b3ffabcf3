r"""When "PSD by construction" holds to the certificate's precision: rounding bounds of built kernels.

A linear, polynomial (integer degree, :math:`c_0 \ge 0`), RBF, Laplacian or
cosine kernel is PSD in exact arithmetic; the matrix computed in floating point
is :math:`\hat K = K + E`. mklopt skips the PSD screen for a kernel it builds
only when a stated bound on :math:`\|E\|_2` is below

.. math:: \tau = \text{SLACK}\cdot\underline\lambda,\qquad \text{SLACK} = 10^{-9},

with :math:`\underline\lambda \le \|K\|_2` a cheap lower bound (the largest
diagonal entry, or :math:`\operatorname{Tr}K/\operatorname{rank}` where the rank
is bounded by the feature map). Then :math:`\lambda_{\min}(\hat K) \ge -\tau`: every
quadratic term :math:`s_m(\alpha)` is within :math:`10^{-9}\|K\|_2\|\alpha\|^2` of
the exact kernel's, ten times below the default clipping tolerance of screened
kernels (``psd_tol = 1e-8``: a negative eigenvalue up to that fraction of the
largest is treated as noise there). A kernel that misses the bound is screened like user data (dense
stacks) or refused on the fly with an error naming the dense path.

The bounds use the probabilistic rounding model of Higham & Mary, "A New
Approach to Probabilistic Rounding Error Analysis", SIAM J. Sci. Comput. 41(5),
2019, Thm. 3.1: an inner product of length d errs by at most
:math:`\kappa_d\varepsilon\sum_k|a_kb_k|` with :math:`\kappa_d = \lambda\sqrt d + 4`,
:math:`\lambda = 10` (failure probability below :math:`10^{-20}`). Shift-invariant
kernels are computed from data centred at the mean (:math:`R = \max_i\|x_i-\bar
x\|`), so the cancellation in :math:`\|x\|^2+\|x'\|^2-2\langle x,x'\rangle` is
relative to the spread of the data, not to its distance from the origin:

* linear: :math:`\|E\|_2 \le \kappa_d\varepsilon\operatorname{Tr}K`
  (:math:`|E_{ij}| \le \kappa_d\varepsilon\|x_i\|\|x_j\|`, a rank-one majorant);
* polynomial of degree k: :math:`\|E\|_2 \le k(\kappa_d+2)\varepsilon\operatorname{Tr}K`
  (by :math:`(\gamma\langle x,x'\rangle + c_0)^2 \le K(x,x)K(x',x')` for :math:`c_0\ge0`);
* RBF: :math:`\|E\|_2 \le 4\gamma(\kappa_d+2)\varepsilon R^2\|K\|_2` (:math:`|E_{ij}|
  \le \gamma\,\delta D_{ij}K_{ij}`, a non-negative majorant proportional to K);
* Laplacian: :math:`\|E\|_2 \le 2\gamma(\kappa_d+2)\varepsilon R_1\|K\|_2`,
  :math:`R_1 = \max_i\|x_i-\bar x\|_1` (distances summed directly);
* cosine: :math:`\|E\|_2 \le (\kappa_d+6)\varepsilon n`.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb, sqrt
from typing import Any

import numpy as np

__all__ = ["SLACK", "SHIFT_INVARIANT", "DataScales", "rounding_bound", "trusted_by_construction",
           "centred"]

#: Bound on the rounding error of a built kernel, relative to a lower bound of its norm,
#: under which the PSD screen is skipped.
SLACK = 1e-9
#: Metrics computed from differences of points: evaluated on data centred at the mean.
SHIFT_INVARIANT = frozenset({"rbf", "laplacian"})
_EPS = float(np.finfo(float).eps)


def centred(X: np.ndarray, Y: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """``X`` and ``Y`` minus the mean of the reference rows (``Y``, else ``X``)."""
    centre = (X if Y is None else Y).mean(axis=0)
    return X - centre, None if Y is None else Y - centre


@dataclass(frozen=True)
class DataScales:
    """What the bounds read from the data, computed once for all kernels over it."""

    n: int
    d: int
    sqn: np.ndarray  # squared norms of the raw points
    spread2: float  # max squared distance to the mean
    spread1: float  # max l1 distance to the mean
    variance: float

    @classmethod
    def of(cls, X: np.ndarray) -> "DataScales":
        X = np.asarray(X, dtype=float)
        Xc = X - X.mean(axis=0)
        return cls(X.shape[0], X.shape[1], np.einsum("ij,ij->i", X, X),
                   float(np.max(np.einsum("ij,ij->i", Xc, Xc), initial=0.0)),
                   float(np.max(np.abs(Xc).sum(axis=1), initial=0.0)), float(np.var(X)))


def _kappa(d: int) -> float:
    return 10.0 * sqrt(max(d, 1)) + 4.0


def rounding_bound(metric: str, params: dict, X: np.ndarray | DataScales) -> tuple[float, float] | None:
    """``(bound on ||E||_2, lower bound of ||K||_2)`` of a built kernel, or None when none is stated.

    ``params`` holds the resolved parameters (``gamma`` a positive number);
    ``X`` the raw training features (n, d), or their :class:`DataScales`.
    """
    scales = X if isinstance(X, DataScales) else DataScales.of(X)
    n, d, sqn = scales.n, scales.d, scales.sqn
    kappa, gamma = _kappa(d), params.get("gamma", 1.0 / max(d, 1))
    if metric in SHIFT_INVARIANT:
        spread = 4.0 * scales.spread2 if metric == "rbf" else 2.0 * scales.spread1
        return gamma * (kappa + 2.0) * _EPS * spread, 1.0  # relative to ||K||_2 >= K_ii = 1
    if metric == "cosine":
        return (kappa + 6.0) * _EPS * n, max(1.0, n / min(n, d))
    if metric == "linear":
        diag, degree, features = sqn, 1, d
    elif metric in ("poly", "polynomial"):
        degree, coef0 = int(params.get("degree", 3)), float(params.get("coef0", 1.0))
        diag, features = (gamma * sqn + coef0) ** degree, comb(d + degree, degree)
    else:
        return None
    trace = float(diag.sum())
    lower = max(float(np.max(diag, initial=0.0)), trace / min(n, features))
    return degree * (kappa + 2.0) * _EPS * trace, lower


def trusted_by_construction(metric: str, params: dict, X: np.ndarray | DataScales) -> bool:
    """Whether the built kernel is PSD to within :data:`SLACK` of its norm (module docstring)."""
    bound = rounding_bound(metric, params, X)
    if bound is None:
        return False
    error, lower = bound
    return error <= SLACK * lower if lower > 0 else error == 0.0


def bound_message(metric: str, params: dict, X: Any) -> str:
    """Why a kernel is not trusted, for error messages."""
    bound = rounding_bound(metric, params, np.asarray(X, dtype=float))
    if bound is None:
        return f"no rounding bound is stated for {metric!r}"
    return (f"its rounding bound {bound[0]:.2g} exceeds {SLACK:g} x {bound[1]:.3g} (a lower bound "
            "of its norm)")
