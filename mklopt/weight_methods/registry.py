"""The registry of weight methods: one small module per method registers itself here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

__all__ = ["WeightFit", "WeightMethod", "METHODS", "register"]


@dataclass
class WeightFit:
    """Kernel weights and what the method found on the way (its own certificate, if any)."""

    weights: np.ndarray
    info: dict = field(default_factory=dict)


@dataclass
class WeightMethod:
    """A weight method of :func:`mklopt.learn_weights`.

    Attributes
    ----------
    name : str
    function : callable
        ``function(kernels, y, **options) -> WeightFit``.
    targets : {"labels", "any"}
        Two-class labels only, or also real regression targets.
    summary, certified : str
        One line each: what it does, what mklopt certifies about it.
    page : str
        Its page under ``formulations/``.
    uses_C : bool
        The method trains SVMs itself and takes the estimator's ``C``.
    options : dict
        Its options and what each must be (:mod:`mklopt._options`), checked by
        :func:`mklopt.learn_weights` before the method runs.
    """

    name: str
    function: Callable[..., WeightFit]
    targets: str
    summary: str
    certified: str
    page: str
    uses_C: bool = False
    options: dict = field(default_factory=dict)


#: name -> WeightMethod, in the order they were registered.
METHODS: dict[str, WeightMethod] = {}


def register(method: WeightMethod) -> None:
    """Make ``method`` available to :func:`mklopt.learn_weights` and ``MKLClassifier(driver=...)``."""
    METHODS[method.name] = method
