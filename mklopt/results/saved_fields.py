"""The shape of a saved result's metadata, checked before anything trusts it.

A file is data from outside: a fingerprint that is not a table of numbers, a history
that is not a list of records or a tolerance that is not a relative gap makes it a
*damaged* result (a one-line :class:`~mklopt.exceptions.InvalidInputError`, exit 2),
never an internal error further in, and never a verdict.
"""

from __future__ import annotations

import math
import numbers

__all__ = ["check_meta"]


def check_meta(meta: dict) -> None:
    """Raise ``ValueError`` (saying which field) unless the metadata has the saved shapes."""
    if not isinstance(meta.get("info"), dict):
        raise ValueError("info is not a table")
    tol = meta["info"].get("tol")
    if tol is not None and not (_real(tol) and 0.0 < tol < 1.0):
        raise ValueError(f"info.tol must be a relative gap in (0, 1), got {tol!r}")
    history = meta.get("history")
    if not isinstance(history, list) or not all(isinstance(record, dict) for record in history):
        raise ValueError("history is not a list of records")
    if meta.get("fingerprint") is not None:
        _check_fingerprint(meta["fingerprint"])


def _check_fingerprint(saved) -> None:
    if not isinstance(saved, dict):
        raise ValueError(f"fingerprint is not a table (got {type(saved).__name__})")
    missing = [key for key in ("M", "n", "labels", "sketch") if key not in saved]
    if missing:
        raise ValueError(f"fingerprint lacks {missing}")
    M, n = saved["M"], saved["n"]
    if not (_integer(M) and M >= 1 and _integer(n) and n >= 1):
        raise ValueError(f"fingerprint M and n must be positive integers, got {M!r}, {n!r}")
    if not isinstance(saved["labels"], str):
        raise ValueError("fingerprint labels is not a hash")
    for key in ("sketch", "subset"):
        if key in saved and not _table(saved[key], M):
            raise ValueError(f"fingerprint {key} is not {M} rows of 9 finite numbers")


def _table(rows, M: int) -> bool:
    return (isinstance(rows, list) and len(rows) == M and all(
        isinstance(row, list) and len(row) == 9 and all(_real(v) for v in row) for row in rows))


def _real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def _integer(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)
