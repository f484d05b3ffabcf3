"""Small auxiliary problems over a weight set Θ, solved robustly, and the margins their answers get.

The generic machinery of :class:`~mklopt.regularizers.base.Regularizer` (the support
function, the weight step, the violation and the projection of a set given only by CVXPY
constraints) solves small conic problems over Θ. :func:`solve_auxiliary` tries tight
interior-point tolerances first, then looser settings and other backends;
:func:`support_margin` and :func:`reported_objective_gap` size the slack that makes a
support value computed this way a guaranteed upper bound.
"""

from __future__ import annotations

import warnings
from typing import Any

import cvxpy as cp
import numpy as np

from .. import backends as bk
from ..exceptions import InvalidInputError, SolverError

__all__ = ["solve_auxiliary", "reported_objective_gap", "support_margin"]


def support_margin(backend: str, status: str) -> float:
    """Relative margin added to a support value computed by ``backend``.

    Ten times its documented accuracy for ``optimal`` (Clarabel: 1e-8, where
    answers at tolerance 1e-9 were measured up to 1.9e-9 too low on
    ||mu||_3 <= 1; ECOS: 2e-5, measured 6e-8 too low on ||mu||_{1.25} <= 1
    while reporting optimal), a thousand times it for ``optimal_inaccurate``
    (Clarabel: 1e-6; measured at most 2e-11 off on normalized vectors).
    """
    try:
        accuracy = bk.accuracy(backend)
    except Exception:  # a backend mklopt does not describe: the loosest margin
        accuracy = 1e-4
    return 10 * accuracy if status == "optimal" else min(1000 * accuracy, 1e-2)


_ATTEMPTS = (("CLARABEL", dict(tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)),
             ("CLARABEL", dict(tol_gap_abs=1e-9, tol_gap_rel=1e-9, tol_feas=1e-9)), ("ECOS", {}),
             ("SCS", dict(eps_abs=1e-9, eps_rel=1e-9)))


def solve_auxiliary(prob: cp.Problem, reg: Any) -> str:
    """Solve a small auxiliary problem over Θ robustly; return its status (``reg``: the
    :class:`~mklopt.regularizers.base.Regularizer` of Θ, named in the errors).

    Tight interior-point tolerances first, then looser settings and other
    backends; an ``optimal`` answer is preferred over an inaccurate one.
    Unbounded or empty sets raise :class:`InvalidInputError`.
    """
    status, inaccurate = "not solved", None
    for solver, options in _ATTEMPTS:
        if solver not in cp.installed_solvers():
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the status is checked below
                prob.solve(solver=solver, **options)
        except cp.error.SolverError:
            continue
        except cp.error.DCPError as exc:
            raise InvalidInputError(f"{reg.name}: the weight set is not DCP ({exc}).") from None
        status = prob.status
        if status in ("unbounded", "unbounded_inaccurate"):
            raise InvalidInputError(
                f"the weight set of {reg.name} is unbounded; a regularizer must bound mu "
                "(e.g. add cp.norm(mu, 1) <= 1).")
        if status in ("infeasible", "infeasible_inaccurate"):
            raise InvalidInputError(
                f"the weight set of {reg.name} is empty (its constraints with mu >= 0 are "
                "infeasible); check the constraints.")
        if status == "optimal":
            return status
        if status == "optimal_inaccurate" and inaccurate is None:
            inaccurate = {v: v.value for v in prob.variables()}
    if inaccurate is not None:
        for var, value in inaccurate.items():
            var.value = value
        return "optimal_inaccurate"
    raise SolverError(f"auxiliary problem of {reg.name} ended with status {status!r}; "
                      "check that the weight set is convex and bounded.")


def reported_objective_gap(prob: cp.Problem) -> float:
    """The backend's own :math:`|p_{obj} - d_{obj}|` after a solve (0 when it reports none)."""
    stats = getattr(prob.solver_stats, "extra_stats", None)
    info = stats.get("info") if isinstance(stats, dict) else None
    if not isinstance(info, dict):
        return 0.0
    for primal_key, dual_key in (("pcost", "dcost"), ("pobj", "dobj")):
        if primal_key in info and dual_key in info:
            gap = abs(float(info[primal_key]) - float(info[dual_key]))
            return gap if np.isfinite(gap) else 0.0
    return 0.0
