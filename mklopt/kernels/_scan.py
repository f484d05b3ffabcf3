"""The validation scan: each kernel read from memory once, every check done while it is in cache.

Finiteness, size and exact symmetry (``scipy.linalg.issymmetric``; the amount
of asymmetry is measured only when there is some, in tiles of rows compared
with the matching columns, never a transpose of the whole stack), the
fingerprint sketch and, for large kernels, the PSD screen; kernels are scanned
on all cores. Kernels of up to :data:`~mklopt._compiled.small_kernels.SMALL_N`
points are scanned in one compiled loop (:func:`~mklopt._compiled.small_kernels.scan_small`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.linalg

from ..exceptions import KernelError
from ._small_screens import SMALL_N, scan_small
from ._stack import map_kernels, sketch_vectors

__all__ = ["Scan", "Screen", "Visit", "scan_stack", "visit", "visit_kernel", "judge", "screen_start",
           "max_asymmetry", "MAX_MAGNITUDE", "NOISE_ASYMMETRY_ULPS", "SYM_TOL"]

#: Default symmetry tolerance: asymmetry up to this share of max|K| is removed, beyond it is an error.
SYM_TOL = 1e-8
#: Largest allowed ``max|K| * n * M``: sums over points and kernels must stay far from overflow.
MAX_MAGNITUDE = 1e150
#: Rows per tile of the symmetry check (a 256 x n band stays in cache).
TILE = 256
#: Asymmetry up to this many units of roundoff of max|K| is rounding noise (pairwise kernels
#: computed through a GEMM differ by 0.5-1.5 ulps at n = 2000): a stack mklopt does not own
#: is used as it is rather than copied, since every product mklopt forms with K_m has a
#: rounding error of about n ulps.
NOISE_ASYMMETRY_ULPS = 4


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


#: ``screen(K, v, Kv, exact)`` -> anything: work done on a kernel while it is in cache, given
#: its start vector :func:`screen_start`, their product (already computed by the visit) and
#: whether K equals its transpose bit for bit (else its asymmetry is rounding noise).
Screen = Callable[[np.ndarray, np.ndarray, np.ndarray, bool], Any]


def screen_start(K: np.ndarray) -> np.ndarray:
    """The PSD screen's random start vector for kernel ``K``, seeded by the kernel itself.

    The seed is a SHA-256 hash of K's diagonal and first row: runs are
    reproducible, and no input can be built with a negative eigenvector
    orthogonal to its own start (a fixed start vector had that blind spot).
    """
    digest = hashlib.sha256(np.ascontiguousarray(K.diagonal()).tobytes() + K[0].tobytes()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little")).standard_normal(K.shape[0])


@dataclass
class Visit:
    """What one read of a kernel found (:func:`visit_kernel`)."""

    hi: float
    lo: float
    asymmetry: float
    sketch: np.ndarray
    screened: Any = None


def visit_kernel(K: np.ndarray, symmetric: bool, W: np.ndarray, screen: Screen | None = None,
                 symmetric_by_construction: bool = False,
                 extremes: tuple[float, float] | None = None) -> Visit:
    """One kernel, read from memory once: ``probes^T K`` first, everything else from cache.

    ``probes`` is :math:`[v, W]^\\top` (4, n): the screen's start vector (seeded by
    the kernel, :func:`screen_start`) and the sketch's columns. For a symmetric kernel
    :math:`v^\\top K = (K v)^\\top`, handed to ``screen``; a kernel that is not exactly
    symmetric gets its maximal asymmetry measured (tiles of rows against columns), and is
    screened here only when that is rounding noise (it is symmetrized and screened later
    otherwise). A kernel ``symmetric_by_construction`` (each entry written at both places when
    it was built) is not compared with its transpose (SciPy's ``issymmetric``: half of the
    visit's time).
    ``extremes``: K's largest and smallest entries where its build kept them (not read again).
    """
    start = screen_start(K) if screen is not None else W[:, 0]
    probes = np.vstack([start, W.T])
    with np.errstate(invalid="ignore", over="ignore"):  # non-finite kernels are rejected next
        product = probes @ K
        hi, lo = (float(K.max()), float(K.min())) if extremes is None else extremes
    sketch = product[1:] @ W
    if not (np.isfinite(hi) and np.isfinite(lo)):
        return Visit(hi, lo, 0.0, sketch)
    exact = not symmetric or symmetric_by_construction or scipy.linalg.issymmetric(K)
    asymmetry = 0.0 if exact else max_asymmetry(K)
    noise = asymmetry <= NOISE_ASYMMETRY_ULPS * np.finfo(float).eps * max(hi, -lo)
    screened = (screen(K, start, product[0], asymmetry == 0.0) if screen is not None and symmetric and noise
                else None)
    return Visit(hi, lo, asymmetry, sketch, screened)


def _small_visits(stack: np.ndarray, symmetric: bool, W: np.ndarray) -> list[Visit]:
    """:func:`visit_kernel` of every kernel of order <= SMALL_N, in one compiled loop."""
    hi, lo, finite, asymmetry, sketch = scan_small(stack, W)
    if not symmetric:
        asymmetry[:] = 0.0
    return [Visit(float(hi[m]), float(lo[m]) if finite[m] else np.nan, float(asymmetry[m]), sketch[m])
            for m in range(stack.shape[0])]


def visit(K: np.ndarray, W: np.ndarray, symmetric_by_construction: bool = False,
          extremes: tuple[float, float] | None = None) -> Visit:
    """:func:`visit_kernel` of one kernel that must be symmetric, with no screen (compiled
    for small kernels)."""
    if K.shape[0] <= SMALL_N:
        return _small_visits(K[None], True, W)[0]
    return visit_kernel(K, True, W, symmetric_by_construction=symmetric_by_construction, extremes=extremes)


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
    if screen is None and n <= SMALL_N:
        visits = _small_visits(stack, symmetric, W)
    else:
        visits = map_kernels(lambda m: visit_kernel(stack[m], symmetric, W, screen), M)
    return judge(visits, names, n, sym_tol)


def judge(visits: list[Visit], names: list[str], n: int, sym_tol: float) -> Scan:
    """The checks of :func:`scan_stack` on its kernels' visits (made there or while each
    kernel was built, :mod:`~mklopt.kernels._build`): raise for a bad kernel, list those to
    symmetrize."""
    M = len(visits)
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
