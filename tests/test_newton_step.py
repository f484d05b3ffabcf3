"""The interleaved core's second-order θ-step (HessianMKL) for ℓ1 and the other polyhedral sets.

References: the derivative of the SVM's gradient in μ by finite differences of libsvm's
solutions (scikit-learn's ``SVC``), the cutting plane alone (``second_order=False``) and the
exact solution (``mklopt.solve``) of the same problems.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

import mklopt
from mklopt import KernelSet
from mklopt.datasets import load_mfeat
from mklopt.drivers import _newton_step
from mklopt.drivers._newton_step import NewtonStep, SecondOrder
from mklopt.drivers.lp_master import polyhedral_set
from mklopt.regularizers import LpBall


@pytest.fixture(scope="module")
def views():
    """Multiple Features' six views on 240 points, an RBF kernel each: weights inside the simplex."""
    data = load_mfeat()
    index = np.random.default_rng(0).permutation(data.target.size)[:240]
    stack = []
    for view in data.views.values():
        Z = StandardScaler().fit_transform(view[index])
        sq = (Z**2).sum(1)
        stack.append(np.exp(-np.clip(sq[:, None] + sq[None, :] - 2 * Z @ Z.T, 0, None) / Z.shape[1]))
    return KernelSet(np.stack(stack)), data.target[index]


_EXACT: dict = {}


def _exact(ks: KernelSet, y: np.ndarray, key: tuple, **params):
    """The exact solution (interior point), once per problem."""
    if key not in _EXACT:
        _EXACT[key] = mklopt.solve(ks, y, "lp_dual", **params)
    return _EXACT[key]


def _svm(ks: KernelSet, y: np.ndarray, mu: np.ndarray, C: float) -> np.ndarray:
    """libsvm's α at the weights μ, to near machine precision."""
    svc = SVC(kernel="precomputed", C=C, tol=1e-12).fit(ks.combined(mu), y)
    alpha = np.zeros(y.size)
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    return alpha


def test_the_model_hessian_is_the_derivative_of_the_svm_gradient(views):
    """d s(α(μ)) / dμ = -2 ∇²J: central differences of libsvm's solutions at nearby weights."""
    ks, target = views
    y, C = np.where(target == 2, 1.0, -1.0), 1.0
    mu = np.array([0.1, 0.3, 0.1, 0.3, 0.1, 0.1])
    alpha = _svm(ks, y, mu, C)
    step = NewtonStep(polyhedral_set(LpBall(1), ks.M), ks.K, y, C)
    H = step.hessian(mu, alpha, np.einsum("mij,j->mi", ks.K, y * alpha))
    h = 1e-4  # libsvm's α to ~1e-10: smaller steps measure its rounding
    for k in range(ks.M):
        e = np.zeros(ks.M)
        e[k] = h
        s_plus, s_minus = (ks.quadratic_terms(y * _svm(ks, y, mu + d, C)) for d in (e, -e))
        np.testing.assert_allclose((s_plus - s_minus) / (2 * h), -2 * H[:, k], rtol=1e-3,
                                   atol=1e-3 * np.abs(H).max())


@pytest.mark.parametrize("driver", ["chunking", "cutting_plane"])
@pytest.mark.parametrize("p", [1.0, np.inf])
@pytest.mark.parametrize("C", [1.0, 100.0])
def test_second_order_steps_reach_the_exact_answer_in_fewer_steps(views, driver, p, C):
    ks, target = views
    y = np.where(target == 7, 1.0, -1.0)
    second = mklopt.fit(ks, y, driver, p=p, C=C, tol=1e-6)
    first = mklopt.fit(ks, y, driver, p=p, C=C, tol=1e-6, second_order=False)
    exact = _exact(ks, y, ("digit 7", p, C), p=p, C=C)
    for result in (second, first):
        assert result.status == "converged" and result.rel_gap <= 1e-6
        assert abs(result.primal - exact.primal) <= 2e-6 * abs(exact.primal)
    np.testing.assert_allclose(second.weights, exact.weights, atol=5e-3)
    if p == 1.0:  # inside the simplex the cutting plane zig-zags (the box's optimum is a vertex)
        assert 2 * second.iterations <= first.iterations


def test_a_second_order_step_that_does_not_help_hands_over_to_the_cutting_plane(views, monkeypatch):
    """A model that always points at the first kernel alone: after NEWTON_PATIENCE steps that
    leave the best certified gap where it was, the cutting plane alone finishes the fit."""
    ks, target = views
    y = np.where(target == 2, 1.0, -1.0)
    taken = []

    def first_kernel_only(self, mu, s, H):
        taken.append(1)
        return np.eye(ks.M)[0]

    monkeypatch.setattr(NewtonStep, "__call__", first_kernel_only)
    result = mklopt.fit(ks, y, "chunking", C=1.0, tol=1e-5)
    reference = mklopt.fit(ks, y, "chunking", C=1.0, tol=1e-5, second_order=False)
    assert result.status == "converged" and result.rel_gap <= 1e-5
    assert abs(result.primal - reference.primal) <= 2e-5 * abs(reference.primal)
    assert 1 <= len(taken) <= _newton_step.PATIENCE + 2


def test_identical_kernels_make_a_singular_model_and_the_fit_still_converges(views):
    ks, target = views
    twice = KernelSet(np.concatenate([ks.K[:2], ks.K[:2]]))
    y = np.where(target == 4, 1.0, -1.0)
    result = mklopt.fit(twice, y, "chunking", C=10.0, tol=1e-6)
    exact = mklopt.solve(twice, y, "lp_dual", C=10.0)
    assert result.status == "converged" and result.rel_gap <= 1e-6
    assert abs(result.primal - exact.primal) <= 2e-6 * abs(exact.primal)


def test_the_step_applies_to_the_binary_hinge_on_a_dense_stack_only(views, monkeypatch):
    ks, target = views
    y = np.where(target == 2, 1.0, -1.0)
    models = []
    real = NewtonStep.hessian
    monkeypatch.setattr(NewtonStep, "hessian", lambda self, *a: models.append(1) or real(self, *a))
    mklopt.fit(ks, y, "chunking", C=1.0, p=4 / 3, tol=1e-4)  # the analytic step
    mklopt.fit(ks, y, "chunking", C=1.0, tol=1e-4, loss="epsilon_insensitive")
    assert models == []
    mklopt.fit(ks, y, "chunking", C=1.0, tol=1e-4)
    assert models


def test_too_many_free_variables_leave_the_step_to_the_cutting_plane(views, monkeypatch):
    ks, target = views
    y = np.where(target == 2, 1.0, -1.0)
    monkeypatch.setattr(_newton_step, "MAX_FREE", 0)
    called = []
    monkeypatch.setattr(NewtonStep, "__call__", lambda *a: called.append(1))
    result = mklopt.fit(ks, y, "chunking", C=1.0, tol=1e-5)
    assert result.status == "converged" and called == []


class _ModelFor:
    """A stand-in model: the first ``models`` calls have a Hessian, the later ones none."""

    def __init__(self, models: int) -> None:
        self.models = models

    def hessian(self, mu, alpha, Kc=None):
        self.models -= 1
        return np.eye(mu.size) if self.models >= 0 else None

    def __call__(self, mu, s, H):
        return np.full(mu.size, 1.0 / mu.size)


def _cert(primal: float, gain: float, s, rel_gap: float):
    """A certificate's numbers for ℓ1 over two kernels: dual = gain - max(s)/2."""
    s = np.asarray(s, dtype=float)
    return SimpleNamespace(primal=primal, gain=gain, s=s, dual=gain - 0.5 * s.max(), rel_gap=rel_gap,
                           alpha=np.zeros(3))


def test_without_a_model_the_weights_stay_while_the_svm_gap_is_most_of_the_gap():
    """After a model step, a step without a model (too many free variables) keeps the weights
    while the SVM's own gap at them is more than half the gap, and leaves the step to the
    cutting plane (None) once the SVM caught up."""
    mu = np.array([0.5, 0.5])
    step = SecondOrder(_ModelFor(models=1))
    assert step(mu, _cert(2.5, 3.0, [2.0, 2.0], 0.3)) is not None  # the model's step
    # SVM gap 2.5 - (3 - 1) = 0.5 of a gap 2.5 - 2 = 0.5: stay
    np.testing.assert_array_equal(step(mu, _cert(2.5, 3.0, [2.0, 2.0], 0.2)), mu)
    # SVM gap 1.6 - (3 - 1.5) = 0.1 of a gap 1.6 - 1 = 0.6: the cutting plane
    assert step(mu, _cert(1.6, 3.0, [2.0, 4.0], 0.1)) is None


class _CountingModel(_ModelFor):
    """A stand-in model that counts its Hessians and steps to ``target``."""

    def __init__(self, target) -> None:
        super().__init__(models=100)
        self.target, self.made = np.asarray(target, dtype=float), 0

    def hessian(self, mu, alpha, Kc=None):
        self.made += 1
        return super().hessian(mu, alpha, Kc)

    def __call__(self, mu, s, H):
        return self.target.copy()


def test_settled_weights_are_kept_without_a_model_while_the_svm_gap_is_most_of_the_gap():
    """A model step that left the weights where they were (settled) is not followed by another
    model while the SVM's own gap is more than half the gap; once the SVM caught up (or after
    a step that moved the weights) the model is made again."""
    mu = np.array([0.5, 0.5])
    behind, caught_up = _cert(2.5, 3.0, [2.0, 2.0], 0.3), _cert(1.6, 3.0, [2.0, 4.0], 0.1)
    model = _CountingModel(mu)
    step = SecondOrder(model)
    np.testing.assert_array_equal(step(mu, behind), mu)  # a model step: it stays, settled
    assert model.made == 1
    for _ in range(3):
        np.testing.assert_array_equal(step(mu, behind), mu)
    assert model.made == 1
    step(mu, caught_up)
    assert model.made == 2
    moving = _CountingModel([0.9, 0.1])
    step = SecondOrder(moving)
    for _ in range(3):
        np.testing.assert_array_equal(step(mu, behind), [0.9, 0.1])
    assert moving.made == 3


def test_before_any_model_step_a_missing_model_leaves_the_step_to_the_cutting_plane():
    mu = np.array([0.5, 0.5])
    assert SecondOrder(_ModelFor(models=0))(mu, _cert(2.5, 3.0, [2.0, 2.0], 0.3)) is None


def test_up_to_max_free_free_variables_the_model_steps_to_the_end(monkeypatch):
    """Digits' class 8 against the rest at C = 100 has 400-800 free variables near its optimum:
    with the model there (MAX_FREE = 800) no cutting-plane step is taken after the first model
    step and the fit certifies in fewer steps than with the model capped at 400."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    from mklopt.drivers.lp_master import LPMaster
    from mklopt.estimators import resolve_kernel_specs

    X, target = load_digits(return_X_y=True)
    X, _, target, _ = train_test_split(X, target, test_size=0.3, random_state=0)  # the benchmark's
    X = StandardScaler().fit_transform(X)
    ks = KernelSet.from_data(X, resolve_kernel_specs(None, X), normalization="multiplicative")
    y = np.where(target == 8, 1.0, -1.0)
    solves = []
    real = LPMaster.solve
    monkeypatch.setattr(LPMaster, "solve", lambda self: solves.append(1) or real(self))
    wide = mklopt.fit(ks, y, "chunking", C=100.0, tol=1e-4)
    assert wide.status == "converged" and wide.rel_gap <= 1e-4 and solves == []
    monkeypatch.setattr(_newton_step, "MAX_FREE", 400)
    narrow = mklopt.fit(ks, y, "chunking", C=100.0, tol=1e-4)
    assert narrow.status == "converged" and narrow.rel_gap <= 1e-4 and solves
    assert wide.iterations < narrow.iterations
    assert abs(wide.primal - narrow.primal) <= 2e-4 * abs(narrow.primal)


def test_overlapping_classes_with_up_to_1600_free_variables_keep_the_model(monkeypatch):
    """Letter's class O against the rest (2,000 points, C = 1) has ~1,100 free variables: with
    the model made there the fit certifies in about half the steps it takes with the model
    capped at 800 free variables (the cutting plane's jumps then hold the best gap still), at
    the same optimum."""
    from mklopt.datasets.loaders import load_letter_classes
    from mklopt.estimators import resolve_kernel_specs

    X, letters = load_letter_classes()
    index = np.random.default_rng(0).choice(letters.size, 2000, replace=False)
    X = StandardScaler().fit_transform(X[index])
    ks = KernelSet.from_data(X, resolve_kernel_specs(None, X), normalization="multiplicative")
    y = np.where(letters[index] == "O", 1.0, -1.0)
    wide = mklopt.fit(ks, y, "chunking", C=1.0, tol=1e-4)
    assert wide.status == "converged" and wide.rel_gap <= 1e-4
    assert np.count_nonzero((wide.alpha > 1e-8) & (wide.alpha < 1.0 - 1e-8)) > 800
    monkeypatch.setattr(_newton_step, "MAX_FREE", 800)
    narrow = mklopt.fit(ks, y, "chunking", C=1.0, tol=1e-4)
    assert narrow.status == "converged" and narrow.rel_gap <= 1e-4
    assert 1.5 * wide.iterations < narrow.iterations
    assert abs(wide.primal - narrow.primal) <= 2e-4 * abs(narrow.primal)


@pytest.mark.parametrize("free", [1, 7, 150])
def test_the_compiled_free_block_is_the_weighted_sum_of_the_kernels_blocks_bit_for_bit(free):
    """Q_FF = sum_m mu_m K_m[F, F] over the kernels in use, in their order, from a symmetric stack."""
    from mklopt._compiled.blocks import weighted_block
    from mklopt._compiled.layout import frozen

    rng = np.random.default_rng(free)
    A = rng.standard_normal((4, 200, 30))
    S = A @ A.transpose(0, 2, 1)
    stack = frozen(0.5 * (S + S.transpose(0, 2, 1)))  # exactly symmetric, as validated stacks are
    rows = np.sort(rng.choice(200, size=free, replace=False)).astype(np.int64)
    used, weights = np.array([0, 2, 3]), np.array([0.25, 0.5, 0.125])
    expected = np.zeros((free, free))
    for m, weight in zip(used, weights):
        expected += weight * stack[m][np.ix_(rows, rows)]
    out = np.empty((free, free))
    weighted_block(stack, used, frozen(weights), rows, out)
    assert np.array_equal(out, expected)


@pytest.mark.parametrize("rows, columns", [(1, 1), (7, 40), (150, 3)])
def test_the_compiled_gather_is_numpys_block(rows, columns):
    """K_m[R, C] of every kernel, R and C unsorted with repeats allowed in C."""
    from mklopt._compiled.blocks import gather_block
    from mklopt._compiled.layout import frozen

    rng = np.random.default_rng(rows + columns)
    stack = frozen(rng.standard_normal((3, 200, 200)))
    R = rng.choice(200, size=rows, replace=False).astype(np.int64)
    C = rng.integers(0, 200, size=columns).astype(np.int64)
    out = np.empty((3, rows, columns))
    gather_block(stack, R, C, out)
    assert np.array_equal(out, stack[:, R][:, :, C])


@pytest.mark.parametrize("free, kernels", [(3, 2), (12, 3), (150, 5), (40, 8)])
def test_the_compiled_model_is_the_bordered_systems_schur_complement_floored(free, kernels):
    """model_hessian against NumPy: the LU solve of the bordered KKT matrix built from the
    ridged Q_FF, B^T X, then the symmetric part with eigenvalues floored; and Q is the block."""
    from mklopt._compiled.layout import frozen
    from mklopt._compiled.newton_model import MODELLED, model_hessian

    rng = np.random.default_rng(free + kernels)
    A = rng.standard_normal((kernels, 200, 260))
    stack = frozen(np.einsum("mik,mjk->mij", A, A) / 260)
    stack = frozen(0.5 * (stack + stack.transpose(0, 2, 1)))
    rows = np.sort(rng.choice(200, size=free, replace=False)).astype(np.int64)
    used, mu = np.arange(kernels), rng.dirichlet(np.ones(kernels))
    yF = rng.choice([-1.0, 1.0], size=free)
    B = rng.standard_normal((free, kernels))
    Q, H = np.empty((free, free)), np.empty((kernels, kernels))
    assert model_hessian(stack, used, frozen(mu), rows, yF, B, 1e-10, 1e-8, Q, H) == MODELLED
    block = sum(mu[m] * stack[m][np.ix_(rows, rows)] for m in range(kernels)) * np.outer(yF, yF)
    block[np.diag_indices(free)] += 1e-10 * np.trace(block) / free
    assert np.allclose(Q, block, rtol=1e-13, atol=0)
    bordered = np.block([[block, yF[:, None]], [yF[None, :], np.zeros((1, 1))]])
    X = np.linalg.solve(bordered, np.vstack([B, np.zeros((1, kernels))]))[:free]
    values, vectors = np.linalg.eigh(0.5 * (B.T @ X + X.T @ B))
    expected = (vectors * np.maximum(values, 1e-8 * values[-1])) @ vectors.T
    assert np.allclose(H, expected, rtol=1e-8, atol=1e-10 * np.abs(expected).max())


def test_a_singular_free_block_is_handed_back_for_the_lu_and_no_positive_model_is_none():
    """Q_FF of rank 2 on 30 points (a linear kernel of two features): not positive definite, so
    the status says so and Q holds the ridged block; a model with no positive eigenvalue: None."""
    from mklopt._compiled.layout import frozen
    from mklopt._compiled.newton_model import NO_MODEL, NOT_DEFINITE, floored, model_hessian

    rng = np.random.default_rng(3)
    Z = rng.standard_normal((40, 2))
    stack = frozen((Z @ Z.T)[None])
    rows = np.arange(30, dtype=np.int64)
    Q, H = np.empty((30, 30)), np.empty((1, 1))
    status = model_hessian(stack, np.zeros(1, dtype=np.int64), frozen(np.ones(1)), rows, np.ones(30),
                           np.ones((30, 1)), 0.0, 1e-8, Q, H)
    assert status == NOT_DEFINITE and np.array_equal(Q, (Z @ Z.T)[:30, :30])
    assert not floored(-np.eye(2), 1e-8, np.empty((2, 2))) and NO_MODEL != NOT_DEFINITE
