"""Issue 2 acceptance: KernelSet normalizations, tail sums, alignment, factors, test transforms."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.preprocessing import StandardScaler

import mklopt
from mklopt.kernels import kernel_stack, tail_sum

METHODS = ("trace", "multiplicative", "spherical", "tail_sum")


def digits_features(n: int) -> np.ndarray:
    X, _ = load_digits(return_X_y=True)
    return StandardScaler().fit_transform(X[:n])


def specs_for(d: int) -> list:
    """RBF kernels of three widths, a polynomial and a linear kernel (d input features)."""
    return [("rbf", {"gamma": 0.1 / d}), ("rbf", {"gamma": 1.0 / d}), ("rbf", {"gamma": 10.0 / d}),
            ("poly", {"degree": 2, "gamma": 1.0 / d, "coef0": 1.0}), "linear"]


@pytest.fixture(scope="module")
def features() -> np.ndarray:
    return digits_features(100)


@pytest.fixture(scope="module")
def kernels(features) -> mklopt.KernelSet:
    return mklopt.KernelSet.from_data(features, specs_for(features.shape[1]))


@pytest.fixture(scope="module")
def mrrr_breaker() -> np.ndarray:
    """A narrow RBF kernel on 100 breast-cancer points on which LAPACK's ``?syevr`` fails.

    With the OpenBLAS shipped in scipy's wheels, ``scipy.linalg.eigh`` (driver
    ``evr``) raises "LinAlgError: Internal Error" on this matrix (and on top-k
    subsets with k >= 49); mklopt falls back to ``evd``/``evx``.
    """
    X, _ = load_breast_cancer(return_X_y=True)
    idx = np.random.default_rng(0).choice(len(X), 100, replace=False)
    X = StandardScaler().fit_transform(X[idx])
    ks = mklopt.KernelSet.from_data(X, [("rbf", {"gamma": 30.0 / X.shape[1]})])
    return np.array(ks.normalized("trace").K[0])


def feature_space_variance(K: np.ndarray) -> float:
    """Feature-space variance of the training points.

    .. math:: \\tfrac1n\\sum_i\\|\\phi(x_i)-\\bar\\phi\\|^2
              = \\tfrac1n\\operatorname{Tr}K - \\tfrac1{n^2}1^\\top K1
    """
    n = K.shape[0]
    return float(np.trace(K) / n - K.sum() / n**2)


# ------------------------------------------------------------------ normalizations
@pytest.mark.parametrize("target", [1.0, 100.0])
def test_trace_normalization_reaches_the_target(kernels, target):
    np.testing.assert_allclose(kernels.normalized("trace", target=target).traces, target, rtol=1e-12)


def test_multiplicative_normalization_gives_unit_feature_space_variance(kernels):
    """Kloft thesis eq. 3.6."""
    normalized = kernels.normalized("multiplicative")
    variances = [feature_space_variance(K) for K in normalized.K]
    np.testing.assert_allclose(variances, 1.0, rtol=1e-12)


def test_spherical_normalization_gives_unit_diagonal(kernels):
    normalized = kernels.normalized("spherical")
    np.testing.assert_allclose(np.einsum("mii->mi", normalized.K), 1.0, rtol=1e-12)
    diag = np.sqrt(np.einsum("mii->mi", kernels.K))
    np.testing.assert_allclose(normalized.K, kernels.K / (diag[:, :, None] * diag[:, None, :]),
                               rtol=1e-12)


def test_tail_sum_with_theta_zero_is_trace_normalization(kernels):
    np.testing.assert_allclose(kernels.normalized("tail_sum", theta=0).K,
                               kernels.normalized("trace").K, rtol=1e-14)


@pytest.mark.parametrize("theta", [1, 5])
def test_tail_sum_normalization_gives_unit_tail(kernels, theta):
    np.testing.assert_allclose(kernels.normalized("tail_sum", theta=theta).tail_sums(theta), 1.0,
                               rtol=1e-10)


@pytest.mark.parametrize("method", ["trace", "multiplicative", "tail_sum"])
def test_scales_record_the_normalization(kernels, method):
    normalized = kernels.normalized(method, theta=2)
    np.testing.assert_allclose(normalized.K, kernels.K * normalized.scales[:, None, None],
                               rtol=1e-14)


# ---------------------------------------------------------------------- tail sums
def assert_tail_sums_match_eigvalsh(K: np.ndarray, thetas) -> None:
    eigenvalues = np.sort(np.linalg.eigvalsh(K))[::-1]
    for theta in thetas:
        expected = eigenvalues[theta:].sum()
        assert abs(tail_sum(K, theta) - expected) <= 1e-10 * abs(expected), theta


@pytest.mark.parametrize("theta", [0, 1, 2, 5, 10, 30])
def test_tail_sums_match_full_eigendecomposition(kernels, theta):
    """LAPACK subset path (n = 100); cutoffs where the tail is a material part of the spectrum."""
    expected = [np.sort(np.linalg.eigvalsh(K))[::-1][theta:].sum() for K in kernels.K[:4]]
    np.testing.assert_allclose(kernels[:4].tail_sums(theta), expected, rtol=1e-10)


def test_tail_sums_match_on_the_lanczos_path():
    """n = 240, theta <= n/16: the ARPACK path."""
    X = digits_features(240)
    ks = mklopt.KernelSet.from_data(X, specs_for(X.shape[1])[:3])
    for K in ks.K:
        assert_tail_sums_match_eigvalsh(K, [1, 2, 5, 10, 15])


def test_tail_sums_on_a_matrix_where_mrrr_fails(mrrr_breaker):
    assert_tail_sums_match_eigvalsh(mrrr_breaker, [1, 10, 49, 60, 99])


# ------------------------------------------------------------------------ alignment
def test_centered_alignment_is_a_correlation_matrix(kernels):
    A = kernels.centered_alignment()
    assert A.shape == (kernels.M, kernels.M)
    np.testing.assert_allclose(A, A.T, rtol=0, atol=1e-15)
    np.testing.assert_allclose(np.diag(A), 1.0, rtol=1e-12)
    assert np.all(np.abs(A) <= 1.0 + 1e-12)


def test_centered_alignment_matches_its_definition(kernels):
    """rho(K, K') = <HKH, HK'H>_F / (||HKH||_F ||HK'H||_F), H = I - 11'/n."""
    n = kernels.n
    H = np.eye(n) - np.ones((n, n)) / n
    centered = [H @ K @ H for K in kernels.K]
    expected = np.array([[np.sum(a * b) / (np.linalg.norm(a) * np.linalg.norm(b))
                          for b in centered] for a in centered])
    np.testing.assert_allclose(kernels.centered_alignment(), expected, rtol=1e-10, atol=1e-14)


def test_target_alignment_is_bounded_and_scale_free(kernels):
    y = np.where(np.arange(kernels.n) % 3 == 0, 1.0, -1.0)
    rho = kernels.centered_alignment(y)
    assert rho.shape == (kernels.M,)
    assert np.all(np.abs(rho) <= 1.0 + 1e-12)
    np.testing.assert_allclose(kernels.normalized("trace").centered_alignment(y), rho, rtol=1e-10)


# -------------------------------------------------------------------------- factors
def test_factors_reproduce_the_kernels(kernels):
    for m, L in enumerate(kernels.factors()):
        K = kernels.K[m]
        assert np.max(np.abs(L @ L.T - K)) <= 1e-10 * np.max(np.abs(K))


def test_factor_rank_of_the_linear_kernel(kernels, features):
    """The linear kernel's numerical rank is the feature rank (digits has constant pixels)."""
    assert kernels.ranks[-1] == np.linalg.matrix_rank(features)


def test_factor_of_a_matrix_where_mrrr_fails(mrrr_breaker):
    L = mklopt.KernelSet(mrrr_breaker).factor(0)
    assert np.max(np.abs(L @ L.T - mrrr_breaker)) <= 1e-10 * np.max(np.abs(mrrr_breaker))


# ------------------------------------------------------------------- test transform
@pytest.mark.parametrize("method", METHODS)
def test_transform_test_on_training_points_reproduces_the_normalized_kernels(features, method):
    """Normalizing the train-vs-train block as 'test' kernels gives the normalized training set."""
    specs = specs_for(features.shape[1])
    raw = mklopt.KernelSet.from_data(features, specs)
    normalized = raw.normalized(method, theta=3)
    block = kernel_stack(features, specs, features)
    diag = np.einsum("mii->mi", block)
    np.testing.assert_allclose(normalized.transform_test(block, test_diag=diag), normalized.K,
                               rtol=1e-12, atol=1e-14)


def test_transform_test_of_new_points_matches_joint_spherical_normalization(features):
    """Spherical normalization is pointwise: test rows equal the joint normalized kernel's rows."""
    specs = specs_for(features.shape[1])
    train, test = features[:70], features[70:]
    normalized = mklopt.KernelSet.from_data(train, specs).normalized("spherical")
    joint = mklopt.KernelSet.from_data(features, specs).normalized("spherical")
    test_diag = np.einsum("mii->mi", kernel_stack(test, specs))
    transformed = normalized.transform_test(kernel_stack(test, specs, train), test_diag=test_diag)
    np.testing.assert_allclose(transformed, joint.K[:, 70:, :70], rtol=1e-12, atol=1e-14)


def test_spherical_transform_needs_test_diagonal(kernels):
    with pytest.raises(mklopt.KernelError, match="test_diag"):
        kernels.normalized("spherical").transform_test(kernels.K[:, :3, :])


# ---------------------------------------------------------------- no input mutation
def test_building_and_normalizing_do_not_mutate_inputs(features):
    X = features.copy()
    stack = kernel_stack(X, specs_for(X.shape[1]))
    stack_before = stack.copy()
    as_list = [K for K in stack]
    ks = mklopt.KernelSet(as_list)
    kept = ks.K.copy()
    for method in METHODS:
        normalized = ks.normalized(method, theta=2)
        normalized.transform_test(stack[:, :5], test_diag=np.einsum("mii->mi", stack[:, :5, :5]))
    ks.centered_alignment()
    ks.factors()
    mklopt.KernelSet.from_data(X, specs_for(X.shape[1]))
    np.testing.assert_array_equal(X, features)
    np.testing.assert_array_equal(stack, stack_before)
    np.testing.assert_array_equal(ks.K, kept)
