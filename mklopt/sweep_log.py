"""The per-fit log of a sweep: one CSV row per finished (candidate, fold), appended as it completes.

The log is what makes a sweep resumable. Its first line names the sweep it
belongs to, ``# mklopt-sweep-fits v1 fingerprint=<sha256> fits=<total>``: a hash of X,
y, the candidates, the estimator's parameters, the scorer and the folds' test
indices. Then a header and one row per fit: ``candidate``, ``fold``, the
candidate's ``params`` (JSON), ``score``, ``fit_time``, ``rel_gap`` and ``status``
of the fitted model's certificate (empty for estimators without one).

Each row is written with one ``write`` on a file opened for appending and
flushed to disk, so a client killed at any moment leaves every earlier row
intact; a last line without its newline (a write cut short) is ignored when
the log is read back.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .exceptions import InvalidInputError

__all__ = ["FitsLog", "FIT_COLUMNS", "sweep_fingerprint", "fits_path"]

MAGIC = "# mklopt-sweep-fits"
FORMAT = "v1"
FIT_COLUMNS = ("candidate", "fold", "params", "score", "fit_time", "rel_gap", "status")


def fits_path(out: str | Path) -> Path:
    """The log beside a results table: ``sweep.csv`` -> ``sweep.fits.csv``."""
    out = Path(out)
    return out.with_name(out.stem + ".fits.csv")


def sweep_fingerprint(X: np.ndarray, y: np.ndarray, candidates: Sequence[Mapping[str, Any]],
                      estimator: Any, scoring: Any, splits: Sequence[tuple[np.ndarray, np.ndarray]]) -> str:
    """sha256 of everything a fit's score depends on: data, grid, estimator, scorer, folds."""
    digest = hashlib.sha256()
    for array in (np.ascontiguousarray(X), np.ascontiguousarray(y)):
        digest.update(f"{array.dtype.str}{array.shape}".encode())
        digest.update(array.tobytes() if array.dtype != object else repr(array.tolist()).encode())
    digest.update(json.dumps([params_key(c) for c in candidates]).encode())
    digest.update(repr(sorted(estimator.get_params(deep=False).items(), key=str)).encode())
    digest.update(repr(scoring).encode())
    for _, test in splits:
        digest.update(np.asarray(test, dtype=np.int64).tobytes() + b"|")
    return digest.hexdigest()


def params_key(params: Mapping[str, Any]) -> str:
    """A candidate's parameters as canonical JSON (kernel specs and numbers alike)."""
    return json.dumps({k: _plain(v) for k, v in sorted(params.items())}, sort_keys=True)


def _plain(value: Any) -> Any:
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

    def __init__(self, path: str | Path, fingerprint: str, total: int) -> None:
        self.path, self.fingerprint, self.total = Path(path), fingerprint, int(total)

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
                done[(int(row["candidate"]), int(row["fold"]))] = row
            except (KeyError, TypeError, ValueError):
                raise InvalidInputError(f"{self.path} is damaged at line {number} ({row}); it "
                                        "cannot be resumed: run the sweep without resume.") from None
        return done

    def start(self, resume: bool) -> dict[tuple[int, int], dict[str, Any]]:
        """Open the log for this sweep: the fits already done (``resume``) or a fresh log."""
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
