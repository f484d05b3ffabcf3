"""Solver backends as data.

Each backend is a CVXPY solver with a set of cone classes it can handle and
a function mapping mklopt's single tolerance ``tol`` to the solver's own
options. A formulation declares the cone class it needs (``"LP"``, ``"QP"``,
``"SOCP"``, ...); :func:`select_backend` picks the default or checks an
explicit choice, raising an error that lists the installed capable ones.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import cvxpy as cp

from .exceptions import BackendError, BackendNotInstalledError, IncapableBackendError

__all__ = ["Backend", "BACKENDS", "available_backends", "capable_backends", "installed_solvers",
           "select_backend", "solver_options", "CONE_ORDER"]

@functools.lru_cache(maxsize=1)
def installed_solvers() -> frozenset:
    """CVXPY's installed solvers, asked once per process (each call imports every solver: ~5 ms)."""
    return frozenset(cp.installed_solvers())


#: Cone classes from simplest to richest; a formulation needs one of them.
CONE_ORDER = ("LP", "QP", "SOCP", "EXP", "POW", "SDP")


@dataclass(frozen=True)
class Backend:
    """A solver backend.

    Attributes
    ----------
    name : str
        CVXPY solver name.
    cones : frozenset of str
        Cone classes it solves (see :data:`CONE_ORDER`).
    options : callable
        ``options(tol) -> dict`` of solver keyword arguments.
    accuracy : float
        Relative accuracy one can expect at best (first-order methods are
        far less accurate than interior point); used by ``verify=True``.
    install : str
        How to install it (shown in errors).
    """

    name: str
    cones: frozenset
    options: Callable[[float], dict] = field(repr=False)
    accuracy: float = 1e-8
    install: str = ""
    #: Per-cone exceptions to ``accuracy`` (e.g. HiGHS: simplex LP vs QP).
    cone_accuracy: dict = field(default_factory=dict)
    #: ``sized(cone, points) -> dict``: options that depend on the problem's cone class and
    #: its number of points (added to ``options(tol)``), or None.
    sized: Callable[[str, int], dict] | None = field(default=None, repr=False)

    def can_solve(self, cone: str) -> bool:
        return cone in self.cones

    @property
    def installed(self) -> bool:
        return self.name in installed_solvers()


_CONIC = frozenset({"LP", "QP", "SOCP", "EXP", "POW"})

#: Points up to which Clarabel factors its KKT systems with its built-in QDLDL rather than
#: its default (``"auto"``: faer where the wheel has it). Measured on breast cancer with five
#: kernels, C = 1 and 100, each formulation solved exactly with both: QDLDL was 1.4-8x faster
#: at 100 points (faer left one QCQP uncertified there), as fast or faster at 200 (faer's time
#: over QDLDL's: SVM 0.97-1.42, lp_primal 1.3-1.5, QCQP 2.3-2.5, lp_dual 1.7-2.2); from 300 points faer
#: factors the SVM's and lp_primal's dense n x n block 1.5-2.6x faster (the QCQP's
#: rectangular factor blocks only from 400). The semidefinite programs: faer 1.6-2x faster
#: already at 30 points. On low-rank kernels (random problems, 15-160 points, 1-7 features)
#: the two took 0.6-3x each other's time, tens of milliseconds either way, and the same in all.
QDLDL_POINTS = 200


def _clarabel_sized(cone: str, points: int) -> dict:
    """Clarabel's KKT solver: QDLDL for small problems without semidefinite cones (above)."""
    return {"direct_solve_method": "qdldl"} if cone != "SDP" and points <= QDLDL_POINTS else {}


BACKENDS: dict[str, Backend] = {b.name: b for b in [
    Backend("CLARABEL", _CONIC | {"SDP"},
            lambda tol: dict(tol_gap_abs=tol, tol_gap_rel=tol, tol_feas=tol,
                             tol_ktratio=min(1e-6, tol), max_iter=500),
            accuracy=1e-9, install="pip install clarabel", sized=_clarabel_sized),
    Backend("ECOS", frozenset({"LP", "QP", "SOCP", "EXP"}),
            lambda tol: dict(abstol=tol, reltol=tol, feastol=tol, max_iters=500),
            accuracy=2e-6, install="pip install ecos"),  # alpha: measured 1e-6..1.8e-6
    Backend("SCS", _CONIC | {"SDP"},
            lambda tol: dict(eps_abs=max(tol, 1e-9), eps_rel=max(tol, 1e-9),
                             max_iters=200_000),
            accuracy=1e-4, install="pip install scs"),
    Backend("HIGHS", frozenset({"LP", "QP"}),
            lambda tol: dict(primal_feasibility_tolerance=max(tol, 1e-10),
                             dual_feasibility_tolerance=max(tol, 1e-10),
                             ipm_optimality_tolerance=max(tol, 1e-12)),
            accuracy=1e-9, install="pip install highspy",
            cone_accuracy={"QP": 1e-7}),  # its QP path plateaus near a 1e-7 gap
    Backend("OSQP", frozenset({"LP", "QP"}),
            lambda tol: dict(eps_abs=tol, eps_rel=tol, max_iter=50_000),
            accuracy=1e-5, install="pip install osqp"),
    Backend("MOSEK", _CONIC | {"SDP"},
            lambda tol: dict(eps=tol), accuracy=1e-9,
            install="pip install mosek (and a license)"),
    Backend("GUROBI", frozenset({"LP", "QP", "SOCP"}),
            lambda tol: dict(OptimalityTol=max(tol, 1e-9), FeasibilityTol=max(tol, 1e-9),
                             BarConvTol=max(tol, 1e-12)),
            accuracy=1e-8, install="pip install gurobipy (and a license)"),
]}

#: Default backend per cone class (first installed one wins).
DEFAULTS: dict[str, tuple[str, ...]] = {
    "LP": ("HIGHS", "CLARABEL", "ECOS", "SCS"),
    "QP": ("CLARABEL", "HIGHS", "ECOS", "OSQP", "SCS"),
    "SOCP": ("CLARABEL", "ECOS", "MOSEK", "SCS"),
    "EXP": ("CLARABEL", "ECOS", "SCS"),
    "POW": ("CLARABEL", "SCS"),
    "SDP": ("CLARABEL", "SCS"),
}


def available_backends() -> list[str]:
    """Names of the registered backends installed here."""
    return [name for name in BACKENDS if name in installed_solvers()]


def capable_backends(cone: str) -> list[str]:
    """Installed backends able to solve problems of cone class ``cone``."""
    return [name for name in available_backends() if BACKENDS[name].can_solve(cone)]


def select_backend(backend: Any, cone: str, formulation: str = "") -> tuple[str, Any]:
    """Resolve ``backend`` for a problem of class ``cone``.

    Parameters
    ----------
    backend : None, str or CVXPY solver instance
        ``None`` picks the default for the cone class.
    cone : str
    formulation : str
        Only used in error messages.

    Returns
    -------
    (name, solver) : the registry name and what to pass to ``Problem.solve``.
    """
    what = f"formulation '{formulation}' ({cone})" if formulation else f"a {cone} problem"
    if backend is None:
        for name in DEFAULTS.get(cone, ()):
            if BACKENDS[name].installed:
                return name, name
        raise BackendNotInstalledError(
            f"no installed backend can solve {what}; install one: "
            + ", ".join(BACKENDS[n].install for n in DEFAULTS.get(cone, ())))
    if not isinstance(backend, str):  # a CVXPY solver instance (custom backend)
        name = getattr(backend, "name", lambda: type(backend).__name__)()
        return str(name), backend
    name = backend.upper()
    capable = capable_backends(cone)
    if name not in BACKENDS:
        if name in installed_solvers():
            return name, name  # a CVXPY solver mklopt has no data for: trust the user
        raise BackendError(
            f"unknown backend {backend!r}; installed capable backends for {what}: {capable}.")
    if not BACKENDS[name].can_solve(cone):
        raise IncapableBackendError(
            f"backend {name} cannot solve {what}; use one of {capable}.")
    if not BACKENDS[name].installed:
        raise BackendNotInstalledError(
            f"backend {name} is not installed ({BACKENDS[name].install}); "
            f"installed capable backends for {what}: {capable}.")
    return name, name


def solver_options(name: str, tol: float, cone: str | None = None, points: int | None = None) -> dict:
    """Solver keyword arguments for tolerance ``tol`` (empty for unknown solvers); with the
    problem's ``cone`` class and number of ``points``, also the backend's options for its size."""
    backend = BACKENDS.get(name)
    if backend is None:
        return {}
    sized = backend.sized(cone, int(points)) if backend.sized and cone is not None and points is not None else {}
    return {**backend.options(tol), **sized}


def accuracy(name: str, cone: str | None = None) -> float:
    """Best relative accuracy to expect from backend ``name`` (on cone class ``cone``)."""
    backend = BACKENDS.get(name)
    if backend is None:
        return 1e-6
    return backend.cone_accuracy.get(cone, backend.accuracy)
