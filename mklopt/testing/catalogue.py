"""The catalogue's JSON document and the :class:`ReferenceInstance` objects built from it."""

from __future__ import annotations

import importlib.resources
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..api import solve
from ..certificates.gap import certify
from ..exceptions import InvalidInputError
from ..kernels import KernelSet
from ..regularizers import (BlockNorm, ElasticNet, Fixed, LpBall, Regularizer, WeightedL1,
                            as_regularizer)
from .data import build_kernels, build_labels, loss_of
from .data import field as record_field

__all__ = ["CATALOGUE_FILE", "catalogue_path", "load_catalogue", "decode_params", "solver_params",
           "certificate_regularizer", "ReferenceInstance", "instance_from_record",
           "reference_instances"]

#: File name of the certified reference instances inside the catalogue folder.
CATALOGUE_FILE = "reference_instances.json"


# --------------------------------------------------------------------------- locate
def catalogue_path(filename: str = CATALOGUE_FILE) -> Path:
    """Path of a file of the formulation catalogue.

    Looks in the installed package ``mklopt._catalogue`` (a wheel), then in
    the top-level ``formulations/`` folder of a source or editable checkout.

    Raises
    ------
    FileNotFoundError
        When neither location has the file.
    """
    try:
        candidate = Path(str(importlib.resources.files("mklopt._catalogue") / filename))
        if candidate.is_file():
            return candidate
    except (ModuleNotFoundError, TypeError):
        pass  # editable installs cannot map the namespace sub-package
    candidate = Path(__file__).resolve().parents[2] / "formulations" / filename
    if candidate.is_file():
        return candidate
    raise FileNotFoundError(
        f"catalogue file {filename!r} not found in mklopt._catalogue nor in {candidate.parent}; "
        "regenerate it with examples/make_reference_instances.py.")


def load_catalogue(path: str | Path | None = None) -> dict:
    """The JSON document of reference instances (default: :func:`catalogue_path`)."""
    if path is not None and not isinstance(path, (str, Path)):
        raise InvalidInputError(f"path must be a file path, got {type(path).__name__}.")
    path = catalogue_path() if path is None else Path(path)
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
    except OSError as exc:
        raise InvalidInputError(f"cannot read the catalogue {str(path)!r}: {exc.strerror or exc}.") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"{str(path)!r} is not a JSON catalogue of reference instances ({exc}).") from None
    if not isinstance(document, dict) or not isinstance(document.get("instances"), list):
        raise InvalidInputError(f"{str(path)!r} is not a catalogue of reference instances (no list 'instances').")
    return document


# --------------------------------------------------------------------------- params
_REGULARIZERS: dict[str, Callable[..., Regularizer]] = {
    "elastic_net": lambda a=1.0, b=1.0: ElasticNet(a, b),
    "weighted_l1": lambda v: WeightedL1(np.asarray(v, dtype=float)),
    "lp": lambda p: LpBall(p),
    "fixed": lambda weights: Fixed(np.asarray(weights, dtype=float)),
}


def decode_params(raw: dict) -> dict:
    """Turn JSON parameters into :func:`mklopt.solve` keyword arguments.

    ``{"regularizer": {"name": "elastic_net", "a": 1, "b": 1}}`` becomes an
    :class:`~mklopt.ElasticNet`; ``weights`` becomes an array; ``p`` (weight
    norm) and ``b`` (block norm) stay floats.
    """
    params = dict(raw)
    if "regularizer" in params:
        spec = dict(params["regularizer"])
        name = spec.pop("name", None)
        if name not in _REGULARIZERS:
            raise InvalidInputError(f"unknown regularizer {name!r}; known: {sorted(_REGULARIZERS)}.")
        params["regularizer"] = _REGULARIZERS[name](**spec)
    if "weights" in params:
        params["weights"] = np.asarray(params["weights"], dtype=float)
    return params


def solver_params(record: dict, raw: dict | None = None) -> dict:
    """Keyword arguments of a solve of the record: its parameters and its loss.

    ``raw`` (default ``record["params"]``) is decoded by :func:`decode_params`;
    a record with a ``loss`` entry adds ``loss=`` and the loss's parameter
    (``epsilon=`` or ``nu=``). Hinge records add nothing, so solvers written
    before losses existed keep their signature.
    """
    params = decode_params(record["params"] if raw is None else raw)
    if "loss" in record:
        name, options = loss_of(record)
        params.update(loss=name, **options)
    return params


def certificate_regularizer(params: dict) -> Regularizer:
    """The penalty the certificate of a problem with these (decoded) parameters uses.

    ``weights`` -> the fixed combination, ``b`` -> :class:`~mklopt.BlockNorm`,
    ``regularizer`` -> itself, else the ℓp ball of weight norm ``p`` (default 1).
    """
    if "weights" in params:
        return Fixed(params["weights"])
    if "b" in params:
        return BlockNorm(params["b"])
    return as_regularizer(params.get("regularizer"), params.get("p", 1.0))


# --------------------------------------------------------------------------- instances
@dataclass(eq=False)
class ReferenceInstance:
    """One reference problem with its certified optimum.

    Attributes
    ----------
    name, formulation : str
        Instance name; formulation that certified the optimum (pass it to
        :func:`mklopt.solve` to re-solve).
    kernels : KernelSet
        Rebuilt deterministically from the definition.
    y : ndarray (n,) or None
        Labels as the loss takes them: {-1, +1} (hinge), standardized targets
        (``"epsilon_insensitive"``, ``"squared_error"``), class labels
        (``"ovr_hinge"``), None (``"one_class"``).
    C : float
        Soft-margin constant (1 for ``"one_class"``, whose trade-off is ``nu``).
    params : dict
        The problem's parameters, ready for ``mklopt.solve(..., **params)``
        and for a user's solver: ``p`` (weight norm), ``b`` (block norm),
        ``regularizer`` (a :class:`~mklopt.Regularizer`) or ``weights`` (the
        fixed combination of an SVM instance); for a loss other than the
        hinge also ``loss`` and its parameter ``epsilon`` or ``nu``.
    optimal_value, dual_value, rel_gap : float
        Certified primal value of the stored candidate, its dual value
        (:math:`\\text{dual} \\le \\text{OPT} \\le \\text{optimal\\_value}`) and
        their relative gap.
    weights, alpha : ndarray
        The certified candidate (block instances: effective weights
        :math:`\\mu_m = \\|w_m\\|/\\sqrt{s_m(\\alpha)}`; ``"ovr_hinge"``: alpha
        of shape (n_classes, n)).
    bias : float or ndarray (n_classes,)
    definition : dict
        The raw JSON record (dataset, indices, kernel specs, cross-checks, ...).
    loss : str
        Name of the loss (``"hinge"`` unless the record names another).
    loss_params : dict
        The loss's parameter (``{"epsilon": ...}``, ``{"nu": ...}`` or empty).
    """

    name: str
    formulation: str
    kernels: KernelSet
    y: np.ndarray | None
    C: float
    params: dict
    optimal_value: float
    dual_value: float
    rel_gap: float
    weights: np.ndarray
    alpha: np.ndarray
    bias: float | np.ndarray
    definition: dict = field(repr=False)
    loss: str = "hinge"
    loss_params: dict = field(default_factory=dict)

    @property
    def p(self) -> float | None:
        """Weight norm :math:`p` (None unless the instance is an ℓp ball)."""
        reg = self.regularizer
        return reg.p if isinstance(reg, LpBall) else None

    @property
    def b(self) -> float | None:
        """Block norm :math:`b` (given, or :math:`2p/(p+1)` for an ℓp instance)."""
        reg = self.regularizer
        if isinstance(reg, BlockNorm):
            return reg.b
        return None if self.p is None else (2.0 if math.isinf(self.p) else 2 * self.p / (self.p + 1))

    @property
    def regularizer(self) -> Regularizer:
        """Weight set Θ (or block-norm penalty) the certificate uses."""
        return certificate_regularizer(self.params)

    def certify(self, weights: np.ndarray, alpha: np.ndarray):
        """mklopt's certificate (:class:`~mklopt.Certificate`) of a candidate on this instance."""
        return certify(self.kernels, self.y, weights, alpha, C=self.C, regularizer=self.regularizer,
                       loss=self.loss, **self.loss_params)

    def solve(self, **options):
        """``mklopt.solve`` on this instance with its own formulation (``options``: backend, tol...)."""
        return solve(self.kernels, self.y, self.formulation, C=self.C, **self.params, **options)


def _bias(value: float | list) -> float | np.ndarray:
    """A stored bias: one float, or one per class (``"ovr_hinge"``)."""
    return np.asarray(value, dtype=float) if isinstance(value, list) else float(value)


def instance_from_record(record: dict) -> ReferenceInstance:
    """Build a :class:`ReferenceInstance` from one JSON record."""
    cert = record["certified"]
    loss, loss_params = loss_of(record)
    return ReferenceInstance(
        name=record["name"], formulation=record["formulation"], kernels=build_kernels(record),
        y=build_labels(record), C=float(record["C"]), params=solver_params(record),
        optimal_value=float(cert["optimal_value"]), dual_value=float(cert["dual_value"]),
        rel_gap=float(cert["rel_gap"]), weights=np.asarray(cert["weights"], dtype=float),
        alpha=np.asarray(cert["alpha"], dtype=float), bias=_bias(cert["bias"]), definition=record,
        loss=loss, loss_params=loss_params)


def reference_instances(names: Sequence[str] | None = None, *,
                        path: str | Path | None = None) -> list[ReferenceInstance]:
    """The certified reference instances (all, or those named).

    Parameters
    ----------
    names : sequence of str, optional
        Instance names; default all, in catalogue order.
    path : path, optional
        Another JSON document in the same format.

    Returns
    -------
    list of ReferenceInstance
    """
    records = load_catalogue(path)["instances"]
    if names is not None:
        if isinstance(names, str):
            names = [names]
        if not isinstance(names, Sequence) or not all(isinstance(name, str) for name in names):
            raise InvalidInputError(f"names must be instance names (str), got {names!r}.")
        known = [record_field(r, "name") for r in records]
        missing = [n for n in names if n not in known]
        if missing:
            raise InvalidInputError(f"unknown reference instance(s) {missing}; known: {known}.")
        records = [records[known.index(n)] for n in names]
    return [instance_from_record(r) for r in records]
