"""Kernels as low-rank factors: exactness against the dense stack, approximations, bad input."""

from __future__ import annotations

import numpy as np
import pytest

import mklopt
from mklopt.exceptions import KernelError
from mklopt.kernels import FactorKernelSet

SPECS = [("rbf", {"gamma": 0.05}), ("rbf", {"gamma": 0.3}), ("rbf", {"gamma": 2.0}),
         "linear", ("poly", {"degree": 2}), "cosine"]


@pytest.fixture(scope="module")
def problem():
    """300 points, 6 kernels given by eigen-factors, and the dense stack of exactly those kernels."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 5))
    y = np.where(X[:, 0] - X[:, 1] ** 2 + 0.5 * rng.standard_normal(300) > -0.5, 1, -1)
    full = mklopt.KernelSet.from_data(X, SPECS).normalized("trace", target=300)
    exact = mklopt.KernelSet.from_factors([full.factor(m, rank_tol=1e-6) for m in range(full.M)],
                                          full.names)
    return exact.dense(), exact, y


def test_factor_set_matches_the_dense_quantities(problem):
    dense, fks, y = problem
    assert isinstance(fks, FactorKernelSet) and fks.factored and not dense.factored
    coef = y * np.random.default_rng(1).uniform(0, 1, y.size)
    s_d, Kc_d = dense.products(coef)
    s_f, Kc_f = fks.products(coef)
    np.testing.assert_allclose(s_f, s_d, rtol=1e-7)
    np.testing.assert_allclose(Kc_f, Kc_d, atol=1e-7 * np.abs(Kc_d).max())
    np.testing.assert_allclose(fks.traces, dense.traces, rtol=1e-8)
    np.testing.assert_allclose(fks.max_abs(), dense.max_abs(), rtol=1e-7)
    np.testing.assert_allclose(fks.tail_sums(3), dense.tail_sums(3), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(fks.centered_alignment(y), dense.centered_alignment(y), atol=1e-8)
    np.testing.assert_allclose(fks.combined(np.arange(1.0, 7.0)),
                               dense.combined(np.arange(1.0, 7.0)), atol=1e-7 * 300)
    for method in ("multiplicative", "spherical"):
        np.testing.assert_allclose(fks.normalized(method).dense().K, dense.normalized(method).K,
                                   atol=1e-7)
    with pytest.raises(KernelError, match="never formed"):
        fks.K


@pytest.mark.parametrize("driver, p", [("wrapper", 2.0), ("cutting_plane", 1.0)])
def test_exact_factors_reach_the_dense_optimum(problem, driver, p):
    """Acceptance: exact factors, wrapper p=2 and cutting plane p=1 reach the dense optimum to 1e-6."""
    dense, fks, y = problem
    reference = mklopt.solve(dense, y, "lp_dual", p=p, C=1.0, tol=1e-8)
    res = mklopt.fit(fks, y, driver, p=p, C=1.0, tol=1e-6)
    assert res.status == "converged" and res.rel_gap <= 1e-6
    opt = reference.primal
    assert abs(res.primal - opt) <= 1e-6 * opt
    assert res.dual <= reference.primal * (1 + 1e-8) and reference.dual <= res.primal * (1 + 1e-8)
    again = mklopt.certify(fks, y, res.weights, res.alpha, C=1.0, p=p)  # re-certifies on factors
    assert again.rel_gap <= 1e-6 and abs(again.primal - res.primal) <= 1e-9 * opt
    dense_cert = mklopt.certify(dense, y, res.weights, res.alpha, C=1.0, p=p)
    assert abs(dense_cert.primal - res.primal) <= 1e-6 * opt


def test_tail_sum_supergradient_from_factors_matches_dense(problem):
    from mklopt.formulations.dc_subproblem import tail_sum_linearization as tail_linearization

    dense, fks, _ = problem
    mu = np.linspace(0.5, 2.0, fks.M)
    a, b = tail_linearization(fks, mu, 4), tail_linearization(dense, mu, 4)
    np.testing.assert_allclose(a.v, b.v, rtol=1e-7, atol=1e-8)
    assert a.g == pytest.approx(b.g, rel=1e-7)


@pytest.mark.parametrize("inner", ["exact", "wrapper"])
def test_dca_on_factors_follows_the_dense_iterates(problem, inner):
    """DCA (tail sums from the factors' spectra) reaches the same critical point as on the stack."""
    dense, fks, y = problem
    sub = [0, 3, 5]
    a = mklopt.fit(fks[sub], y, "dca", theta=2, inner=inner, tol=1e-6, max_iter=30)
    b = mklopt.fit(dense[sub], y, "dca", theta=2, inner=inner, tol=1e-6, max_iter=30)
    assert a.status == b.status
    assert abs(a.primal - b.primal) <= 1e-4 * abs(b.primal)
    np.testing.assert_allclose(a.weights, b.weights, atol=1e-3 * np.abs(b.weights).max())


def test_exact_formulation_accepts_factors(problem):
    dense, fks, y = problem
    a = mklopt.solve(fks[[0, 3, 5]], y, "lp_primal", p=2.0, C=1.0, tol=1e-9)
    b = mklopt.solve(dense[[0, 3, 5]], y, "lp_primal", p=2.0, C=1.0, tol=1e-9)
    assert abs(a.primal - b.primal) <= 1e-6 * b.primal


def test_nystroem_factors_predict_through_test_factors():
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=600, n_features=8, random_state=0)
    specs = [("rbf", {"gamma": g}) for g in (0.01, 0.1, 1.0)]
    fks = mklopt.KernelSet.from_data(X[:500], specs, rank=40).normalized("trace", target=500)
    assert fks.ranks.tolist() == [40, 40, 40] and "nystroem" in fks.names[0]
    res = mklopt.fit(fks, y[:500], "wrapper", p=2, C=1.0, tol=1e-4)
    assert res.status == "converged"
    test = fks.transform_test(X[500:])
    f = res.decision_function(test)
    # the same decision values from the dense test kernels K_m(x, X) = s_m G_m(x) G_m^T
    G_test = [a.transform(X[500:]) for a in fks.approximators]
    raw = [fks.approximators[m].transform(X[:500]) for m in range(3)]
    dense_f = sum(res.weights[m] * fks.scales[m] * G_test[m] @ (raw[m].T @ res.dual_coef)
                  for m in range(3)) + res.bias
    np.testing.assert_allclose(f, dense_f, rtol=1e-8, atol=1e-8)
    assert np.mean(np.sign(f) == np.where(y[500:] == 1, 1, -1)) > 0.8
    with pytest.raises(KernelError, match="columns"):
        fks.transform_test(X[500:, :5])


def test_random_fourier_features_only_for_rbf():
    X = np.random.default_rng(0).standard_normal((50, 3))
    fks = mklopt.KernelSet.from_data(X, [("rbf", {"gamma": 0.5})], rank=30, approximation="rff")
    assert fks.ranks.tolist() == [30]
    with pytest.raises(KernelError, match="RBF"):
        mklopt.KernelSet.from_data(X, ["linear"], rank=10, approximation="rff")


@pytest.mark.parametrize("factors, match", [
    ([np.ones((10, 2)), np.ones((9, 2))], "same number of rows"),
    ([np.full((10, 2), np.nan)], "NaN"),
    ([np.ones((10, 0))], "rank 0"),
    ([np.ones(10)], "2-D"),
    ([], "no factors"),
])
def test_bad_factors_get_clear_errors(factors, match):
    with pytest.raises(KernelError, match=match):
        mklopt.KernelSet.from_factors(factors)


def test_bad_rank_and_test_factors():
    X = np.random.default_rng(0).standard_normal((40, 3))
    with pytest.raises(KernelError, match="rank"):
        mklopt.KernelSet.from_data(X, ["rbf"], rank=0)
    with pytest.raises(KernelError, match="exceeds"):
        mklopt.KernelSet.from_data(X, ["rbf"], rank=41)
    fks = mklopt.KernelSet.from_factors([np.ones((40, 2)), np.ones((40, 3))])
    with pytest.raises(KernelError, match="columns"):
        fks.transform_test([np.ones((5, 2)), np.ones((5, 2))])


def test_factor_inputs_are_not_mutated():
    G = np.random.default_rng(0).standard_normal((30, 4))
    before = G.copy()
    fks = mklopt.KernelSet.from_factors([G]).normalized("spherical")
    y = np.where(np.arange(30) % 2 == 0, 1, -1)
    mklopt.fit(fks, y, "wrapper", p=2, tol=1e-4)
    np.testing.assert_array_equal(G, before)


@pytest.mark.parametrize("call", [
    lambda ks, y: mklopt.fit(ks, y, "vkr_cd"),
    lambda ks, y: mklopt.solve(ks, y, "vkr_lp"),
], ids=["vkr_cd", "vkr_lp"])
def test_dense_only_methods_refuse_factors_clearly(call):
    fks = mklopt.KernelSet.from_factors([np.random.default_rng(0).standard_normal((40, 4))] * 2)
    y = np.where(np.arange(40) % 2 == 0, 1, -1)
    with pytest.raises(KernelError, match=r"low-rank factors; pass kernels.dense\(\)"):
        call(fks, y)


def test_factor_result_recertifies_after_save_and_load(tmp_path):
    from mklopt.certificates.recertify import certify_result

    rng = np.random.default_rng(3)
    fks = mklopt.KernelSet.from_factors([rng.standard_normal((80, 5)) for _ in range(3)])
    y = np.where(rng.standard_normal(80) > 0, 1, -1)
    res = mklopt.fit(fks, y, "cutting_plane", p=1, tol=1e-6)
    res.save(tmp_path / "r.npz")
    again = certify_result(fks, y, mklopt.MKLResult.load(tmp_path / "r.npz"))
    assert again.rel_gap <= 1e-6 and abs(again.primal - res.primal) <= 1e-12 * abs(res.primal)
    other = mklopt.KernelSet.from_factors([rng.standard_normal((80, 5)) for _ in range(3)])
    with pytest.raises(mklopt.exceptions.InvalidInputError):
        certify_result(other, y, mklopt.MKLResult.load(tmp_path / "r.npz"))
