"""numba's on-disk cache, safe when several processes compile mklopt's code at once.

numba names the file of a newly compiled signature after the number of entries in the
function's cache index. Two processes that compile new signatures of one function at the
same time (parallel test workers, Dask or joblib workers on a cold cache) can therefore
write their machine code under one name, and a later load runs code built for other
argument types: a segmentation fault. :func:`locked_cache` gives a compiled function a
cache whose reads and writes take an inter-process file lock in the cache folder, so
each write sees the index the previous one left.

numba also judges a cached function fresh by its own source file only: machine code
that inlined a compiled function of another file outlives a change there (an upgrade in
place, an edit in a checkout) and can crash. The locked cache's stamp therefore also
holds a digest of every mklopt source file with compiled functions, and each entry's
machine code is stored under a name derived from its signature, never a running number
that an entry of another signature or an older source could hold.

**Machine code built with the package.** Installing mklopt compiles the default fit's
functions (:mod:`~mklopt._compiled.ahead`) into the read-only folder ``_ahead`` beside this
file. A function whose signature is not in numba's cache looks there next: an entry is used
only where numba's version, the machine (CPU name and features), the function's bytecode
and the digest of every compiled source are those it was built with, so a stale or foreign
entry is never loaded, only compiled again. ``MKLOPT_NO_AHEAD=1`` ignores the folder.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import pickle
from collections.abc import Iterator
from pathlib import Path

from numba.core.caching import FunctionCache, IndexDataCacheFile

try:
    import fcntl
except ImportError:  # Windows: numba's own behaviour (no lock)
    fcntl = None

__all__ = ["locked_cache", "save_ahead", "AHEAD_FOLDER"]

LOCK_NAME = "mklopt-numba-cache.lock"
#: The machine code built with the package (see the module docstring).
AHEAD_FOLDER = Path(__file__).resolve().parent / "_ahead"


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


@functools.lru_cache(maxsize=1)
def compiled_sources_digest() -> str:
    """SHA-256 of every source file that defines a cached compiled function (all of them
    live in this subpackage: its files are the same in a checkout, a source tree being built
    and an installed wheel)."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).resolve().parent.glob("*.py")):
        text = path.read_bytes()
        if b"cache=True" in text:
            digest.update(path.name.encode() + b"\0" + text)
    return digest.hexdigest()


class _KeyNamedCacheFile(IndexDataCacheFile):
    """numba's index and data files, each entry's data file named by a hash of its key."""

    def save(self, key, data):
        overloads = self._load_index()
        name = overloads.get(key)
        if name is None:
            tag = hashlib.sha256(pickle.dumps((key, self._source_stamp))).hexdigest()[:20]
            name = self._data_name_pattern.replace("{number:d}", tag)
        self._save_data(name, data)  # the data first: an index never names missing code
        overloads[key] = name
        self._save_index(overloads)


class _LockedFunctionCache(FunctionCache):
    """numba's function cache with every load and save under the folder's file lock, fresh
    only while its own file and every other compiled source are unchanged."""

    def __init__(self, py_func) -> None:
        super().__init__(py_func)
        old = self._cache_file
        self._base = old._index_name[:-len(".nbi")]
        self._cache_file = _KeyNamedCacheFile(
            cache_path=old._cache_path, filename_base=self._base,
            source_stamp=(*old._source_stamp, compiled_sources_digest()))

    def ahead_file(self, folder: Path = AHEAD_FOLDER) -> _KeyNamedCacheFile:
        """The index and data files of this function in a folder of code built with the
        package; fresh while every compiled source is unchanged (wherever it lies, whenever
        it was written: no file times)."""
        return _KeyNamedCacheFile(cache_path=str(folder), filename_base=self._base,
                                  source_stamp=("ahead", compiled_sources_digest()))

    def load_overload(self, sig, target_context):
        with _locked(self._cache_path):
            found = super().load_overload(sig, target_context)
        if found is None and self._enabled and AHEAD_FOLDER.is_dir() and not os.environ.get("MKLOPT_NO_AHEAD"):
            with self._guard_against_spurious_io_errors():
                data = self.ahead_file().load(self._index_key(sig, target_context.codegen()))
                found = None if data is None else self._impl.rebuild(target_context, data)
        return found

    def save_overload(self, sig, data):
        with _locked(self._cache_path):
            super().save_overload(sig, data)


def save_ahead(dispatcher, folder: Path) -> None:
    """Write every compiled signature of ``dispatcher`` (a :func:`locked_cache` function)
    into ``folder``, as code built with the package."""
    cache = dispatcher._cache
    target = cache.ahead_file(folder)
    os.makedirs(folder, exist_ok=True)
    for args, cres in dispatcher.overloads.items():  # keyed as a call looks them up: the argument types
        if cache._impl.check_cachable(cres):
            target.save(cache._index_key(args, cres.codegen), cache._impl.reduce(cres))


def locked_cache(dispatcher):
    """Give a ``numba.njit(cache=True)`` function the locked cache (the same dispatcher back).

    Put it above the ``@njit(cache=True)`` decorator.
    """
    if getattr(dispatcher, "_cache", None) is not None and isinstance(dispatcher._cache, FunctionCache):
        dispatcher._cache = _LockedFunctionCache(dispatcher.py_func)
    return dispatcher
