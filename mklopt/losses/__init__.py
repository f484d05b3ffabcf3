"""Losses of the MKL objective, one small class each (hinge, squared, epsilon-insensitive, ...).

``LOSSES`` maps each name accepted by ``loss=`` to its class; :func:`as_loss`
turns a name (with ``epsilon=`` / ``nu=``) or a :class:`Loss` object into a
loss. A new loss is one :class:`Loss` subclass (and its page in
``formulations/``); :func:`register` adds it to the names.
"""

from __future__ import annotations

from ..exceptions import InvalidInputError
from .base import DualPart, Loss, PrimalPart
from .epsilon_insensitive import EpsilonInsensitive
from .hinge import Hinge, best_bias, hinge_sum, project_alpha
from .one_class import OneClass
from .ovr_hinge import OvrHinge
from .squared_error import SquaredError

__all__ = ["Loss", "DualPart", "PrimalPart", "Hinge", "EpsilonInsensitive", "SquaredError",
           "OneClass", "OvrHinge", "LOSSES", "as_loss", "register", "project_alpha", "best_bias",
           "hinge_sum"]

LOSSES: dict[str, type[Loss]] = {
    cls.name: cls for cls in (Hinge, EpsilonInsensitive, SquaredError, OneClass, OvrHinge)}

#: Which parameter each loss takes (the others are errors, not silently ignored).
_PARAMS = {"epsilon_insensitive": "epsilon", "one_class": "nu"}


def register(cls: type[Loss]) -> type[Loss]:
    """Make a :class:`Loss` subclass available by its ``name`` (usable as a decorator)."""
    if not (isinstance(cls, type) and issubclass(cls, Loss)):
        raise InvalidInputError(f"register() takes a Loss subclass, got {cls!r}.")
    LOSSES[cls.name] = cls
    return cls


def as_loss(loss="hinge", *, epsilon: float | None = None, nu: float | None = None) -> Loss:
    """A :class:`Loss` from a name (``"hinge"``, ``"epsilon_insensitive"``, ...) or a Loss object.

    ``epsilon`` goes to ``"epsilon_insensitive"`` and ``nu`` to ``"one_class"``;
    giving either to another loss is an error.
    """
    given = {k: v for k, v in (("epsilon", epsilon), ("nu", nu)) if v is not None}
    if isinstance(loss, Loss):
        if given:
            raise InvalidInputError(
                f"{sorted(given)} cannot be combined with a Loss object ({loss!r}); set them on it.")
        return loss
    if not isinstance(loss, str) or loss not in LOSSES:
        raise InvalidInputError(f"unknown loss {loss!r}; choose one of {sorted(LOSSES)} or pass a Loss object.")
    allowed = _PARAMS.get(loss)
    extra = sorted(set(given) - {allowed})
    if extra:
        raise InvalidInputError(f"loss '{loss}' takes no {', '.join(extra)}"
                                + (f" (only {allowed})." if allowed else "."))
    return LOSSES[loss](**given)
