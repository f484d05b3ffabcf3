"""Issue 10 acceptance: certificates and saved results a solver author can trust.

* Feasibility is part of the certificate: infeasible candidates (5x outside
  the ball, negative weights, 1e300) are never certified, through the API or
  ``mklopt verify``; a candidate 1e-10 outside is solver noise and certified.
* One source of truth: ``certify()`` of a result's own (weights, alpha)
  reproduces its rel_gap; ``save``/``load`` round-trips it exactly and
  ``mklopt verify`` of the saved file (no flags) passes at the reported gap.
* Weight sets that do not contain 0 are solved at their true optimum
  (an independent CVXPY solve of the same primal is the reference).
* ``rel_gap`` is relative to the objective (VKR objectives are ~0.04).
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import cvxpy as cp
import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.preprocessing import StandardScaler

import mklopt
from mklopt.backends import capable_backends
from mklopt.exceptions import InvalidInputError
from mklopt.regularizers import ConstraintSet, LpBall


@pytest.fixture(scope="module")
def cancer():
    """120 breast-cancer points, 5 trace-normalized kernels (the issue's instance)."""
    X, y = load_breast_cancer(return_X_y=True)
    idx = np.random.default_rng(0).choice(len(y), 120, replace=False)
    X = StandardScaler().fit_transform(X[idx])
    d = X.shape[1]
    specs = ["linear", ("rbf", {"gamma": 0.1 / d}), ("rbf", {"gamma": 1.0 / d}),
             ("rbf", {"gamma": 10.0 / d}), ("poly", {"degree": 2, "gamma": 1.0 / d, "coef0": 1.0})]
    return mklopt.KernelSet.from_data(X, specs).normalized("trace", target=120), y[idx]


@pytest.fixture(scope="module")
def optimum_p2(cancer):
    ks, y = cancer
    return mklopt.solve(ks, y, "lp_dual", p=2.0, C=1.0)


# ------------------------------------------------------------------ 1. feasibility
@pytest.mark.parametrize("make, what", [
    (lambda w: 5.0 * w, "5x outside the ball"),
    (lambda w: np.where(np.arange(w.size) == 0, -0.1, w), "a negative weight"),
    (lambda w: np.full(w.size, 1e300), "1e300"),
])
def test_infeasible_candidates_are_never_certified(cancer, optimum_p2, make, what):
    ks, y = cancer
    weights = make(optimum_p2.weights)
    cert = mklopt.certify(ks, y, weights, optimum_p2.alpha, C=1.0, p=2.0)
    assert not cert.feasible and not cert.certified(1e-6), what
    assert cert.violation > 1e-8
    assert "outside the weight set" in cert.message
    np.testing.assert_array_equal(cert.weights, weights)  # the candidate as given, not repaired
    # the dual value depends on alpha only: still a valid lower bound
    assert cert.dual <= optimum_p2.primal + 1e-9 * optimum_p2.primal


def test_a_candidate_within_noise_of_the_ball_is_certified(cancer, optimum_p2):
    ks, y = cancer
    weights = optimum_p2.weights * (1 + 1e-10) / np.linalg.norm(optimum_p2.weights)
    cert = mklopt.certify(ks, y, weights, optimum_p2.alpha, C=1.0, p=2.0)
    assert cert.feasible and cert.certified(1e-6)


def test_repair_is_explicit_and_certifies_the_projection(cancer, optimum_p2):
    ks, y = cancer
    weights = 5.0 * optimum_p2.weights
    cert = mklopt.certify(ks, y, weights, optimum_p2.alpha, C=1.0, p=2.0, repair=True)
    assert cert.repaired and "repaired" in cert.message
    assert np.linalg.norm(cert.weights) <= 1 + 1e-12
    np.testing.assert_allclose(cert.weights, optimum_p2.weights / np.linalg.norm(optimum_p2.weights),
                               atol=1e-9)
    assert cert.certified(1e-6)


def test_convention_mixup_is_named(cancer, optimum_p2):
    """Weights normalized for p = 1 (sum 1) checked against p = 2 ... are inside; the
    other way round they are outside, and the message names the convention."""
    ks, y = cancer
    w = optimum_p2.weights / np.linalg.norm(optimum_p2.weights, 1)  # ||w||_1 = 1
    inside = mklopt.certify(ks, y, w, optimum_p2.alpha, C=1.0, p=2.0)
    assert inside.feasible
    w2 = optimum_p2.weights / np.linalg.norm(optimum_p2.weights)  # ||w||_2 = 1
    outside = mklopt.certify(ks, y, w2, optimum_p2.alpha, C=1.0, p=1.0)
    assert not outside.feasible and "q = 2" in outside.message


@pytest.mark.parametrize("weights", [["a", "b", "c", "d", "e"], [np.nan] * 5, [np.inf] * 5])
def test_non_numeric_or_non_finite_candidates_raise(cancer, optimum_p2, weights):
    ks, y = cancer
    with pytest.raises(InvalidInputError, match="weights"):
        mklopt.certify(ks, y, weights, optimum_p2.alpha, C=1.0, p=2.0)


# ------------------------------------------------------------------ 2. one source of truth
def _runs(ks, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mklopt.exceptions.MKLWarning)
        return {
            "wrapper p=4/3": mklopt.fit(ks, y, "wrapper", p=4 / 3, tol=1e-6),
            "cutting_plane p=1": mklopt.fit(ks, y, "cutting_plane", p=1.0, tol=1e-6),
            "cutting_plane p=2": mklopt.fit(ks, y, "cutting_plane", p=2.0, tol=1e-6),
            "lp_dual p=4/3": mklopt.solve(ks, y, "lp_dual", p=4 / 3),
        }


@pytest.fixture(scope="module")
def runs(cancer):
    return _runs(*cancer)


@pytest.mark.parametrize("name", ["wrapper p=4/3", "cutting_plane p=1", "cutting_plane p=2",
                                  "lp_dual p=4/3"])
def test_certify_of_the_returned_pair_reproduces_the_reported_gap(cancer, runs, name):
    ks, y = cancer
    res = runs[name]
    cert = mklopt.certify(ks, y, res.weights, res.alpha, C=res.C, regularizer=res.regularizer)
    assert cert.feasible
    assert res.dual <= res.primal
    assert cert.rel_gap == pytest.approx(res.rel_gap, rel=0.01, abs=1e-12)
    assert cert.primal == pytest.approx(res.primal, rel=1e-9)
    assert cert.dual == pytest.approx(res.dual, rel=1e-9)
    assert res.rel_gap <= 1e-6


@pytest.mark.parametrize("name", ["wrapper p=4/3", "cutting_plane p=1", "cutting_plane p=2",
                                  "lp_dual p=4/3"])
def test_save_load_round_trip_and_verify_without_flags(cancer, runs, name, tmp_path):
    ks, y = cancer
    res = runs[name]
    path = tmp_path / "result.npz"
    res.save(path)
    back = mklopt.MKLResult.load(path)
    for field in ("weights", "alpha", "dual_coef"):
        np.testing.assert_array_equal(getattr(back, field), getattr(res, field))
    for field in ("bias", "primal", "dual", "gap", "rel_gap", "C", "status", "formulation",
                  "iterations", "loss"):
        assert getattr(back, field) == getattr(res, field), field
    assert repr(back.regularizer) == repr(res.regularizer)
    assert len(back.history) == len(res.history)
    again = mklopt.certificates.recertify.certify_result(ks, y, back)
    assert again.rel_gap == pytest.approx(res.rel_gap, rel=0.01, abs=1e-12)
    kernels = tmp_path / "K.npz"
    np.savez(kernels, K=ks.K, y=y)
    out = subprocess.run([sys.executable, "-m", "mklopt.cli", "verify", "--kernels", str(kernels),
                          "--candidate", str(path), "--tol", f"{max(res.rel_gap * 1.01, 1e-12):.3e}"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "CERTIFIED" in out.stdout and "Traceback" not in out.stderr


def test_verify_of_a_saved_result_against_other_kernels_is_an_error(cancer, runs, tmp_path):
    ks, y = cancer
    path = tmp_path / "result.npz"
    runs["lp_dual p=4/3"].save(path)
    other = ks.K.copy()
    other[0] *= 2.0
    with pytest.raises(InvalidInputError, match="fingerprint|different kernels|other kernels"):
        mklopt.certificates.recertify.certify_result(other, y, mklopt.MKLResult.load(path))
    with pytest.raises(InvalidInputError, match="contradicts"):
        mklopt.certificates.recertify.certify_result(ks, y, mklopt.MKLResult.load(path), p=2.0)


def test_cli_verify_infeasible_candidate_exits_1_with_one_line(cancer, optimum_p2, tmp_path):
    ks, y = cancer
    kernels, cand = tmp_path / "K.npz", tmp_path / "cand.npz"
    np.savez(kernels, K=ks.K, y=y)
    np.savez(cand, weights=5 * optimum_p2.weights, alpha=optimum_p2.alpha)
    out = subprocess.run([sys.executable, "-m", "mklopt.cli", "verify", "--kernels", str(kernels),
                          "--candidate", str(cand), "--p", "2"], capture_output=True, text=True)
    assert out.returncode == 1
    verdict = [line for line in out.stdout.splitlines() if "CERTIFIED" in line]
    assert len(verdict) == 1 and verdict[0].startswith("NOT CERTIFIED") and "outside" in verdict[0]
    assert "Traceback" not in out.stderr


# ------------------------------------------------------------------ 3. validated controls
@pytest.mark.parametrize("call", [
    lambda ks, y: mklopt.fit(ks, y, "wrapper", p=2.0, tol=10),
    lambda ks, y: mklopt.fit(ks, y, "wrapper", p=2.0, tol=0),
    lambda ks, y: mklopt.solve(ks, y, "lp_dual", tol=-1),
    lambda ks, y: mklopt.solve(ks, y, "lp_dual", tol=float("nan")),
    lambda ks, y: mklopt.solve(ks, y, "lp_dual", tol="a"),
    lambda ks, y: mklopt.fit(ks, y, "wrapper", p=2.0, max_iter=0),
    lambda ks, y: mklopt.fit(ks, y, "wrapper", p=2.0, max_iter=1.5),
    lambda ks, y: mklopt.fit(ks, y, "wrapper", p=2.0, time_limit=float("nan")),
    lambda ks, y: mklopt.fit(ks, y, "wrapper", p=2.0, time_limit=-1),
    lambda ks, y: mklopt.solve(ks, y, "lp_dual", C=True),
    lambda ks, y: mklopt.solve(ks, y, "lp_dual", C=float("inf")),
    lambda ks, y: mklopt.certify(ks, y, np.ones(ks.M) / ks.M, np.zeros(ks.n), feasibility_tol=2),
    lambda ks, y: ks.normalized("tail_sum", theta=2.7),
    lambda ks, y: ks.normalized("tail_sum", theta=-1),
])
def test_bad_control_values_are_rejected(cancer, call):
    ks, y = cancer
    with pytest.raises(InvalidInputError):
        call(ks, y)


# ------------------------------------------------------------------ 4. sets without 0
def _floor_set() -> ConstraintSet:
    return ConstraintSet(lambda mu: [cp.sum(mu) <= 1, mu >= 0.1], name="floor")


@pytest.fixture(scope="module")
def floor_reference(cancer):
    """The primal min over mu in Theta, w, b, xi, written here independently in CVXPY."""
    ks, y = cancer
    y_pm = np.where(y == 1, 1.0, -1.0)
    factors = ks.factors()
    mu = cp.Variable(ks.M)
    w = [cp.Variable(L.shape[1]) for L in factors]
    b, xi = cp.Variable(), cp.Variable(ks.n, nonneg=True)
    f = sum(L @ wm for L, wm in zip(factors, w)) + b
    obj = 0.5 * sum(cp.quad_over_lin(wm, mu[m]) for m, wm in enumerate(w)) + cp.sum(xi)
    prob = cp.Problem(cp.Minimize(obj), [cp.multiply(y_pm, f) >= 1 - xi, mu >= 0.1, cp.sum(mu) <= 1])
    prob.solve(solver="CLARABEL")
    return prob.value


@pytest.mark.parametrize("backend", capable_backends("SOCP")[:2])
def test_exact_solve_on_a_set_without_zero(cancer, floor_reference, backend):
    ks, y = cancer
    res = mklopt.solve(ks, y, "lp_primal", regularizer=_floor_set(), backend=backend, tol=1e-8)
    assert res.status == "optimal", res.message
    assert np.all(res.weights >= 0.1 - 1e-9) and res.weights.sum() <= 1 + 1e-9
    assert res.dual <= floor_reference * (1 + 1e-6) and floor_reference <= res.primal * (1 + 1e-6)
    assert abs(res.primal - floor_reference) <= 1e-5 * floor_reference


def test_cutting_plane_on_a_set_without_zero(cancer, floor_reference):
    ks, y = cancer
    res = mklopt.fit(ks, y, "cutting_plane", regularizer=_floor_set(), tol=1e-5)
    assert res.status == "converged", res.message
    assert np.all(res.weights >= 0.1 - 1e-9) and res.weights.sum() <= 1 + 1e-9
    assert res.dual <= floor_reference * (1 + 1e-8) <= res.primal * (1 + 1e-6)
    assert res.rel_gap <= 1e-5


def test_unbounded_set_is_rejected_before_solving(cancer):
    ks, y = cancer
    with pytest.raises(InvalidInputError, match="unbounded"):
        mklopt.solve(ks, y, "lp_primal", regularizer=ConstraintSet(lambda mu: [mu >= 0.1]))


def test_non_dcp_constraint_is_named(cancer):
    ks, y = cancer
    bad = ConstraintSet(lambda mu: [cp.sum(mu) <= 1, cp.sqrt(mu[0]) <= 0.5], name="bad")
    with pytest.raises(InvalidInputError, match="not DCP"):
        mklopt.solve(ks, y, "lp_primal", regularizer=bad)


def test_a_single_constraint_is_accepted(cancer):
    ks, y = cancer
    single = ConstraintSet(lambda mu: cp.sum(mu) <= 1, name="single")
    a = mklopt.solve(ks, y, "lp_primal", regularizer=single)
    b = mklopt.solve(ks, y, "lp_dual", p=1.0)
    assert abs(a.primal - b.primal) <= 1e-6 * b.primal


# ------------------------------------------------------------------ 6. relative gap
def test_rel_gap_is_relative_to_the_objective():
    cert = mklopt.results.result.relative_gap(1.7e-4, 0.04, 0.04 - 1.7e-4, scale=100.0)
    assert cert == pytest.approx(1.7e-4 / 0.04)


def test_vkr_defaults_are_certified_across_the_papers_grid():
    from sklearn.datasets import load_breast_cancer as data

    X, y = data(return_X_y=True)
    X = StandardScaler().fit_transform(X[:80])
    y = y[:80]
    objectives = []
    for lam in (1e-6, 1e-3, 1.0):
        for beta in (1e-6, 1e-3, 1.0):
            clf = mklopt.VKRClassifier(kernels=[("poly", {"degree": d}) for d in (1, 2, 3)],
                                       lam=lam, beta=beta)
            with warnings.catch_warnings():
                warnings.simplefilter("error", mklopt.exceptions.UncertifiedWarning)
                clf.fit(X, y)
            res = clf.result_
            assert res.status == "optimal", (lam, beta, res.message)
            assert res.rel_gap == pytest.approx(res.gap / max(abs(res.primal), abs(res.dual)))
            objectives.append(res.primal)
    # the grid reaches objectives well below 1, where max(1, |P|) made rel_gap absolute
    assert min(objectives) < 0.1


@pytest.mark.parametrize("C", [1.3093673545426122e-235, 1e-12, 1.0, 1e12])
def test_projection_is_feasible_when_the_box_is_far_narrower_than_alpha(C):
    """Found by the fuzz test: C = 1e-235 against a solver's alpha ~ 1e-10 left y'alpha = C."""
    from mklopt.losses import project_alpha

    y = np.array([-1.0, 1.0, 1.0])
    alpha = np.array([1.44071898e-10, 6.91680689e-11, 7.49182561e-11])
    a = project_alpha(alpha, y, C)
    assert np.all(a >= 0) and np.all(a <= C)
    assert abs(y @ a) <= 1e-14 * y.size * C  # the projection's own acceptance, relative to C
