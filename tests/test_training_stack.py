"""Every RBF, linear and polynomial training kernel in one pass over one Gram matrix
(mklopt._compiled.training_stack), with each kernel's extremes kept as it is written."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, rbf_kernel

import mklopt
from mklopt._compiled.product_stack import LINEAR
from mklopt._compiled.rbf_stack import TILE
from mklopt.kernels._rows import training_kernels, upper_gram
from mklopt.kernels._scan import SMALL_N


@pytest.mark.parametrize("n", [1, 2, TILE + 1, 2 * TILE + 3, 300])
@pytest.mark.parametrize("first", ["rbf", "product"], ids=["gram-in-rbf-slot", "gram-in-product-slot"])
def test_rbf_and_product_kernels_of_one_gram_matrix_are_scikit_learns(n, first):
    """Far from the origin (the centring matters): each RBF kernel equals scikit-learn's of the
    centred points to rounding, each linear and polynomial one scikit-learn's bit for bit, each
    its transpose bit for bit; the slots between are left alone, and the extremes returned are
    each kernel's own max and min (NaN elsewhere)."""
    X = np.random.default_rng(n).standard_normal((n, 6)) * 2.0 + 30.0
    gammas, rbf_slots = np.array([0.01, 0.3]), np.array([1, 5])
    forms = np.array([[1.0, 0.0, LINEAR], [0.001, 1.0, 2], [0.0005, 0.5, 3]])
    product_slots = np.array([3, 4, 6])
    if first == "product":
        rbf_slots, product_slots = np.array([4, 6]), np.array([1, 3, 5])
    out = np.full((8, n, n), 7.0)
    Xc = X - X.mean(axis=0)
    extremes = training_kernels(X, Xc, gammas, rbf_slots, forms, product_slots, out)
    references = [rbf_kernel(Xc, gamma=g) for g in gammas] + [linear_kernel(X)] + [
        polynomial_kernel(X, gamma=g, coef0=c, degree=int(d)) for g, c, d in forms[1:]]
    for k, (slot, R) in enumerate(zip([*rbf_slots, *product_slots], references)):
        K = out[slot]
        assert np.array_equal(K, K.T)
        if k < rbf_slots.size:
            np.testing.assert_allclose(K, R, rtol=1e-12, atol=1e-15)
        else:
            np.testing.assert_array_equal(K, R)
        assert extremes[slot, 0] == K.max() and extremes[slot, 1] == K.min()
    for slot in rbf_slots:
        assert np.all(np.diag(out[slot]) == 1.0)
    assert np.all(out[[0, 2, 7]] == 7.0) and np.isnan(extremes[[0, 2, 7]]).all()


def test_an_overflowing_kernel_has_nan_or_infinite_extremes_and_is_refused():
    """A polynomial kernel whose entries overflow: its kept extremes are not finite, and the
    kernel set built from the specs refuses it as the validation scan would."""
    X = np.random.default_rng(0).standard_normal((150, 4)) * 1e30
    out = np.empty((1, 150, 150))
    extremes = training_kernels(X, X, np.empty(0), np.empty(0, dtype=np.int64), np.array([[1.0, 0.0, 9]]),
                                np.array([0]), out)
    assert not np.all(np.isfinite(extremes[0]))
    with pytest.raises(mklopt.exceptions.KernelError):
        mklopt.KernelSet.from_data(X, [("poly", {"degree": 9, "gamma": 1.0, "coef0": 0.0})], normalization=None)


@pytest.mark.parametrize("n", [1, 63, 64, 200, 1000])
def test_the_upper_gram_matrix_is_blas_s_upper_triangle(n):
    """Row blocks of about equal area against the rows from their first on: the upper
    triangle and diagonal of X X^T, to rounding; below it, entries are left as they were or
    are the product's (a block's square on the diagonal)."""
    X = np.random.default_rng(n).standard_normal((n, 7))
    out = np.full((n, n), np.nan)
    upper_gram(X, out)
    upper = np.triu_indices(n)
    np.testing.assert_allclose(out[upper], (X @ X.T)[upper], rtol=1e-13, atol=1e-13)
    below = out[np.tril_indices(n, -1)]
    product = (X @ X.T)[np.tril_indices(n, -1)]
    assert np.all(np.isnan(below) | np.isclose(below, product, rtol=1e-13, atol=1e-13))
    assert n < 200 or np.isnan(below).mean() > 0.25  # much of the lower triangle not computed


def test_a_kernel_set_from_specs_takes_the_kept_extremes(monkeypatch):
    """Each default kernel's visit is handed the extremes the pass kept, which are the kernel's
    own max and min, and the set is the one the kernels make."""
    import mklopt.kernels._build as build

    handed = {}
    visit = build.visit

    def recording(K, W, mirrored=False, extremes=None):
        handed[len(handed)] = (extremes, K.max(), K.min())
        return visit(K, W, mirrored, extremes)

    monkeypatch.setattr(build, "visit", recording)
    X = np.random.default_rng(1).standard_normal((SMALL_N + 50, 5))
    specs = ["linear", ("poly", {"degree": 2}), ("rbf", {"gamma": 0.1}), ("rbf", {"gamma": 1.0})]
    kernels = mklopt.KernelSet.from_data(X, specs, normalization=None)
    assert len(handed) == len(specs)
    for extremes, hi, lo in handed.values():
        assert extremes == (hi, lo)
    np.testing.assert_array_equal(kernels.K, mklopt.kernel_stack(X, specs))
