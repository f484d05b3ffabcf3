"""BLAS thread limits, set and restored by the main thread only.

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
could be left at one BLAS thread for good. So a limit is set and restored by the
main thread (around the whole multiclass fit as well as around each step or loop), and a
worker thread's request is left to the main thread's limit. Inside a limit the main thread
already holds, a nested request of the same limit does nothing either (setting a limit
costs ~35 µs, once per weight step of the interleaved core otherwise).
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

    In the main thread it limits BLAS and restores its thread count on exit; in any
    other thread it does nothing (the main thread's limit, if any, holds there too).
    """
    if threading.current_thread() is not threading.main_thread() or _held["single"]:
        return nullcontext()
    return _limited("single", _blas_controller())


def numpy_blas_only() -> AbstractContextManager:
    """A context in which every BLAS library but NumPy's runs on one thread (see the module
    docstring); in any thread but the main one, or with only one BLAS loaded, it does nothing."""
    if threading.current_thread() is not threading.main_thread() or _held["others"] or _held["single"]:
        return nullcontext()
    others = _other_blas()
    return nullcontext() if others is None else _limited("others", others)


#: Which limits the main thread holds now.
_held = {"single": False, "others": False}


@contextmanager
def _limited(name: str, controller) -> Iterator[None]:
    with controller.limit(limits=1):
        _held[name] = True
        try:
            yield
        finally:
            _held[name] = False
