"""Issue 2 acceptance: clear, early errors for bad input (DESIGN §8), and inputs are never mutated.

Each test asserts mklopt's own exception type *and* a key phrase of the
actionable message.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import mklopt
from mklopt.backends import capable_backends
from mklopt.exceptions import (BackendError, FormulationError, IncapableBackendError,
                               InvalidInputError, KernelError, MKLWarning, NotPSDError, RankError)

N = 8
LABELS = np.array([0, 1] * (N // 2))


def psd_kernel(rank: int = 3, seed: int = 0) -> np.ndarray:
    """A random n x n PSD kernel of the given rank."""
    G = np.random.default_rng(seed).standard_normal((N, rank))
    return G @ G.T


def with_smallest_eigenvalue(K: np.ndarray, value: float) -> np.ndarray:
    """``K`` with its smallest eigenvalue replaced by ``value`` (exactly symmetric)."""
    vals, vecs = np.linalg.eigh(K)
    vals[0] = value
    out = (vecs * vals) @ vecs.T
    return 0.5 * (out + out.T)


# ------------------------------------------------------------------ kernels
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_kernel_entries(bad):
    K = psd_kernel()
    K[2, 3] = K[3, 2] = bad
    with pytest.raises(KernelError, match="NaN or infinite"):
        mklopt.KernelSet([psd_kernel(), K])


def test_non_square_kernel():
    with pytest.raises(KernelError, match="must be square"):
        mklopt.KernelSet(np.ones((2, N, N - 1)))


def test_kernels_of_different_sizes():
    with pytest.raises(KernelError, match="same size"):
        mklopt.KernelSet([psd_kernel(), psd_kernel()[:5, :5]])


def test_kernels_with_wrong_dimensions():
    with pytest.raises(KernelError, match=r"\(M, n, n\)"):
        mklopt.KernelSet(np.ones((2, 2, N, N)))


def test_labels_do_not_match_kernels():
    with pytest.raises(InvalidInputError, match="must match"):
        mklopt.solve(psd_kernel(), LABELS[:-2])


def test_asymmetric_kernel():
    K = psd_kernel()
    K[0, 1] += 0.5
    with pytest.raises(KernelError, match="not symmetric"):
        mklopt.KernelSet(K)


def test_materially_non_psd_kernel():
    K = psd_kernel(rank=N)
    K = with_smallest_eigenvalue(K, -0.1 * np.linalg.eigvalsh(K)[-1])
    with pytest.raises(NotPSDError, match="not positive semidefinite"):
        mklopt.KernelSet(K)


def test_non_psd_kernel_rejected_by_solve():
    K = psd_kernel(rank=N)
    K = with_smallest_eigenvalue(K, -0.1 * np.linalg.eigvalsh(K)[-1])
    with pytest.raises(NotPSDError, match="vkr_lp"):
        mklopt.solve(K, LABELS)


def test_small_negative_eigenvalue_is_clipped_and_reported():
    """Between the Cholesky jitter (1e-8 max diag) and 1e-8 * largest eigenvalue: clipped."""
    K = np.ones((N, N)) + 0.1 * psd_kernel(rank=N) / N  # largest eigenvalue >> diagonal
    top = np.linalg.eigvalsh(K)[-1]
    noisy = with_smallest_eigenvalue(K, -5e-9 * top)
    with pytest.warns(MKLWarning, match="clipped"):
        ks = mklopt.KernelSet(noisy, names=["noisy"])
    assert ks.clipped["noisy"] == pytest.approx(-5e-9 * top, rel=1e-3)
    assert np.linalg.eigvalsh(ks.K[0])[0] >= -1e-14 * top


def test_labels_with_three_classes():
    with pytest.raises(InvalidInputError, match="exactly two classes"):
        mklopt.solve(psd_kernel(), np.arange(N) % 3)


def test_labels_with_one_class():
    with pytest.raises(InvalidInputError, match="exactly two classes"):
        mklopt.solve(psd_kernel(), np.ones(N))


def test_labels_not_finite():
    with pytest.raises(InvalidInputError, match="NaN or infinite"):
        mklopt.solve(psd_kernel(), np.where(LABELS == 0, np.nan, 1.0))


@pytest.mark.parametrize("C", [0.0, -1.0, np.inf, np.nan])
def test_C_not_positive_and_finite(C):
    with pytest.raises(InvalidInputError, match="C must be positive"):
        mklopt.solve(psd_kernel(), LABELS, C=C)


@pytest.mark.parametrize("p", [0.5, 0.0, -2.0, np.nan])
def test_weight_norm_below_one(p):
    with pytest.raises(InvalidInputError, match="p must be >= 1"):
        mklopt.solve(psd_kernel(), LABELS, p=p)


def test_zero_kernel():
    with pytest.raises(KernelError, match="all zero"):
        mklopt.KernelSet([psd_kernel(), np.zeros((N, N))], names=["good", "empty"])


def test_rank_too_small_for_tail_cutoff():
    ks = mklopt.KernelSet([psd_kernel(rank=N), psd_kernel(rank=3)], names=["full", "rank3"])
    with pytest.raises(RankError, match="'rank3' \\(rank 3\\); choose theta smaller"):
        ks.normalized("tail_sum", theta=3)


def test_tail_cutoff_missing():
    with pytest.raises(RankError, match="theta="):
        mklopt.KernelSet(psd_kernel()).normalized("tail_sum")


def test_unknown_normalization():
    with pytest.raises(KernelError, match="unknown normalization"):
        mklopt.KernelSet(psd_kernel()).normalized("frobenius")


# ------------------------------------------------------ backends and formulations
def test_unknown_backend_lists_capable_ones():
    with pytest.raises(BackendError, match="unknown backend") as err:
        mklopt.solve(psd_kernel(), LABELS, "lp_dual", backend="NO_SUCH_SOLVER")
    assert all(name in str(err.value) for name in capable_backends("SOCP"))


@pytest.mark.skipif("HIGHS" not in mklopt.available_backends(), reason="HiGHS not installed")
def test_incapable_backend_lists_capable_ones():
    """HiGHS solves LPs and QPs only; the SOCP formulations must name who can solve them."""
    with pytest.raises(IncapableBackendError, match="cannot solve") as err:
        mklopt.solve(psd_kernel(), LABELS, "lp_dual", backend="HIGHS")
    assert all(name in str(err.value) for name in capable_backends("SOCP"))


def test_unknown_formulation():
    with pytest.raises(FormulationError, match="unknown formulation 'lp_duall'; choose one of"):
        mklopt.solve(psd_kernel(), LABELS, "lp_duall")


def test_formulation_with_unexpected_parameter():
    with pytest.raises(FormulationError, match="unexpected parameters"):
        mklopt.solve(psd_kernel(), LABELS, "lp_dual", gamma=2.0)


def test_certify_rejects_wrong_candidate_shapes():
    with pytest.raises(InvalidInputError, match="weights must have 1 entries"):
        mklopt.certify(psd_kernel(), LABELS, [0.5, 0.5], np.zeros(N))
    with pytest.raises(InvalidInputError, match="alpha must have"):
        mklopt.certify(psd_kernel(), LABELS, [1.0], np.zeros(N + 1))


def test_certify_rejects_non_finite_candidates():
    with pytest.raises(InvalidInputError, match="NaN or infinite"):
        mklopt.certify(psd_kernel(), LABELS, [np.nan], np.zeros(N))


# ------------------------------------------------------------- no input mutation
def inputs():
    """Kernels with every feature validation acts on: asymmetric noise, clipped eigenvalue."""
    K1 = psd_kernel(rank=N, seed=1)
    K1[0, 1] += 1e-12  # asymmetric within tolerance: symmetrized internally
    K2 = np.ones((N, N)) + 0.1 * psd_kernel(rank=N, seed=2) / N
    K2 = with_smallest_eigenvalue(K2, -5e-9 * np.linalg.eigvalsh(K2)[-1])  # gets clipped
    return [K1, K2], LABELS.copy(), np.array([0.7, 0.3]), np.linspace(-1.0, 2.0, N)


def test_solve_and_certify_do_not_mutate_inputs():
    kernels, y, weights, alpha = inputs()
    stack = np.array(kernels)
    before = [a.copy() for a in (*kernels, stack, y, weights, alpha)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MKLWarning)
        mklopt.solve(kernels, y, "lp_dual", p=2.0)
        mklopt.solve(stack, y, "lp_primal", p=2.0)
        mklopt.certify(stack, y, weights, alpha, p=2.0)
    for original, now in zip(before, (*kernels, stack, y, weights, alpha)):
        np.testing.assert_array_equal(now, original)


def test_kernel_set_operations_do_not_mutate_inputs():
    kernels, _, _, _ = inputs()
    stack = np.array(kernels)
    before = stack.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MKLWarning)
        ks = mklopt.KernelSet(stack)
    test_block = stack[:, :3, :].copy()
    test_before = test_block.copy()
    for method in ("trace", "multiplicative", "tail_sum"):
        ks.normalized(method, theta=1).transform_test(test_block)
    ks.normalized("spherical").transform_test(test_block, test_diag=np.ones((2, 3)))
    ks.centered_alignment(LABELS)
    np.testing.assert_array_equal(stack, before)
    np.testing.assert_array_equal(test_block, test_before)


def test_kernel_set_is_read_only():
    ks = mklopt.KernelSet(psd_kernel())
    with pytest.raises(ValueError):
        ks.K[0, 0, 0] = 1.0
