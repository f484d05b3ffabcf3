"""Issue 34: mklopt installed the way users install it.

Builds the sdist and, from it, the wheel (``python -m build``), installs the
wheel into a fresh virtual environment outside the checkout, and from another
directory: imports every module, runs ``mklopt demo --small``, a ``mklopt solve --out``
→ ``mklopt verify`` round trip, ``python -m mklopt --version``, a chunking fit
caching its compiled code in a user cache folder (``NUMBA_CACHE_DIR``: how an
unwritable installed package folder is served) and ``learn_weights(..., "easymkl")``.
The sdist must hold the catalogue, the tests and the examples.

The test venv is built from the wheel and its declared dependencies only, so a
subpackage or data file missing from the wheel fails here (on the main of
round 3 it did: ``No module named 'mklopt.weight_methods'``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]



def _run(argv, cwd, env=None, timeout=900, **kwargs):
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, **kwargs)
    assert done.returncode == 0, f"{argv} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(python of a fresh venv with the built wheel installed, its bin folder, dist folder)."""
    base = tmp_path_factory.mktemp("release")
    dist = base / "dist"
    # the build tools come with the test extra (no isolated build environment to download)
    _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(ROOT)], cwd=base)
    wheel = next(dist.glob("mklopt-*.whl"))
    venv = base / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], cwd=base)
    python = venv / "bin" / "python"
    # pip's cache holds the dependencies the checkout's own install downloaded; no byte-compiling
    # of every installed module (half of the install's time): Python compiles what is imported
    _run([str(python), "-m", "pip", "install", "-q", "--no-compile", str(wheel)], cwd=base, timeout=1500)
    return python, venv / "bin", dist


@pytest.fixture(scope="module")
def numba_cache(tmp_path_factory) -> Path:
    """A user cache folder for numba, shared by this module's runs (compiled once)."""
    return tmp_path_factory.mktemp("numba-cache")


def _env(bin_folder: Path, numba_cache: Path | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "NUMBA_CACHE"))}
    env["PATH"] = f"{bin_folder}{os.pathsep}{env.get('PATH', '')}"
    env["MPLBACKEND"] = "Agg"
    if numba_cache is not None:
        env["NUMBA_CACHE_DIR"] = str(numba_cache)
    return env


def test_the_sdist_holds_the_project(installed):
    _, _, dist = installed
    with tarfile.open(next(dist.glob("mklopt-*.tar.gz"))) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    for required in ("README.md", "LICENSE", "CHANGELOG.md", "pyproject.toml",
                     "mklopt/__init__.py", "mklopt/weight_methods/__init__.py",
                     "formulations/README.md", "formulations/reference_instances.json",
                     "tests/test_packaging.py", "examples"):
        assert any(n == required or n.startswith(required + "/") for n in names), required


def test_the_wheel_holds_every_subpackage_and_data_file(installed):
    _, _, dist = installed
    names = set(zipfile.ZipFile(next(dist.glob("mklopt-*.whl"))).namelist())
    on_disk = {str(p.parent.relative_to(ROOT)) for p in (ROOT / "mklopt").rglob("__init__.py")}
    shipped = {n.rsplit("/", 1)[0] for n in names if n.endswith("/__init__.py")}
    assert on_disk <= shipped, sorted(on_disk - shipped)
    assert "mklopt/_compiled/_build_hook.py" not in names  # the build's, not the package's
    for data in ("mklopt/py.typed", "mklopt/_catalogue/reference_instances.json",
                 "mklopt/datasets/data/letter.csv.gz", "mklopt/_docs/pages/index.md",
                 "mklopt/_docs/pages/_static/mklopt.css"):
        assert data in names, data


def test_every_module_imports_outside_the_checkout(installed, tmp_path):
    python, bin_folder, _ = installed
    code = ("import importlib, pkgutil, mklopt, pathlib, sys\n"
            "assert 'site-packages' in mklopt.__file__, mklopt.__file__\n"
            "names = [m.name for m in pkgutil.walk_packages(mklopt.__path__, 'mklopt.')]\n"
            "for name in names:\n"  # issue 59: every module, no exceptions list
            "    importlib.import_module(name)\n"
            "print(len(names), mklopt.__version__)")
    out = _run([str(python), "-c", code], cwd=tmp_path, env=_env(bin_folder)).stdout.split()
    from importlib.metadata import version
    assert int(out[0]) >= 100 and out[1] == version("mklopt")
    text = _run([str(python), "-m", "mklopt", "--version"], cwd=tmp_path, env=_env(bin_folder)).stdout
    assert text.strip() == f"mklopt {version('mklopt')}"


def test_the_installed_wheel_loads_the_machine_code_its_build_compiled(installed, tmp_path):
    """Issue 57: the wheel's build compiled the default fit's functions into the wheel; installed
    elsewhere (other paths, other file times) they load on this machine, and a default fit
    with an empty numba cache compiles nothing."""
    python, bin_folder, dist = installed
    wheel = next(dist.glob("mklopt-*.whl"))
    assert "-py3-none-any" not in wheel.name  # machine code inside: tagged for its platform
    code = ("from mklopt._compiled.ahead import AHEAD, built_ahead\n"
            "from mklopt.compiling import watching\n"
            "from sklearn.datasets import load_digits\n"
            "import mklopt\n"
            "X, y = load_digits(return_X_y=True)\n"
            "with watching() as records:\n"
            "    mklopt.MKLClassifier().fit(X[:500], y[:500] == 1)\n"
            "print(len(built_ahead()), len(AHEAD), len(records))")
    out = _run([str(python), "-c", code], cwd=tmp_path, env=_env(bin_folder, tmp_path / "empty-cache")).stdout
    found, listed, compiled = map(int, out.split())
    assert found == listed >= 3 and compiled == 0


def test_compiled_code_caches_outside_the_installed_package(installed, numba_cache, tmp_path):
    """The chunking core and the pairwise solver compile and cache in a user cache folder.

    An installed package folder is often not writable (a system or shared
    environment); numba then caches in ``NUMBA_CACHE_DIR`` (or its user-wide
    cache). Here the cache is sent to a fresh user folder and must be written there.
    """
    python, bin_folder, _ = installed
    cache = numba_cache
    env = _env(bin_folder, cache)
    code = ("import numpy as np, mklopt\n"
            "rng = np.random.default_rng(0); X = rng.standard_normal((200, 3)); y = np.sign(X[:, 0])\n"
            "ks = mklopt.KernelSet.from_data(X, [('rbf', {'gamma': g}) for g in (0.1, 1.0)], lazy=True)\n"
            "r = mklopt.fit(ks, y, 'chunking', C=1, p=2, tol=1e-5)\n"
            "w = mklopt.learn_weights(ks.dense().K, y, 'easymkl')\n"
            "print(r.status, r.rel_gap, w.sum())")
    out = _run([str(python), "-c", code], cwd=tmp_path, env=env).stdout.split()
    assert out[0] == "converged" and float(out[1]) <= 1e-5 and abs(float(out[2]) - 1) < 1e-9
    assert list(cache.rglob("*.nbi")), "numba did not cache in NUMBA_CACHE_DIR"


def test_demo_solve_and_verify_from_the_installed_wheel(installed, numba_cache, tmp_path):
    python, bin_folder, _ = installed
    env = _env(bin_folder, numba_cache)
    # every demo row, at the demo's small size (the full one is README's first command)
    demo = _run([str(bin_folder / "mklopt"), "demo", "--small"], cwd=tmp_path, env=env)
    assert "rel_gap" in demo.stdout and (tmp_path / "mklopt_demo_convergence.png").is_file()
    code = ("import numpy as np; from sklearn.datasets import load_breast_cancer\n"
            "from sklearn.preprocessing import StandardScaler\n"
            "X, y = load_breast_cancer(return_X_y=True)\n"
            "np.savez('data.npz', X=StandardScaler().fit_transform(X[:80]), y=y[:80])")
    _run([str(python), "-c", code], cwd=tmp_path, env=env)
    _run([str(bin_folder / "mklopt"), "solve", "--data", "data.npz", "--driver", "cutting_plane",
          "--out", "result.npz"], cwd=tmp_path, env=env)
    verify = _run([str(bin_folder / "mklopt"), "verify", "--data", "data.npz", "--candidate", "result.npz"], cwd=tmp_path,
                  env=env)
    assert "CERTIFIED" in verify.stdout and "NOT CERTIFIED" not in verify.stdout




def test_a_wheel_runs_the_benchmarks_and_lays_out_the_docs_sources(installed, tmp_path):
    """Issue 59.1: the benchmarks and the docs' sources come with the wheel, and the hints name
    the wheel's install command."""
    python, bin_folder, _ = installed
    listed = _run([str(bin_folder / "mklopt"), "bench", "--list"], cwd=tmp_path, env=_env(bin_folder)).stdout.split()
    assert {"first-fit", "multiclass", "threads", "estimator"} <= set(listed)
    code = ("import pathlib, tempfile\n"
            "from mklopt._docs import source_root\n"
            "from mklopt._version import install_hint\n"
            "root = source_root(pathlib.Path(tempfile.mkdtemp()) / 'source')\n"
            "print(sorted(p.name for p in root.iterdir()), (root / 'examples' / 'lp_norm_toy.py').is_file(),\n"
            "      (root / 'formulations' / 'reference_instances.json').is_file(), install_hint('dask'))")
    out = _run([str(python), "-c", code], cwd=tmp_path, env=_env(bin_folder)).stdout.strip()
    assert out == """['examples', 'formulations', 'mklopt'] True True pip install "mklopt[dask]\""""
