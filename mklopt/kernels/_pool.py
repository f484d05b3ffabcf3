"""Worker threads kept from call to call: the thread pools of kernel builds and of problems
side by side.

A kernel build hands its passes to threads five times (the two Gram matrices, the RBF and
the product tiles, each kernel's checks), and a one-vs-rest fit its classes once. Each pass
used to start threads of its own, and each new thread paid again for what a thread sets up
on first use (OpenBLAS's buffers of its first product, ~1 ms here): the default
``MKLClassifier()`` build on scikit-learn's digits took 73 ms with new threads each time and
62-66 ms with threads kept (2 cores, medians of 25 builds). The threads are kept per pool
name and size (the cores a caller is granted) and wait idle between calls.

A call made from one of a pool's own threads (a nested call) gets threads of its own for the
call, so that a pool never waits on work queued behind itself; after ``fork`` the child
process starts its pools afresh (the parent's threads do not exist there).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any

__all__ = ["on_kept_threads"]

_lock = threading.Lock()
_pools: dict[tuple[str, int], ThreadPoolExecutor] = {}
_local = threading.local()


def on_kept_threads(name: str, work: Callable[[Any], Any], items: Iterable[Any], threads: int) -> list:
    """``[work(item) for item in items]`` on ``threads`` worker threads of the pool ``name``,
    kept for later calls; every task has ended when it returns, and the first exception a task
    raised (in the order of ``items``) is raised then."""
    items = list(items)
    if getattr(_local, "pool", None) == name:  # nested: never queue behind our own task
        with ThreadPoolExecutor(max_workers=threads) as own:
            return list(own.map(work, items))
    futures = [_pool(name, threads).submit(work, item) for item in items]
    try:
        wait(futures)
    except BaseException:  # interrupted while waiting: what has not started never will
        for future in futures:
            future.cancel()
        raise
    return [future.result() for future in futures]


def _pool(name: str, threads: int) -> ThreadPoolExecutor:
    with _lock:
        pool = _pools.get((name, threads))
        if pool is None:
            pool = _pools[(name, threads)] = ThreadPoolExecutor(
                max_workers=threads, thread_name_prefix=f"mklopt-{name}", initializer=_mark, initargs=(name,))
        return pool


def _mark(name: str) -> None:
    _local.pool = name


def _start_afresh() -> None:
    global _lock
    _lock = threading.Lock()
    _pools.clear()


os.register_at_fork(after_in_child=_start_afresh)
