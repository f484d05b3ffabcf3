"""Positive-semidefiniteness checks: exact where it is cheap, a Lanczos screen above.

Numerical noise in a PSD kernel stored with machine precision
:math:`\\varepsilon` gives eigenvalues down to about
:math:`-\\varepsilon\\, n \\|K\\|`; anything above

.. math:: -\\tau_{\\text{noise}} = -c\\, \\varepsilon\\, n\\, \\|K\\|_2,\\qquad c = 10,

is accepted as it is. ``"lanczos"`` (default) proves PSD up to noise with a
Cholesky factorization of :math:`K + \\tau_{\\text{noise}} I` for
:math:`n \\le` :data:`EXACT_MAX_N` (300), where it costs no more than the
screen: all such kernels in one compiled loop on every core
(:mod:`~mklopt._compiled.small_kernels`, 0.36 ms per kernel at n = 200 here).
Above it, 40 Lanczos steps on each kernel, single-threaded while it
is in cache (run by the validation scan, which has read the kernel already; compiled
with the GIL released, :mod:`~mklopt._compiled.lanczos`, so that kernels on their threads are
screened side by side),
from a random start vector seeded by the kernel itself
(:func:`~mklopt.kernels._scan.screen_start`: no fixed blind spot). Measured
single-threaded (RBF kernels): n = 500 Cholesky 24 ms vs 40 steps 13 ms;
n = 1000 77 vs 37 ms; n = 2000 429 vs 128 ms. Ritz values never go below
:math:`\\lambda_{\\min}`, so a negative estimate is a proof. A negative
eigenvector is missed only when the start is nearly orthogonal to it: at
n = 1200 with an eigenvalue of -1 % of the largest, 20 steps missed starts
whose component along it was below 1e-5 (a random start has such a component
with probability about 3e-4), 30 and 40 steps found it down to 1e-6 and below.
A small negative eigenvalue inside the cluster of near-zero eigenvalues of a
large kernel can still escape, which ``psd_check="full"`` (the Cholesky test at
every n, :math:`O(n^3)`) rules out.
A kernel that fails is decomposed (``eigh``), then clipped (down to
``psd_tol`` relative to the largest eigenvalue) or rejected.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from ..exceptions import KernelError, NotPSDError
from ._small_screens import SMALL_N, cholesky_screen
from ._scan import screen_start
from ._stack import map_kernels
from .spectra import eigh

__all__ = ["PSD_CHECKS", "EXACT_MAX_N", "check_psd", "lanczos_extremes", "lanczos_screen"]

PSD_CHECKS = ("lanczos", "full")
#: Factor c of the noise tolerance c * eps * n * ||K||.
NOISE_FACTOR = 10.0
#: The precision of every check: double, whatever the caller stored the kernels in (a
#: float16 or float32 stack is converted to float64 first; its own eps would let
#: eigenvalues of -0.6 ||K|| pass as rounding at n = 60 in float16).
EPS = float(np.finfo(np.float64).eps)
#: Lanczos steps per kernel of the cheap check (exact when n <= this).
LANCZOS_STEPS = 40
#: Largest n at which "lanczos" runs the exact Cholesky test instead (no dearer there).
EXACT_MAX_N = SMALL_N


def lanczos_extremes(K: np.ndarray, steps: int = LANCZOS_STEPS, start: np.ndarray | None = None,
                     start_product: np.ndarray | None = None, exactly_symmetric: bool = False,
                     ) -> tuple[float, float]:
    """Smallest and largest Ritz values after ``steps`` Lanczos steps (full reorthogonalization).

    .. math:: \\lambda_{\\min}(K) \\le \\theta_{\\min} \\le \\theta_{\\max} \\le \\lambda_{\\max}(K)

    From ``start`` (default: the kernel's own seeded random vector,
    :func:`screen_start`, so results are reproducible); ``start_product`` is
    :math:`K v` for that vector when the caller has it already (the validation
    scan computes it on its one read of the kernel). The recurrence runs compiled with the
    GIL released (:mod:`~mklopt._compiled.lanczos`): the kernels' screens on their threads
    run side by side. ``exactly_symmetric``: K equals its transpose bit for bit, and each
    product reads one triangle of it (BLAS's ``dsymv``).
    """
    from .._compiled.lanczos import lanczos_tridiagonal
    from .._compiled.layout import frozen

    K = frozen(K)
    n = K.shape[0]
    k = min(steps, n)
    v = np.array(screen_start(K) if start is None else start, dtype=float)
    given = start_product is not None
    w = np.array(start_product, dtype=float) if given else np.empty(n)
    diag, off = np.empty(k), np.empty(k)
    made = lanczos_tridiagonal(K, v, w, bool(exactly_symmetric), given, np.empty((k, n)), diag, off)
    vals = scipy.linalg.eigvalsh_tridiagonal(diag[:made], off[:made - 1])
    return float(vals[0]), float(vals[-1])


def lanczos_screen(K: np.ndarray, start: np.ndarray, start_product: np.ndarray,
                   exactly_symmetric: bool = False) -> tuple[float, float]:
    """The default screen, run by the validation scan while ``K`` is in cache."""
    return lanczos_extremes(K, LANCZOS_STEPS, start, start_product, exactly_symmetric)


def check_psd(stack: np.ndarray, names: list[str], scale: np.ndarray, psd_tol: float, method: str = "lanczos",
              screened: dict[int, tuple[float, float]] | None = None,
              ) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Screen every kernel; return the eigendecompositions of those to clip.

    The noise level uses the double-precision :data:`EPS` for every input dtype.
    Raises :class:`NotPSDError` for an eigenvalue below
    :math:`-\\max(\\text{psd\\_tol}\\,\\lambda_{\\max}, \\tau_{\\text{noise}})`.
    ``screened`` holds the Ritz extremes the validation scan already computed
    (``"lanczos"`` only); the other kernels are screened here.

    Returns
    -------
    dict
        Kernel index -> ``(eigenvalues, eigenvectors)`` of kernels whose
        negative eigenvalues exceed the noise level but are small enough to clip.
    """
    if method not in PSD_CHECKS:
        raise KernelError(f"unknown psd_check {method!r}; choose one of {PSD_CHECKS}.")
    n, eps = stack.shape[1], EPS
    screened = screened if method == "lanczos" and screened is not None else {}

    exact = method == "full" or n <= EXACT_MAX_N

    def suspect(m: int) -> float | None:
        """The noise level of kernel m when the check cannot clear it, else None."""
        K = stack[m]
        lo, hi = screened[m] if m in screened else lanczos_extremes(K, 8 if exact else LANCZOS_STEPS)
        noise = NOISE_FACTOR * eps * n * max(hi, float(scale[m]))
        return None if (_cholesky_ok(K, noise) if exact else lo >= -noise) else noise

    if n <= EXACT_MAX_N:  # many small kernels: one compiled loop, LAPACK's Cholesky on every core
        cleared, noise_levels = cholesky_screen(stack, scale, NOISE_FACTOR * eps * n)
        levels = [None if ok else float(level) for ok, level in zip(cleared, noise_levels)]
    elif method == "lanczos":  # a chain of in-cache gemv per kernel: one kernel per core
        levels = map_kernels(suspect, stack.shape[0])
    else:  # Cholesky: one O(n^3) factorization at a time, with threaded BLAS
        levels = [suspect(m) for m in range(stack.shape[0])]
    to_clip = {}
    for m, noise in enumerate(levels):
        if noise is None:
            continue
        K = stack[m]
        vals, vecs = eigh(K)
        top = max(float(vals[-1]), 0.0)
        noise = max(noise, NOISE_FACTOR * eps * n * top)  # the screen's estimate of the norm may be low
        if vals[0] < -max(psd_tol * top, noise):
            raise NotPSDError(
                f"kernel '{names[m]}' is not positive semidefinite: its smallest eigenvalue "
                f"is {vals[0]:.3g} (largest {top:.3g}). Use a PSD kernel, shift it (K + c*I), "
                "or use the 'vkr_lp' formulation, which accepts indefinite kernels.")
        if vals[0] < -noise:
            to_clip[m] = (vals, vecs)
    return to_clip


def _cholesky_ok(K: np.ndarray, jitter: float) -> bool:
    shifted = K + jitter * np.eye(K.shape[0])
    try:
        scipy.linalg.cholesky(shifted, lower=True, overwrite_a=True, check_finite=False)
    except scipy.linalg.LinAlgError:
        return False
    return True


def clip(stack: np.ndarray, decompositions: dict[int, tuple[np.ndarray, np.ndarray]]) -> dict[int, float]:
    """In place :math:`K_m \\leftarrow V\\max(\\Lambda, 0)V^\\top`; returns the clipped minima."""
    removed = {}
    for m, (vals, vecs) in decompositions.items():
        K = (vecs * np.clip(vals, 0.0, None)) @ vecs.T
        np.add(K, K.T, out=stack[m])
        stack[m] *= 0.5
        removed[m] = float(vals[0])
    return removed
