"""BLAS thread limits, held process-wide and restored by the context that set them.

Two limits:

* :func:`single_blas_thread`: every BLAS on one thread while small dense work runs
  (the interleaved core's steps, the kernels built on the thread pool).
* :func:`numpy_blas_only`: every BLAS library *but NumPy's* on one thread while an outer loop
  runs. Wheels of NumPy and SciPy each bundle their own OpenBLAS, each with its own
  threads, and each library's threads spin for a while after a call. In a loop that
  alternates the two (NumPy's products over the stack, SciPy's Cholesky factor or its
  ``daxpy``), the threads one library left spinning took the cores the other's next call
  waited for: calls of ~0.1 ms took 4-8 ms, one time in six. On 2 cores that made
  ridge-regression MKL (``loss="squared_error"``) on 400 points 7-14× slower and the
  cutting plane 2.3× slower than with one BLAS thread. With one library threaded, nothing
  waits; NumPy's keeps its threads for the stack passes.

threadpoolctl sets the thread count of a pthreads OpenBLAS for the whole process (one
pool serves every thread), and threadpoolctl (3.8 here) lets only the first thread that
sets it control it: limits set in other threads silently do nothing. When each one-vs-rest
class, fitted on its own thread, limited BLAS and restored "the original", the process
could be left at one BLAS thread for good. So each limit is held process-wide, under one
lock: a context that finds it unset sets it, and the same context restores it when it
ends (threadpoolctl would ignore a restore from another thread); contexts that find it set
only run under it (nested ones, other threads'), and run on without it if the one that set
it ends first. The estimators hold it around a whole multiclass fit, so that the classes'
threads run under the main thread's limit. Any thread may set one (a Dask worker runs its
fits on a thread of its own); where another thread controls the libraries, the request
does nothing. Setting a limit costs ~35 µs, once per weight step of the interleaved core
otherwise.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path

__all__ = ["single_blas_thread", "numpy_blas_only"]


@functools.lru_cache(maxsize=1)
def _blas_controller():
    """threadpoolctl's view of the loaded BLAS libraries, found once per process.

    Finding them scans ``/proc/self/maps`` (about 7 ms here), which
    ``threadpool_limits`` repeats at every call.
    """
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController().select(user_api="blas")


@functools.lru_cache(maxsize=1)
def _other_blas():
    """The loaded BLAS libraries that are not NumPy's (None when there are none, or when
    NumPy's cannot be told apart: then the libraries are left as they are)."""
    import numpy as np

    controllers = _blas_controller().lib_controllers
    if len(controllers) < 2:
        return None
    home = Path(np.__file__).resolve().parent
    bundled = (home, home.parent / "numpy.libs", home / ".dylibs")  # wheels' own copies
    numpys = [c for c in controllers if any(Path(c.filepath).resolve().is_relative_to(b) for b in bundled)]
    if len(numpys) != 1:
        return None
    others = [c.filepath for c in controllers if c is not numpys[0]]
    return _blas_controller().select(filepath=others)


def single_blas_thread() -> AbstractContextManager:
    """A context in which BLAS runs on one thread: small dense work (order ~100) runs
    several times faster than with threads that wait for each other.

    It limits BLAS, unless a limit is held already, and restores the thread counts when it
    ends (see the module docstring for other threads)."""
    return _shared_limit("single", _blas_controller())


def numpy_blas_only() -> AbstractContextManager:
    """A context in which every BLAS library but NumPy's runs on one thread (see the module
    docstring); with only one BLAS loaded it does nothing."""
    others = _other_blas()
    return nullcontext() if others is None else _shared_limit("others", others)


#: The lock, and of each limit held: threadpoolctl's limiter and the context that set it.
_lock = threading.Lock()
_limiters: dict = {}


@contextmanager
def _shared_limit(name: str, controller) -> Iterator[None]:
    me = object()  # this context (a nested one in the same thread is another)
    with _lock:
        if name not in _limiters:
            _limiters[name] = (controller.limit(limits=1), me)
    try:
        yield
    finally:
        with _lock:
            limiter, owner = _limiters.get(name, (None, None))
            if owner is me:  # only the thread that set a limit can restore it (threadpoolctl)
                del _limiters[name]
                limiter.restore_original_limits()
