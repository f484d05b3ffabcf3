"""The training stack's RBF kernels in one compiled pass (mklopt._compiled.rbf_stack, training_stack)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics.pairwise import euclidean_distances, rbf_kernel

import mklopt
from mklopt._compiled.rbf_stack import TILE, tile_pairs
from mklopt.kernels._rows import training_kernels


def rbf_training_kernels(X, gammas, slots, out):
    """The RBF kernels alone of the training pass."""
    return training_kernels(X, X - X.mean(axis=0), gammas, slots, np.empty((0, 3)), np.empty(0, dtype=np.int64), out)


@pytest.mark.parametrize("n", [1, 2, TILE - 1, TILE, TILE + 1, 2 * TILE + 3, 300])
def test_the_tiles_cover_the_upper_triangle_once(n):
    covered = np.zeros((n, n), dtype=int)
    for top, left in tile_pairs(n):
        assert top <= left
        covered[top:top + TILE, left:left + TILE] += 1
    assert np.array_equal(covered, np.triu(np.ones((n, n), dtype=int)) + np.tril(covered, -1))
    assert covered.max() == 1


@pytest.mark.parametrize("n", [1, 2, TILE - 1, TILE + 1, 2 * TILE + 3, 300])
def test_every_rbf_kernel_is_scikit_learns_exactly_symmetric_with_unit_diagonal(n):
    """Against scikit-learn's rbf_kernel (data far from the origin: the centring matters),
    with other kernels in the slots between (left as they were)."""
    X = np.random.default_rng(n).standard_normal((n, 5)) * 2.0 + 40.0
    gammas = np.array([0.01, 0.3, 3.0])
    slots = np.array([1, 3, 4])
    out = np.full((5, n, n), 7.0)
    rbf_training_kernels(X - X.mean(axis=0), gammas, slots, out)
    for gamma, slot in zip(gammas, slots):
        K = out[slot]
        assert np.array_equal(K, K.T)
        assert np.all(np.diag(K) == 1.0)
        np.testing.assert_allclose(K, rbf_kernel(X - X.mean(axis=0), gamma=gamma), rtol=1e-12, atol=1e-15)
    assert np.all(out[[0, 2]] == 7.0)


def test_the_distances_are_scikit_learns_upper_triangle():
    """gamma so small that exp is linear: K = 1 - gamma D to within gamma^2 D^2."""
    X = np.random.default_rng(3).standard_normal((150, 4))
    out = np.empty((1, 150, 150))
    gamma = 1e-9
    rbf_training_kernels(X, np.array([gamma]), np.array([0]), out)
    D = euclidean_distances(X, squared=True)
    np.testing.assert_allclose((1.0 - out[0]) / gamma, D, rtol=1e-6, atol=1e-6)


def test_a_kernel_set_built_from_specs_uses_them():
    """The default kernels of a fit: the RBF ones exactly symmetric with unit diagonal before
    normalization, and equal to scikit-learn's kernel of the centred data."""
    X = np.random.default_rng(5).standard_normal((220, 8))
    specs = ["linear", ("rbf", {"gamma": 0.05}), ("poly", {"degree": 2}), ("rbf", {"gamma": 0.5})]
    stack = mklopt.kernel_stack(X, specs)
    for m, gamma in ((1, 0.05), (3, 0.5)):
        assert np.array_equal(stack[m], stack[m].T) and np.all(np.diag(stack[m]) == 1.0)
        np.testing.assert_allclose(stack[m], rbf_kernel(X, gamma=gamma), rtol=1e-12, atol=1e-15)
    test = mklopt.kernel_stack(X[:30], specs, X)  # test rows: the distances' path
    np.testing.assert_allclose(test[[1, 3]], stack[[1, 3], :30], rtol=1e-12, atol=1e-15)
