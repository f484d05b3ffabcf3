"""Issue 57: the default fit's machine code is built when mklopt is installed.

The package's build hook compiles the functions of ``mklopt._compiled.ahead.AHEAD`` into
``mklopt/_compiled/_ahead`` (this checkout's editable install did, as README's install
does); a first fit in a fresh environment loads them instead of compiling. These tests
check that the signatures are those the fits call, that a fresh process with an empty
numba cache compiles nothing for a default fit and gives the answer of the code compiled
on the spot, and that stale code is never loaded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from mklopt._compiled import cache as cache_module
from mklopt._compiled.ahead import AHEAD, ahead_signature, built_ahead
from mklopt._compiled.cache import AHEAD_FOLDER

FIT = """
import json, numpy as np
from sklearn.datasets import load_digits
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from mklopt import MKLClassifier, MKLRegressor, kernel_stack
from mklopt.compiling import watching
X, y = load_digits(return_X_y=True)
X, y = X[:600], y[:600]
with watching() as records:
    model = make_pipeline(StandardScaler(), MKLClassifier()).fit(X, y)
    decision = model.decision_function(X[:50])
    binary = make_pipeline(StandardScaler(), MKLClassifier(C=10)).fit(X[:150], y[:150] == 3)
    regressor = make_pipeline(StandardScaler(), MKLRegressor()).fit(X, X[:, 20])
    pairs = make_pipeline(StandardScaler(), MKLClassifier(multiclass="ovo")).fit(X[:300], y[:300])
    outer = make_pipeline(StandardScaler(), MKLClassifier(driver="cutting_plane")).fit(X[:200], y[:200] == 1)
    given = np.moveaxis(kernel_stack(StandardScaler().fit_transform(X), ["linear", "rbf"]), 0, 2).copy()
    small = MKLClassifier(kernels="precomputed").fit(given[:150, :150], y[:150] == 3)  # exact PSD test
    large = MKLClassifier(kernels="precomputed").fit(given, y == 3)  # the Lanczos screen
print(json.dumps({"compiled": sorted({name for name, _ in records}),
                  "weights": model[-1].weights_.tolist(), "decision": decision.tolist(),
                  "binary": binary[-1].result_.weights.tolist(), "gap": binary[-1].result_.rel_gap,
                  "regressor": regressor[-1].result_.weights.tolist(),
                  "precomputed": [small.weights_.tolist(), large.weights_.tolist()],
                  "ovo": pairs[-1].weights_.tolist(), "outer": outer[-1].weights_.tolist()}))
"""


def _fresh_fit(tmp_path, **env) -> dict:
    """The fits of ``FIT`` in a new process whose numba cache is an empty folder."""
    folder = tmp_path / f"cache-{len(list(tmp_path.iterdir()))}"
    done = subprocess.run([sys.executable, "-c", FIT], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NUMBA_CACHE_DIR": str(folder), **env})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name, dispatcher_of, arguments", AHEAD, ids=[entry[0] for entry in AHEAD])
def test_the_signatures_built_ahead_are_those_the_default_fits_call(name, dispatcher_of, arguments):
    """A default fit, one on precomputed kernels and one-vs-one (here, in this process) call each
    function with the types built ahead."""
    from sklearn.datasets import load_digits

    from mklopt import MKLClassifier, kernel_stack

    X, y = load_digits(return_X_y=True)
    for n in (100, 600):  # below and above the SMO chunk's threshold and the exact PSD test's
        MKLClassifier().fit(X[:n], y[:n] == 1)
        given = np.moveaxis(kernel_stack(X[:n] / 16.0, ["linear", "rbf"]), 0, 2).copy()
        MKLClassifier(kernels="precomputed").fit(given, y[:n] == 1)
    MKLClassifier(multiclass="ovo").fit(X[:200], y[:200])
    MKLClassifier(driver="cutting_plane").fit(X[:200] / 16.0, y[:200] == 1)  # SMO on K_mu
    assert ahead_signature(arguments) in dispatcher_of().signatures, name


def test_install_built_the_default_fits_machine_code():
    """README's install (an editable one here) ran the build hook: every function's code is
    there, and loads on this machine with this numba."""
    assert AHEAD_FOLDER.is_dir(), "no machine code built at install: run pip install -e . again"
    assert built_ahead() == [name for name, _, _ in AHEAD]


def test_a_first_fit_in_a_fresh_environment_compiles_nothing_and_answers_alike(tmp_path):
    """Issue 57.1: with an empty numba cache, the default classifier (one-vs-rest, 600 points),
    a binary one (150 points: the small problems' path), the regressor, one-vs-one (300
    points), the cutting plane (SMO on the combined kernel) and two fits on precomputed
    kernels (150 and 600 points: the exact PSD test and the Lanczos screen) compile nothing;
    without the package's code (``MKLOPT_NO_AHEAD=1``) the same fits compile every function
    built ahead on the spot, and the answers are identical."""
    ahead = _fresh_fit(tmp_path)
    compiled = _fresh_fit(tmp_path, MKLOPT_NO_AHEAD="1")
    assert ahead["compiled"] == []
    assert len(compiled["compiled"]) == len(AHEAD)
    for key in ("weights", "decision", "binary", "regressor", "precomputed", "ovo", "outer"):
        assert np.array_equal(ahead[key], compiled[key]), key
    assert ahead["gap"] <= 1e-4


def test_stale_machine_code_is_never_loaded(tmp_path, monkeypatch):
    """Code built from other sources (a digest that differs) or for other argument types
    is not found; the code of these sources and types is."""
    import numba

    name, dispatcher_of, arguments = next(entry for entry in AHEAD if entry[0] == "training_tiles")
    build_folder = tmp_path / "ahead"
    code = f"from mklopt._compiled.ahead import build; print([name for name, _ in build({str(build_folder)!r})])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "MKLOPT_NO_AHEAD": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == str([entry[0] for entry in AHEAD])
    dispatcher = dispatcher_of()
    codegen = dispatcher.targetctx.codegen()
    key = dispatcher._cache._index_key(ahead_signature(arguments), codegen)
    assert dispatcher._cache.ahead_file(build_folder).load(key) is not None
    other_types = dispatcher._cache._index_key((numba.types.float32[:, ::1],), codegen)
    assert dispatcher._cache.ahead_file(build_folder).load(other_types) is None
    monkeypatch.setattr(cache_module, "compiled_sources_digest", lambda: "another source")
    assert dispatcher._cache.ahead_file(build_folder).load(key) is None, name
