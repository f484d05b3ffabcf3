"""Declared options: each driver and weight method states its options once; one function checks them.

A driver class lists ``options = {"max_cuts": Integer(1), ...}`` and a weight
method registers ``options={...}``; :func:`check_options` then rejects a wrong
type, a non-finite number, a value out of range or a vector of the wrong length
with one :class:`~mklopt.exceptions.InvalidInputError` sentence naming the
option, the value and what to pass — before any compiled or solver code sees it.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse

from .exceptions import InvalidInputError

__all__ = ["Real", "Integer", "Vector", "Choice", "check_options"]


@dataclass(frozen=True)
class Real:
    """A finite real number in ``[low, high]`` (``open`` excludes the named ends)."""

    low: float = -math.inf
    high: float = math.inf
    open: str = ""  # "low", "high" or "both"
    optional: bool = False

    def describe(self) -> str:
        left = "(" if self.open in ("low", "both") or self.low == -math.inf else "["
        right = ")" if self.open in ("high", "both") or self.high == math.inf else "]"
        text = f"a finite number in {left}{self.low:g}, {self.high:g}{right}"
        return text + " or None" if self.optional else text

    def check(self, value: Any, sizes: dict) -> Any:
        if value is None and self.optional:
            return None
        v = _finite_number(value)
        low_ok = v > self.low if self.open in ("low", "both") else v >= self.low
        high_ok = v < self.high if self.open in ("high", "both") else v <= self.high
        if not (math.isfinite(v) and low_ok and high_ok):
            raise ValueError
        return value


@dataclass(frozen=True)
class Integer:
    """An integer in ``[low, high]`` (integral floats such as ``100.0`` are accepted)."""

    low: int = 1
    high: int | None = None
    optional: bool = False

    def describe(self) -> str:
        top = f"{self.high}" if self.high is not None else "inf"
        text = f"an integer in [{self.low}, {top}]" if self.high is not None else \
            f"an integer >= {self.low}"
        return text + " or None" if self.optional else text

    def check(self, value: Any, sizes: dict) -> Any:
        if value is None and self.optional:
            return None
        v = _finite_number(value)
        if not (v.is_integer() and v >= self.low and (self.high is None or v <= self.high)):
            raise ValueError
        return int(v)


@dataclass(frozen=True)
class Vector:
    """A finite real vector of length ``sizes[size]`` (``"M"`` kernels or ``"n"`` points), copied."""

    size: str = "M"
    nonnegative: bool = False
    optional: bool = True

    def describe(self) -> str:
        if self.size == "alpha":
            return "an array of finite numbers shaped like the result's alpha" + (" or None" if self.optional else "")
        what = {"M": "one entry per kernel", "n": "one entry per point"}[self.size]
        sign = "non-negative " if self.nonnegative else ""
        return f"a 1-D array of {sign}finite numbers, {what}" + (" or None" if self.optional else "")

    def check(self, value: Any, sizes: dict) -> Any:
        if value is None and self.optional:
            return None
        if isinstance(value, (str, bytes, dict)):
            raise ValueError
        try:
            arr = np.array(value, copy=True)
        except (TypeError, ValueError):
            raise ValueError from None
        if self.size == "alpha":  # the loss's dual shape: (n,), or (classes, n) for ovr_hinge
            shape = tuple(sizes["alpha"])
            if arr.dtype.kind not in "iuf" or arr.size != int(np.prod(shape)) or arr.ndim not in (1, len(shape)):
                raise ValueError
            arr = arr.reshape(shape)
        elif arr.dtype.kind not in "iuf" or arr.ndim != 1 or arr.size != sizes[self.size]:
            raise ValueError
        arr = arr.astype(float)
        if not np.all(np.isfinite(arr)) or (self.nonnegative and np.any(arr < 0)):
            raise ValueError
        return arr


@dataclass(frozen=True)
class Choice:
    """One of a fixed set of values."""

    values: tuple

    def describe(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)

    def check(self, value: Any, sizes: dict) -> Any:
        if isinstance(value, bool) or not any(value is v or (type(value) is type(v) and value == v)
                                              for v in self.values):
            raise ValueError
        return value


@dataclass(frozen=True)
class Flag:
    """True or False (NumPy's booleans too; not 0 or 1)."""

    def describe(self) -> str:
        return "True or False"

    def check(self, value: Any, sizes: dict) -> bool:
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError
        return bool(value)


def _finite_number(value: Any) -> float:
    """``value`` as a finite float; ValueError for bools, non-numbers, NaN and infinities."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError
    v = float(value)
    if not math.isfinite(v):
        raise ValueError
    return v


def real_array(value: Any, what: str, error: type[Exception] = InvalidInputError, copy: bool = False) -> np.ndarray:
    """``value`` as a float array (a new one with ``copy``); an ``error`` naming ``what`` for None,
    a string, a SciPy sparse matrix, complex values (refused, never cast to their real parts) or
    values that are not numbers."""
    if scipy.sparse.issparse(value):
        raise error(f"{what} must be a dense array, got a SciPy sparse {type(value).__name__}; pass .toarray().")
    if np.iscomplexobj(value):
        raise error(f"{what} must be real numbers, got complex values.")
    if value is None or isinstance(value, str):
        raise error(f"{what} must be real numbers, got {_shown(value)}.")
    try:
        return np.array(value, dtype=float) if copy else np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise error(f"{what} must be an array of real numbers, got {_shown(value)}.") from None


def check_options(owner: str, declared: dict, options: dict, **sizes) -> dict:
    """``options`` with every declared one checked (and vectors copied); undeclared ones pass as given.

    Raises :class:`InvalidInputError` naming ``owner``, the option, the value and
    what it must be.
    """
    checked = dict(options)
    for name, value in options.items():
        rule = declared.get(name)
        if rule is None:
            continue
        try:
            checked[name] = rule.check(value, sizes)
        except ValueError:
            shown = _shown(value)
            want = rule.describe().replace("one entry per kernel", f"{sizes.get('M')} entries (one per "
                                           "kernel)").replace("one entry per point",
                                                              f"{sizes.get('n')} entries (one per point)"
                                                              ).replace("the result's alpha",
                                                                        f"the result's alpha {sizes.get('alpha')}")
            raise InvalidInputError(f"{owner}: {name} must be {want}, got {shown}.") from None
    return checked


def _shown(value: Any) -> str:
    """A short description of a rejected value."""
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    text = repr(value)
    if len(text) <= 60:
        return text
    size = f" of length {len(value)}" if hasattr(value, "__len__") else ""
    return f"a {type(value).__name__}{size}"
