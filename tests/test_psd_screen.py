"""Issue 22 (defect 8) and issue 23 (item 2): a PSD screen without a blind spot, and
validation that trusts kernels mklopt built from PSD kernel functions.

The audit's kernels: an RBF kernel (n = 150) with its smallest eigenvalue set to
-1e-4 of the largest (accepted at adaf41d: 20 Lanczos steps miss it), and one
with an eigenvalue of -1 % of the largest along a direction orthogonal to the
fixed start vector of adaf41d (accepted: the screen never sees it). The
reference for every verdict is scipy's ``eigvalsh``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.linalg import eigvalsh
from sklearn.metrics.pairwise import rbf_kernel

import mklopt
from mklopt.exceptions import MKLWarning, NotPSDError
from mklopt.kernels._psd import EXACT_MAX_N
from mklopt.kernels._scan import screen_start
from mklopt.kernels.construct import psd_by_construction


def rbf(n: int, seed: int = 0) -> np.ndarray:
    X = np.random.default_rng(seed).standard_normal((n, 2))
    return rbf_kernel(X, gamma=1.0)


def with_smallest_eigenvalue(K: np.ndarray, relative: float) -> np.ndarray:
    vals, vecs = np.linalg.eigh(K)
    vals[0] = relative * vals[-1]
    out = (vecs * vals) @ vecs.T
    return (out + out.T) / 2


def negative_direction_orthogonal_to_the_old_start(K: np.ndarray, relative: float) -> np.ndarray:
    """An eigenvector u with eigenvalue -relative * lambda_max, u orthogonal to adaf41d's
    fixed start vector v: K' = P K P - relative lambda_max u u' with P = I - u u', so every
    Krylov vector K'^k v stays orthogonal to u and a screen from v cannot see it."""
    n = K.shape[0]
    old_start = np.random.default_rng(0).standard_normal(n)
    u = np.random.default_rng(7).standard_normal(n)
    u -= (u @ old_start) / (old_start @ old_start) * old_start
    u /= np.linalg.norm(u)
    P = np.eye(n) - np.outer(u, u)
    out = P @ K @ P - relative * eigvalsh(K)[-1] * np.outer(u, u)
    return (out + out.T) / 2


def test_audit_kernel_with_a_small_negative_eigenvalue_is_refused():
    K = with_smallest_eigenvalue(rbf(150), -1e-4)
    assert eigvalsh(K)[0] < -1e-8 * eigvalsh(K)[-1]  # beyond psd_tol: materially indefinite
    with pytest.raises(NotPSDError, match="not positive semidefinite"):
        mklopt.KernelSet(K)


@pytest.mark.parametrize("n", [150, 500, 1200])
def test_negative_direction_orthogonal_to_the_old_start_is_found(n):
    """n <= 300: the exact test; above: Lanczos from the kernel's own seeded start."""
    K = negative_direction_orthogonal_to_the_old_start(rbf(n, seed=n), 0.01)
    assert eigvalsh(K)[0] < -0.009 * eigvalsh(K)[-1]
    with pytest.raises(NotPSDError):
        mklopt.KernelSet(K)
    with pytest.raises(NotPSDError):
        mklopt.KernelSet(K, psd_check="full")


@pytest.mark.parametrize("component", [1e-3, 1e-5, 1e-6])
def test_screen_finds_a_negative_eigenvector_its_start_barely_sees(component):
    """The default screen's steps amplify a start's tiny component along a -1 % eigenvector
    (n = 1200): 20 steps missed components below 1e-5, which a random start has with
    probability ~3e-4 (the seeded start of the audit kernel above had 4e-6)."""
    from mklopt.kernels._psd import LANCZOS_STEPS, lanczos_extremes

    K = negative_direction_orthogonal_to_the_old_start(rbf(1200, seed=1200), 0.01)
    vals, vecs = np.linalg.eigh(K)
    u = vecs[:, 0]
    for seed in range(1, 6):
        start = np.random.default_rng(seed).standard_normal(1200)
        start -= (u @ start) * u
        start = start / np.linalg.norm(start) + component * u
        lowest, _ = lanczos_extremes(K, LANCZOS_STEPS, start=start)
        assert lowest < -1e-3 * vals[-1]


def _numpy_lanczos(K: np.ndarray, start: np.ndarray, steps: int) -> np.ndarray:
    """The screen's recurrence written with NumPy (the form it had before it was compiled)."""
    from scipy.linalg import eigvalsh_tridiagonal

    V, diag, off = np.empty((steps, K.shape[0])), [], []
    v = start / np.linalg.norm(start)
    w = K @ v
    for j in range(steps):
        V[j] = v
        if j:
            w = K @ v
        diag.append(v @ w)
        for _ in range(2):
            w -= V[: j + 1].T @ (V[: j + 1] @ w)
        if j == steps - 1:
            break
        off.append(np.linalg.norm(w))
        v = w / off[-1]
    return eigvalsh_tridiagonal(np.array(diag), np.array(off))


@pytest.mark.parametrize("exactly_symmetric", [False, True])  # full products / BLAS's dsymv
@pytest.mark.parametrize("n", [320, 700])
def test_the_compiled_screen_is_the_numpy_recurrence_and_runs_side_by_side(n, exactly_symmetric):
    """The compiled Lanczos recurrence (GIL released) gives NumPy's Ritz extremes to rounding,
    inside eigvalsh's spectrum, with full products or one triangle's; on two threads at once
    each kernel's answer is its answer alone, bit for bit."""
    import functools
    from concurrent.futures import ThreadPoolExecutor

    from mklopt.kernels._psd import LANCZOS_STEPS, lanczos_extremes

    K = rbf(n, seed=n)
    kernels = [(K + K.T) / 2, negative_direction_orthogonal_to_the_old_start(rbf(n, seed=n + 1), 0.01)]
    assert all(np.array_equal(K, K.T) for K in kernels)  # what the scan hands to dsymv
    screen = functools.partial(lanczos_extremes, exactly_symmetric=exactly_symmetric)
    alone = [screen(K) for K in kernels]
    for K, (lowest, highest) in zip(kernels, alone):
        ritz = _numpy_lanczos(K, screen_start(K), LANCZOS_STEPS)
        spectrum = eigvalsh(K)
        scale = spectrum[-1]
        assert abs(lowest - ritz[0]) <= 1e-9 * scale and abs(highest - ritz[-1]) <= 1e-9 * scale
        assert spectrum[0] - 1e-9 * scale <= lowest <= highest <= spectrum[-1] + 1e-9 * scale
        assert abs(highest - spectrum[-1]) <= 1e-9 * scale
    assert alone[1][0] < -1e-3 * eigvalsh(kernels[1])[-1]  # the negative direction is found
    with ThreadPoolExecutor(2) as pool:
        together = list(pool.map(screen, kernels * 2))
    assert together == alone * 2


def test_start_vector_is_seeded_by_the_kernel_reproducibly():
    A, B = rbf(400, 1), rbf(400, 2)
    np.testing.assert_array_equal(screen_start(A), screen_start(A.copy()))
    assert abs(screen_start(A) @ screen_start(B)) < 0.2 * np.linalg.norm(screen_start(A)) ** 2


def test_psd_kernels_still_pass_and_noise_is_still_clipped():
    K = rbf(400, 3)
    ks = mklopt.KernelSet(K)
    assert ks.validated_by == "lanczos" and not ks.clipped
    small = mklopt.KernelSet(rbf(200, 4))
    assert small.validated_by == "cholesky" and not small.clipped
    noisy = with_smallest_eigenvalue(rbf(200, 5), -1e-10)  # above psd_tol: clipped, said
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clipped = mklopt.KernelSet(noisy)
    assert clipped.clipped and any(issubclass(w.category, MKLWarning) for w in caught)
    assert eigvalsh(clipped.K[0])[0] >= -1e-12 * eigvalsh(clipped.K[0])[-1]


def test_user_indefinite_stack_is_refused_as_before():
    K = rbf(100)
    with pytest.raises(NotPSDError):
        mklopt.KernelSet(K - 0.5 * np.eye(100))
    assert mklopt.KernelSet(K - 0.5 * np.eye(100), psd=False).validated_by == "none"


@pytest.mark.parametrize("spec, expected", [
    ("linear", True), ("rbf", True), (("rbf", {"gamma": 0.3}), True), ("laplacian", True),
    ("cosine", True), (("poly", {"degree": 3, "coef0": 1.0}), True),
    (("polynomial", {"degree": 2, "coef0": 0.0, "gamma": 0.5}), True),
    (("poly", {"degree": 2, "coef0": -1.0}), False), (("poly", {"degree": 2.5}), False),
    ("sigmoid", False), ("additive_chi2", False), (("rbf", {"gamma": -1.0}), False),
    (lambda X, Y: X @ Y.T, False)])
def test_which_kernel_functions_are_psd_by_construction(spec, expected):
    assert psd_by_construction(spec) is expected


def test_from_data_with_psd_kernel_functions_skips_the_screen(monkeypatch):
    import mklopt.kernels._checked_stack as checked

    def no_screen(*args, **kwargs):
        raise AssertionError("the PSD screen ran")

    monkeypatch.setattr(checked, "check_psd", no_screen)
    monkeypatch.setattr(checked, "lanczos_screen", no_screen)
    X = np.random.default_rng(0).standard_normal((EXACT_MAX_N + 100, 4))
    ks = mklopt.KernelSet.from_data(X, ["linear", ("rbf", {"gamma": 0.2}), ("poly", {"degree": 2})])
    assert ks.validated_by == "construction"
    assert ks.normalized("trace").validated_by == "construction"
    assert mklopt.KernelSet(ks).validated_by == "construction"
    with pytest.raises(AssertionError, match="screen ran"):  # a callable is user code: screened
        mklopt.KernelSet.from_data(X, ["linear", lambda A, B: A @ B.T])


def test_estimator_kernels_are_trusted_and_results_unchanged():
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler

    X, y = load_breast_cancer(return_X_y=True)
    X, y = StandardScaler().fit_transform(X[:150]), y[:150]
    specs = ["linear", ("rbf", {"gamma": 0.03})]
    built = mklopt.KernelSet.from_data(X, specs)
    screened = mklopt.KernelSet(np.array(built.K))  # the same numbers as a user's array
    assert screened.validated_by == "cholesky"
    a = mklopt.solve(built, y, "lp_dual", p=2.0)
    b = mklopt.solve(screened, y, "lp_dual", p=2.0)
    assert a.primal == pytest.approx(b.primal, rel=1e-10)
