"""How many threads a fit may take: the cores the caller grants, not all of the machine's.

Inside a joblib (loky) worker, a Dask worker or a ``threadpoolctl.threadpool_limits``
block, the caller has said how many threads each task may use: loky and Dask's nanny set
``OMP_NUM_THREADS`` in their workers (joblib to ``cores // n_jobs``, Dask to 1), and
``threadpool_limits`` sets the OpenMP runtimes' counts. numba reads none of them (its pool
has ``NUMBA_NUM_THREADS`` threads, all the cores), so a ``GridSearchCV(n_jobs=2)`` on 2 cores
ran 2 × 2 threads. :func:`granted_threads` is the smallest of the machine's cores,
``OMP_NUM_THREADS`` and the OpenMP runtimes' limits; the kernel builds' thread pools and the
compiled loops (:func:`numba_threads`) take that many.

The threads of the compiled loops also wait passively at their barriers: mklopt sets
``OMP_WAIT_POLICY=PASSIVE`` when it is imported, unless it is set already (see
:mod:`mklopt`), so that another busy process slows a fit in proportion instead of by
multiples (OpenMP threads that spin while the core they wait for is taken).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["granted_threads", "numba_threads"]


def granted_threads() -> int:
    """The machine's cores, capped by ``OMP_NUM_THREADS`` and the OpenMP runtimes' limits."""
    limit = os.cpu_count() or 1
    env = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    if env.isdigit() and int(env) >= 1:
        limit = min(limit, int(env))
    try:
        counts = [lib.num_threads for lib in _openmp_runtimes()]
    except Exception:  # threadpoolctl could not inspect a library: the limits known so far
        counts = []
    return max(1, min([limit, *counts]))


def _openmp_runtimes() -> list:
    """threadpoolctl's controllers of the OpenMP runtimes loaded now (found once per process:
    finding them scans every loaded library, 3 ms; each count is then read live)."""
    global _RUNTIMES
    if _RUNTIMES is None:
        from threadpoolctl import ThreadpoolController

        _RUNTIMES = list(ThreadpoolController().select(user_api="openmp").lib_controllers)
    return _RUNTIMES


_RUNTIMES: list | None = None


@contextmanager
def numba_threads(threads: int | None = None) -> Iterator[int]:
    """numba's thread count in this thread at most ``threads`` (default :func:`granted_threads`)
    inside the block, then restored (numba keeps the count per thread)."""
    import numba

    previous = numba.get_num_threads()
    wanted = granted_threads() if threads is None else int(threads)
    numba.set_num_threads(max(1, min(wanted, previous, numba.config.NUMBA_NUM_THREADS)))
    try:
        yield numba.get_num_threads()
    finally:
        numba.set_num_threads(previous)

