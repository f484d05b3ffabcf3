"""Every compiled function of mklopt caches its machine code under an inter-process lock.

numba names a new signature's cache file after the length of the function's cache index,
so two processes compiling new signatures at once could swap each other's code; with
parallel test workers on a cold cache the interleaved core segfaulted (three workers lost
in one run). Each ``@njit(cache=True)`` function therefore carries the locked cache of
:mod:`mklopt._compiled.cache`.
"""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

from numba.core.registry import CPUDispatcher

from mklopt._compiled.cache import LOCK_NAME, _LockedFunctionCache, compiled_sources_digest

PACKAGE = Path(__file__).resolve().parent.parent / "mklopt"


def test_every_cached_compiled_function_has_the_locked_cache():
    modules = sorted({p for p in PACKAGE.rglob("*.py") if "cache=True" in p.read_text(encoding="utf-8")})
    assert len(modules) >= 5
    found = 0
    for path in modules:
        name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        module = importlib.import_module(name)
        declared = len(re.findall(r"^@(?:numba\.)?njit\([^\n]*cache=True", path.read_text(encoding="utf-8"), re.M))
        dispatchers = [v for v in vars(module).values()
                       if isinstance(v, CPUDispatcher) and v.__module__ == name]
        assert len(dispatchers) == declared, name
        for dispatcher in dispatchers:
            assert isinstance(dispatcher._cache, _LockedFunctionCache), f"{name}.{dispatcher.__name__}"
        found += len(dispatchers)
    assert found >= 20


def test_every_compiled_entry_point_releases_the_gil():
    """A compiled loop that holds the GIL stops every other thread of its process: a Dask
    worker's heartbeat (the scheduler restarts a worker silent for five minutes and loses
    the data only it held), the one-vs-rest classes fitted on threads, a progress bar.
    Helpers inlined into their callers (``inline="always"``) run under the caller's rule."""
    checked = 0
    for path in sorted(p for p in PACKAGE.rglob("*.py") if "njit(" in p.read_text(encoding="utf-8")):
        name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        module = importlib.import_module(name)
        for value in vars(module).values():
            if isinstance(value, CPUDispatcher) and value.__module__ == name:
                options = value.targetoptions
                if options.get("inline", "never") != "always":
                    assert options.get("nogil"), f"{name}.{value.__name__} holds the GIL"
                    checked += 1
    assert checked >= 20


def test_a_cached_function_is_stale_when_any_compiled_source_changes():
    """The stamp of every cache holds the digest of all compiled sources (callees in other
    files included): the SMO core inlines columns.py's functions. They all live in
    ``mklopt._compiled`` (tests/test_compiling.py), so the digest reads that folder."""
    import hashlib

    from mklopt._compiled.smo import _CHUNKS

    digest = hashlib.sha256()
    assert {p for p in PACKAGE.rglob("*.py") if b"cache=True" in p.read_bytes()} <= set(
        (PACKAGE / "_compiled").glob("*.py"))
    for path in sorted((PACKAGE / "_compiled").glob("*.py")):
        if b"cache=True" in path.read_bytes():
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    assert compiled_sources_digest() == digest.hexdigest()
    for chunk in _CHUNKS.values():  # the compiled variants of the SMO chunk
        assert chunk._cache._cache_file._source_stamp[-1] == digest.hexdigest()


def test_two_processes_compiling_at_once_both_succeed(tmp_path):
    """A cold cache, two processes compiling different signatures of one locked function."""
    source = tmp_path / "twice.py"
    source.write_text(
        "import sys\nfrom numba import njit\nfrom mklopt._compiled.cache import locked_cache\n"
        "@locked_cache\n@njit(cache=True)\ndef twice(x):\n    return 2 * x\n"
        "value = twice(int(sys.argv[1])) if sys.argv[2] == 'int' else twice(float(sys.argv[1]))\n"
        "print(value)\n")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    runs = [subprocess.Popen([sys.executable, str(source), "21", kind], cwd=tmp_path, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for kind in ("int", "float")]
    outs = [run.communicate(timeout=300) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], [err[-500:] for _, err in outs]
    assert [out.strip() for out, _ in outs] == ["42", "42.0"]
    assert list((tmp_path / "cache").rglob(LOCK_NAME))
    data = [p.name for p in (tmp_path / "cache").rglob("*.nbc")]
    # one file per signature, named by it (never numba's running number)
    assert len(data) == 2 and not any(re.search(r"\.\d+\.nbc$", name) for name in data), data
    again = subprocess.run([sys.executable, str(source), "4", "float"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=300)
    assert again.stdout.strip() == "8.0" and len(list((tmp_path / "cache").rglob("*.nbc"))) == 2
