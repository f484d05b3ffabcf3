"""The one layout every compiled entry point takes its read-only arrays in.

numba compiles a function once per argument type, and a read-only array is a type of its own:
the same kernels given as a :class:`~mklopt.kernels.KernelSet`'s stack (read-only) and as a
user's array (writable) would compile each entry point twice. :func:`frozen` makes the
inputs an entry point only reads C-contiguous, of a fixed dtype and read-only (a view: no
copy unless the dtype or layout differs), so each entry point has one signature.
"""

from __future__ import annotations

import numpy as np

__all__ = ["frozen"]


def frozen(array, dtype=float) -> np.ndarray:
    """A read-only C-contiguous view of ``array`` as ``dtype`` (a copy only when needed)."""
    view = np.ascontiguousarray(array, dtype=dtype).view()
    view.flags.writeable = False
    return view
