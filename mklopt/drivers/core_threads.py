"""How many threads may run the compiled core at once (problems side by side).

The interleaved core's compiled loops (:mod:`mklopt._compiled.smo`,
:mod:`mklopt._compiled.columns`) release the GIL, so independent problems on the
same kernels — the classes of a one-vs-rest fit — run side by side on threads,
sharing the kernel data without copies. Their per-kernel passes are themselves
numba ``parallel`` loops; two threads may launch those at once only on a
thread-safe numba threading layer (OpenMP or TBB, which numba's pip wheels
load; not the ``workqueue`` fallback), otherwise the problems run one at a time.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import numba

from ..kernels._threads import granted_threads

__all__ = ["core_threads", "threadsafe_layer", "on_threads"]

_THREADSAFE = ("omp", "tbb")


def threadsafe_layer() -> bool:
    """True when numba's threading layer (started or the one it will start) is thread-safe."""
    try:
        return numba.threading_layer() in _THREADSAFE
    except ValueError:  # not started yet: numba takes the first that loads of its choice
        pass
    choice = str(numba.config.THREADING_LAYER).lower()
    if choice in _THREADSAFE:
        return True  # numba refuses to start without it
    if choice not in ("default", "safe", "threadsafe", "forksafe"):
        return False
    candidates = ("tbbpool",) if choice == "safe" else ("tbbpool", "omppool")
    for module in candidates:
        try:
            importlib.import_module(f"numba.np.ufunc.{module}")
            return True
        except ImportError:
            continue
    return False


def core_threads(problems: int) -> int:
    """Threads for ``problems`` independent core problems: numba's thread count
    (``NUMBA_NUM_THREADS``, :func:`numba.set_num_threads`), capped by the threads the caller
    grants (:func:`~mklopt.kernels._threads.granted_threads`), on a thread-safe layer, else 1."""
    if problems <= 1 or not threadsafe_layer():
        return 1
    return max(1, min(int(numba.get_num_threads()), granted_threads(), int(problems)))


def on_threads(threads: int, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)`` with numba's thread count set to ``threads`` in the calling
    thread (numba keeps the count per thread), then restored.

    Problems side by side on ``k`` threads give each ``cores // k`` threads, so their
    ``parallel`` loops do not start more threads than there are cores.
    """
    previous = numba.get_num_threads()
    numba.set_num_threads(max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS)))
    try:
        return function(*args, **kwargs)
    finally:
        numba.set_num_threads(previous)
