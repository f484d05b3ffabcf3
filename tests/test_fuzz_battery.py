"""Issue 33.2: compiled code never sees an unvalidated value.

The battery of :mod:`_fuzz_cases` (>= 150 bad values over every weight method,
driver option, kernel spec dense and lazy, formulation parameter, weight-set
constructor and estimator) runs in child processes, so that a segmentation
fault or an abort fails the test instead of killing the run. Every case must
end in an mklopt error with a one-line message, with its inputs unchanged.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
SCRIPT = HERE / "_fuzz_cases.py"


def _count() -> int:
    sys.path.insert(0, str(HERE))
    try:
        import _fuzz_cases
        return len(_fuzz_cases.cases())
    finally:
        sys.path.remove(str(HERE))


def test_the_battery_is_large_enough():
    assert _count() >= 150


@pytest.mark.parametrize("part", range(3))
def test_every_bad_value_ends_in_an_mklopt_error_without_a_signal(part):
    total = _count()
    size = -(-total // 3)
    start, stop = part * size, min(total, (part + 1) * size)
    env = dict(os.environ, PYTHONFAULTHANDLER="1")
    run = subprocess.run([sys.executable, str(SCRIPT), str(start), str(stop)], capture_output=True,
                         text=True, timeout=900, env=env)
    lines = [line.split("\t", 2) for line in run.stdout.splitlines() if line.count("\t") >= 2]
    last = lines[-1] if lines else ["-", "-", "no case ran"]
    assert run.returncode == 0, f"child died (code {run.returncode}) during case {last}: {run.stderr[-2000:]}"
    finished = {int(index): (outcome, text) for index, outcome, text in lines if outcome != "start"}
    assert sorted(finished) == list(range(start, stop))
    bad = {i: v for i, v in finished.items() if v[0] != "mklopt"}
    assert not bad, "\n".join(f"{i}: {outcome}: {text}" for i, (outcome, text) in bad.items())
