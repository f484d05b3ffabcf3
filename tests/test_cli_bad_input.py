"""Bad input to the real ``mklopt`` entry point: one line, the right exit status, no traceback.

Every row of :data:`ROWS` runs ``python -m mklopt.cli ARGS`` in its own
process and checks the exit status, a fragment of the message, that nothing
says "Traceback" and that no ``--out`` file (or temporary) is left behind.
Importing mklopt takes ~2 s, so the rows are run by one helper process that
imports it once and forks a child per row; each child runs the package's
``__main__`` exactly as ``python -m mklopt.cli`` does (its exit status is
the process's). One row is also run as a plain ``python -m mklopt.cli`` to
keep the two paths honest, and the Ctrl-C test uses a plain subprocess.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import mklopt
from mklopt import cli

#: argv (``{name}`` placeholders: files of the ``files`` fixture; ``{out}``: this
#: row's own output path), expected exit status, fragment of stdout + stderr.
ROWS = [
    # unreadable or incomplete input files
    (["solve", "--kernels", "{corrupt}", "--out", "{out}.npz"], 2, "corrupt.npz is not a valid .npz"),
    (["solve", "--kernels", "{empty_file}", "--out", "{out}.npz"], 2, "empty_file.npz is not a valid .npz"),
    (["solve", "--kernels", "{no_arrays}"], 2, "no_arrays.npz has no array(s) ['K', 'y']"),
    (["solve", "--kernels", "{no_y}", "--out", "{out}.json"], 2, "no_y.npz has no array(s) ['y']"),
    (["solve", "--data", "{kernels}"], 2, "has no array(s) ['X']"),
    (["solve", "--kernels", "{dir}/missing.npz"], 2, "No such file"),
    (["solve", "--kernels", "{single}"], 2, "single array"),
    (["solve", "--kernels", "{pickled}"], 2, "array 'K' of"),
    (["solve", "--kernels", "{not_square}"], 2, "error"),
    (["solve", "--kernels", "{three_classes}"], 2, "error"),
    # numbers
    (["solve", "--kernels", "{kernels}", "--tol", "0", "--out", "{out}.npz"], 2, "argument --tol"),
    (["solve", "--kernels", "{kernels}", "--tol", "10"], 2, "argument --tol"),
    (["solve", "--kernels", "{kernels}", "--tol", "nan"], 2, "argument --tol"),
    (["solve", "--kernels", "{kernels}", "--tol", "abc"], 2, "not a number: 'abc'"),
    (["solve", "--kernels", "{kernels}", "--driver", "wrapper", "--max-iter", "0"], 2, "argument --max-iter"),
    (["solve", "--kernels", "{kernels}", "--driver", "wrapper", "--max-iter", "-1"], 2, "argument --max-iter"),
    (["solve", "--kernels", "{kernels}", "--driver", "wrapper", "--max-iter", "1.5"], 2, "argument --max-iter"),
    (["solve", "--kernels", "{kernels}", "--driver", "wrapper", "--time-limit", "0"], 2, "argument --time-limit"),
    (["solve", "--kernels", "{kernels}", "--driver", "wrapper", "--time-limit", "nan"], 2, "argument --time-limit"),
    (["solve", "--kernels", "{kernels}", "--time-limit", "5"], 2, "--driver runs only"),
    (["solve", "--kernels", "{kernels}", "--p", "0.5"], 2, "argument --p"),
    (["solve", "--kernels", "{kernels}", "--b", "3", "--out", "{out}.npz"], 2, "--b 3 > 2"),
    (["solve", "--kernels", "{kernels}", "--b", "3", "--driver", "wrapper"], 2, "lp_block_primal"),
    (["solve", "--kernels", "{kernels}", "--C", "0"], 2, "argument --C"),
    (["solve", "--kernels", "{kernels}", "--C", "-1"], 2, "argument --C"),
    (["solve", "--kernels", "{kernels}", "--C", "nan"], 2, "argument --C"),
    (["solve", "--kernels", "{kernels}", "--theta", "-1"], 2, "argument --theta"),
    # names
    (["solve", "--kernels", "{kernels}", "--formulation", "nope", "--out", "{out}.npz"], 2,
     "unknown formulation 'nope'"),
    (["solve", "--kernels", "{kernels}", "--driver", "nope"], 2, "unknown driver 'nope'"),
    (["solve", "--kernels", "{kernels}", "--backend", "NOPE", "--out", "{out}.npz"], 2, "unknown backend"),
    (["solve", "--kernels", "{kernels}", "--param", "=1"], 2, "bad --param"),
    (["solve", "--kernels", "{kernels}", "--param", "nope=1"], 2, "unexpected parameters ['nope']"),
    (["compare", "--kernels", "{kernels}", "--formulations", "lp_dual,nope"], 2, "unknown formulation"),
    (["compare", "--kernels", "{kernels}", "--tol", "0"], 2, "argument --tol"),
    (["compare", "--kernels", "{kernels}", "--backends", "clarabel,nope"], 2, "unknown backend(s) ['NOPE']"),
    (["frobnicate"], 2, "invalid choice"),
    (["bench", "nope"], 2, "no benchmark 'nope'"),
    # kernel specs
    (["solve", "--data", "{data}", "--kernel", "rbf:gamma=abc"], 2, "must be a finite number"),
    (["solve", "--data", "{data}", "--kernel", "nosuchmetric"], 2, "unknown kernel 'nosuchmetric'"),
    (["solve", "--data", "{data}", "--kernel", "rbf:degree=2"], 2, "has no parameter 'degree'"),
    (["solve", "--data", "{data}", "--kernel", "rbf:gamma"], 2, "use key=value"),
    (["solve", "--kernels", "{kernels}", "--kernel", "linear"], 2, "use it with --data"),
    # --out
    (["solve", "--kernels", "{kernels}", "--out", "{dir}/no/such/folder/r.npz"], 2, "does not exist"),
    (["solve", "--kernels", "{kernels}", "--out", "{out}.txt"], 2, "must end in .npz or .json"),
    (["demo", "--small", "--out", "{out}.pdf"], 2, "must end in .png"),
    (["demo", "--small", "--out", "{dir}/no/such/folder/demo.png"], 2, "does not exist"),
    # verify
    (["verify", "--kernels", "{kernels}", "--candidate", "{infeasible}"], 1,
     "NOT CERTIFIED: the weights are outside"),
    (["verify", "--kernels", "{kernels}", "--candidate", "{saved}", "--C", "5"], 2,
     "contradicts the result"),
    (["verify", "--kernels", "{kernels}", "--candidate", "{saved}", "--p", "2"], 2,
     "contradicts the result"),
    (["verify", "--data", "{data}", "--candidate", "{saved}"], 2, "computed on"),
    (["verify", "--kernels", "{kernels}", "--candidate", "{broken_json}"], 2, "is not valid JSON"),
    (["verify", "--kernels", "{kernels}", "--candidate", "{null_json}"], 2,
     "null.json hold(s) null; give a number for every entry"),
    (["verify", "--kernels", "{kernels}", "--candidate", "{square_weights}"], 2,
     "weights must be a 1-D array of 2 real numbers, got shape (1, 2)"),
    (["verify", "--kernels", "{kernels}", "--candidate", "{kernels}"], 2,
     "has no array(s) ['weights', 'alpha']"),
    (["verify", "--kernels", "{kernels}", "--candidate", "{corrupt}"], 2, "is not a valid .npz"),
    (["verify", "--kernels", "{kernels}", "--candidate", "{saved}", "--tol", "0"], 2, "argument --tol"),
]

RUNNER = r"""
import json, os, runpy, sys, traceback
import mklopt.cli  # imported once; every child starts from here

def child(argv, out, err):
    for fd, path in ((1, out), (2, err)):
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(handle, fd)
        os.close(handle)
    sys.argv = ["mklopt", *argv]
    code = 1
    try:
        runpy.run_module("mklopt.cli", run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exc:  # what the interpreter does with sys.exit(...)
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:
            print(exc.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)

jobs = json.load(open(sys.argv[1]))
pids = {}
for i, job in enumerate(jobs):
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        child(job["argv"], job["out"], job["err"])
    pids[pid] = i
codes = [None] * len(jobs)
while pids:
    pid, status = os.wait()
    codes[pids.pop(pid)] = os.waitstatus_to_exitcode(status)
json.dump(codes, open(sys.argv[2], "w"))
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    """A 40-point instance, a saved result and many broken files."""
    folder = tmp_path_factory.mktemp("bad_input")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(40) > 0, 1, -1)
    ks = mklopt.KernelSet.from_data(X, ["linear", ("rbf", {"gamma": 0.5})]).normalized("trace")
    paths = {name: folder / f"{name}.npz" for name in (
        "kernels", "data", "no_arrays", "no_y", "single", "pickled", "not_square", "three_classes",
        "corrupt", "empty_file", "saved")}
    np.savez(paths["kernels"], K=ks.K, y=y)
    np.savez(paths["data"], X=X, y=y)
    np.savez(paths["no_arrays"])
    np.savez(paths["no_y"], K=ks.K)
    np.savez(paths["pickled"], K=np.array([{}, 1], dtype=object), y=y)
    np.savez(paths["not_square"], K=ks.K[:, :, :30], y=y)
    np.savez(paths["three_classes"], K=ks.K, y=np.arange(40) % 3)
    with open(paths["single"], "wb") as handle:
        np.save(handle, ks.K)
    paths["corrupt"].write_bytes(b"PK\x03\x04 this is not a zip archive " * 8)
    paths["empty_file"].write_bytes(b"")
    result = mklopt.solve(ks, y, "lp_dual", C=10.0)
    result.save(paths["saved"])
    paths["infeasible"] = folder / "infeasible.json"
    paths["infeasible"].write_text(json.dumps({"weights": (5 * result.weights).tolist(),
                                               "alpha": result.alpha.tolist()}))
    paths["broken_json"] = folder / "broken.json"
    paths["broken_json"].write_text('{"weights": [1, ')
    paths["null_json"] = folder / "null.json"  # a null read as NaN was "contains NaN", alone as "1 entry"
    paths["null_json"].write_text(json.dumps({"weights": [0.5, None], "alpha": result.alpha.tolist()}))
    paths["square_weights"] = folder / "square.npz"  # a (1, M) array was taken apart silently
    np.savez(paths["square_weights"], weights=result.weights[None, :], alpha=result.alpha)
    paths["dir"] = folder
    return paths


def _argv(row: int, files: dict[str, Path], root: Path) -> tuple[list[str], Path]:
    """The row's argv with placeholders filled, and its own (empty) output folder."""
    out_dir = root / f"row{row:02d}"
    out_dir.mkdir()
    names = {k: str(v) for k, v in files.items()} | {"out": str(out_dir / "result")}
    return [a.format(**names) for a in ROWS[row][0]], out_dir


@pytest.fixture(scope="module")
def outcomes(files, tmp_path_factory) -> list[tuple[int, str, str, Path]]:
    """(exit status, stdout, stderr, output folder) of every row, all run at once."""
    root = tmp_path_factory.mktemp("rows")
    jobs, folders = [], []
    for row in range(len(ROWS)):
        argv, out_dir = _argv(row, files, root)
        jobs.append({"argv": argv, "out": str(root / f"{row}.out"), "err": str(root / f"{row}.err")})
        folders.append(out_dir)
    if hasattr(os, "fork"):
        (root / "jobs.json").write_text(json.dumps(jobs))
        one_thread = {k: "1" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
        subprocess.run([sys.executable, "-c", RUNNER, str(root / "jobs.json"),
                        str(root / "codes.json")], check=True, timeout=300,
                       env={**os.environ, **one_thread})  # no BLAS threads across fork()
        codes = json.loads((root / "codes.json").read_text())
        texts = [(Path(j["out"]).read_text(), Path(j["err"]).read_text()) for j in jobs]
    else:  # no fork (Windows): one plain process per row
        done = [subprocess.run([sys.executable, "-m", "mklopt.cli", *j["argv"]], capture_output=True,
                               text=True, timeout=300) for j in jobs]
        codes = [d.returncode for d in done]
        texts = [(d.stdout, d.stderr) for d in done]
    return [(code, out, err, folder) for code, (out, err), folder in zip(codes, texts, folders)]


@pytest.mark.parametrize("row", range(len(ROWS)), ids=lambda r: f"{r:02d} " + " ".join(
    a for a in ROWS[r][0] if not a.startswith("{"))[:50])
def test_bad_input_row(row, outcomes):
    argv, expected, fragment = ROWS[row]
    code, out, err, folder = outcomes[row]
    assert "Traceback" not in out + err, err
    assert code == expected, (code, out, err)
    assert fragment in out + err, (fragment, out, err)
    if expected == 2:  # the error is one line on stderr
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("mklopt") and ": error: " in lines[0], err
    else:  # the verdict is one line on stdout
        assert err == "" and sum(line.startswith("NOT CERTIFIED") for line in out.splitlines()) == 1
    assert list(folder.iterdir()) == [], "an --out file or a temporary was left behind"


def test_plain_entry_point_agrees_with_the_runner(files, tmp_path):
    out = tmp_path / "r.npz"
    done = subprocess.run([sys.executable, "-m", "mklopt.cli", "solve", "--kernels",
                           str(files["corrupt"]), "--out", str(out)], capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("mklopt solve: error: ") and len(done.stderr.splitlines()) == 1
    assert "is not a valid .npz" in done.stderr and not out.exists()


def _signal_state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/status") as status:
            return "; ".join(line.strip() for line in status if line.startswith(("Sig", "State")))
    except OSError as exc:
        return str(exc)


def test_ctrl_c_is_one_line_and_exit_130(tmp_path, sigint_as_in_a_terminal):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((1000, 5))
    y = np.where(X[:, 0] * X[:, 1] + 0.5 * rng.standard_normal(1000) > 0, 1, -1)
    ks = mklopt.KernelSet.from_data(X, ["linear", ("rbf", {"gamma": 0.1}), ("rbf", {"gamma": 1.0}),
                                        ("poly", {"degree": 2})]).normalized("trace")
    np.savez(tmp_path / "big.npz", K=ks.K, y=y)
    out = tmp_path / "result.npz"
    # the p = 1 wrapper at tol 1e-12 takes seconds here (800 points: 262 iterations, 3.1 s alone;
    # on 300 points it converged in 0.4 s, before the signal)
    proc = subprocess.Popen([sys.executable, "-m", "mklopt.cli", "solve", "--kernels",
                             str(tmp_path / "big.npz"), "--C", "100", "--driver", "wrapper",
                             "--tol", "1e-12", "--max-iter", "1000000", "--time-limit", "60",
                             "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=sigint_as_in_a_terminal)
    try:
        first = proc.stdout.readline()  # printed once the instance is loaded and the solve starts
        assert first.startswith("solving:"), first
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        try:
            rest, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            pytest.fail(f"no exit 30 s after SIGINT; child signal state: {_signal_state(proc.pid)}")
    finally:
        proc.kill()
    assert proc.returncode == 130, (proc.returncode, rest, err)
    assert err == "mklopt solve: interrupted\n"
    assert "Traceback" not in rest and "wrapper [" not in rest  # no result was printed
    assert list(tmp_path.iterdir()) == [tmp_path / "big.npz"]  # no --out, no temporary


#: ``python -m`` this module: mklopt's command line, with ``docs`` interrupted inside code
#: evaluated from a string (numba and dataclasses generate such code).
_INTERRUPTED_IN_GENERATED_CODE = """
import runpy
from mklopt.cli import docs

def interrupted_in_generated_code(args):
    exec("raise KeyboardInterrupt", {})

docs.run = interrupted_in_generated_code
runpy.run_module("mklopt.cli", run_name="__main__", alter_sys=True)
"""


def test_ctrl_c_in_generated_code_still_exits_130(tmp_path):
    """CPython's ``-m`` would turn a Ctrl-C caught after an ``exec`` of a string into a death by
    SIGINT (exit status -2, as a CI run met it); the command line's status stays 130."""
    (tmp_path / "interrupted_cli.py").write_text(_INTERRUPTED_IN_GENERATED_CODE)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    done = subprocess.run([sys.executable, "-m", "interrupted_cli", "docs"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (130, "mklopt docs: interrupted\n")


def test_exit_codes_are_documented(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    for code in ("0 ", "1 ", "2 ", "130 "):
        assert f"  {code}" in text
    for name in ("", ".bench", ".compare", ".demo", ".main", ".solve", ".verify"):
        module = importlib.import_module(f"mklopt.cli{name}")
        assert "Exit codes" in module.__doc__ and "130" in module.__doc__, module.__name__
