"""The per-fit log of a sweep: one CSV row per finished (candidate, fold), appended as it completes.

The log is what makes a sweep resumable. Its first line names the sweep it
belongs to, ``# mklopt-sweep-fits v2 fingerprint=<sha256> fits=<total>``: a hash of X,
y, the candidates, the estimator's parameters, the scorer and the folds' test
indices, each by its exact value (floats by their bits, arrays by dtype, shape
and bytes, functions by their qualified name; never a ``repr`` that rounds or
holds a memory address). A lambda or closure scorer has no name another process
can find: such a sweep may write a log but refuses to resume one. Then a header
and one row per fit: ``candidate``, ``fold``, the candidate's ``params`` (JSON),
``score``, ``fit_time``, ``rel_gap`` and ``status`` of the fitted model's
certificate (empty for estimators without one). On resume every row is checked:
its candidate and fold exist and its ``params`` are its candidate's.

Each row is written with one ``write`` on a file opened for appending and
flushed to disk, so a client killed at any moment leaves every earlier row
intact; a last line without its newline (a write cut short) is ignored when
the log is read back.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import inspect
import io
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..exceptions import InvalidInputError

__all__ = ["FitsLog", "FIT_COLUMNS", "sweep_fingerprint", "fits_path"]

MAGIC = "# mklopt-sweep-fits"
FORMAT = "v2"
FIT_COLUMNS = ("candidate", "fold", "params", "score", "fit_time", "rel_gap", "status")


def fits_path(out: str | Path) -> Path:
    """The log beside a results table: ``sweep.csv`` -> ``sweep.fits.csv``."""
    out = Path(out)
    return out.with_name(out.stem + ".fits.csv")


def sweep_fingerprint(X: np.ndarray, y: np.ndarray, candidates: Sequence[Mapping[str, Any]],
                      estimator: Any, scoring: Any, splits: Sequence[tuple[np.ndarray, np.ndarray]],
                      resume: bool = False) -> str:
    """sha256 of everything a fit's score depends on: data, grid, estimator, scorer, folds.

    Every value enters by its exact encoding (:func:`exact_token`). A scorer
    without a qualified name (a lambda or a closure) raises
    :class:`InvalidInputError` when ``resume``; without it the fingerprint gets a
    one-off token, so no later sweep can take the log for its own.
    """
    digest = hashlib.sha256()
    for array in (np.ascontiguousarray(X), np.ascontiguousarray(y)):
        digest.update(exact_token(array).encode())
    try:
        digest.update(exact_token(list(candidates)).encode())
        digest.update(exact_token(sorted(estimator.get_params(deep=False).items(), key=str)).encode())
    except Unidentifiable as exc:
        if resume:
            raise InvalidInputError(
                f"{exc.what} cannot be identified by value (a lambda, a closure or an object without a "
                "stable description), so a log cannot be checked against it and resume is refused. "
                "Use a function defined at module level (functools.partial of one is fine).") from None
        digest.update(os.urandom(16))  # a one-off sweep: no later sweep takes this log for its own
    digest.update(_scorer_token(scoring, resume).encode())
    for _, test in splits:
        digest.update(np.asarray(test, dtype=np.int64).tobytes() + b"|")
    return digest.hexdigest()


def exact_token(value: Any) -> str:
    """A string that identifies ``value`` exactly and is the same in every process.

    Floats by their hexadecimal bits, arrays by dtype, shape and a hash of their
    bytes, containers element by element, functions and classes by their
    qualified name (``functools.partial`` by its function and arguments),
    estimators by their class and parameters. Anything else by ``repr``. A value
    nothing identifies by value (a lambda, a closure, a repr holding a memory
    address) raises :class:`Unidentifiable`: never a fall-back to a type name.
    """
    if value is None or isinstance(value, (bool, int, str, bytes)):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, (float, np.floating)):
        return f"float:{float(value).hex()}"
    if isinstance(value, np.integer):
        return f"int:{int(value)}"
    if isinstance(value, np.ndarray):
        body = (hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()
                if value.dtype != object else exact_token(value.tolist()))
        return f"array:{value.dtype.str}:{value.shape}:{body}"
    if isinstance(value, (list, tuple)):
        return f"{type(value).__name__}[" + ",".join(exact_token(v) for v in value) + "]"
    if isinstance(value, Mapping):
        items = sorted((str(k), exact_token(v)) for k, v in value.items())
        return "map{" + ",".join(f"{k}={v}" for k, v in items) + "}"
    if hasattr(value, "get_params") and not isinstance(value, type):
        return f"{_qualified(type(value))}({exact_token(value.get_params(deep=False))})"
    if isinstance(value, functools.partial):
        return (f"partial:{exact_token(value.func)}:{exact_token(list(value.args))}:"
                f"{exact_token(dict(value.keywords))}")
    if callable(value) and hasattr(value, "__qualname__"):
        name = _qualified(value)
        if "<lambda>" in name or "<locals>" in name:
            raise Unidentifiable(f"the function {name}")
        owner = getattr(value, "__self__", None)  # a bound method: its object too
        return f"callable:{name}" + ("" if owner is None or isinstance(owner, type) or
                                     inspect.ismodule(owner) else f"@{exact_token(owner)}")
    text = repr(value)
    if " at 0x" in text:
        raise Unidentifiable(f"the {type(value).__name__} object {text[:60]}")
    return f"{type(value).__name__}:{text}"


class Unidentifiable(Exception):
    """A value that nothing identifies in another process (the sweep cannot resume against it)."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


def _qualified(obj: Any) -> str:
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', type(obj).__name__)}"


def _scorer_token(scoring: Any, resume: bool) -> str:
    """The scorer by name: a string, a scikit-learn scorer's function and arguments, or a function."""
    if scoring is None or isinstance(scoring, str):
        return exact_token(scoring)
    function = getattr(scoring, "_score_func", scoring)  # scikit-learn's make_scorer objects
    name = _qualified(function) if hasattr(function, "__qualname__") else ""
    if not name or "<lambda>" in name or "<locals>" in name:
        if resume:
            raise InvalidInputError(
                f"the scorer {scoring!r} is a lambda or a closure: nothing identifies it in another "
                "process, so a log cannot be checked against it and resume is refused. Pass a "
                "scorer name ('accuracy') or a function defined at module level.")
        return f"unresumable:{os.urandom(16).hex()}"
    extra = {"sign": getattr(scoring, "_sign", None), "kwargs": getattr(scoring, "_kwargs", None),
             "response": getattr(scoring, "_response_method", None)}
    return f"scorer:{name}:{exact_token(extra)}"


def params_key(params: Mapping[str, Any]) -> str:
    """A candidate's parameters as canonical JSON (kernel specs and numbers alike)."""
    return json.dumps({k: _plain(v) for k, v in sorted(params.items())}, sort_keys=True)


def _plain(value: Any) -> Any:
    if isinstance(value, functools.partial):
        return {"partial": _plain(value.func), "args": _plain(list(value.args)),
                "keywords": _plain(dict(value.keywords))}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (np.floating, np.integer)):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return getattr(value, "__name__", None) or repr(value)


class FitsLog:
    """Append-only log of finished fits at ``path`` for the sweep ``fingerprint``."""

    def __init__(self, path: str | Path, fingerprint: str, total: int,
                 candidates: Sequence[str] = (), folds: int = 0) -> None:
        self.path, self.fingerprint, self.total = Path(path), fingerprint, int(total)
        self.candidates, self.folds = list(candidates), int(folds)

    def read(self) -> dict[tuple[int, int], dict[str, Any]]:
        """The finished fits ``{(candidate, fold): row}``; an error if the log is another sweep's."""
        if not self.path.exists():
            return {}
        text = self.path.read_text(encoding="utf-8")
        lines = text.split("\n")
        if not lines[0].startswith(MAGIC):
            raise InvalidInputError(f"{self.path} is not an mklopt sweep log (first line "
                                    f"{lines[0][:60]!r}); pass another output path.")
        if not lines[0].startswith(f"{MAGIC} {FORMAT} "):
            raise InvalidInputError(
                f"{self.path} is a sweep log of another format ({lines[0][len(MAGIC):].split()[:1]}, "
                f"this mklopt writes {FORMAT}); it cannot be resumed: run the sweep without resume.")
        if f"fingerprint={self.fingerprint}" not in lines[0]:
            raise InvalidInputError(
                f"{self.path} was written by another sweep (other data, grid, estimator, scorer or "
                "folds): resuming would mix the two. Remove it, or write this sweep elsewhere.")
        complete = "\n".join(lines[1:-1])  # the last piece has no newline: cut short, or empty
        done = {}
        for number, row in enumerate(csv.DictReader(io.StringIO(complete)), start=3):
            try:
                row["score"] = float(row["score"]) if row["score"] else float("nan")
                row["fit_time"] = float(row["fit_time"])
                key = (int(row["candidate"]), int(row["fold"]))
            except (KeyError, TypeError, ValueError):
                raise InvalidInputError(f"{self.path} is damaged at line {number} ({row}); it "
                                        "cannot be resumed: run the sweep without resume.") from None
            self._check_row(key, row, number)
            done[key] = row
        return done

    def _check_row(self, key: tuple[int, int], row: Mapping[str, Any], number: int) -> None:
        """A row belongs to this sweep: its candidate and fold exist and its params are its candidate's."""
        if not self.candidates:
            return
        candidate, fold = key
        if not (0 <= candidate < len(self.candidates) and 0 <= fold < self.folds):
            raise InvalidInputError(
                f"{self.path} is damaged at line {number}: candidate {candidate}, fold {fold} is not a "
                f"fit of this sweep ({len(self.candidates)} candidates x {self.folds} folds); it cannot "
                "be resumed: run the sweep without resume.")
        if row.get("params") != self.candidates[candidate]:
            raise InvalidInputError(
                f"{self.path} is damaged at line {number}: its params {row.get('params')} are not those "
                f"of candidate {candidate} ({self.candidates[candidate]}); it cannot be resumed: run "
                "the sweep without resume.")

    def start(self, resume: bool) -> dict[tuple[int, int], dict[str, Any]]:
        """Open the log for this sweep: the fits already done (``resume``) or a fresh log."""
        if resume and not self.path.exists():  # a mistyped path would run the whole sweep again
            raise InvalidInputError(f"resume: there is no log {str(self.path)!r} of an earlier run of this sweep; "
                                    "start one with log= (and resume it with resume= after an interruption).")
        done = self.read() if resume else {}
        if not done:
            header = io.StringIO()
            csv.writer(header, lineterminator="\n").writerow(FIT_COLUMNS)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(f"{MAGIC} {FORMAT} fingerprint={self.fingerprint} fits={self.total}\n"
                                 + header.getvalue(), encoding="utf-8")
        return done

    def append(self, row: Mapping[str, Any]) -> None:
        """Append one row with a single write, flushed to disk."""
        line = io.StringIO()
        csv.writer(line, lineterminator="\n").writerow([_cell(row.get(c)) for c in FIT_COLUMNS])
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, line.getvalue().encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return value
