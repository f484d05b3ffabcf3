"""How much memory a dense kernel stack needs, checked before it is allocated."""

from __future__ import annotations

import os

from ..exceptions import KernelError

__all__ = ["available_bytes", "check_stack_fits", "stack_bytes"]


def available_bytes() -> int | None:
    """Memory the system can give now (Linux ``MemAvailable``, else the physical total); None if unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def stack_bytes(M: int, n_rows: int, n_cols: int | None = None) -> float:
    """Bytes of an (M, n_rows, n_cols) float64 stack (``n_cols`` defaults to ``n_rows``)."""
    return 8.0 * M * n_rows * (n_rows if n_cols is None else n_cols)


def _size(nbytes: float) -> str:
    return f"{nbytes / 2**30:.1f} GiB" if nbytes >= 2**30 else f"{nbytes / 2**20:.2f} MiB"


def check_stack_fits(M: int, n_rows: int, n_cols: int) -> None:
    """Raise :class:`~mklopt.exceptions.KernelError` when an (M, n_rows, n_cols) float64 stack
    cannot fit in the memory available now, naming the representations that need none."""
    needed = stack_bytes(M, n_rows, n_cols)
    free = available_bytes()
    if free is not None and needed > free:
        raise KernelError(
            f"the dense kernel stack of {M} kernels on {n_rows} x {n_cols} points needs "
            f"{_size(needed)} but {_size(free)} are available: compute the "
            "kernels on the fly with driver='chunking' (KernelSet.from_data(X, specs, lazy=True); "
            "the estimators do so with normalization None, 'trace' or 'spherical') or use "
            "low-rank factors (rank=r).")
