"""Issue 23: the cutting plane's master through highspy equals its CVXPY statement.

The LP master (:mod:`mklopt.drivers.lp_master`) keeps one HiGHS model and adds
a row per cut; the reference is the master written directly in CVXPY here
and solved by Clarabel, on random cut sets for every polyhedral weight set,
after warm re-solves and after dropped cuts. The driver's certified results
are compared with the exact formulations.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import mklopt
from mklopt.drivers.cutting_plane import CuttingPlane
from mklopt.drivers.lp_master import LPMaster, polyhedral_set
from mklopt.exceptions import SolverError
from mklopt.regularizers import ElasticNet, L1, LpBall, WeightedL1

M = 12
SETS = {"l1": L1(), "lp1": LpBall(1.0), "box": LpBall(np.inf),
        "weighted": WeightedL1(np.linspace(0.5, 2.0, M))}


def reference_master(reg, offsets, terms):
    """min eta s.t. eta >= a_r - s_r'mu / 2, mu in Theta, in CVXPY (Clarabel)."""
    mu, eta = cp.Variable(M), cp.Variable()
    cons = [eta >= offsets - 0.5 * (terms @ mu), *reg.constraints(mu)]
    problem = cp.Problem(cp.Minimize(eta), cons)
    problem.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return problem.value


def random_cuts(rng, t):
    return rng.uniform(1.0, 3.0, t), rng.uniform(0.0, 4.0, (t, M))


@pytest.mark.parametrize("name", SETS)
def test_master_equals_its_cvxpy_statement(name):
    reg, rng = SETS[name], np.random.default_rng(0)
    offsets, terms = random_cuts(rng, 25)
    master = LPMaster(polyhedral_set(reg, M))
    for t in range(25):  # warm re-solve after every new cut
        master.add_cut(offsets[t], terms[t])
        mu, eta = master.solve()
        assert reg.violation(mu) <= 1e-9
        assert eta == pytest.approx(np.max(offsets[:t + 1] - 0.5 * terms[:t + 1] @ mu), abs=1e-9)
        assert eta == pytest.approx(reference_master(reg, offsets[:t + 1], terms[:t + 1]), abs=1e-7)


@pytest.mark.parametrize("name", SETS)
def test_dropped_cuts_leave_the_master_of_the_rest(name):
    reg, rng = SETS[name], np.random.default_rng(1)
    offsets, terms = random_cuts(rng, 10)
    master = LPMaster(polyhedral_set(reg, M))
    for a, s in zip(offsets, terms):
        master.add_cut(a, s)
    master.solve()
    keep = list(range(10))
    for drop in (3, 0, 5):
        master.drop_cut(drop)
        del keep[drop]
        _, eta = master.solve()
        assert eta == pytest.approx(reference_master(reg, offsets[keep], terms[keep]), abs=1e-7)


def test_sets_without_a_linear_description_use_the_conic_master():
    assert polyhedral_set(LpBall(2.0), M) is None
    assert polyhedral_set(ElasticNet(0.5, 0.5), M) is None
    with pytest.raises(SolverError, match="no cut"):
        LPMaster(polyhedral_set(L1(), M)).solve()


@pytest.fixture(scope="module")
def problem():
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler

    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X[:120])
    specs = ["linear", ("poly", {"degree": 2, "coef0": 1.0})] + [("rbf", {"gamma": g}) for g in (0.003, 0.03, 0.3)]
    return mklopt.KernelSet.from_data(X, specs).normalized("trace"), y[:120]


@pytest.mark.parametrize("p, formulation", [(1.0, "qcqp_l1"), (np.inf, "lp_dual")])
def test_cutting_plane_on_the_lp_master_reaches_the_exact_optimum(problem, p, formulation):
    ks, y = problem
    result = mklopt.fit(ks, y, "cutting_plane", p=p, C=10.0, tol=1e-6)
    exact = mklopt.solve(ks, y, formulation, p=p, C=10.0)
    assert result.status == "converged" and result.rel_gap <= 1e-6
    assert result.dual <= exact.primal * (1 + 1e-7) and exact.dual <= result.primal * (1 + 1e-7)
    again = mklopt.certify(ks, y, result.weights, result.alpha, p=p, C=10.0)
    assert again.rel_gap == pytest.approx(result.rel_gap, rel=1e-6, abs=1e-12)


def test_lp_and_cvxpy_masters_give_the_same_iterates(problem):
    """The highspy master and the CVXPY master (forced through master_backend) step alike."""
    ks, y = problem
    lp = mklopt.fit(ks, y, "cutting_plane", p=1.0, C=10.0, tol=1e-7)
    conic = mklopt.fit(ks, y, "cutting_plane", p=1.0, C=10.0, tol=1e-7, master_backend="CLARABEL")
    assert lp.iterations == pytest.approx(conic.iterations, abs=2)
    assert lp.primal == pytest.approx(conic.primal, rel=1e-6)
    assert [h.get("master_time") for h in lp.history[:-1]] and all(
        h["master_time"] > 0 for h in lp.history if "master_time" in h)


def test_warm_started_path_rebuilds_the_lp_master_with_the_valid_cuts(problem):
    ks, y = problem
    results = mklopt.path(ks, y, "cutting_plane", Cs=[1.0, 10.0], p=1.0, tol=1e-6)
    for C, result in zip((1.0, 10.0), results):
        exact = mklopt.solve(ks, y, "qcqp_l1", C=C)
        assert result.rel_gap <= 1e-6
        assert result.dual <= exact.primal * (1 + 1e-7) and exact.dual <= result.primal * (1 + 1e-7)


def test_driver_uses_the_lp_master_only_for_polyhedral_sets(problem):
    ks, y = problem
    from mklopt.formulations import MKLData

    data = MKLData(kernels=ks, y=np.where(y > 0, 1.0, -1.0), C=1.0, regularizer=L1())
    assert CuttingPlane(data).lp is not None
    data2 = MKLData(kernels=ks, y=data.y, C=1.0, regularizer=LpBall(2.0))
    assert CuttingPlane(data2).lp is None


def test_near_parallel_cuts_of_a_large_C_fit_solve_to_optimality():
    """The 394 cuts chunking sent the ℓ1 master on letter (n = 3,000, 5 RBF kernels, C = 100):
    offsets and terms ~1.4e3 agreeing to four or five digits. HiGHS' absolute 1e-10
    tolerances sit at the last digits of those numbers, and the last solve ended
    ``Unknown`` warm and cold (a SolverError stopped the fit); a cold solve at 1e-9
    ends optimal. Each incremental solve must end optimal at the value of the LP
    solved from scratch."""
    from pathlib import Path

    data = np.load(Path(__file__).parent / "data" / "lp_master_near_parallel_cuts.npz")
    offsets, terms = data["offsets"], data["terms"]
    master = LPMaster(polyhedral_set(L1(), terms.shape[1]))
    for offset, s in zip(offsets, terms):
        master.add_cut(offset, s)
        mu, eta = master.solve()
    assert mu.min() >= -1e-12 and mu.sum() <= 1 + 1e-9
    assert eta == pytest.approx(np.max(offsets - 0.5 * terms @ mu), rel=1e-10)
    fresh = LPMaster(polyhedral_set(L1(), terms.shape[1]))
    for offset, s in zip(offsets, terms):
        fresh.add_cut(offset, s)
    # the replay's last solve needs the master's 1e-9 try (a cold 1e-10 one ends Unknown, and a
    # 1e-10 polish from its basis does not end optimal): it agrees to 2.5e-10 with this 1e-10 solve
    assert fresh.solve()[1] == pytest.approx(eta, rel=1e-9)
