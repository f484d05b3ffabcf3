"""Turning user input into a validated (M, n, n) float64 stack, without copying it when valid.

A float64, C-contiguous array is used in place; anything else (float32,
integers, lists, DataFrames, strided views) is converted once. The scan
reads each kernel from memory once and, while it is in cache, checks
finiteness, size and exact symmetry (``scipy.linalg.issymmetric``; the
amount of asymmetry is measured only when there is some, in tiles of rows
compared with the matching columns, never a transpose of the whole stack),
takes its fingerprint sketch and runs the PSD screen on it; kernels are
scanned on all cores (:func:`map_kernels`).
"""

from __future__ import annotations

import functools
import hashlib

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.linalg

from ..exceptions import KernelError

__all__ = ["as_stack", "OwnedStack", "scan_stack", "symmetrize", "check_names", "StackInput", "MAX_MAGNITUDE",
           "map_kernels", "sketch_vectors", "SKETCH_COLUMNS", "screen_start", "Screen",
           "NOISE_ASYMMETRY_ULPS"]

#: Largest allowed ``max|K| * n * M``: sums over points and kernels must stay far from overflow.
MAX_MAGNITUDE = 1e150
#: Rows per tile of the symmetry check (a 256 x n band stays in cache).
TILE = 256
#: Columns of the fixed random matrix W of a kernel's fingerprint sketch W^T K W.
SKETCH_COLUMNS = 3
#: Asymmetry up to this many units of roundoff of max|K| is rounding noise (pairwise kernels
#: computed through a GEMM differ by 0.5-1.5 ulps at n = 2000): a stack mklopt does not own
#: is used as it is rather than copied, since every product mklopt forms with K_m has a
#: rounding error of about n ulps.
NOISE_ASYMMETRY_ULPS = 4


def sketch_vectors(n: int) -> np.ndarray:
    """The fixed random (n, 3) matrix :math:`W` of the fingerprint sketch :math:`W^\\top K_m W`."""
    return np.random.default_rng(20261123).standard_normal((n, SKETCH_COLUMNS))


@functools.lru_cache(maxsize=1)
def _blas_controller():
    """threadpoolctl's view of the loaded BLAS libraries, found once per process.

    Finding them scans ``/proc/self/maps`` (about 7 ms here), which
    ``threadpool_limits`` repeats at every call.
    """
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def single_blas_thread():
    """A context in which BLAS runs on one thread: small dense work (order ~100) runs
    several times faster than with threads that wait for each other."""
    return _blas_controller().limit(limits=1, user_api="blas")


def map_kernels(work: Callable[[int], Any], M: int) -> list:
    """``[work(m) for m in range(M)]`` on all cores, BLAS single-threaded inside each call.

    Each call reads one kernel (in cache) with NumPy/BLAS, which release the
    GIL; one thread per core beats threaded BLAS on these small products.
    """
    workers = min(M, os.cpu_count() or 1)
    with single_blas_thread():
        if workers <= 1:
            return [work(m) for m in range(M)]
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(work, range(M)))


@dataclass
class StackInput:
    """A float64 C-contiguous stack, whether mklopt owns it, and the input's precision."""

    stack: np.ndarray
    owned: bool
    eps: float


class OwnedStack:
    """A stack mklopt has just built (``KernelSet.from_data``): it may be changed in place.

    ``psd_by_construction``: every kernel came from a kernel function that is PSD for
    any input and its computed matrix is PSD to within the certificate's precision
    (:func:`~mklopt.kernels.construct.trusted_spec`), so the PSD screen is skipped;
    only mklopt builds such a stack (user arrays are screened).
    """

    def __init__(self, stack: np.ndarray, psd_by_construction: bool = False) -> None:
        self.stack = stack
        self.psd_by_construction = bool(psd_by_construction)


def as_stack(kernels: Any) -> StackInput:
    """Convert ``kernels`` to an (M, n, n) float64 stack, copying only when needed.

    Accepted: an (M, n, n) or (n, n) array, a pandas DataFrame, or a sequence
    of (n, n) arrays/DataFrames. Real numeric input only. A user's float64
    C-contiguous array is not owned (never written to); an :class:`OwnedStack` is.
    """
    if isinstance(kernels, OwnedStack):
        return StackInput(kernels.stack, True, float(np.finfo(float).eps))
    owned = not isinstance(kernels, np.ndarray)
    arr = _to_array(kernels)
    if arr.ndim == 2:
        arr = arr[None]
    _check_shape(arr)
    eps = float(np.finfo(arr.dtype).eps) if arr.dtype.kind == "f" else float(np.finfo(float).eps)
    if arr.dtype != np.float64 or not arr.flags.c_contiguous:
        arr, owned = np.ascontiguousarray(arr, dtype=np.float64), True
    return StackInput(arr, owned, eps)


def _to_array(kernels: Any) -> np.ndarray:
    if hasattr(kernels, "to_numpy") and getattr(kernels, "ndim", 0) == 2:
        kernels = kernels.to_numpy()
    elif isinstance(kernels, (list, tuple)):
        kernels = [k.to_numpy() if hasattr(k, "to_numpy") else k for k in kernels]
    try:
        arr = np.asarray(kernels)
    except (TypeError, ValueError) as exc:
        raise KernelError(
            "kernels must be an (M, n, n) array or a list of n x n arrays of the "
            f"same size; could not convert the input ({exc}).") from None
    if arr.dtype.kind == "c":
        raise KernelError(
            f"kernels are complex ({arr.dtype}); mklopt needs real kernel matrices, "
            "pass K.real if the imaginary part is numerical noise.")
    if arr.dtype.kind == "O":
        try:
            arr = arr.astype(np.float64) if arr.ndim else arr.astype(str)
        except (TypeError, ValueError):
            arr = arr.astype(str)
    if arr.dtype.kind not in "biuf" or arr.ndim == 0:
        raise KernelError(
            f"kernels must be numeric (M, n, n) arrays or lists of n x n arrays, got "
            f"values of type {arr.dtype} ({type(kernels).__name__}).")
    return arr


def _check_shape(stack: np.ndarray) -> None:
    if stack.ndim != 3:
        raise KernelError(f"kernels must be an (M, n, n) array, got an array with shape {stack.shape}.")
    if stack.shape[0] == 0:
        raise KernelError("no kernels given; pass at least one n x n kernel matrix.")
    if stack.shape[1] != stack.shape[2]:
        raise KernelError(
            f"kernel matrices must be square (n x n), got {stack.shape[1]} x {stack.shape[2]}. "
            "Test-vs-train kernels are passed to decision_function, not to KernelSet.")
    if stack.shape[1] == 0:
        raise KernelError("kernel matrices are empty (n = 0); pass kernels over at least one point.")


def check_names(names: Sequence[str] | None, M: int) -> list[str]:
    """One string name per kernel (``K0, K1, ...`` by default)."""
    if names is None:
        return [f"K{m}" for m in range(M)]
    names = [str(n) for n in names]
    if len(names) != M:
        raise KernelError(f"got {len(names)} names for {M} kernels; give one name per kernel.")
    return names


@dataclass
class Scan:
    """What one visit of each kernel found: max |K|, kernels to symmetrize, the sketch, the screen."""

    scale: np.ndarray
    #: Kernels asymmetric beyond rounding noise (within ``sym_tol``): to symmetrize.
    asymmetric: list[int] = field(default_factory=list)
    #: Kernels asymmetric at the level of rounding noise: symmetrize only when free (owned).
    noise_asymmetric: list[int] = field(default_factory=list)
    #: :math:`W^\\top K_m W` per kernel (M, 3, 3), valid while the stack is unchanged.
    sketch: np.ndarray | None = None
    #: Kernel index -> what ``screen`` returned (exactly symmetric, finite kernels only).
    screened: dict = field(default_factory=dict)


#: ``screen(K, v, Kv)`` -> anything: work done on a kernel while it is in cache, given
#: its start vector :func:`screen_start` and their product (already computed by the visit).
Screen = Callable[[np.ndarray, np.ndarray, np.ndarray], Any]


def screen_start(K: np.ndarray) -> np.ndarray:
    """The PSD screen's random start vector for kernel ``K``, seeded by the kernel itself.

    The seed is a SHA-256 hash of K's diagonal and first row: runs are
    reproducible, and no input can be built with a negative eigenvector
    orthogonal to its own start (a fixed start vector had that blind spot).
    """
    digest = hashlib.sha256(np.ascontiguousarray(K.diagonal()).tobytes() + K[0].tobytes()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little")).standard_normal(K.shape[0])


@dataclass
class _Visit:
    hi: float
    lo: float
    asymmetry: float
    sketch: np.ndarray
    screened: Any = None


def _visit(K: np.ndarray, symmetric: bool, W: np.ndarray, screen: Screen | None) -> _Visit:
    """One kernel, read from memory once: ``probes^T K`` first, everything else from cache.

    ``probes`` is :math:`[v, W]^\\top` (4, n): the screen's start vector (seeded by
    the kernel, :func:`screen_start`) and the sketch's columns. For a symmetric kernel :math:`v^\\top K = (K v)^\\top`, handed to
    ``screen``; a kernel that is not exactly symmetric gets its maximal asymmetry
    measured (tiles of rows against columns), and is screened here only when that is
    rounding noise (it is symmetrized and screened later otherwise).
    """
    start = screen_start(K) if screen is not None else W[:, 0]
    probes = np.vstack([start, W.T])
    with np.errstate(invalid="ignore", over="ignore"):  # non-finite kernels are rejected next
        product = probes @ K
        hi, lo = float(K.max()), float(K.min())
    sketch = product[1:] @ W
    if not (np.isfinite(hi) and np.isfinite(lo)):
        return _Visit(hi, lo, 0.0, sketch)
    exact = not symmetric or scipy.linalg.issymmetric(K)
    asymmetry = 0.0 if exact else max_asymmetry(K)
    noise = asymmetry <= NOISE_ASYMMETRY_ULPS * np.finfo(float).eps * max(hi, -lo)
    screened = screen(K, start, product[0]) if screen is not None and symmetric and noise else None
    return _Visit(hi, lo, asymmetry, sketch, screened)


def scan_stack(stack: np.ndarray, names: list[str], symmetric: bool, sym_tol: float,
               screen: Screen | None = None) -> Scan:
    """Finiteness, zero kernels, magnitude, symmetry and ``screen``, kernel by kernel (on all cores).

    Raises :class:`KernelError` for non-finite entries, all-zero kernels,
    entries so large that sums overflow, and asymmetry beyond
    ``sym_tol * max|K|``. Kernels asymmetric within tolerance are listed in
    ``Scan.asymmetric`` (or ``Scan.noise_asymmetric`` when the asymmetry is at most
    :data:`NOISE_ASYMMETRY_ULPS` units of roundoff of max|K|); symmetric ones are
    left as they are and, while each is in cache, handed to ``screen`` (the PSD screen).
    """
    M, n = stack.shape[0], stack.shape[1]
    W = sketch_vectors(n)
    visits = map_kernels(lambda m: _visit(stack[m], symmetric, W, screen), M)
    hi = np.array([v.hi for v in visits])
    lo = np.array([v.lo for v in visits])
    bad = [m for m in range(M) if not (np.isfinite(hi[m]) and np.isfinite(lo[m]))]
    if bad:
        raise KernelError(f"kernel(s) {bad} contain NaN or infinite entries; fix or drop them.")
    scale = np.maximum(hi, -lo)
    zero = [names[m] for m in range(M) if scale[m] == 0]
    if zero:
        raise KernelError(f"kernel(s) {zero} are all zero; they carry no information, drop them.")
    _check_magnitude(scale, names, n, M)
    result = Scan(scale=scale, sketch=np.stack([v.sketch for v in visits]))
    for m, visit in enumerate(visits):
        if visit.asymmetry > sym_tol * scale[m]:
            raise KernelError(
                f"kernel '{names[m]}' is not symmetric (max |K - K^T| = {visit.asymmetry:.3g}, "
                f"max |K| = {scale[m]:.3g}). Symmetrize it with (K + K.T) / 2 if that is "
                "intended, or use 'vkr_lp', which accepts asymmetric kernels.")
        if visit.screened is not None:
            result.screened[m] = visit.screened
        if visit.asymmetry > NOISE_ASYMMETRY_ULPS * np.finfo(float).eps * scale[m]:
            result.asymmetric.append(m)
        elif visit.asymmetry > 0:
            result.noise_asymmetric.append(m)
    return result


def _check_magnitude(scale: np.ndarray, names: list[str], n: int, M: int) -> None:
    big = [names[m] for m in range(M) if scale[m] * n * M > MAX_MAGNITUDE]
    if big:
        raise KernelError(
            f"kernel(s) {big} have entries up to {float(np.max(scale)):.3g}: sums over {n} points "
            f"and {M} kernels come near floating-point overflow; rescale them first, e.g. "
            "divide each kernel by its trace (K / np.trace(K)).")


def max_asymmetry(K: np.ndarray, tile: int = TILE) -> float:
    """:math:`\\max_{ij} |K_{ij} - K_{ji}|`, comparing row bands with column bands.

    Each band ``K[i:j, i:]`` is compared with ``K[i:, i:j].T``; no transpose of
    the whole matrix is formed and each pair is compared once.
    """
    n = K.shape[0]
    worst = 0.0
    for i in range(0, n, tile):
        j = min(i + tile, n)
        diff = K[i:j, i:] - K[i:, i:j].T
        worst = max(worst, float(np.max(np.abs(diff, out=diff))))
    return worst


def symmetrize(stack: np.ndarray, indices: list[int]) -> None:
    """In place :math:`K_m \\leftarrow \\tfrac12 (K_m + K_m^\\top)` for the listed kernels."""
    for m in indices:
        K = stack[m]
        K += K.T.copy()
        K *= 0.5
