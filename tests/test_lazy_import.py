"""``import mklopt`` and ``mklopt --help`` import none of the heavy libraries (CVXPY, SciPy,
scikit-learn, numba): the public names load on first use (PEP 562), the first fit pays the
imports (3-4 s on a 2-core machine, ~0.1 s without them)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import mklopt

HEAVY = ("cvxpy", "scipy", "sklearn", "numba")


def _imported_after(code: str) -> set[str]:
    probe = f"{code}\nimport sys\nprint('LOADED', *sorted(m for m in {HEAVY!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.rsplit("LOADED", 1)[1].split())


@pytest.mark.parametrize("code", [
    "import mklopt",
    "import mklopt.cli as cli\ntry:\n    cli.main(['--help'])\nexcept SystemExit as stop:\n    assert stop.code == 0",
    "import mklopt.cli as cli\ncli.build_parser().parse_args(['solve', '--data', 'x.npz', '--C', '10'])",
])
def test_import_and_help_load_no_heavy_library(code):
    assert _imported_after(code) == set()


def test_a_public_name_loads_what_it_needs():
    assert _imported_after("import mklopt\nmklopt.MKLClassifier") >= {"sklearn", "numba"}


@pytest.mark.parametrize("name", mklopt.__all__)
def test_every_public_name_is_its_module_s_object(name):
    value = getattr(mklopt, name)
    module = __import__(f"mklopt.{mklopt.PUBLIC[name]}", fromlist=[name])
    assert value is getattr(module, name) and name in dir(mklopt)


def test_subpackages_and_unknown_names():
    assert mklopt.kernels.KernelSet is mklopt.KernelSet  # a subpackage without importing it first
    with pytest.raises(AttributeError, match="no attribute 'KernelSett'"):
        mklopt.KernelSett  # noqa: B018
    assert set(mklopt.__all__) == set(mklopt.PUBLIC)
