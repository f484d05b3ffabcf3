"""Issue 57: the compiled core can be compiled ahead (``mklopt compile``), and a fit that waits
for the compiler says so once, on the ``mklopt`` logger."""

from __future__ import annotations

import logging
import time

import numba
import numpy as np
import pytest

import mklopt
from mklopt.cli import main
from mklopt._compiled import watch


def _slow_to_compile():
    """A fresh numba function whose module is mklopt's (the watch only follows mklopt's code)."""
    def body(x):
        total = 0.0
        for i in range(x.size):
            total += np.sin(x[i]) * np.cos(x[i]) + np.sqrt(abs(x[i]))
        return total
    body.__module__ = "mklopt.fake_module"
    return numba.njit(body)


@pytest.fixture
def listener(monkeypatch):
    """A fresh watch announcing at once; the process's own watch stays quiet meanwhile."""
    monkeypatch.setattr(watch.WATCH, "announced", True)
    monkeypatch.setattr(watch, "ANNOUNCE_AFTER", 0.0)
    monkeypatch.setattr(watch, "WATCH", watch.CompileWatch())
    monkeypatch.setattr(watch, "_installed", False)
    fresh = watch.install()
    yield fresh
    numba.core.event.unregister("numba:compile", fresh)


def test_a_long_compilation_is_announced_once(listener, caplog):
    with caplog.at_level(logging.WARNING, logger="mklopt"):
        _slow_to_compile()(np.ones(3))
        time.sleep(0.2)  # the notice comes from a timer thread
        _slow_to_compile()(np.ones(3))
        time.sleep(0.2)
    notices = [r for r in caplog.records if r.name == "mklopt" and "compiling its core" in r.getMessage()]
    assert len(notices) == 1
    assert [name for name, _ in listener.records] == ["mklopt.fake_module.body"] * 2


def test_other_libraries_compilations_are_not_ours(listener, caplog):
    with caplog.at_level(logging.WARNING, logger="mklopt"):
        numba.njit(lambda x: x + 1)(1.0)
        time.sleep(0.2)
    assert listener.records == [] and not caplog.records


def test_mklopt_compile_leaves_nothing_for_a_fit_to_compile(capsys):
    assert main(["compile"]) == 0
    out = capsys.readouterr().out
    assert out.strip().splitlines()[-1].startswith("total ")
    X = np.random.default_rng(1).standard_normal((70, 3))
    with watch.watching() as compiled:
        mklopt.MKLClassifier().fit(X, np.arange(70) % 3)
        mklopt.fit(mklopt.KernelSet.from_data(X, ["linear", "rbf"], lazy=True), np.sign(X[:, 0]), "chunking")
    assert compiled == []


SIGNATURES = """
import importlib, json, warnings
import numpy as np
import mklopt
from mklopt._compiled import ENTRY_POINTS
from mklopt._compiled.smo import _CHUNKS

warnings.simplefilter("ignore")
mklopt.compile()
rng = np.random.default_rng(0)
X = rng.standard_normal((80, 4))
y = np.where(X[:, 0] > 0, 1.0, -1.0)
stack = np.stack([X @ X.T, np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(-1))])  # a user's writable stack
frozen = stack.copy()
frozen.flags.writeable = False
for K in (stack, frozen):
    for driver in ("chunking", "wrapper", "cutting_plane"):
        mklopt.fit(mklopt.KernelSet(K), y, driver)
mklopt.MKLClassifier(multiclass="ovo").fit(X, np.arange(80) % 3)
mklopt.MKLClassifier(kernels="precomputed").fit(np.moveaxis(stack, 0, -1), y)
mklopt.MKLClassifier(kernels="precomputed").fit(mklopt.KernelSet(stack), y)
from mklopt.estimators import _base
_base.LAZY_STACK_BYTES = 8 * 5 * 80 * 80 - 1  # the 5 default kernels on the fly, the pairs' stacks dense
assert mklopt.MKLClassifier(n_jobs=1).fit(X, np.arange(80) % 3).multiclass_ == "ovo"
counts = {}
for module_name, functions in ENTRY_POINTS.items():
    module = importlib.import_module("mklopt._compiled." + module_name)
    for name in functions:
        dispatchers = list(_CHUNKS.values()) if name == "chunk" else [getattr(module, name)]
        counts[module_name + "." + name] = [len(d.signatures) for d in dispatchers]
print(json.dumps(counts))
"""


def test_each_compiled_entry_point_has_one_signature():
    """Issue 57: after ``mklopt compile`` and fits from a user's writable stack, a read-only
    one, the estimators, one-vs-one, a precomputed KernelSet and one-vs-one on kernels on the
    fly (the pairs on their dense stacks), every entry point listed by ``mklopt._compiled`` was
    compiled for one signature at most (inputs made read-only and C-contiguous at the
    boundary), the SMO chunk once per variant. In a fresh process: what other tests
    compiled in this one does not count."""
    import json
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", SIGNATURES], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    counts = json.loads(done.stdout.strip().splitlines()[-1])
    assert {name: c for name, c in counts.items() if max(c) > 1} == {}
    assert sum(counts["smo.chunk"]) >= 3  # compile() reached the variants


def test_all_compiled_code_lives_in_one_subpackage():
    """Issue 57: the compile surface in one place (``mklopt._compiled``)."""
    from pathlib import Path

    package = Path(mklopt.__file__).parent
    outside = [str(path.relative_to(package)) for path in package.rglob("*.py")
               if "njit(" in path.read_text(encoding="utf-8") and path.parent.name != "_compiled"]
    assert outside == []
