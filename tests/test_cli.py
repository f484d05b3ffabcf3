"""The ``mklopt`` command line: every subcommand, atomic output, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.preprocessing import StandardScaler

import mklopt
from mklopt import cli


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    """A 60-point instance as kernels (K, y) and as data (X, y)."""
    folder = tmp_path_factory.mktemp("cli")
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X[:60])
    y = np.where(y[:60] == 1, "benign", "malignant")
    ks = mklopt.KernelSet.from_data(X, ["linear", ("rbf", {"gamma": 0.03})]).normalized("trace")
    np.savez(folder / "kernels.npz", K=ks.K, y=y)
    np.savez(folder / "data.npz", X=X, y=y)
    return {"kernels": folder / "kernels.npz", "data": folder / "data.npz", "dir": folder}


def run(argv, capsys) -> tuple[int, str, str]:
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_help_for_every_command(capsys):
    for argv in ([], ["demo"], ["solve"], ["compare"], ["verify"], ["bench"]):
        with pytest.raises(SystemExit) as exc:
            cli.main([*argv, "--help"])
        assert exc.value.code == 0
        assert "usage: mklopt" in capsys.readouterr().out


def test_demo_small(tmp_path, capsys):
    png = tmp_path / "demo.png"
    code, out, _ = run(["demo", "--small", "--out", png], capsys)
    assert code == 0 and png.stat().st_size > 0
    for method in ("svm (unif)", "l1 exact", "l1 cutting plane", "lp wrapper p=4/3", "conv (theta=2)"):
        assert method in out
    assert "test acc." in out and "cert. rel_gap" in out
    # the footnote's claim: nested weight sets (p = inf ball > l_4/3 ball > simplex) order the optima
    objective = {line[:18].strip(): float(line.split()[-9]) for line in out.splitlines()
                 if line[:18].strip() in ("svm (unif)", "lp wrapper p=4/3", "l1 exact")}
    assert "Each row minimizes its own problem" in out
    assert objective["svm (unif)"] <= objective["lp wrapper p=4/3"] <= objective["l1 exact"]


def test_solve_formulation_writes_json_atomically(files, tmp_path, capsys):
    target = tmp_path / "result.json"
    target.write_text("old")
    code, out, _ = run(["solve", "--kernels", files["kernels"], "--C", 10, "--p", "4/3",
                        "--out", target], capsys)
    assert code == 0 and "lp_dual" in out and "status=optimal" in out
    data = json.loads(target.read_text())
    assert data["status"] == "optimal" and len(data["weights"]) == 2
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]  # no temporary left over


def test_solve_driver_from_data_to_npz(files, tmp_path, capsys):
    target = tmp_path / "result.npz"
    code, out, _ = run(["solve", "--data", files["data"], "--kernel", "linear",
                        "--kernel", "rbf:gamma=0.03", "--normalize", "trace", "--C", 10,
                        "--driver", "cutting_plane", "--tol", "1e-6", "--out", target], capsys)
    assert code == 0 and "cutting_plane" in out
    res = mklopt.MKLResult.load(target)
    assert res.rel_gap <= 1e-6 and res.weights.shape == (2,) and res.C == 10
    assert len(res.history) == res.iterations > 0


def test_solve_block_norm(files, capsys):
    code, out, _ = run(["solve", "--kernels", files["kernels"], "--b", 4,
                        "--formulation", "lp_block_primal"], capsys)
    assert code == 0 and "lp_block_primal" in out and "status=optimal" in out


def test_compare_reports_agreement(files, capsys):
    code, out, _ = run(["compare", "--kernels", files["kernels"], "--C", 10,
                        "--formulations", "qcqp_l1,lp_dual,lp_primal",
                        "--backends", "clarabel,ecos,highs"], capsys)
    assert code == 0
    assert "agreement: YES" in out
    assert "cannot solve" in out  # HiGHS is reported as incapable, not an error


def _row(name, primal, dual, reported=None, status="optimal"):
    return {"formulation": name, "backend": "b", "status": status, "_primal": primal, "_dual": dual,
            "_reported": primal if reported is None else reported}


def test_agreement_means_the_certified_objectives_the_table_shows():
    """A backend's own value off the interval is a note, not a disagreement; a certified
    objective off the best one is a disagreement."""
    from mklopt.cli.compare import agreement

    ok, report = agreement([_row("a", 10.0, 9.9999999), _row("c", 10.0000001, 9.9999998, 10.0026)], 1e-6)
    assert ok and "agreement: YES" in report and "backend value off" in report and "c/b" in report
    ok, report = agreement([_row("a", 10.0, 9.9999999), _row("c", 10.01, 9.9999998)], 1e-6)
    assert not ok and "disagree" in report and "c/b" in report
    ok, report = agreement([_row("a", 10.0, 9.0, 10.0, status="uncertified")], 1e-6)
    assert not ok and "no formulation/backend pair was certified" in report


def test_verify_certifies_a_solve_result(files, tmp_path, capsys):
    result = tmp_path / "cand.json"
    assert run(["solve", "--kernels", files["kernels"], "--C", 10, "--out", result], capsys)[0] == 0
    code, out, _ = run(["verify", "--kernels", files["kernels"], "--C", 10,
                        "--candidate", result, "--tol", "1e-6"], capsys)
    assert code == 0 and "CERTIFIED" in out
    # the saved result carries its weight set: another p contradicts it (as for .npz)
    code, _, err = run(["verify", "--kernels", files["kernels"], "--C", 10, "--p", 2,
                        "--candidate", result, "--tol", "1e-6"], capsys)
    assert code == 2 and "contradicts the result's weight set" in err
    # its weights and alpha as a hand-made candidate are far from optimal for p = 2: exit 1
    import json

    saved = json.loads(result.read_text())
    hand_made = tmp_path / "hand.json"
    hand_made.write_text(json.dumps({"weights": saved["weights"], "alpha": saved["alpha"]}))
    code, out, _ = run(["verify", "--kernels", files["kernels"], "--C", 10, "--p", 2,
                        "--candidate", hand_made, "--tol", "1e-6"], capsys)
    assert code == 1 and "NOT CERTIFIED" in out


def test_verify_npz_candidate(files, tmp_path, capsys):
    cand = tmp_path / "cand.npz"
    np.savez(cand, weights=[0.5, 0.5], alpha=np.zeros(60))
    code, out, _ = run(["verify", "--kernels", files["kernels"], "--candidate", cand], capsys)
    assert code == 1 and "rel_gap" in out


def test_bench_runs_examples_script(tmp_path, monkeypatch, capsys):
    script = tmp_path / "bench_echo.py"
    script.write_text("import sys\nprint('args', sys.argv[1:])\nsys.exit(3 if '--fail' in sys.argv else 0)\n")
    monkeypatch.setattr(cli.bench, "examples_dir", lambda: tmp_path)
    out = subprocess.run([sys.executable, "-c", "import sys; from mklopt import cli; "
                          f"cli.bench.examples_dir = lambda: __import__('pathlib').Path({str(tmp_path)!r}); "
                          "sys.exit(cli.main(['bench', 'echo', '--sizes', '5']))"],
                         capture_output=True, text=True)
    assert out.returncode == 0 and "args ['--sizes', '5']" in out.stdout
    assert cli.main(["bench", "echo", "--fail"]) == 3
    code, _, err = run(["bench", "nope"], capsys)
    assert code == 2 and "available: ['echo']" in err


def test_bench_finds_the_checkout_examples():
    folder = cli.examples_dir()
    assert (folder / "lp_norm_toy.py").is_file()


@pytest.mark.parametrize("argv", [
    ["solve", "--kernels", "{dir}/missing.npz"],
    ["solve", "--kernels", "{kernels}", "--p", "0.5"],
    ["solve", "--kernels", "{kernels}", "--formulation", "nope"],
    ["solve", "--kernels", "{data}"],
    ["solve", "--data", "{data}", "--kernel", "nosuchkernel"],
    ["solve", "--kernels", "{kernels}", "--b", "4"],
    ["solve", "--kernels", "{kernels}", "--C", "-1"],
    ["solve", "--kernels", "{kernels}", "--out", "{dir}/result.txt"],
    ["solve", "--kernels", "{kernels}", "--p", "abc"],
    ["verify", "--kernels", "{kernels}", "--candidate", "{data}"],
    ["compare", "--kernels", "{kernels}", "--b", "4", "--formulations", "lp_dual"],
    ["frobnicate"],
])
def test_bad_input_is_one_line_nonzero(files, argv, capsys):
    argv = [a.format(**{k: str(v) for k, v in files.items()}) for a in argv]
    try:
        code = cli.main(argv)
    except SystemExit as exc:  # argparse usage errors
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "error" in lines[0] and "Traceback" not in err, err


def test_console_entry_point_one_line_error(tmp_path):
    out = subprocess.run([sys.executable, "-m", "mklopt.cli", "solve", "--kernels",
                          str(tmp_path / "missing.npz")], capture_output=True, text=True)
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1 and "No such file" in out.stderr


def test_parse_helpers():
    assert cli.parse_kernel_spec("rbf:gamma=0.1") == ("rbf", {"gamma": 0.1})
    assert cli.parse_kernel_spec("poly:degree=3,coef0=1") == ("poly", {"degree": 3, "coef0": 1})
    assert cli.parse_kernel_spec("linear") == "linear"
    assert cli.parse_number("4/3") == pytest.approx(4 / 3)
    assert cli.parse_number("inf") == float("inf")


def test_saved_result_verifies_without_C_or_p(files, tmp_path, capsys):
    saved = tmp_path / "result.npz"
    code, out, _ = run(["solve", "--kernels", files["kernels"], "--C", 10, "--p", "4/3",
                        "--out", saved], capsys)
    assert code == 0 and saved.is_file()
    for extra in ([], ["--C", 10], ["--p", "4/3"]):  # flags that agree with the file are fine
        code, out, err = run(["verify", "--kernels", files["kernels"], "--candidate", saved, *extra],
                             capsys)
        assert code == 0 and err == "", (extra, out, err)
        assert "feasible yes" in out and out.strip().splitlines()[-1].startswith("CERTIFIED")
        for word in ("primal", "dual", "gap", "rel_gap", "violation"):
            assert word in out


@pytest.mark.parametrize("how", [[], ["--driver", "wrapper"], ["--driver", "cutting_plane"]])
def test_solve_then_verify_at_all_defaults_is_certified(files, tmp_path, capsys, how):
    """The newcomer's round trip (issue 27): no --C, --p or --tol on either command."""
    saved = tmp_path / "res.npz"
    code, _, _ = run(["solve", "--kernels", files["kernels"], *how, "--out", saved], capsys)
    assert code == 0
    code, out, err = run(["verify", "--kernels", files["kernels"], "--candidate", saved], capsys)
    assert code == 0 and err == "", out
    assert "the tolerance the result was solved to" in out
    assert out.strip().splitlines()[-1].startswith("CERTIFIED")


def test_verify_infeasible_candidate_and_repair(files, tmp_path, capsys):
    saved = tmp_path / "result.npz"
    assert run(["solve", "--kernels", files["kernels"], "--C", 10, "--out", saved], capsys)[0] == 0
    res = mklopt.MKLResult.load(saved)
    far = tmp_path / "far.json"  # weights 5x outside the l1 ball
    far.write_text(json.dumps({"weights": (5 * res.weights).tolist(), "alpha": res.alpha.tolist()}))
    argv = ["verify", "--kernels", files["kernels"], "--C", 10, "--candidate", far]
    code, out, _ = run(argv, capsys)
    last = out.strip().splitlines()[-1]
    assert code == 1 and "feasible no" in out
    assert last.startswith("NOT CERTIFIED: ") and "outside the weight set" in last
    code, out, _ = run([*argv, "--repair"], capsys)
    assert code == 0 and out.strip().splitlines()[-1].startswith("CERTIFIED") and "repaired" in out


@pytest.mark.parametrize("limit", [["--max-iter", "1"], ["--time-limit", "1e-9"]])
def test_solve_not_converged_exits_1_and_saves_the_status(files, tmp_path, limit, capsys):
    saved = tmp_path / "result.npz"
    code, out, _ = run(["solve", "--kernels", files["kernels"], "--C", 10, "--p", 2,
                        "--driver", "wrapper", *limit, "--out", saved], capsys)
    status = "max_iter" if limit[0] == "--max-iter" else "time_limit"
    assert code == 1 and f"status {status}" in out
    assert mklopt.MKLResult.load(saved).status == status  # written: its status says why


@pytest.mark.parametrize("exc, code, line", [
    (KeyboardInterrupt(), 130, "mklopt solve: interrupted"),
    (RuntimeError("boom\nsecond line"), 70, "mklopt solve: internal error: RuntimeError: boom "
     "second line; please report"),
    (mklopt.SolverError("backend failed"), 2, "mklopt solve: error: backend failed"),
])
def test_interrupt_and_unexpected_errors_are_one_line(files, monkeypatch, capsys, exc, code, line):
    def fail(args):
        raise exc

    monkeypatch.setattr(cli.solve, "run", fail)
    got, out, err = run(["solve", "--kernels", files["kernels"]], capsys)
    assert (got, out, err) == (code, "", line + "\n")
