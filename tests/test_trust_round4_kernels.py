"""Trust, round 4: kernels mklopt builds are PSD to the certificate's precision, wherever the data lie.

Shift-invariant kernels on data far from the origin lost every digit to the
cancellation in ||x||^2 + ||x'||^2 - 2<x, x'> (lambda_min = -4e-4 on the audit's
instance, and a "converged" chunking fit whose interval excluded the optimum).
The reference is the same kernel computed from the centred data Z = X - offset
(exact: Sterbenz), solved by another formulation.
"""

from __future__ import annotations

import numpy as np
import pytest

import mklopt
from mklopt.exceptions import KernelError, NotPSDError
from mklopt.kernels.rounding import SLACK, rounding_bound, trusted_by_construction

TOL = 1e-6


def _instance(offset: float, spread: float, n: int, seed: int):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2)) * spread + offset
    Z = X - offset  # exact: the points the kernel sees, at the origin
    return X, Z, np.where(Z[:, 0] > 0, 1.0, -1.0)


def _contains(result, reference) -> bool:
    """The certified interval [dual, primal] of ``result`` meets the reference's."""
    slack = 1e-9 * max(abs(reference.primal), 1.0)
    return result.dual <= reference.primal + slack and reference.dual <= result.primal + slack


def test_audit_instance_is_psd_and_certified_around_the_centred_optimum():
    X, Z, y = _instance(1e4, 1e-2, 200, seed=1)
    spec = [("rbf", {"gamma": 1e3})]
    ks = mklopt.KernelSet.from_data(X, spec)
    assert np.linalg.eigvalsh(ks.K[0]).min() > -1e-12  # was -4.15e-4
    assert np.all(np.diag(ks.K[0]) == 1.0)
    reference = mklopt.solve(mklopt.KernelSet.from_data(Z, spec), y, "lp_dual", p=1, C=10)
    dense = mklopt.fit(ks, y, "chunking", C=10, tol=TOL)
    lazy = mklopt.fit(mklopt.KernelSet.from_data(X, spec, lazy=True), y, "chunking", C=10, tol=TOL)
    for result in (dense, lazy):
        assert result.status == "converged" and result.rel_gap <= TOL
        assert _contains(result, reference)
    assert abs(dense.primal - lazy.primal) <= TOL * abs(dense.primal)


@pytest.mark.parametrize("offset", [1e0, 1e2, 1e4, 1e6, 1e8])
def test_far_from_origin_dense_lazy_and_factors_contain_the_centred_optimum(offset):
    X, Z, y = _instance(offset, 1.0, 90, seed=3)
    specs = [("rbf", {"gamma": 1.0}), ("rbf", {"gamma": 0.1})]  # gamma * spread^2 ~ 1
    reference = mklopt.solve(mklopt.KernelSet.from_data(Z, specs), y, "lp_dual", p=2, C=1)
    dense = mklopt.fit(mklopt.KernelSet.from_data(X, specs), y, "chunking", p=2, C=1, tol=TOL)
    lazy = mklopt.fit(mklopt.KernelSet.from_data(X, specs, lazy=True), y, "chunking", p=2, C=1,
                      tol=TOL)
    for result in (dense, lazy):
        assert result.status == "converged"
        assert _contains(result, reference), (offset, result.dual, result.primal, reference.primal)
    assert abs(dense.primal - lazy.primal) <= TOL * abs(dense.primal)
    factors = mklopt.fit(mklopt.KernelSet.from_data(X, specs, rank=30), y, "wrapper", p=2, C=1, tol=TOL)
    factor_reference = mklopt.solve(mklopt.KernelSet.from_data(Z, specs, rank=30), y, "lp_dual",
                                    p=2, C=1)
    assert factors.status == "converged" and _contains(factors, factor_reference)


@pytest.mark.parametrize("offset", [1e4, 1e8])
def test_test_kernels_far_from_origin_equal_the_centred_ones(offset):
    X, Z, _ = _instance(offset, 1.0, 40, seed=4)
    specs = [("rbf", {"gamma": 0.5}), ("laplacian", {"gamma": 0.3})]
    far = mklopt.kernels.kernel_stack(X[:10], specs, X[10:])
    near = mklopt.kernels.kernel_stack(Z[:10], specs, Z[10:])
    np.testing.assert_allclose(far, near, atol=1e-12)
    lazy = mklopt.KernelSet.from_data(X[10:], specs[:1], lazy=True)
    np.testing.assert_allclose(lazy.test_kernels(X[:10]), near[:1], atol=1e-12)


def test_linear_and_poly_on_the_fly_equal_dense_far_from_origin():
    X, _, _ = _instance(1e3, 1.0, 50, seed=5)
    specs = ["linear", ("poly", {"degree": 2, "gamma": 1e-6, "coef0": 1.0})]
    lazy = mklopt.KernelSet.from_data(X, specs, lazy=True)
    dense = mklopt.KernelSet.from_data(X, specs)
    np.testing.assert_allclose(lazy.dense().K, dense.K, rtol=1e-12)
    coef = np.random.default_rng(0).standard_normal(50)
    np.testing.assert_allclose(lazy.products(coef)[1], np.einsum("mij,j->mi", dense.K, coef),
                               rtol=1e-10)


def test_a_kernel_beyond_its_rounding_bound_is_screened_dense_and_refused_on_the_fly():
    # two tight clusters far apart: centring cannot help the narrow RBF inside each cluster
    rng = np.random.default_rng(2)
    X = np.vstack([rng.standard_normal((30, 2)) * 1e-2 + 1e4, rng.standard_normal((30, 2)) * 1e-2 - 1e4])
    spec = [("rbf", {"gamma": 1e4})]
    assert not trusted_by_construction("rbf", {"gamma": 1e4}, X)
    with pytest.raises(NotPSDError, match="smallest eigenvalue"):  # screened like user data
        mklopt.KernelSet.from_data(X, spec)
    with pytest.raises(KernelError, match="on the fly to the certificate's precision"):
        mklopt.KernelSet.from_data(X, spec, lazy=True)


def test_rounding_bounds_are_stated_and_scale_invariant_for_shift_invariant_kernels():
    X = np.random.default_rng(0).standard_normal((100, 3))
    error, lower = rounding_bound("rbf", {"gamma": 1.0}, X)
    shifted_error, _ = rounding_bound("rbf", {"gamma": 1.0}, X + 1e6)
    assert lower == 1.0 and error <= SLACK and np.isclose(error, shifted_error, rtol=1e-6)
    assert rounding_bound("sigmoid", {}, X) is None  # no bound: screened
    error, lower = rounding_bound("linear", {}, X)
    trace = float(np.sum(X * X))
    assert np.isclose(lower, max(np.max(np.sum(X * X, axis=1)), trace / 3))
    assert 0 < error <= SLACK * lower
