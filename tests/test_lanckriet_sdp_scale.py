"""Issue 33 (point 6): Lanckriet's SDP right and fast.

References: the audit's values of the paper's SDP written directly in CVXPY and
solved by Clarabel (13.5254, 18.0103, 16.1991 on seeds 0-2), the CVXPY statement
of the support function, a closed-form LMI, and the two independent methods of
mklopt (the SDP statement on an interior point; the cutting plane with the barrier
master) bracketing each other's certified values.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import mklopt
from mklopt import KernelSet, Spectrahedron
from mklopt.exceptions import FormulationError
from mklopt.regularizers.lmi_barrier import barrier_minimize

AUDIT_VALUES = {0: 13.5254, 1: 18.0103, 2: 16.1991}


def audit_instance(seed: int, n: int = 30):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4))
    y = np.sign(X[:, 0] + X[:, 1] ** 2 - 1 + 0.4 * rng.standard_normal(n))
    specs = [("linear", {}), ("rbf", {"gamma": 0.01}), ("poly", {"degree": 2, "coef0": 1})]
    return KernelSet.from_data(X, specs), y


def overlap(a, b, rel: float = 1e-9) -> bool:
    slack = rel * max(abs(a.primal), abs(b.primal))
    return a.dual <= b.primal + slack and b.dual <= a.primal + slack


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_audit_instances_are_certified_by_both_methods(seed):
    ks, y = audit_instance(seed)
    statement = mklopt.solve(ks, y, "lanckriet_sdp", C=1.0, trace=30.0)
    cuts = mklopt.solve(ks, y, "lanckriet_sdp", C=1.0, trace=30.0, backend="mklopt")
    assert statement.status == "optimal" and statement.backend != "mklopt"
    assert cuts.status == "optimal" and cuts.backend == "mklopt"
    assert overlap(statement, cuts)
    assert statement.dual <= AUDIT_VALUES[seed] + 1e-4 and AUDIT_VALUES[seed] - 1e-4 <= statement.primal
    assert np.any(statement.weights < -1e-3) or seed == 2  # signed weights are used


def test_the_cutting_plane_driver_over_the_spectrahedron_agrees():
    ks, y = audit_instance(0)
    exact = mklopt.solve(ks, y, "lanckriet_sdp", C=1.0, trace=30.0, backend="mklopt")
    fitted = mklopt.fit(ks, y, "cutting_plane", regularizer=Spectrahedron(ks.K, 30.0), C=1.0, tol=1e-7)
    assert fitted.status == "converged" and overlap(exact, fitted)


def test_above_the_statement_size_the_default_is_mklopts_method():
    ks, y = audit_instance(0, n=80)
    result = mklopt.solve(ks, y, "lanckriet_sdp", C=1.0)
    assert result.backend == "mklopt" and result.status == "optimal"
    again = mklopt.certify(ks, y, result.weights, result.alpha, C=1.0, regularizer=result.regularizer)
    assert again.rel_gap <= 1e-6


def test_support_function_is_bracketed_and_no_point_of_the_statement_exceeds_it():
    ks, _ = audit_instance(1)
    theta = Spectrahedron(ks.K, 30.0)
    rng = np.random.default_rng(3)
    compared = 0
    for _ in range(4):
        u = rng.standard_normal(3)
        bound = theta.support(u)
        mu, _ = theta.maximize(u / np.abs(u).max())
        inside = float(u @ theta.into_set(mu))
        assert theta.violation(theta.into_set(mu)) == 0.0
        assert inside <= bound <= inside + 1e-6 * abs(bound)
        m = cp.Variable(3)
        statement = cp.Problem(cp.Maximize(u @ m), theta.constraints(m))
        try:  # the statement is degenerate (a zero weight on the boundary): Clarabel may fail
            statement.solve(solver="CLARABEL")
        except cp.error.SolverError:  # SCS then: its points are outside by ~1e-5 (repaired below)
            statement.solve(solver="SCS", eps_abs=1e-7, eps_rel=1e-7, max_iters=5000)
        point = theta.into_set(m.value)
        compared += theta.violation(point) == 0.0
        assert float(u @ point) <= bound  # no point of the set above the bound
    assert compared == 4


def test_barrier_method_on_a_closed_form_lmi():
    """min x1 + x2 s.t. [[1, x1], [x1, 1]] >= 0 (block) and [[1, x2], [x2, 1]] >= 0: x = (-1, -1);
    with the row x1 >= -1/2: x = (-1/2, -1)."""
    B = np.zeros((2, 4, 4))
    B[0, 0, 1] = B[0, 1, 0] = 1.0
    B[1, 2, 3] = B[1, 3, 2] = 1.0
    center = barrier_minimize(np.ones(2), np.eye(4), B, gap=1e-10)
    np.testing.assert_allclose(center.x, [-1, -1], atol=1e-8)
    center = barrier_minimize(np.ones(2), np.eye(4), B, np.array([[-1.0, 0.0]]), np.array([0.5]), gap=1e-10)
    np.testing.assert_allclose(center.x, [-0.5, -1], atol=1e-8)
    # dual feasibility: <Z, B_i> = f_i + (G'y)_i with Z PSD (y is the centre's, good to ~1e-7;
    # Z is corrected to it exactly where the LMI is active)
    np.testing.assert_allclose(np.einsum("kij,ij->k", B, center.Z), [1 - center.y[0], 1], atol=1e-6)
    assert abs(np.einsum("ij,ij->", B[1], center.Z) - 1) <= 1e-10
    assert np.linalg.eigvalsh(center.Z)[0] >= -1e-12


def test_mklopt_backend_needs_a_formulation_with_its_own_method():
    ks, y = audit_instance(0)
    with pytest.raises(FormulationError, match="no method of mklopt's own"):
        mklopt.solve(ks, y, "lp_dual", backend="mklopt")
