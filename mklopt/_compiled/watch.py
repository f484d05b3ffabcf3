"""What numba compiles of mklopt, and one line when a fit waits for it.

mklopt's compiled core (the SMO steps, kernel columns, RBF tables and gradient updates of
the interleaved driver) is compiled by numba on its first use on a machine and cached on
disk; a fit that needs code not yet cached waits for the compiler: about 4 s for what the
default estimator uses on small dense kernels on a 2-core machine, more for kernels on the fly
and the threaded variants of large problems. Rather than leave that wait silent, a compilation of mklopt's code that lasts :data:`ANNOUNCE_AFTER` seconds logs one
line, once per process, on the ``mklopt`` logger at ``WARNING`` level: Python shows it by
default (without any logging configuration, like a warning), and the standard logging
configuration silences it::

    logging.getLogger("mklopt").setLevel(logging.ERROR)

:class:`CompileWatch` records the compilations (function, seconds) for ``mklopt compile``
(:func:`mklopt.compiling.compile`), which does all of it ahead, and for the benchmarks.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from numba.core import event

__all__ = ["ANNOUNCE_AFTER", "CompileWatch", "watching", "install"]

#: Seconds of compilation after which the one line is logged.
ANNOUNCE_AFTER = 2.0
LOGGER = logging.getLogger("mklopt")
MESSAGE = ("mklopt is compiling its core for this machine (once: the code is cached on disk; "
           "seconds to a minute, by the paths a fit takes). Run 'mklopt compile' ahead, e.g. in an "
           "image build.")


def _ours(data: dict) -> str | None:
    """``module.function`` of a compilation of mklopt's own code, else None."""
    dispatcher = data.get("dispatcher")
    function = getattr(dispatcher, "py_func", None)
    module = getattr(function, "__module__", "") or ""
    return f"{module}.{function.__name__}" if module.startswith("mklopt") else None


class CompileWatch(event.Listener):
    """Listens to numba's compile events: records mklopt's and announces a long wait once.

    Nested compilations (a compiled function compiling the functions it calls) count
    once, as the outermost one's time.
    """

    def __init__(self) -> None:
        self.depth = 0
        self.started = 0.0
        self.records: list[tuple[str, float]] = []
        self.announced = False
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()

    def on_start(self, ev) -> None:
        if _ours(ev.data) is None:
            return
        with self._lock:
            self.depth += 1
            if self.depth == 1:
                self.started = time.perf_counter()
                if not self.announced:
                    self._timer = threading.Timer(ANNOUNCE_AFTER, self._announce)
                    self._timer.daemon = True
                    self._timer.start()

    def on_end(self, ev) -> None:
        name = _ours(ev.data)
        if name is None:
            return
        with self._lock:
            self.depth = max(self.depth - 1, 0)
            if self.depth == 0:
                self.records.append((name, time.perf_counter() - self.started))
                if self._timer is not None:
                    self._timer.cancel()
                    self._timer = None

    def _announce(self) -> None:
        with self._lock:
            if self.announced or self.depth == 0:
                return
            self.announced = True
        LOGGER.warning(MESSAGE)

    def seconds(self) -> float:
        return sum(seconds for _, seconds in self.records)


#: The process's watch (installed by :func:`install` when mklopt is imported).
WATCH = CompileWatch()
_installed = False


def install() -> CompileWatch:
    """Register :data:`WATCH` with numba (once per process)."""
    global _installed
    if not _installed:
        event.register("numba:compile", WATCH)
        _installed = True
    return WATCH


@contextmanager
def watching() -> Iterator[list[tuple[str, float]]]:
    """The compilations of mklopt's code inside the ``with`` block: a list filled as they end."""
    install()
    start = len(WATCH.records)
    seen: list[tuple[str, float]] = []
    try:
        yield seen
    finally:
        seen.extend(WATCH.records[start:])
