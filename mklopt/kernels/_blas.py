"""BLAS on one thread while small dense work runs, set and restored by the main thread only.

threadpoolctl sets the thread count of a pthreads OpenBLAS for the whole process (one
pool serves every thread), and threadpoolctl (3.8 here) lets only the first thread that
sets it control it: limits set in other threads silently do nothing. When each one-vs-rest
class, fitted on its own thread, limited BLAS and restored "the original", the process
could be left at one BLAS thread for good. So the limit is set and restored by the
main thread (around the whole multiclass fit as well as around each step), and a
worker thread's request is left to the main thread's limit.
"""

from __future__ import annotations

import functools
import threading
from contextlib import AbstractContextManager, nullcontext

__all__ = ["single_blas_thread"]


@functools.lru_cache(maxsize=1)
def _blas_controller():
    """threadpoolctl's view of the loaded BLAS libraries, found once per process.

    Finding them scans ``/proc/self/maps`` (about 7 ms here), which
    ``threadpool_limits`` repeats at every call.
    """
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def single_blas_thread() -> AbstractContextManager:
    """A context in which BLAS runs on one thread: small dense work (order ~100) runs
    several times faster than with threads that wait for each other.

    In the main thread it limits BLAS and restores its thread count on exit; in any
    other thread it does nothing (the main thread's limit, if any, holds there too).
    """
    if threading.current_thread() is not threading.main_thread():
        return nullcontext()
    return _blas_controller().limit(limits=1, user_api="blas")
