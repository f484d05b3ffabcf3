"""The training stack's linear and polynomial kernels from one Gram matrix (mklopt._compiled.product_stack)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel

import mklopt
from mklopt._compiled.product_stack import LINEAR
from mklopt._compiled.rbf_stack import TILE
from mklopt.kernels._named import product_form
from mklopt.kernels._rows import training_kernels


def product_training_kernels(X, gammas, coef0s, degrees, slots, out):
    """The linear and polynomial kernels alone of the training pass."""
    return training_kernels(X, X - X.mean(axis=0), np.empty(0), np.empty(0, dtype=np.int64),
                            np.column_stack([gammas, coef0s, degrees]), slots, out)
from mklopt.kernels.construct import symmetric_by_construction

#: (gamma, coef0, degree) against scikit-learn's kernel of X.
FORMS = [((1.0, 0.0, LINEAR), linear_kernel),
         ((0.02, 1.0, 3), lambda X: polynomial_kernel(X, degree=3, gamma=0.02, coef0=1.0)),
         ((0.1, 0.5, 2), lambda X: polynomial_kernel(X, degree=2, gamma=0.1, coef0=0.5)),
         ((2.0, 0.0, 1), lambda X: polynomial_kernel(X, degree=1, gamma=2.0, coef0=0.0)),
         ((0.01, 2.0, 5), lambda X: polynomial_kernel(X, degree=5, gamma=0.01, coef0=2.0))]


@pytest.mark.parametrize("n", [1, 2, TILE - 1, TILE, TILE + 1, 2 * TILE + 3, 300])
@pytest.mark.parametrize("first", [0, 1], ids=["gram-in-linear-slot", "gram-in-poly-slot"])
def test_every_kernel_is_scikit_learns_and_exactly_symmetric(n, first):
    """Each kernel equals scikit-learn's to rounding and its transpose bit for bit, whichever
    kernel's slot holds the Gram matrix; the other slots are left as they were."""
    X = np.random.default_rng(n).standard_normal((n, 6)) * 2.0 + 3.0
    forms = FORMS[first:]
    slots = np.arange(len(forms)) * 2 + 1
    out = np.full((2 * len(forms) + 1, n, n), 7.0)
    gammas, coef0s, degrees = np.array([form for form, _ in forms]).T
    product_training_kernels(X, gammas, coef0s, degrees, slots, out)
    for (_, reference), slot in zip(forms, slots):
        K, R = out[slot], reference(X)
        assert np.array_equal(K, K.T)
        np.testing.assert_allclose(K, R, rtol=1e-12, atol=1e-13 * np.abs(R).max())
    assert np.all(out[::2] == 7.0)


def test_the_forms_of_the_specs():
    """Linear and polynomial specs with scikit-learn's defaults; anything else (other
    parameters, other kernels, a callable) is not a product form."""
    assert product_form(("linear", {}), 8) == (1.0, 0.0, LINEAR)
    assert product_form(("poly", {}), 8) == (1.0 / 8, 1.0, 3)
    assert product_form(("polynomial", {"degree": 2, "gamma": 3, "coef0": 0}), 8) == (3.0, 0.0, 2)
    assert product_form(("linear", {"gamma": 1.0}), 8) is None
    assert product_form(("poly", {"degree": 2, "dense_output": True}), 8) is None
    assert product_form(("rbf", {}), 8) is None
    assert product_form(None, 8) is None
    assert symmetric_by_construction(["linear", ("poly", {"degree": 2}), "rbf", "sigmoid", np.dot], 8) == \
        [True, True, True, False, False]


def test_a_kernel_set_from_specs_never_compares_them_with_their_transposes(monkeypatch):
    """The default kernels' set (linear, polynomial, RBF) is built symmetric by construction:
    the validation never runs the O(n^2) transposed comparison (it would raise here), and
    the kernels are scikit-learn's."""
    def refused(*args, **kwargs):
        raise AssertionError("a kernel built symmetric was compared with its transpose")

    X = np.random.default_rng(0).standard_normal((400, 9))
    monkeypatch.setattr(scipy.linalg, "issymmetric", refused)
    kernels = mklopt.KernelSet.from_data(X, ["linear", ("poly", {"degree": 2, "gamma": 0.1}), "rbf"],
                                         normalization=None)
    np.testing.assert_allclose(kernels.K[0], linear_kernel(X), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(kernels.K[1], polynomial_kernel(X, degree=2, gamma=0.1), rtol=1e-12)


def test_test_rows_of_the_product_kernels_match_the_training_kernel():
    """Test rows (the path of X against Y) agree with the training stack's rows."""
    X = np.random.default_rng(4).standard_normal((200, 5))
    specs = ["linear", ("poly", {"degree": 3, "coef0": 0.3})]
    train = mklopt.kernel_stack(X, specs)
    rows = mklopt.kernel_stack(X[:40], specs, X)
    np.testing.assert_allclose(rows, train[:, :40], rtol=1e-12, atol=1e-12)
