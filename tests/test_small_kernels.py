"""The compiled passes over many small kernels: the validation scan and the exact PSD test.

References: the per-kernel Python scan (``visit_kernel``) it replaces, NumPy's eigenvalues,
and the KernelSet behaviour the exact test serves (reject, clip, accept).
"""

from __future__ import annotations

import numpy as np
import pytest

import mklopt
from mklopt.exceptions import KernelError, MKLWarning, NotPSDError
from mklopt.kernels._psd import NOISE_FACTOR
from mklopt.kernels._small_screens import CHUNK, cholesky_screen, scan_small
from mklopt.kernels._scan import visit_kernel
from mklopt.kernels._stack import sketch_vectors

EPS = np.finfo(float).eps


def _rbf(X, gamma):
    sq = ((X[:, None] - X[None]) ** 2).sum(-1)
    return np.exp(-gamma * sq)


def _kernels(n=30, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    linear = X @ X.T  # rank 3: eigenvalues at rounding level below zero
    H = np.eye(n) - 1.0 / n
    centred = H @ _rbf(X, 0.5) @ H  # maps the ones vector to zero
    noisy = _rbf(X, 1.0)
    noisy[0, 1] += 1e-15  # asymmetric at rounding level
    A = rng.standard_normal((n, n))
    indefinite = A + A.T  # negative entries and eigenvalues
    return np.stack([_rbf(X, 0.1), linear, centred, noisy, indefinite])


def test_compiled_scan_matches_the_per_kernel_visit():
    K = _kernels()
    W = sketch_vectors(K.shape[1])
    hi, lo, finite, asymmetry, sketch = scan_small(K, W)
    for m in range(K.shape[0]):
        visit = visit_kernel(K[m], True, W, None)
        assert finite[m]
        assert hi[m] == visit.hi and lo[m] == visit.lo
        assert asymmetry[m] == visit.asymmetry
        np.testing.assert_allclose(sketch[m], W.T @ K[m] @ W, rtol=1e-12, atol=1e-12 * np.abs(K[m]).max())
    assert asymmetry[3] > 0 and asymmetry[0] == 0


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_compiled_scan_flags_non_finite_entries_and_the_set_names_the_kernel(bad):
    K = np.stack([np.eye(12)] * 40)  # more than one chunk
    K[CHUNK + 3, 4, 7] = bad
    finite = scan_small(K, sketch_vectors(12))[2]
    assert list(np.flatnonzero(~finite)) == [CHUNK + 3]
    with pytest.raises(KernelError, match=rf"\[{CHUNK + 3}\].*NaN or infinite"):
        mklopt.KernelSet(K)


def test_exact_test_clears_psd_kernels_with_rounding_noise_and_flags_negative_ones():
    K = _kernels()[:4]
    n = K.shape[1]
    tops = np.linalg.eigvalsh(K)[:, -1]
    negative = K[0] - 1e-6 * tops[0] * np.eye(n)  # lambda_min = -1e-6 lambda_max: far above noise
    stack = np.concatenate([K, negative[None]])
    cleared, levels = cholesky_screen(stack, np.abs(stack).max(axis=(1, 2)), NOISE_FACTOR * EPS * n)
    assert cleared.tolist() == [True, True, True, True, False]
    exact = NOISE_FACTOR * EPS * n * np.append(tops, tops[0])
    # the power estimate never exceeds lambda_max and is near it (the centred kernel included)
    assert np.all(levels <= exact * (1 + 1e-12)) and np.all(levels >= 0.5 * exact)


def test_many_small_kernels_one_indefinite_is_named_one_noisy_is_clipped():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((25, 2))
    K = np.stack([_rbf(X, g) for g in np.geomspace(0.05, 5, 3 * CHUNK)])
    vals, vecs = np.linalg.eigh(K[70])
    vals[0] = -1e-3 * vals[-1]  # well beyond psd_tol: rejected
    K[70] = (vecs * vals) @ vecs.T
    K[70] = (K[70] + K[70].T) / 2
    names = [f"k{m}" for m in range(K.shape[0])]
    before = K.copy()
    with pytest.raises(NotPSDError, match="kernel 'k70' is not positive semidefinite"):
        mklopt.KernelSet(K, names=names)
    np.testing.assert_array_equal(K, before)  # the input is not changed
    vals[0] = -1e-9 * vals[-1]  # above the noise level, below psd_tol: clipped, with a warning
    K[70] = (vecs * vals) @ vecs.T
    K[70] = (K[70] + K[70].T) / 2
    with pytest.warns(MKLWarning, match="'k70'"):
        ks = mklopt.KernelSet(K, names=names)
    assert list(ks.clipped) == ["k70"] and ks.validated_by == "cholesky"
    assert np.linalg.eigvalsh(ks.K[70])[0] >= -NOISE_FACTOR * EPS * 25 * vals[-1]
