"""Issue 33.4: sweep logs are checked row by row, and fingerprints compare exact values.

A row whose candidate index was changed, two different lambda scorers, a
module-level scorer in a new process, and estimator parameters that differ in
the ninth digit.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import numpy as np
import pytest

from mklopt import MKLClassifier
from mklopt.exceptions import InvalidInputError
from mklopt.model_selection.sweep_log import FitsLog, exact_token, params_key, sweep_fingerprint

CANDIDATES = [{"C": 0.1, "p": 1}, {"C": 1.0, "p": 1}, {"C": 0.1, "p": 2}]
KEYS = [params_key(c) for c in CANDIDATES]
X = np.arange(24, dtype=float).reshape(12, 2)
Y = np.array([0, 1] * 6)
SPLITS = [(np.arange(6, 12), np.arange(6)), (np.arange(6), np.arange(6, 12))]


def error_rate(estimator, X, y):  # a module-level scorer: it has a qualified name
    return float(np.mean(estimator.predict(X) != y))


def _log(tmp_path, rows):
    log = FitsLog(tmp_path / "s.fits.csv", "f" * 64, len(KEYS) * 2, KEYS, 2)
    log.start(resume=False)
    for candidate, fold, params in rows:
        log.append({"candidate": candidate, "fold": fold, "params": params, "score": 0.9,
                    "fit_time": 0.1, "rel_gap": 1e-5, "status": "converged"})
    return log


def test_rows_of_this_sweep_are_read_back(tmp_path):
    log = _log(tmp_path, [(0, 0, KEYS[0]), (2, 1, KEYS[2])])
    assert sorted(log.read()) == [(0, 0), (2, 1)]


def test_a_row_whose_candidate_index_was_changed_is_refused(tmp_path):
    log = _log(tmp_path, [(0, 0, KEYS[0]), (1, 1, KEYS[2])])  # index 1, but candidate 2's params
    with pytest.raises(InvalidInputError, match="damaged at line 4: its params"):
        log.read()


@pytest.mark.parametrize("candidate, fold", [(3, 0), (-1, 0), (0, 2)])
def test_a_row_outside_the_grid_or_the_folds_is_refused(tmp_path, candidate, fold):
    log = _log(tmp_path, [(candidate, fold, KEYS[0])])
    with pytest.raises(InvalidInputError, match="is not a fit of this sweep"):
        log.read()


def _fingerprint(scoring, estimator=None, resume=False):
    return sweep_fingerprint(X, Y, CANDIDATES, estimator or MKLClassifier(), scoring, SPLITS,
                             resume=resume)


def test_lambda_and_closure_scorers_refuse_resume():
    accuracy = lambda est, X, y: float(np.mean(est.predict(X) == y))  # noqa: E731
    errors = lambda est, X, y: float(np.mean(est.predict(X) != y))  # noqa: E731
    for scorer in (accuracy, errors):
        with pytest.raises(InvalidInputError, match="lambda or a closure"):
            _fingerprint(scorer, resume=True)
    # writing a log is allowed, but no two such sweeps share a fingerprint (was: equal reprs)
    assert _fingerprint(accuracy) != _fingerprint(errors)
    assert _fingerprint(accuracy) != _fingerprint(accuracy)


def test_a_module_level_scorer_resumes_from_a_new_process():
    here = _fingerprint(error_rate, resume=True)
    code = ("import sys; sys.path.insert(0, {path!r}); import test_sweep_log_checks as t; "
            "print(t._fingerprint(t.error_rate, resume=True))").format(path=str(__import__("pathlib").Path(__file__).parent))
    there = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert there.stdout.strip() == here  # was: the repr held the function's memory address


def test_scorer_names_and_sklearn_scorers_are_told_apart():
    from sklearn.metrics import accuracy_score, balanced_accuracy_score, make_scorer

    prints = {_fingerprint(s, resume=True) for s in
              ("accuracy", "balanced_accuracy", make_scorer(accuracy_score),
               make_scorer(balanced_accuracy_score), make_scorer(balanced_accuracy_score, adjusted=True),
               error_rate, None)}
    assert len(prints) == 7


def test_estimator_parameters_are_compared_exactly():
    near = MKLClassifier(C=1.0 + 1e-12)
    assert _fingerprint("accuracy", MKLClassifier(C=1.0)) != _fingerprint("accuracy", near)
    first = MKLClassifier(kernels=[("rbf", {"gamma": 0.1})])
    second = MKLClassifier(kernels=[("rbf", {"gamma": 0.1 + 1e-13})])
    assert _fingerprint("accuracy", first) != _fingerprint("accuracy", second)
    # arrays enter by their bytes, not by numpy's 8-digit repr
    assert exact_token(np.array([0.1, 0.2])) != exact_token(np.array([0.1, 0.2 + 1e-11]))


@pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                    reason='needs the dask extra: pip install -e ".[dask]"')
def test_sweep_resume_with_a_lambda_scorer_is_a_clear_error(tmp_path):
    from mklopt.model_selection.search import sweep

    with pytest.raises(InvalidInputError, match="resume is refused"):
        sweep(X, Y, {"C": [1.0]}, estimator=MKLClassifier(kernels=["linear"]), cv=2, n_workers=1,
              progress=False, resume=tmp_path / "s.fits.csv",
              scoring=lambda est, X, y: 1.0)


def test_ctrl_c_silences_dask_shutdown_tracebacks_then_restores_them(sigint_as_in_a_terminal):
    """Ctrl-C while a client runs: Dask's loggers are off before Dask sees the interrupt.

    Dask cancels the interrupted wait from its event-loop thread, which can log a
    traceback of its own; the command line promises one line. The handler is the
    previous one again afterwards and the loggers are as they were.
    """
    import logging
    import os
    import signal

    from mklopt.model_selection.sweep_cluster import _SHUTDOWN_LOGGERS, _quiet_after_interrupt

    before = signal.getsignal(signal.SIGINT)
    loggers = [logging.getLogger(name) for name in _SHUTDOWN_LOGGERS]
    seen = []
    with pytest.raises(KeyboardInterrupt), _quiet_after_interrupt():
        try:
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(10**7):  # the handler runs between bytecodes
                pass
        finally:
            seen = [logger.disabled for logger in loggers]
    assert all(seen)
    assert not any(logger.disabled for logger in loggers)
    assert signal.getsignal(signal.SIGINT) is before
