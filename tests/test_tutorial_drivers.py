"""The tutorial's wrapper variants: Newton's method for lq-norm MKL and entropy mirror descent
over groups of kernels, against the exact formulations and closed forms."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.metrics.pairwise import rbf_kernel

import mklopt
from mklopt import GroupSimplex, InvalidInputError
from mklopt.drivers.newton import newton_weights
from mklopt.exceptions import FormulationError


@pytest.fixture(scope="module")
def problem():
    X, y = load_breast_cancer(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    idx = np.random.default_rng(3).choice(len(y), 80, replace=False)
    K = np.stack([rbf_kernel(X[idx], gamma=g) for g in (0.001, 0.01, 0.1, 1.0)])
    return K, np.where(y[idx] == 1, 1, -1)


def overlap(a, b):
    """Two certified intervals [dual, primal] meet (both contain OPT)."""
    return a.dual <= b.primal + 1e-9 * abs(b.primal) and b.dual <= a.primal + 1e-9 * abs(a.primal)


@pytest.mark.parametrize("q", [4 / 3, 2.0, 3.0])
def test_newton_reaches_the_exact_lq_optimum(problem, q):
    K, y = problem
    result = mklopt.fit(K, y, "newton", p=q, C=2.0, tol=1e-6)
    exact = mklopt.solve(K, y, "lp_dual", p=q, C=2.0)
    assert result.status == "converged" and result.rel_gap <= 1e-6
    assert overlap(result, exact)
    assert np.all(result.weights > 0) and abs(np.linalg.norm(result.weights, q) - 1) <= 1e-9


@pytest.mark.parametrize("q", [1.5, 2.0, 4.0])
def test_newton_step_converges_to_the_closed_form_of_the_fixed_w_problem(q):
    """With the block norms a held fixed, min sum a/mu over ||mu||_q <= 1 is mu ~ a^(1/(q+1))."""
    a = np.array([3.0, 0.5, 1e-3, 2.0, 0.0])
    mu = np.full(a.size, a.size ** (-1 / q))
    for _ in range(200):
        mu = newton_weights(mu, a, q)
    closed = a ** (1 / (q + 1))
    closed /= np.linalg.norm(closed, q)
    np.testing.assert_allclose(mu, closed, atol=1e-8)


def test_mirror_descent_is_l1_mkl_for_one_group(problem):
    K, y = problem
    result = mklopt.fit(K, y, "mirror_descent", p=1, C=2.0, tol=1e-3, max_iter=1000)
    exact = mklopt.solve(K, y, "qcqp_l1", C=2.0)
    assert result.status == "converged" and overlap(result, exact)
    assert np.isclose(result.weights.sum(), 1.0)


def test_mirror_descent_over_groups_matches_the_exact_dual(problem):
    K, y = problem
    groups = GroupSimplex([0, 0, 1, 1])
    result = mklopt.fit(K, y, "mirror_descent", regularizer=groups, C=2.0, tol=1e-3, max_iter=1000)
    exact = mklopt.solve(K, y, "lp_dual", regularizer=groups, C=2.0)
    assert result.status == "converged" and overlap(result, exact)
    np.testing.assert_allclose([result.weights[:2].sum(), result.weights[2:].sum()], 1.0, atol=1e-12)


def test_group_simplex_closed_forms_match_the_generic_machinery():
    groups = GroupSimplex([2, 0, 2, 1, 0])
    generic = mklopt.ConstraintSet(lambda mu: [mu[[1, 4]].sum() <= 1, mu[[0, 2]].sum() <= 1, mu[3] <= 1])
    rng = np.random.default_rng(0)
    for _ in range(5):
        s = rng.standard_normal(5) * 3
        assert abs(groups.support(s) - generic.support(s)) <= 1e-6 * max(1.0, abs(groups.support(s)))
        mu = rng.random(5) * 2
        np.testing.assert_allclose(groups.project(mu), generic.project(mu), atol=1e-6)
    wnorm2 = np.array([1.0, 4.0, 9.0, 2.0, 0.0])
    np.testing.assert_allclose(groups.argmin_weights(wnorm2), generic.argmin_weights(wnorm2), atol=1e-5)


def test_group_simplex_result_saves_loads_and_recertifies(problem, tmp_path):
    K, y = problem
    groups = GroupSimplex([0, 0, 1, 1])
    result = mklopt.fit(K, y, "mirror_descent", regularizer=groups, C=2.0, tol=1e-2)
    result.save(tmp_path / "md.npz")
    loaded = mklopt.MKLResult.load(tmp_path / "md.npz")
    again = mklopt.certify(K, y, loaded.weights, loaded.alpha, C=2.0, regularizer=groups)
    assert abs(again.gap - result.gap) <= 1e-9 * max(1.0, abs(result.primal))


@pytest.mark.parametrize("driver, kwargs", [
    ("newton", {"p": 1.0}), ("newton", {"p": np.inf}), ("newton", {"regularizer": GroupSimplex([0, 0, 1, 1])}),
    ("mirror_descent", {"p": 2.0}),
])
def test_drivers_refuse_weight_sets_they_do_not_solve(problem, driver, kwargs):
    K, y = problem
    with pytest.raises(FormulationError, match=driver):
        mklopt.fit(K, y, driver, **kwargs)


@pytest.mark.parametrize("groups", [[], [0.5, 1.0], [[0, 1]], ["a", "b"]])
def test_group_simplex_bad_labels(groups):
    with pytest.raises(InvalidInputError, match="group label"):
        GroupSimplex(groups)


@pytest.mark.parametrize("groups", [[0, 0, 1], [0, 1, 1, 0, 2, 2, 1, 0, 1]])
def test_groups_that_do_not_partition_the_kernels_are_refused(problem, groups):
    K, y = problem
    with pytest.raises(InvalidInputError, match="group labels but there are"):
        mklopt.fit(K, y, "mirror_descent", regularizer=GroupSimplex(groups))
