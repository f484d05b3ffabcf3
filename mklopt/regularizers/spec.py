"""Regularizers by name: ``as_regularizer`` and the specs that saved results store.

A spec is ``{"name": "lp", "params": {"p": 2.0}}``; :func:`from_spec` rebuilds
the set. User-defined :class:`ConstraintSet` objects hold code and have no
spec: a saved result then asks for the regularizer when it is re-certified.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..exceptions import InvalidInputError
from .base import Regularizer
from .groups import GroupSimplex
from .krr import KRRProblem
from .lp import L1, LpBall
from .norms import check_p
from .spectrahedron import Spectrahedron
from .penalties import BlockNorm, VKRPenalty
from .sets import ConstraintSet, ElasticNet, Fixed, NonIsotropic, WeightedL1

__all__ = ["as_regularizer", "spec_of", "from_spec", "REGISTRY"]

#: name -> (class, function giving the constructor's parameters).
REGISTRY: dict[str, tuple[type, Callable[[Regularizer], dict]]] = {
    "l1": (L1, lambda r: {}),
    "lp": (LpBall, lambda r: {"p": r.p}),
    "weighted_l1": (WeightedL1, lambda r: {"v": r.v.tolist()}),
    "elastic_net": (ElasticNet, lambda r: {"a": r.a, "b": r.b}),
    "non_isotropic": (NonIsotropic, lambda r: {"sigma": np.asarray(r.sigma).tolist()}),
    "fixed": (Fixed, lambda r: {"weights": r.weights.tolist()}),
    "block": (BlockNorm, lambda r: {"b": r.b}),
    "vkr": (VKRPenalty, lambda r: {"Lam": r.Lam.tolist()}),
    "group_simplex": (GroupSimplex, lambda r: {"groups": r.groups.tolist()}),
}
REGISTRY["spectrahedron"] = (Spectrahedron, lambda r: {"trace": r.c})  # kernels bound on re-certification
REGISTRY["krr"] = (KRRProblem, lambda r: r.params())


def spec_of(reg: Regularizer) -> dict | None:
    """``{"name", "params"}`` for a registered regularizer class (exact type), else None."""
    for name, (cls, params) in REGISTRY.items():
        if type(reg) is cls:
            return {"name": name, "params": params(reg)}
    return None


def from_spec(spec: dict) -> Regularizer:
    """Rebuild a regularizer from :func:`spec_of`'s output."""
    try:
        cls, _ = REGISTRY[spec["name"]]
        params = {key: _number(value) for key, value in dict(spec.get("params", {})).items()}
    except (KeyError, TypeError, AttributeError):
        raise InvalidInputError(f"unknown regularizer spec {spec!r}; known: {sorted(REGISTRY)}.") from None
    return cls(**params)


#: How JSON writers spell the non-finite numbers (``p = inf``, ``b = inf``).
_NON_FINITE = {"inf": np.inf, "infinity": np.inf, "+inf": np.inf, "-inf": -np.inf,
               "-infinity": -np.inf, "nan": np.nan}


def _number(value):
    """A spec parameter with non-finite numbers, which JSON stores as strings, as floats again."""
    if isinstance(value, str) and value.strip().lower() in _NON_FINITE:
        return _NON_FINITE[value.strip().lower()]
    return value


def as_regularizer(regularizer: Regularizer | Callable | None, p: float = 1.0) -> Regularizer:
    """The weight set for ``(regularizer, p)``: ``LpBall(p)`` when none is given.

    A plain callable ``constraints(mu)`` is wrapped in :class:`ConstraintSet`.
    """
    if regularizer is None:
        return L1() if check_p(p) == 1 else LpBall(p)
    if isinstance(regularizer, Regularizer):
        return regularizer
    if callable(regularizer):
        return ConstraintSet(regularizer)
    raise InvalidInputError(
        f"regularizer must be a mklopt Regularizer or a callable constraints(mu), got {regularizer!r}.")
