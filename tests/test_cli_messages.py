"""Issue 59.4: every CLI message names the file, array or option and what to pass; bad input
exits 2 (never 1, never 70)."""

from __future__ import annotations

import numpy as np
import pytest

from mklopt.cli import main


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 3))
    y = np.sign(np.arange(20) - 9.5)
    paths = {name: tmp_path / f"{name}.npz" for name in ("data", "objects", "nan", "nany", "square")}
    np.savez(paths["data"], X=X, y=y)
    np.savez(paths["objects"], K=np.array([{"a": 1}] * 4, dtype=object), y=np.ones(4))
    Xn = X.copy()
    Xn[3, 1] = np.nan
    np.savez(paths["nan"], X=Xn, y=y)
    np.savez(paths["nany"], X=X, y=np.where(np.arange(20) == 5, np.nan, y))
    np.savez(paths["square"], K=np.ones((2, 6, 5)), y=np.ones(6))
    return paths


@pytest.mark.parametrize("args, says", [
    (["solve", "--kernels", "{objects}"], ["'K' of", "objects.npz", "Python objects"]),
    (["solve", "--data", "{nan}", "--kernel", "linear"], ["X in", "nan.npz", "row 3, column 1"]),
    (["solve", "--data", "{nany}", "--kernel", "linear"], ["y in", "nany.npz", "position 5"]),
    (["solve", "--kernels", "{square}"], ["K in", "square.npz", "6 x 5"]),
    (["solve", "--data", "{data}", "--kernel", "linear", "--param", "foo=1"], ["unexpected parameters ['foo']"]),
    (["compare", "--data", "{data}", "--kernel", "linear", "--kernel", "rbf", "--formulations", "qcqp_l1",
      "--p", "2"], ["qcqp_l1", "p=2"]),
    (["compare", "--data", "{data}", "--kernel", "linear", "--formulations", ","], ["names none", "lp_dual"]),
])
def test_bad_input_exits_2_naming_what_is_wrong(files, capsys, args, says):
    argv = [a.format(**{k: str(v) for k, v in files.items()}) for a in args]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    for part in says:
        assert part in err, err
    assert "allow_pickle" not in err and "build()" not in err and "decision_function" not in err


def test_verify_says_what_it_took_from_the_saved_file(files, tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["solve", "--data", str(files["data"]), "--kernel", "linear", "--kernel", "rbf", "--C", "3",
                 "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["verify", "--data", str(files["data"]), "--kernel", "linear", "--kernel", "rbf",
                 "--candidate", str(out)]) == 0
    text = capsys.readouterr().out
    assert "from the saved result" in text and "C 3" in text and "weight set" in text and "tol " in text
