"""Lanckriet's SDP over general linear combinations, against independent references: a grid
over the free weight (the SVM dual solved at each PSD point), ℓ1-MKL, a single kernel."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.metrics.pairwise import linear_kernel, rbf_kernel

import mklopt
from mklopt import Spectrahedron
from mklopt.backends import capable_backends
from mklopt.exceptions import BackendError, FormulationError, InvalidInputError

SDP_BACKENDS = capable_backends("SDP")


def kernels(n: int, seed: int = 0):
    X, y = load_breast_cancer(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    idx = np.random.default_rng(seed).choice(len(y), n, replace=False)
    X, y = X[idx], np.where(y[idx] == 1, 1, -1)
    K = np.stack([rbf_kernel(X, gamma=0.003), rbf_kernel(X, gamma=0.3), linear_kernel(X) / 30])
    return K * (n / np.einsum("mii->m", K))[:, None, None], y  # equal traces n


def svm_value(K: np.ndarray, y: np.ndarray, C: float) -> float:
    """max 1'a - a'YKYa/2 over the box and y'a = 0, by CVXPY on a factor of K (test's own)."""
    lam, V = np.linalg.eigh(K)
    L = V * np.sqrt(np.clip(lam, 0, None))
    a = cp.Variable(y.size)
    problem = cp.Problem(cp.Maximize(cp.sum(a) - 0.5 * cp.sum_squares(L.T @ cp.multiply(y, a))),
                         [a >= 0, a <= C, y @ a == 0])
    problem.solve(solver="CLARABEL")
    return problem.value


@pytest.mark.parametrize("backend", SDP_BACKENDS)
def test_every_sdp_backend_certifies_the_same_optimum(backend):
    K, y = kernels(24)
    result = mklopt.solve(K, y, "lanckriet_sdp", C=1.0, backend=backend)
    assert result.status == "optimal" and result.rel_gap <= 1e-6
    reference = mklopt.solve(K, y, "lanckriet_sdp", C=1.0, backend=SDP_BACKENDS[0])
    assert result.dual <= reference.primal * (1 + 1e-9) and reference.dual <= result.primal * (1 + 1e-9)


def test_grid_over_the_free_weight_brackets_the_certified_value():
    K, y = kernels(20, seed=1)
    K = K[[0, 2]]
    result = mklopt.solve(K, y, "lanckriet_sdp", C=2.0)
    t, c = np.einsum("mii->m", K), result.info["trace"]
    grid = []
    for a in np.linspace(-2.0, 3.0, 201):  # mu = (a, (c - a t0) / t1): the trace holds exactly
        mu = np.array([a, (c - a * t[0]) / t[1]])
        combined = np.tensordot(mu, K, axes=1)
        if np.linalg.eigvalsh(combined)[0] >= -1e-10 * np.abs(combined).max():
            grid.append(svm_value(combined, y, 2.0))
    assert result.dual <= min(grid) * (1 + 1e-7)
    assert result.primal <= min(grid) * (1 + 1e-3)  # the grid is coarse; the SDP is at least as good


def test_at_most_l1_mkl_with_equal_traces_and_signed_weights_are_used():
    K, y = kernels(24, seed=2)
    general = mklopt.solve(K, y, "lanckriet_sdp", C=1.0)  # c = the common trace n
    l1 = mklopt.solve(K, y, "qcqp_l1", C=1.0)  # the simplex: the part mu >= 0 of Theta_n
    assert general.status == "optimal" and general.dual <= l1.primal * (1 + 1e-8)
    assert np.any(general.weights < -1e-4)  # this instance subtracts a kernel ...
    assert general.primal < l1.dual  # ... and is strictly better than any nonnegative combination
    assert np.isclose(np.einsum("mii->m", K) @ general.weights, general.info["trace"])


def test_against_the_papers_sdp_written_directly():
    """Lanckriet et al. (2004), the 1-norm soft margin SDP, stated here in CVXPY:
    min t over mu, t, lam, nu >= 0, delta >= 0 with K_mu >= 0, Tr K_mu = c and
    [[G(K_mu), e + nu - delta + lam y], [., t - 2C delta'e]] >= 0; mklopt's value is t* / 2."""
    K, y = kernels(16, seed=5)
    C, (M, n) = 1.0, K.shape[:2]
    result = mklopt.solve(K, y, "lanckriet_sdp", C=C)
    mu = cp.Variable(M)
    combined = cp.reshape(K.reshape(M, -1).T @ mu, (n, n), order="C")
    combined = (combined + combined.T) / 2
    t, lam = cp.Variable(), cp.Variable()
    nu, delta = cp.Variable(n, nonneg=True), cp.Variable(n, nonneg=True)
    v = cp.reshape(1 + nu - delta + lam * y, (n, 1), order="C")
    lmi = cp.bmat([[cp.multiply(np.outer(y, y), combined), v],
                   [v.T, cp.reshape(t - 2 * C * cp.sum(delta), (1, 1), order="C")]])
    problem = cp.Problem(cp.Minimize(t), [(lmi + lmi.T) / 2 >> 0, combined >> 0,
                                          np.einsum("mii->m", K) @ mu == result.info["trace"]])
    problem.solve(solver=SDP_BACKENDS[0])
    assert result.dual <= problem.value / 2 * (1 + 1e-6) and problem.value / 2 <= result.primal * (1 + 1e-6)
    np.testing.assert_allclose(result.weights, mu.value, atol=1e-4)
    assert np.any(result.weights < -1e-2)  # a signed optimum: not l1-MKL's


@pytest.mark.parametrize("seed", [0, 4])
def test_equals_l1_mkl_when_the_optimal_weights_are_nonnegative(seed):
    K, y = kernels(20, seed=seed)
    K = K[[1, 2]]  # two kernels whose SDP optimum has mu >= 0 on these instances
    general = mklopt.solve(K, y, "lanckriet_sdp", C=1.0)
    l1 = mklopt.solve(K, y, "qcqp_l1", C=1.0)
    assert np.all(general.weights >= 0)
    assert abs(general.primal - l1.primal) <= 1e-6 * l1.primal
    scale = general.info["trace"] / (np.einsum("mii->m", K) @ l1.weights)  # l1-MKL's weights onto Tr = c
    np.testing.assert_allclose(general.weights, scale * l1.weights, atol=1e-4)


def test_one_kernel_is_the_svm_at_the_scaled_kernel():
    K, y = kernels(20, seed=3)
    result = mklopt.solve(K[:1], y, "lanckriet_sdp", C=1.5, trace=7.0)
    reference = svm_value(K[0] * 7.0 / np.trace(K[0]), y, 1.5)
    assert abs(result.primal - reference) <= 1e-6 * reference
    np.testing.assert_allclose(result.weights, [7.0 / np.trace(K[0])], rtol=1e-6)


def test_support_bound_is_valid_and_tight():
    K, _ = kernels(20, seed=4)
    theta = Spectrahedron(K)
    rng = np.random.default_rng(0)
    for _ in range(3):
        s = rng.random(3) * 5
        bound = theta.support(s)
        mu = cp.Variable(3)
        problem = cp.Problem(cp.Maximize(s @ mu), theta.constraints(mu))
        problem.solve(solver="CLARABEL")
        assert problem.value <= bound <= problem.value + 1e-6 * abs(problem.value)


def test_refusals():
    K, y = kernels(12)
    with pytest.raises(BackendError, match="SDP"):
        mklopt.solve(K, y, "lanckriet_sdp", backend="HIGHS")
    with pytest.raises(FormulationError, match="hinge"):
        mklopt.solve(K, y.astype(float) * 2.5, "lanckriet_sdp", loss="squared_error")
    with pytest.raises(InvalidInputError, match="trace"):
        Spectrahedron(K, trace=-1.0)


def test_feasibility_is_measured_on_signed_weights_without_rounding_noise():
    """A point on the boundary (singular K_mu) whose trace is off by rounding is feasible; a
    signed point slightly outside counts its distance to the set, not its negative entry."""
    from mklopt.certificates.feasibility import relative_violation

    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 2))
    K = np.stack([X @ X.T, rbf_kernel(X, gamma=1.0)])
    K /= np.einsum("mii->m", K)[:, None, None]  # unit traces; K_0 has rank 2
    theta = Spectrahedron(K, 1.0)
    boundary = np.array([1.0 - 6.857e-7, 6.857e-7])
    assert theta.violation(boundary) == 0.0 and relative_violation(theta, boundary) == 0.0
    # a signed point off the trace: with B = (A + L)/2, (a, b) gives K_mu = (a + b/2) A + (b/2) L,
    # PSD for b >= 0 and a + b/2 >= 0; the nearest point of the set is on a + b = 1
    A, L = K[1], K[0]
    pair = Spectrahedron(np.stack([A, (A + L) / 2]), 1.0)
    signed = np.array([-0.2, 1.0])
    np.testing.assert_allclose(pair.project(signed), [-0.1, 1.1], atol=1e-6)
    assert 0.0 < relative_violation(pair, signed) <= 0.1 + 1e-9  # the distance 0.1, not the entry -0.2
    inside = theta.project(boundary)
    np.testing.assert_allclose(inside, boundary, atol=1e-12)


def test_the_sdp_keeps_clarabels_own_kkt_solver(monkeypatch):
    """Clarabel's QDLDL is for small problems without semidefinite cones: the SDP keeps Clarabel's
    default (faster there from 30 points)."""
    from mklopt import backends

    K, y = kernels(20, seed=5)
    asked = []
    real = backends.solver_options
    monkeypatch.setattr(backends, "solver_options", lambda *a: asked.append(real(*a)) or asked[-1])
    result = mklopt.solve(K, y, "lanckriet_sdp", C=1.0, backend="CLARABEL")
    assert result.certificate.certified(1e-4)
    assert asked and "direct_solve_method" not in asked[0]


@pytest.mark.parametrize("formulation", ["lp_primal", "lp_dual", "qcqp_l1"])
def test_kernel_weight_forms_refuse_signed_weights_and_name_the_sdp(formulation):
    """lp_primal divides by each weight (CVXPY's quad_over_lin keeps it positive): over a spectrahedron it
    solved the nonnegative part only, and its polish's SVM refused the signed answer with an
    InvalidInputError about "fixed kernel weights"; lp_dual pointed to lp_primal."""
    K, y = kernels(20, seed=5)
    with pytest.raises(FormulationError, match="lanckriet_sdp"):
        mklopt.solve(K, y, formulation, C=1.0, regularizer=Spectrahedron(K))
