"""Inner SVM solvers for the outer loops: the SVM dual on a fixed :math:`K_\\mu`.

* ``"smo"`` (default): mklopt's compiled SMO on :math:`K_\\mu`, warm-started from the
  previous iterate and as precise as the outer gap needs
  (:class:`~mklopt.drivers.smo_inner.SmoInner`; hinge, ε-insensitive, one-class and
  one-vs-rest hinge). Other losses get ``"libsvm"``.
* ``"libsvm"``: the loss's fast solver on the precomputed
  :math:`K_\\mu` (scikit-learn ``SVC``, ``SVR``, ``OneClassSVM``; a linear solve
  for the squared loss; ``"cvxpy"`` for a loss that has none). SMO
  stops on a KKT violation of ``eps``; mklopt starts at ``eps = 0.1 * tol``
  and divides it by 10 (down to 1e-12) whenever the inner SVM's own certified
  gap exceeds a tenth of the target (large C amplifies SMO's error in the
  hinge term). It certifies relative gaps down to about 1e-6 to 1e-7 on
  well-scaled kernels: use it for ``tol >= 1e-6``. When even ``eps = 1e-12``
  leaves the inner gap above a tenth of the target (very large C), the loop
  switches to ``"cvxpy"`` for the remaining iterations and says so in the
  result's message. Each call has a budget of
  ``max(10_000, 100 n)`` SMO iterations, so one ill-conditioned
  :math:`K_\\mu` cannot stall the loop; when libsvm stops at the budget its
  answer is still certified (the gap says how good it is) and one
  :class:`~mklopt.exceptions.MKLWarning` per run says so.
* For kernels given as factors (:class:`~mklopt.kernels.factorset.FactorKernelSet`)
  ``"libsvm"`` means the linear SVM on the scaled factors
  (:class:`~mklopt.drivers.linear_inner.LinearInner`, hinge loss; other
  losses use ``"cvxpy"``).
* ``"cvxpy"``: the ``svm`` formulation on any QP-capable backend (see
  :class:`CvxpyInner` for when it is compiled once with a ``cp.Parameter``);
  interior point reaches rel_gap 1e-8 and below.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import backends as bk
from ..exceptions import InvalidInputError, MKLWarning, SolverError
from ..formulations import FORMULATIONS, MKLData

__all__ = ["make_inner", "LibsvmInner", "CvxpyInner", "INNER_SOLVERS", "SMO_FACTOR_MAX_N"]


class LibsvmInner:
    """The loss's libsvm-class solver at fixed weights; :math:`K_\\mu` is built into one reused buffer.

    .. math:: K_\\mu = \\sum_m \\mu_m K_m \\quad\\text{(one BLAS pass over the kernels in use)}

    The single-kernel problem is :meth:`Loss.fit_inner <mklopt.losses.Loss.fit_inner>`
    (``SVC``, ``SVR``, ``OneClassSVM``, a linear solve for the squared loss).

    Attributes
    ----------
    max_iter : int
        libsvm iteration budget of one call, ``max(10_000, 100 n)``.
    budget_hits : int
        Calls that stopped at the budget.
    """

    name = "libsvm"

    def __init__(self, data: MKLData, tol: float, max_iter: int | None = None,
                 backend=None) -> None:
        self.data, self.tol, self.backend = data, tol, backend
        self.eps = max(1e-12, min(1e-3, 0.1 * tol))
        self.max_iter = int(max_iter) if max_iter is not None else max(10_000, 100 * data.n)
        self.budget_hits = 0
        self.buffer = np.empty((data.n, data.n))

    def tighten(self) -> bool:
        """Ten times smaller stopping tolerance (down to 1e-12); False when at the floor."""
        if self.eps <= 1e-12:
            return False
        self.eps = max(self.eps / 10.0, 1e-12)
        return True

    def fallback(self) -> "CvxpyInner":
        """The interior-point inner solver, used when libsvm cannot get more precise."""
        return CvxpyInner(self.data, self.tol, self.backend)

    def __call__(self, weights: np.ndarray) -> np.ndarray:
        d = self.data
        K = d.kernels.combined(weights, out=self.buffer)
        alpha, hit = d.loss.fit_inner(K, d.y, d.C, self.eps, self.max_iter)
        if hit:
            self.budget_hits += 1
            if self.budget_hits == 1:
                warnings.warn(
                    f"libsvm stopped at its budget of {self.max_iter} iterations on K_mu "
                    "(ill-conditioned kernels or large C); its answer is still certified, "
                    "the reported gap shows how far from optimal it is. Normalize the "
                    "kernels (normalized('trace')) or use inner='cvxpy' if the gap stays large.",
                    MKLWarning, stacklevel=4)
        return alpha


class CvxpyInner:
    """SVM at fixed weights via the ``svm`` formulation on a QP-capable backend.

    When the per-kernel factors are small (:math:`\\sum_m r_m \\le n`) the
    problem is compiled once with the weights as a ``cp.Parameter`` and re-solved;
    otherwise one factor of :math:`K_\\mu` per call gives a much smaller problem
    than the parametrized sum over kernels, and is rebuilt each iteration.
    """

    name = "cvxpy"

    def __init__(self, data: MKLData, tol: float, backend=None) -> None:
        self.form = FORMULATIONS["svm"]
        self.data = data
        self.backend, self.solver = bk.select_backend(backend, self.form.cone, "svm")
        self.options = bk.solver_options(self.backend, min(tol * 1e-2, 1e-8), self.form.cone, data.n)
        self.parametric = int(data.kernels.ranks.sum()) <= data.n
        self.model = self.form.build(data, parametric=True) if self.parametric else None

    def __call__(self, weights: np.ndarray) -> np.ndarray:
        weights = np.clip(weights, 0, None)
        if self.parametric:
            self.model.info["weights"].value = weights
            model = self.model
        else:
            model = self.form.build(self.data, weights=weights, combined=True)
        prob = model.problem
        try:
            prob.solve(solver=self.solver, **self.options)
        except Exception as exc:  # cvxpy.error.SolverError and backend crashes
            raise SolverError(f"inner SVM on {self.backend} failed: {exc}") from None
        if prob.status not in ("optimal", "optimal_inaccurate"):
            raise SolverError(f"inner SVM on {self.backend} ended with status {prob.status!r}.")
        return model.extract()[1]


INNER_SOLVERS = {"libsvm": LibsvmInner, "cvxpy": CvxpyInner}
#: Largest n at which kernels given as factors get the SMO inner solver (its dense K_mu
#: buffer is 8 n^2 bytes: 128 MiB); above it the factors' own inner solvers.
SMO_FACTOR_MAX_N = 4096


def make_inner(name, data: MKLData, tol: float, backend=None):
    """Inner solver by name, or a user callable ``inner(weights) -> alpha``.

    ``"smo"`` (the default) is :class:`~mklopt.drivers.smo_inner.SmoInner` for a loss
    with an SMO form and ``"libsvm"`` otherwise (the squared loss's linear solve; a
    user loss without a fast solver gets ``"cvxpy"``). On low-rank factors the SMO runs
    on :math:`K_\\mu = ZZ^\\top` up to :data:`SMO_FACTOR_MAX_N` points; above, the hinge
    gets a linear SVM on the scaled factors and other losses CVXPY.
    """
    if callable(name) and not isinstance(name, str):
        return name
    factored = getattr(data.kernels, "factored", False)
    if name == "smo" and (not factored or data.n <= SMO_FACTOR_MAX_N) \
            and data.loss.smo_forms(data.y, data.C) is not None:
        from .smo_inner import SmoInner  # on factors, K_mu = Z Z' formed once per outer step

        return SmoInner(data, tol, backend=backend)
    if factored and name in ("smo", "libsvm", "liblinear"):
        if data.loss.name == "hinge":  # a linear SVM on the scaled factors
            from .linear_inner import LinearInner

            return LinearInner(data, tol, backend)
        return CvxpyInner(data, tol, backend)
    if name in ("smo", "libsvm"):
        if not data.loss.has_fast_inner:  # a user loss without one: the generic CVXPY solver
            return CvxpyInner(data, tol, backend)
        return LibsvmInner(data, tol, backend=backend)
    if name == "cvxpy":
        return CvxpyInner(data, tol, backend)
    raise InvalidInputError(f"unknown inner solver {name!r}; use 'smo', 'libsvm', 'cvxpy' or a callable.")
