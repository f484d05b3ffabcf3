"""A given stack checked once: the validation scan, symmetrization, the PSD test and clipping.

:class:`~mklopt.kernels.KernelSet` hands its input here. The scan
(:mod:`~mklopt.kernels._scan`) reads each kernel once for finiteness, size, symmetry, the
fingerprint's sketch and, for large kernels, the PSD screen; kernels asymmetric within
tolerance are symmetrized, the PSD test (:mod:`~mklopt.kernels._psd`) clears, clips or
rejects each kernel. A valid float64 C-contiguous input is used as it is; any change is made
in one copy.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..exceptions import MKLWarning, NotPSDError
from ._psd import EXACT_MAX_N, check_psd, clip, lanczos_screen
from ._scan import judge, scan_stack
from ._stack import as_stack, check_names, symmetrize

__all__ = ["Checked", "checked_stack", "with_precision_hint"]


@dataclass
class Checked:
    """The checked stack, its sketch (None once clipped), its kernels' largest absolute
    entries (None once changed: symmetrized or clipped), how PSD was established and the
    eigenvalues clipped (kernel name -> most negative one removed)."""

    stack: np.ndarray
    sketch: np.ndarray | None
    largest: np.ndarray | None = None
    validated_by: str = "none"
    clipped: dict[str, float] = field(default_factory=dict)


def checked_stack(kernels: Any, names, psd: bool, symmetric: bool, psd_tol: float, sym_tol: float,
                  psd_check: str) -> Checked:
    """``kernels`` checked as :class:`~mklopt.kernels.KernelSet`'s parameters ask: the input
    itself, or one copy when it must change (symmetrized or clipped).

    Raises
    ------
    KernelError
        A kernel not finite, all zero, too large, or asymmetric beyond ``sym_tol``.
    NotPSDError
        A kernel with an eigenvalue below the noise level and ``-psd_tol`` times its largest.
    """
    given = as_stack(kernels)
    stack = given.stack
    names = check_names(names, stack.shape[0])
    # the scan screens large kernels while they are in cache; small ones get the exact test
    trusted = getattr(kernels, "psd_by_construction", False)
    screen = (lanczos_screen if psd and not trusted and psd_check == "lanczos"
              and stack.shape[1] > EXACT_MAX_N else None)
    visits = getattr(kernels, "visits", None)  # made while mklopt built the kernels
    scan = (judge(visits, names, stack.shape[1], sym_tol) if visits is not None and screen is None
            else scan_stack(stack, names, symmetric, sym_tol, screen))
    checked = Checked(stack, scan.sketch, scan.scale)
    # Rounding-noise asymmetry is removed only when it is free (a stack mklopt owns).
    to_symmetrize = scan.asymmetric + (scan.noise_asymmetric if given.owned else [])
    if to_symmetrize:
        checked.largest = None
        checked.stack = stack if given.owned else stack.copy()
        given.owned = True
        symmetrize(checked.stack, to_symmetrize)
        # W'KW is linear in K: symmetrizing K symmetrizes its sketch (no second read)
        sketch = checked.sketch[to_symmetrize]
        checked.sketch[to_symmetrize] = 0.5 * (sketch + sketch.transpose(0, 2, 1))
    if psd and trusted:
        checked.validated_by = "construction"
    elif psd:
        checked.validated_by = "lanczos" if screen is not None else "cholesky"
        _clear_or_clip(checked, given, names, scan.scale, psd_tol, psd_check, scan.screened)
    return checked


def with_precision_hint(error: NotPSDError, precision: str | None,
                        clip_with: str = "a larger psd_tol (e.g. psd_tol=1e-6)") -> NotPSDError:
    """``error`` with what to do when the kernels came in ``precision`` (``"float32"``,
    ``"float16"``; None: ``error`` as it is): checked in float64, their rounding is not noise (a
    PSD kernel of low rank rounded to float32 shows eigenvalues of about -1e-8 of its largest)."""
    if precision is None:
        return error
    return NotPSDError(f"{error} The kernels were given as {precision}: mklopt checks them in float64, "
                       f"where that rounding is not noise; pass float64 kernels, or clip the rounding with "
                       f"{clip_with}.")


def _clear_or_clip(checked: Checked, given, names: list[str], scale: np.ndarray, psd_tol: float,
                   psd_check: str, screened: dict) -> None:
    """The PSD test of every kernel of ``checked``; small negative eigenvalues clipped in a copy
    (a warning says which), larger ones a :class:`NotPSDError`."""
    try:
        to_clip = check_psd(checked.stack, names, scale, psd_tol, psd_check, screened)
    except NotPSDError as exc:
        raise with_precision_hint(exc, given.low_precision) from None
    if to_clip:
        checked.sketch = checked.largest = None
        checked.stack = checked.stack if given.owned else checked.stack.copy()
        removed = clip(checked.stack, to_clip)
        checked.clipped = {names[m]: v for m, v in removed.items()}
        warnings.warn(
            "clipped small negative eigenvalues (numerical noise) of kernels "
            + ", ".join(f"'{k}' ({v:.2g})" for k, v in checked.clipped.items()),
            MKLWarning, stacklevel=4)
