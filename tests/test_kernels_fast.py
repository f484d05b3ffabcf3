"""Issue 12/11: a valid stack is used in place; cheap PSD screen; kernel inputs users pass."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.metrics.pairwise import euclidean_distances, rbf_kernel

import mklopt
from mklopt.exceptions import KernelError, MKLWarning, NotPSDError
from mklopt.kernels.feature_variance import feature_variances
from mklopt.kernels import quadratic_terms
from mklopt.kernels._psd import lanczos_extremes, lanczos_screen
from mklopt.kernels._rows import squared_distances
from mklopt.kernels._scan import max_asymmetry, scan_stack
from mklopt.kernels import _stack
from mklopt.kernels._stack import OwnedStack, sketch_vectors, symmetrize_matrix
from mklopt._compiled.products import SPARSE_WEIGHTS, combine


def rbf_stack(n: int = 300, M: int = 3) -> np.ndarray:
    X, _ = load_digits(return_X_y=True)
    X = X[:n] / 16.0
    return np.stack([rbf_kernel(X, gamma=g) for g in np.logspace(-2, 0, M)])


def with_eigenvalue(K: np.ndarray, value: float) -> np.ndarray:
    """``K`` with its smallest eigenvalue replaced by ``value`` (exactly symmetric)."""
    vals, vecs = np.linalg.eigh(K)
    vals[0] = value
    out = (vecs * vals) @ vecs.T
    return 0.5 * (out + out.T)


@pytest.fixture(scope="module")
def stack() -> np.ndarray:
    return rbf_stack()


# ------------------------------------------------------------------ no copies
def test_valid_float64_stack_is_used_in_place(stack):
    before = stack.copy()
    ks = mklopt.KernelSet(stack)
    assert np.shares_memory(ks.K, stack)
    assert not ks.K.flags.writeable
    assert stack.flags.writeable  # the user's array keeps its flags
    np.testing.assert_array_equal(stack, before)


def test_single_kernel_is_used_in_place(stack):
    K = np.ascontiguousarray(stack[0])
    assert np.shares_memory(mklopt.KernelSet(K).K, K)


@pytest.mark.parametrize("convert", [lambda s: s.astype(np.float32), lambda s: np.asfortranarray(s),
                                     lambda s: list(s)], ids=["float32", "fortran", "list"])
def test_other_inputs_are_copied_once_into_float64(stack, convert):
    given = convert(stack)
    ks = mklopt.KernelSet(given)
    assert ks.K.dtype == np.float64 and ks.K.flags.c_contiguous
    np.testing.assert_allclose(ks.K, stack, rtol=1e-6)


def test_slightly_asymmetric_kernel_is_symmetrized_in_a_copy(stack):
    noisy = stack.copy()
    noisy[0, 0, 1] += 1e-12
    before = noisy.copy()
    ks = mklopt.KernelSet(noisy)
    assert not np.shares_memory(ks.K, noisy)
    np.testing.assert_array_equal(ks.K[0], ks.K[0].T)
    np.testing.assert_array_equal(ks.K[1:], stack[1:])
    np.testing.assert_array_equal(noisy, before)


def test_rounding_noise_asymmetry_is_used_in_place(stack):
    """1 ulp of max|K| (as GEMM-built pairwise kernels have at n = 2000): no copy of the
    user's stack, screened like a symmetric one; a stack mklopt owns is symmetrized."""
    noisy = stack.copy()
    noisy[1, 2, 7] = np.nextafter(noisy[1, 7, 2], np.inf)
    assert noisy[1, 2, 7] != noisy[1, 7, 2]
    ks = mklopt.KernelSet(noisy)
    assert np.shares_memory(ks.K, noisy)
    scan = scan_stack(noisy, ["a", "b", "c"], True, 1e-8, lanczos_screen)
    assert scan.asymmetric == [] and scan.noise_asymmetric == [1] and sorted(scan.screened) == [0, 1, 2]
    owned = mklopt.KernelSet(list(noisy))  # a list: converted into mklopt's own stack
    np.testing.assert_array_equal(owned.K[1], owned.K[1].T)
    far = stack.copy()
    far[1, 2, 7] += 1e3 * np.finfo(float).eps * np.abs(stack[1]).max()  # beyond rounding noise
    assert not np.shares_memory(mklopt.KernelSet(far).K, far)


def test_normalization_makes_one_new_stack(stack):
    ks = mklopt.KernelSet(stack)
    for method in ("trace", "spherical"):
        out = ks.normalized(method)
        assert not np.shares_memory(out.K, stack) and not out.K.flags.writeable


def test_blockwise_asymmetry_matches_the_dense_one():
    rng = np.random.default_rng(0)
    K = rng.standard_normal((600, 600))
    assert max_asymmetry(K, tile=256) == pytest.approx(np.max(np.abs(K - K.T)), rel=0)


@pytest.mark.parametrize("n", [1, 63, 64, 65, 255, 256, 600])
def test_tiled_symmetrization_is_the_mean_with_the_transpose(n):
    A = np.random.default_rng(n).standard_normal((n, n))
    expected = (A + A.T) * 0.5
    symmetrize_matrix(A)
    assert np.array_equal(A, expected)


def test_training_rbf_kernels_are_exactly_symmetric_and_need_no_symmetrizing():
    X, _ = load_digits(return_X_y=True)
    X = X[:700] / 16.0 + 50.0  # far from the origin: built on the centred data, as rbf_kernel there
    specs = [("rbf", {"gamma": g}) for g in (0.01, 0.1, 1.0)]
    stack = mklopt.kernel_stack(X, specs)
    assert all(np.array_equal(K, K.T) for K in stack)
    scan = scan_stack(stack, ["a", "b", "c"], True, 1e-8)
    assert scan.asymmetric == scan.noise_asymmetric == []
    np.testing.assert_allclose(stack, [rbf_kernel(X - X.mean(0), gamma=g) for g in (0.01, 0.1, 1.0)],
                               rtol=1e-12, atol=1e-15)


def test_training_rbf_kernels_are_numpys_exp_of_the_symmetrized_distances():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((150, 4)) + 20.0
    specs = [("rbf", {"gamma": g}) for g in (0.05, 0.3)]
    stack = mklopt.kernel_stack(X, specs)
    Xc = X - X.mean(0)
    D = euclidean_distances(Xc, Xc, squared=True)
    D = (D + D.T) * 0.5
    for K, (_, params) in zip(stack, specs):
        # the distances come by row blocks, whose GEMM may round otherwise than the whole
        # matrix's (OpenBLAS picks kernels by shape): equal to that rounding, d eps |x|^2
        bound = params["gamma"] * _gemm_rounding(Xc)
        np.testing.assert_allclose(K, np.exp(D * -params["gamma"]), rtol=0, atol=bound)
        assert np.array_equal(K, K.T)


@pytest.mark.parametrize("spec", ["rbf", ("rbf", {}), ("rbf", {"gamma": None})])
def test_rbf_kernels_of_scikit_learns_default_gamma_share_the_distances(spec):
    X, _ = load_digits(return_X_y=True)
    X = X[:300] / 16.0 + 50.0
    K = mklopt.kernel_stack(X, [spec, ("rbf", {"gamma": 1.0 / X.shape[1]})])
    assert np.array_equal(K[0], K[1])  # the same shared distances, the same gamma
    assert np.array_equal(K[0], K[0].T) and np.all(np.diag(K[0]) == 1.0)
    np.testing.assert_allclose(K[0], rbf_kernel(X - X.mean(0)), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("n", [10, 150, 301])
def test_squared_distances_by_row_blocks_are_scikit_learns(monkeypatch, n):
    monkeypatch.setattr(os, "cpu_count", lambda: 4)  # up to 4 blocks on any machine
    rng = np.random.default_rng(n)
    X, Y = rng.standard_normal((n, 5)) + 30.0, rng.standard_normal((7, 5)) + 30.0
    D = squared_distances(X, X)
    # each row block's GEMM may round otherwise than the whole matrix's (OpenBLAS picks its
    # kernels by shape): equal to that rounding, d eps max |x|^2
    bound = _gemm_rounding(np.vstack([X, Y]))
    np.testing.assert_allclose(D, euclidean_distances(X, X, squared=True), rtol=0, atol=bound)
    assert np.all(np.diag(D) == 0.0) and D.min() >= 0.0
    np.testing.assert_allclose(squared_distances(X, Y), euclidean_distances(X, Y, squared=True), rtol=0,
                               atol=bound)


def _gemm_rounding(X: np.ndarray) -> float:
    """A bound on the rounding of :math:`\\|x\\|^2 + \\|y\\|^2 - 2\\langle x, y\\rangle` in double precision."""
    return 8.0 * X.shape[1] * np.finfo(float).eps * float(np.einsum("ij,ij->i", X, X).max())


def test_a_build_runs_its_blas_product_by_row_blocks_each_on_one_blas_thread(monkeypatch, all_cores):
    """No BLAS thread is left spinning by a build: the fit's own threads come next. The linear
    kernel's Gram matrix and the RBF kernels' (of the centred points), their upper triangles,
    are each made in 4 row blocks, each on one BLAS thread, and the kernels in one pass over
    their tiles."""
    from threadpoolctl import threadpool_info

    from mklopt.kernels import _rows

    monkeypatch.setattr(os, "cpu_count", lambda: 4)  # more cores than kernels
    monkeypatch.setattr(_stack, "SMALL_BUILD_ENTRIES", 0)  # a build that takes the threads
    calls, map_kernels = [], _rows.map_kernels

    def spied(work, M):
        items = []

        def item(b):
            items.append({lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"})
            return work(b)

        calls.append(items)
        return map_kernels(item, M)

    monkeypatch.setattr(_rows, "map_kernels", spied)
    X = np.random.default_rng(0).standard_normal((300, 6))
    stack = mklopt.kernel_stack(X, ["linear", ("rbf", {"gamma": 0.1})])
    assert [len(items) for items in calls] == [4, 4, 4]  # the two Gram matrices' row blocks, the tiles' parts
    assert all(threads <= {1} for items in calls for threads in items)
    np.testing.assert_allclose(stack[0], X @ X.T, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(stack[1], rbf_kernel(X, gamma=0.1), rtol=1e-13, atol=1e-15)


OFFSET_SPECS = ["linear", ("poly", {"degree": 2, "gamma": 0.05, "coef0": 1.0}),
                ("rbf", {"gamma": 0.02}), ("rbf", {"gamma": 0.2})]


@pytest.mark.parametrize("n", [120, 400])  # the compiled scan of small kernels, the per-kernel one
@pytest.mark.parametrize("normalization", [None, "trace", "multiplicative"])
@pytest.mark.parametrize("threads", [False, True])  # small builds on the calling thread, or the pool's
def test_kernels_checked_on_their_threads_are_the_validated_then_normalized_set(n, normalization, threads,
                                                                                monkeypatch):
    if threads:
        monkeypatch.setattr(_stack, "SMALL_BUILD_ENTRIES", 0)
    X, _ = load_digits(return_X_y=True)
    X = X[:n] / 16.0 + 3.0
    built = mklopt.KernelSet.from_data(X, OFFSET_SPECS, normalization=normalization)
    after = mklopt.KernelSet(OwnedStack(mklopt.kernel_stack(X, OFFSET_SPECS), True))
    if normalization == "multiplicative":  # linear and polynomial: the variance from centred data
        exact = feature_variances(X, OFFSET_SPECS)
        after = after._divided(np.where(np.isfinite(exact), exact, after._divisors("multiplicative", None)))
    elif normalization is not None:
        after = after.normalized(normalization)
    assert np.array_equal(built.K, after.K)
    assert np.array_equal(built.scales, after.scales)
    np.testing.assert_allclose(built.sketch(), after.sketch(), rtol=1e-13)
    assert built.validated_by == after.validated_by == "construction"


def test_a_small_build_runs_on_the_calling_thread_and_builds_what_the_threads_build(monkeypatch, all_cores):
    """Below SMALL_BUILD_ENTRIES a build hands nothing to the kept threads (handing off costs
    more than it saves there); the stack is the threads' one up to the rounding of the Gram
    matrices' row blocks (OpenBLAS picks its kernels by shape)."""
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    tasks, real = [], _stack.on_kept_threads

    def spied(name, work, items, threads):
        tasks.append(name)
        return real(name, work, items, threads)

    monkeypatch.setattr(_stack, "on_kept_threads", spied)
    X, _ = load_digits(return_X_y=True)
    X = X[:200] / 16.0 + 3.0
    assert len(OFFSET_SPECS) * X.shape[0] ** 2 < _stack.SMALL_BUILD_ENTRIES
    small = mklopt.KernelSet.from_data(X, OFFSET_SPECS)
    assert tasks == []
    monkeypatch.setattr(_stack, "SMALL_BUILD_ENTRIES", 0)
    threaded = mklopt.KernelSet.from_data(X, OFFSET_SPECS)
    assert tasks and set(tasks) == {"kernels"}
    np.testing.assert_allclose(small.K, threaded.K, rtol=1e-13, atol=1e-15)
    assert all(np.array_equal(K, K.T) for K in small.K)
    np.testing.assert_allclose(small.sketch(), threaded.sketch(), rtol=1e-12)


def test_kernels_checked_on_their_threads_fail_as_the_validated_ones():
    with pytest.raises(KernelError, match="all zero"):
        mklopt.KernelSet.from_data(np.zeros((30, 3)), ["linear"], normalization="multiplicative")
    same = np.ones((30, 3))  # every point the same: a constant RBF kernel has no variance
    with pytest.raises(KernelError, match="cannot normalize by feature-space variance: it is not positive"):
        mklopt.KernelSet.from_data(same, [("rbf", {"gamma": 1.0})], normalization="multiplicative")


# ------------------------------------------------------------------ PSD screen
def test_lanczos_bounds_the_spectrum(stack):
    lo, hi = lanczos_extremes(stack[1])
    vals = np.linalg.eigvalsh(stack[1])
    assert vals[0] - 1e-12 <= lo and hi <= vals[-1] * (1 + 1e-12)
    assert hi == pytest.approx(vals[-1], rel=1e-8)


def test_scan_screens_every_exactly_symmetric_kernel_on_its_one_read(stack):
    """The validation scan hands each kernel's product with the start vector to the screen."""
    names = ["a", "b", "c"]
    scan = scan_stack(stack, names, True, 1e-8, lanczos_screen)
    assert sorted(scan.screened) == [0, 1, 2]
    for m in range(3):  # same Ritz values as a screen that computes K v itself
        np.testing.assert_allclose(scan.screened[m], lanczos_extremes(stack[m]), rtol=1e-10)
    noisy = stack.copy()
    noisy[2, 0, 1] += 1e-12
    scan = scan_stack(noisy, names, True, 1e-8, lanczos_screen)
    assert scan.asymmetric == [2] and sorted(scan.screened) == [0, 1]  # screened after symmetrizing
    W = sketch_vectors(stack.shape[1])  # the fingerprint sketch comes from the same read
    np.testing.assert_allclose(scan.sketch[0], W.T @ stack[0] @ W, rtol=1e-12)


def test_a_symmetrized_set_keeps_the_sketch_of_its_one_read(stack):
    """Kernels symmetrized during validation (here an asymmetry of 1e-12, as a kernel function's
    rounding leaves) have the sketch W'KW of the stored, symmetric kernels without a second read."""
    noisy = stack.copy()
    noisy[1, 0, 1] += 1e-12
    noisy[2, 5, 3] -= 1e-12
    ks = mklopt.KernelSet(noisy)
    assert ks._sketch is not None  # taken by the validation scan
    W = sketch_vectors(ks.n)
    for m in range(ks.M):
        np.testing.assert_allclose(ks.sketch()[m], W.T @ ks.K[m] @ W, rtol=1e-12)


@pytest.mark.parametrize("check", ["lanczos", "full"])
def test_screen_catches_a_small_negative_eigenvalue(stack, check):
    K = stack[0]
    top = np.linalg.eigvalsh(K)[-1]
    with pytest.raises(NotPSDError, match="not positive semidefinite"):
        mklopt.KernelSet(with_eigenvalue(K, -1e-3 * top), psd_check=check)


def test_full_check_matches_the_screen(stack):
    K = stack[2]
    top = np.linalg.eigvalsh(K)[-1]
    clipped = with_eigenvalue(K, -5e-9 * top)
    results = {}
    for check in ("lanczos", "full"):
        assert np.shares_memory(mklopt.KernelSet(stack, psd_check=check).K, stack)
        with pytest.raises(NotPSDError):
            mklopt.KernelSet(with_eigenvalue(K, -0.1 * top), psd_check=check)
        with pytest.warns(MKLWarning, match="clipped"):
            results[check] = mklopt.KernelSet(clipped, psd_check=check)
    np.testing.assert_allclose(results["lanczos"].K, results["full"].K, rtol=0, atol=1e-12 * top)


def test_unknown_psd_check(stack):
    with pytest.raises(KernelError, match="psd_check"):
        mklopt.KernelSet(stack, psd_check="cholesky")


def test_float32_low_rank_psd_kernel_is_checked_in_float64():
    # issue 56: float32 rounding makes a low-rank kernel indefinite at double precision (here
    # -1.5e-8 of the largest eigenvalue): refused by default with the way out, clipped on request
    G = np.random.default_rng(0).standard_normal((400, 5))
    K = (G @ G.T).astype(np.float32)
    for n in (200, 400):  # rounding just above / below psd_tol: refused with the way out, or clipped
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            try:
                mklopt.KernelSet(K[:n, :n])
            except NotPSDError as exc:
                assert "given as float32" in str(exc) and "psd_tol" in str(exc)
            else:
                assert any("clipped" in str(w.message) for w in seen)
    with pytest.warns(mklopt.exceptions.MKLWarning, match="clipped"):
        ks = mklopt.KernelSet(K, psd_tol=1e-6)
    np.testing.assert_allclose(ks.K[0], K, rtol=0, atol=1e-5 * np.abs(K).max())


# ---------------------------------------------------------------- bad inputs
def test_complex_kernels_are_rejected(stack):
    with pytest.raises(KernelError, match="complex"):
        mklopt.KernelSet(stack[0] + 1j * 1e-3)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_entries_are_rejected_without_copy(stack, bad):
    broken = stack.copy()
    broken[1, 3, 4] = bad
    with pytest.raises(KernelError, match="NaN or infinite"):
        mklopt.KernelSet(broken)


def test_asymmetric_kernel_is_rejected(stack):
    broken = stack.copy()
    broken[0, 0, 5] += 0.1
    with pytest.raises(KernelError, match="not symmetric"):
        mklopt.KernelSet(broken)


@pytest.mark.parametrize("bad", ["abc", [["a", "b"], ["c", "d"]], None, {"K": 1}])
def test_non_numeric_kernels_are_rejected(bad):
    with pytest.raises(KernelError, match="numeric"):
        mklopt.KernelSet(bad)


def test_huge_kernels_are_rejected_before_any_solver(stack):
    with pytest.raises(KernelError, match="rescale"):
        mklopt.KernelSet(stack * 1e150)


def test_dataframes_are_accepted(stack):
    pd = pytest.importorskip("pandas")
    frames = [pd.DataFrame(K) for K in stack]
    np.testing.assert_array_equal(mklopt.KernelSet(frames[0]).K[0], stack[0])
    np.testing.assert_array_equal(mklopt.KernelSet(frames).K, stack)


# ------------------------------------------------------------ combined kernel
@pytest.mark.parametrize("used", [1, 2, 3])
def test_combined_kernel_reads_only_the_kernels_in_use(stack, used):
    """Sparse weights (at most SPARSE_WEIGHTS * M non-zero) take the compiled sum of the
    kernels in use; same K_mu."""
    weights = np.zeros(3)
    weights[:used] = [0.7, 0.2, 0.1][:used]
    before = stack.copy()
    out = np.empty(stack.shape[1:])
    got = combine(stack, weights, out=out)
    assert got is out
    np.testing.assert_allclose(got, np.tensordot(weights, stack, axes=1), rtol=1e-14, atol=1e-15)
    np.testing.assert_array_equal(stack, before)
    assert (used <= SPARSE_WEIGHTS * 3) == (used == 1)  # both paths are exercised


def test_combined_kernel_of_a_few_kernels_is_summed_block_by_block():
    """The compiled sum of the kernels in use: several kernels, a last block that is partial."""
    rng = np.random.default_rng(4)
    stack = rng.standard_normal((8, 70, 70))  # 4,900 entries: blocks of 2,048, 2,048 and 804
    weights = np.zeros(8)
    weights[[1, 4, 6]] = [0.5, 1.5, -0.25]
    expected = 0.5 * stack[1] + 1.5 * stack[4] - 0.25 * stack[6]
    np.testing.assert_allclose(combine(stack, weights), expected, rtol=1e-14, atol=1e-14)


def test_combined_kernel_of_a_few_large_kernels_is_summed_on_all_threads(monkeypatch):
    from mklopt._compiled import products

    monkeypatch.setattr(products, "PARALLEL_SUM", 4000)  # the threaded sum, on a small stack
    rng = np.random.default_rng(5)
    stack = rng.standard_normal((6, 90, 90))
    weights = np.zeros(6)
    weights[[0, 5]] = [2.0, 0.125]
    np.testing.assert_allclose(combine(stack, weights), 2.0 * stack[0] + 0.125 * stack[5],
                               rtol=1e-14, atol=1e-14)


def test_combined_kernel_of_zero_weights_is_zero(stack):
    np.testing.assert_array_equal(combine(stack, np.zeros(3)), np.zeros(stack.shape[1:]))


# ------------------------------------------------------------ quadratic terms
@pytest.mark.parametrize("support", [0.05, 0.5, 1.0])
def test_quadratic_terms_match_dense_products(stack, support):
    rng = np.random.default_rng(1)
    coef = rng.standard_normal(stack.shape[1]) * (rng.random(stack.shape[1]) < support)
    s, Kc = quadratic_terms(stack, coef)
    np.testing.assert_allclose(Kc, np.einsum("mij,j->mi", stack, coef), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(s, np.einsum("i,mij,j->m", coef, stack, coef), rtol=1e-10)


@pytest.mark.parametrize("spec", ["linear", ("poly", {"degree": 2, "gamma": 0.05, "coef0": 1.0}), ("poly", {}),
                                  ("polynomial", {"degree": 3, "coef0": 0.5})])
def test_product_kernels_written_in_place_are_scikit_learns_bit_for_bit(spec):
    """Linear and polynomial kernels go straight into the stack (no (n, n) result and copy):
    the values of ``pairwise_kernels`` bit for bit, training and test; features with a NaN
    are refused before any kernel is made (an RBF spec's distances raised scikit-learn's own
    ValueError), features a callable alone reads are its own business."""
    from sklearn.metrics.pairwise import pairwise_kernels

    from mklopt.exceptions import KernelError

    X, _ = load_digits(return_X_y=True)
    X, T = X[:500] / 16.0 + 3.0, X[500:620] / 16.0
    metric, params = (spec, {}) if isinstance(spec, str) else spec
    specs = [spec, ("rbf", {"gamma": 0.1})]  # two kernels: each built whole on its thread
    np.testing.assert_array_equal(mklopt.kernel_stack(X, specs)[0], pairwise_kernels(X, X, metric=metric, **params))
    np.testing.assert_array_equal(mklopt.kernel_stack(T, specs, X)[0], pairwise_kernels(T, X, metric=metric, **params))
    T[3, 4] = np.nan
    for stack_of in (lambda: mklopt.kernel_stack(T, specs, X), lambda: mklopt.kernel_stack(X, ["rbf"], T),
                     lambda: mklopt.kernel_stack(T, [("rbf", {"gamma": 0.1})])):
        with pytest.raises(KernelError, match="NaN or infinite"):
            stack_of()
    imputing = mklopt.kernel_stack(T, [lambda A, B: np.nan_to_num(A) @ np.nan_to_num(B).T], X)  # its business
    np.testing.assert_allclose(imputing[0], np.nan_to_num(T) @ X.T)
