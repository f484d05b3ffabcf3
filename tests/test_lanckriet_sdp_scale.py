"""Issue 33 (point 6): Lanckriet's SDP right and fast.

References: the audit's values of the paper's SDP written directly in CVXPY and
solved by Clarabel (13.5254, 18.0103, 16.1991 on seeds 0-2), the CVXPY statement
of the support function, a closed-form LMI, and the two independent methods of
mklopt (the SDP statement on an interior point; the cutting plane with its
primal-dual master) bracketing each other's certified values.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import mklopt
from mklopt import KernelSet, Spectrahedron
from mklopt.exceptions import FormulationError
from mklopt.regularizers.lmi_interior import lmi_minimize
from mklopt.regularizers.lmi_subspace import SubspaceLMI

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


def test_interior_point_on_a_closed_form_lmi():
    """min x1 + x2 s.t. [[1, x1], [x1, 1]] >= 0 (block) and [[1, x2], [x2, 1]] >= 0: x = (-1, -1);
    with the row x1 >= -1/2: x = (-1/2, -1), the row's multiplier 1."""
    B = np.zeros((2, 4, 4))
    B[0, 0, 1] = B[0, 1, 0] = 1.0
    B[1, 2, 3] = B[1, 3, 2] = 1.0
    solution = lmi_minimize(np.ones(2), np.eye(4), B, gap=1e-10)
    np.testing.assert_allclose(solution.x, [-1, -1], atol=1e-8)
    solution = lmi_minimize(np.ones(2), np.eye(4), B, np.array([[-1.0, 0.0]]), np.array([0.5]), gap=1e-10)
    np.testing.assert_allclose(solution.x, [-0.5, -1], atol=1e-8)
    np.testing.assert_allclose(solution.y, [1.0], atol=1e-8)
    # dual feasibility <Z, B_i> - (G'y)_i = f_i with Z PSD, to the reported residual
    np.testing.assert_allclose(np.einsum("kij,ij->k", B, solution.Z) + [solution.y[0], 0], [1, 1], atol=1e-9)
    np.testing.assert_allclose(solution.residual, 1 - np.einsum("kij,ij->k", B, solution.Z) - [solution.y[0], 0],
                               atol=1e-15)
    assert solution.gap <= 1e-10 and np.linalg.eigvalsh(solution.Z)[0] >= 0
    with pytest.raises(ValueError, match="strictly feasible"):
        lmi_minimize(np.ones(2), np.eye(4), B, x0=np.array([1.0, 0.0]))


def cancer_instance(n: int, seed: int = 0):
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    idx = np.random.default_rng(seed).choice(len(y), n, replace=False)
    X = (X[idx] - X[idx].mean(0)) / X[idx].std(0)
    specs = [("linear", {}), ("rbf", {"gamma": 0.01}), ("rbf", {"gamma": 0.1}), ("rbf", {"gamma": 1.0}),
             ("poly", {"degree": 2, "coef0": 1})]
    return KernelSet.from_data(X, specs), y[idx]


def test_subspace_solve_equals_the_whole_lmi():
    """Breast cancer, 160 points, 5 kernels: full joint rank (above the whole-solve order), so the
    support function runs on a subspace; each value equals the whole LMI's interior point, and
    the subspace stays smaller than the LMI."""
    ks, _ = cancer_instance(160)
    theta = Spectrahedron(ks.K, 160.0)
    N, A = theta.reduced()
    B = np.tensordot(N.T, A, axes=1)
    subspace = SubspaceLMI(B, theta.radius())
    assert not subspace.whole
    rng = np.random.default_rng(0)
    for _ in range(2):
        f = -(N.T @ rng.standard_normal(5))
        part = subspace.minimize(f, gap=1e-11)
        whole = lmi_minimize(f, np.eye(A.shape[1]), B, gap=1e-11)
        assert abs(f @ part.x - f @ whole.x) <= 1e-9 * (1 + abs(f @ whole.x))
        F = np.eye(A.shape[1]) + np.tensordot(part.x, B, axes=1)
        assert np.linalg.eigvalsh(F)[0] >= -1e-10
        assert np.linalg.eigvalsh(part.Z)[0] >= -1e-12
    assert not subspace.whole and subspace.V.shape[1] < 80


def test_breast_cancer_with_five_kernels_is_certified_and_recertified():
    """The instance Kelley's cutting plane used to oscillate on (the support bound was loose):
    certified at 1e-6, the same gap from mklopt.certify on the result, and the SDP statement
    (Clarabel) on the same problem lies inside the interval."""
    ks, y = cancer_instance(50)
    cuts = mklopt.solve(ks, y, "lanckriet_sdp", C=1.0, trace=50.0, backend="mklopt")
    assert cuts.status == "optimal" and cuts.rel_gap <= 1e-6
    again = mklopt.certify(ks, y, cuts.weights, cuts.alpha, C=1.0, regularizer=cuts.regularizer)
    assert again.rel_gap <= 1e-6
    statement = mklopt.solve(ks, y, "lanckriet_sdp", C=1.0, trace=50.0)
    assert statement.status == "optimal" and overlap(statement, cuts)


def test_mklopt_backend_needs_a_formulation_with_its_own_method():
    ks, y = audit_instance(0)
    with pytest.raises(FormulationError, match="no method of mklopt's own"):
        mklopt.solve(ks, y, "lp_dual", backend="mklopt")
