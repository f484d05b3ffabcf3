"""Argument types of the ``mklopt`` commands: numbers, tolerances, counts, kernel specs.

Each function is an argparse ``type=``: it returns the parsed value or raises
:class:`argparse.ArgumentTypeError`, which the parser turns into one line
``mklopt <cmd>: error: argument --flag: ...`` and exit status 2.
"""

from __future__ import annotations

import argparse
import inspect
import math
from collections.abc import Callable, Iterator
from fractions import Fraction
from typing import Any


class RegistryChoices:
    """An argparse ``choices=`` read from a registry when a value is checked or the help
    lists them (``%(choices)s``; give a ``metavar``, which argparse would otherwise make of
    the choices when the parser is built), so that ``mklopt --help`` and the commands that
    do not take the option import none of what the registry's module does (the losses: CVXPY)."""

    def __init__(self, load: Callable[[], Any]) -> None:
        self._load = load

    def __contains__(self, name: object) -> bool:
        return name in self._load()

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._load()))


# --------------------------------------------------------------- argument types
def parse_number(text: str) -> float:
    """A float, ``inf`` or a fraction such as ``4/3``.

    Raises
    ------
    argparse.ArgumentTypeError
        When ``text`` is none of these.
    """
    text = str(text).strip()
    if text.lower() in ("inf", "infinity", "+inf"):
        return math.inf
    try:
        return float(Fraction(text)) if "/" in text else float(text)
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"not a number: {text!r} (use e.g. 1, 4/3, inf)") from None


def _checked(text: str, ok: Callable[[float], bool], what: str) -> float:
    value = parse_number(text)
    if math.isnan(value) or not ok(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not {what}")
    return value


def tolerance(text: str) -> float:
    """A finite number strictly between 0 and 1 (``--tol``)."""
    return _checked(text, lambda v: 0 < v < 1, "a tolerance in (0, 1), e.g. 1e-6")


def positive_float(text: str) -> float:
    """A finite number > 0 (``--C``, ``--time-limit``)."""
    return _checked(text, lambda v: 0 < v < math.inf, "a finite positive number")


def weight_norm(text: str) -> float:
    """A weight norm p in [1, inf] (``--p``)."""
    return _checked(text, lambda v: v >= 1, "a weight norm p >= 1 (1, 4/3, 2, inf, ...)")


def block_norm(text: str) -> float:
    """A block norm b in [1, inf] (``--b``)."""
    return _checked(text, lambda v: v >= 1, "a block norm b >= 1")


def _integer(text: str, minimum: int, what: str) -> int:
    try:
        value = int(str(text).strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"{text!r} is not {what}")
    return value


def positive_int(text: str) -> int:
    """An integer >= 1 (``--max-iter``)."""
    return _integer(text, 1, "a positive integer")


def nonnegative_int(text: str) -> int:
    """An integer >= 0 (``--theta``)."""
    return _integer(text, 0, "a non-negative integer")


def _value(text: str) -> Any:
    """``true``/``false`` (any case) as booleans, an int, a float (``4/3`` and ``inf``
    accepted) or else the string itself."""
    if text.strip().lower() in ("true", "false"):
        return text.strip().lower() == "true"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return parse_number(text)
    except argparse.ArgumentTypeError:
        return text


def _kernel_parameters(name: str, spec: str) -> set[str]:
    """The keyword parameters of scikit-learn's pairwise kernel ``name``."""
    from sklearn.metrics.pairwise import PAIRWISE_KERNEL_FUNCTIONS

    if name not in PAIRWISE_KERNEL_FUNCTIONS:
        raise argparse.ArgumentTypeError(
            f"unknown kernel {name!r} in {spec!r}; choose from {sorted(PAIRWISE_KERNEL_FUNCTIONS)}")
    found = inspect.signature(PAIRWISE_KERNEL_FUNCTIONS[name]).parameters
    return set(found) - {"X", "Y", "dense_output"}


def parse_kernel_spec(text: str) -> Any:
    """``rbf:gamma=0.1``, ``poly:degree=3,coef0=1`` or ``linear`` -> a kernel spec.

    The metric must be one of scikit-learn's pairwise kernels and every
    parameter one of its numeric keywords (``gamma=scale`` is also accepted).

    Raises
    ------
    argparse.ArgumentTypeError
        For an unknown metric, an unknown parameter or a non-numeric value.
    """
    name, _, rest = str(text).partition(":")
    name = name.strip()
    if not name:
        raise argparse.ArgumentTypeError(f"bad kernel spec {text!r}; use e.g. rbf:gamma=0.1 or linear")
    allowed = _kernel_parameters(name, text)
    params = {}
    for item in filter(None, rest.split(",")):
        key, eq, val = (s.strip() for s in item.partition("="))
        if not eq or not key:
            raise argparse.ArgumentTypeError(f"bad kernel parameter {item!r} in {text!r}; use key=value")
        if key not in allowed:
            raise argparse.ArgumentTypeError(
                f"kernel {name!r} has no parameter {key!r} (it takes {sorted(allowed) or 'none'})")
        if key in params:
            raise argparse.ArgumentTypeError(f"kernel parameter {key!r} given twice in {text!r}; "
                                             "give each once (two kernels are two --kernel options)")
        value = _value(val)
        if not (key == "gamma" and value == "scale") and (
                isinstance(value, str) or not math.isfinite(value)):
            raise argparse.ArgumentTypeError(f"kernel parameter {key}={val!r} in {text!r} "
                                             "must be a finite number")
        params[key] = value
    return (name, params) if params else name


def parse_param(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` of ``--param`` (the value a boolean, an int, a number or a string)."""
    key, eq, val = text.partition("=")
    if not eq or not key.strip():
        raise argparse.ArgumentTypeError(f"bad --param {text!r}; use key=value (e.g. b=4)")
    return key.strip(), _value(val.strip())
