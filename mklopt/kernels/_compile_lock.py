"""numba's on-disk cache, safe when several processes compile mklopt's code at once.

numba names the file of a newly compiled signature after the number of entries in the
function's cache index. Two processes that compile new signatures of one function at the
same time (parallel test workers, Dask or joblib workers on a cold cache) can therefore
write their machine code under one name, and a later load runs code built for other
argument types: a segmentation fault. :func:`locked_cache` gives a compiled function a
cache whose reads and writes take an inter-process file lock in the cache folder, so
each write sees the index the previous one left.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from numba.core.caching import FunctionCache

try:
    import fcntl
except ImportError:  # Windows: numba's own behaviour (no lock)
    fcntl = None

__all__ = ["locked_cache"]

LOCK_NAME = "mklopt-numba-cache.lock"


@contextlib.contextmanager
def _locked(folder: str) -> Iterator[None]:
    if fcntl is None:
        yield
        return
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, LOCK_NAME), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class _LockedFunctionCache(FunctionCache):
    """numba's function cache with every load and save under the folder's file lock."""

    def load_overload(self, sig, target_context):
        with _locked(self._cache_path):
            return super().load_overload(sig, target_context)

    def save_overload(self, sig, data):
        with _locked(self._cache_path):
            super().save_overload(sig, data)


def locked_cache(dispatcher):
    """Give a ``numba.njit(cache=True)`` function the locked cache (the same dispatcher back).

    Put it above the ``@njit(cache=True)`` decorator.
    """
    if getattr(dispatcher, "_cache", None) is not None and isinstance(dispatcher._cache, FunctionCache):
        dispatcher._cache = _LockedFunctionCache(dispatcher.py_func)
    return dispatcher
