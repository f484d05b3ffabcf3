"""Issue 56: the property-based battery over the public entry points, each in a child process.

:mod:`_property_battery` draws (derandomized) inputs of every dtype, shape, value and layout
the issue lists; every case must end in an mklopt error with a one-line message or in an
answer whose certified interval holds an independent reference, within its time limit, with
its inputs unchanged. A child killed by a signal or past its time limit fails here with the
case it was running. The battery must not be vacuous: a share of the cases must reach
certified answers checked against a reference.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parent / "_property_battery.py"

#: entry point -> (examples, least number of answers checked against a reference)
ENTRIES = {"kernelset": (150, 0), "from_data": (150, 0), "solve": (200, 20), "fit": (150, 20),
           "certify": (150, 20), "estimator": (100, 0)}


@pytest.mark.parametrize("entry", sorted(ENTRIES))
def test_every_drawn_input_ends_in_an_mklopt_error_or_a_checked_answer(entry):
    examples, least = ENTRIES[entry]
    env = dict(os.environ, PYTHONFAULTHANDLER="1", PYTHONPATH=str(SCRIPT.parent))
    try:
        run = subprocess.run([sys.executable, str(SCRIPT), entry, str(examples)], capture_output=True,
                             text=True, timeout=900, env=env, cwd=SCRIPT.parent)
    except subprocess.TimeoutExpired as stop:
        out = stop.stdout.decode() if isinstance(stop.stdout, bytes) else (stop.stdout or "")
        started = [line for line in out.splitlines() if line.startswith("start")]
        pytest.fail(f"{entry}: the child hung at {started[-1] if started else 'its start'}")
    lines = run.stdout.splitlines()
    assert run.returncode == 0, "\n".join([line for line in lines if not line.startswith("start")][-5:]
                                          + [run.stderr[-2000:]])
    summary = dict(re.findall(r"(\w+)=(\d+)", lines[-1]))
    assert lines[-1].startswith(f"passed {entry}")
    answers, errors = int(summary["answer"]), int(summary["mklopt_error"])
    assert answers >= 0.1 * examples and errors >= 0.1 * examples, summary  # both sides are exercised
    assert int(summary["reference"]) >= least, summary
