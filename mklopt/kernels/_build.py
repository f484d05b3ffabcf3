"""Training kernels from data, each read once on its own thread: built, checked, made
symmetric and normalized while it is in cache.

For kernel specs PSD by construction (no screen to run) and no normalization or one that
divides each kernel by a number (trace, multiplicative), the thread that builds
:math:`K_m` (:func:`~mklopt.kernels.construct.build_stack`) goes on with it at once:

1. the validation scan's visit (:func:`~mklopt.kernels._scan.visit`: largest and smallest
   entries, exact symmetry, the fingerprint sketch; the RBF, linear and polynomial kernels,
   written at both places of each entry, are symmetric by construction and not compared with
   their transposes, and their extremes were kept as they were written);
2. rounding-noise asymmetry (within the symmetry tolerance) removed in place, as
   validation does for a stack mklopt owns;
3. the divisor (:func:`~mklopt.kernels._normalize.scalar_divisors`, the numbers
   ``normalized`` computes; for the multiplicative normalization of linear and polynomial
   kernels, the feature-space variance from centred data,
   :func:`~mklopt.kernels.feature_variance.feature_variances`) and the division.

A kernel of 1,257 points is 12.6 MB: these passes then read it from the cache shared by
the cores instead of memory, and the kernels are built on all cores at once. The checks
themselves (:func:`~mklopt.kernels._scan.judge`) are made by the
:class:`~mklopt.kernels.KernelSet` built on the visits, before anything is returned, and
the divisors are checked next; a bad kernel raises the same error as on the other path.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ._normalize import SCALAR_NORMALIZATIONS, check_divisors, scalar_divisors
from ._scan import SYM_TOL, Visit, visit
from ._stack import OwnedStack, sketch_vectors, symmetrize_matrix
from .construct import KernelSpec, build_stack, symmetric_by_construction
from .feature_variance import feature_variances

__all__ = ["BuiltKernels", "build_kernels", "built_kernel_set", "FUSED_NORMALIZATIONS"]

#: Normalizations applied on the kernels' own threads (None: none).
FUSED_NORMALIZATIONS = (None, *SCALAR_NORMALIZATIONS)


@dataclass
class BuiltKernels:
    """The built (and normalized) stack, each kernel's visit before normalization and its divisor."""

    stack: np.ndarray
    visits: list[Visit]
    divisors: np.ndarray


def build_kernels(X: np.ndarray, specs: Sequence[KernelSpec], normalization: str | None,
                  sym_tol: float, scales: np.ndarray | None = None) -> BuiltKernels:
    """The training kernels of ``specs`` on ``X``, visited, symmetrized and divided on their threads
    (``scales``: each kernel multiplied by its given scale instead, ``normalization`` None)."""
    W = sketch_vectors(np.asarray(X).shape[0])
    exact = feature_variances(X, specs) if normalization == "multiplicative" else np.full(len(specs), np.nan)
    mirrored = symmetric_by_construction(specs, np.asarray(X).shape[1])

    def finish(m: int, K: np.ndarray, extremes: tuple[float, float] | None) -> tuple[Visit, float]:
        seen = visit(K, W, mirrored[m], extremes)
        if 0.0 < seen.asymmetry <= sym_tol * max(seen.hi, -seen.lo):
            symmetrize_matrix(K)
            # W'KW is linear in K: symmetrizing K symmetrizes its sketch
            seen.sketch, seen.asymmetry = 0.5 * (seen.sketch + seen.sketch.T), 0.0
            seen.hi, seen.lo = float(K.max()), float(K.min())  # the averages' extremes, exactly
        if scales is not None:
            K *= scales[m]
        if normalization is None:
            return seen, 1.0
        divisor = float(exact[m]) if np.isfinite(exact[m]) else float(scalar_divisors(K[None], normalization)[0])
        if divisor > 0.0:  # else (or NaN) the checks raise before the stack is used
            K /= divisor
        return seen, divisor

    stack, finished = build_stack(X, specs, finish=finish)
    return BuiltKernels(stack, [seen for seen, _ in finished], np.array([d for _, d in finished]))


def built_kernel_set(cls: type, X: np.ndarray, specs: Sequence[KernelSpec], names: Sequence[str],
                     normalization: str | None, scales: np.ndarray | None = None):
    """``cls.from_data`` for trusted specs: each kernel checked and normalized on its thread, the
    same set as validating and normalizing after. ``scales``: each kernel multiplied by its
    scale instead (the points of a set normalized over more points: its ``scales`` stay 1)."""
    built = build_kernels(X, specs, normalization, SYM_TOL, scales)
    kernels = cls(OwnedStack(built.stack, True, built.visits), names)
    # the visits saw each kernel before its scale and divisor: W'KW is linear in K, and its
    # largest |entry| is the same products' largest (rounding to nearest is monotone and odd)
    if scales is not None:
        kernels._sketch = kernels._sketch * np.asarray(scales)[:, None, None]
        if kernels._max_abs is not None:
            kernels._max_abs = kernels._max_abs * np.abs(np.asarray(scales, dtype=float))
    if normalization is not None:
        check_divisors(built.divisors, kernels.names, normalization)
        kernels._keep_divided(kernels, built.divisors)
    return kernels
