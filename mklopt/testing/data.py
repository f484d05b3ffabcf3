"""Inputs of a reference instance, rebuilt deterministically from its JSON record.

A record names a dataset shipped with scikit-learn, the sample drawn from it
(seed and indices), the feature preprocessing, the kernel specs and the loss;
:func:`build_kernels` and :func:`build_labels` turn it into the
:class:`~mklopt.KernelSet` and the labels the loss takes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..exceptions import InvalidInputError
from ..kernels import KernelSet

__all__ = ["load_dataset", "draw_indices", "draw_sample", "standardize", "loss_of",
           "build_kernels", "build_labels", "field"]

_DATASETS = ("breast_cancer", "iris", "wine", "digits", "diabetes")


def field(record: Any, key: str) -> Any:
    """``record[key]`` of a reference definition or record; an :class:`InvalidInputError` naming
    the missing key (a catalogue written by hand) instead of a ``KeyError``."""
    if not isinstance(record, Mapping):
        raise InvalidInputError(f"a reference definition must be a dict (a JSON object), got {type(record).__name__}.")
    if key not in record:
        raise InvalidInputError(f"the reference definition {record.get('name', '(unnamed)')!r} has no {key!r}; "
                                f"its keys: {sorted(record)}.")
    return record[key]


def load_dataset(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Features (float) and targets of a dataset shipped with scikit-learn."""
    from sklearn import datasets

    if name not in _DATASETS:
        raise InvalidInputError(f"unknown reference dataset {name!r}; choose one of {_DATASETS}.")
    X, target = getattr(datasets, f"load_{name}")(return_X_y=True)
    return np.asarray(X, dtype=float), np.asarray(target)


def draw_indices(target: np.ndarray, classes: Sequence[int], n_per_class: int,
                 seed: int) -> np.ndarray:
    """Sorted sample indices: ``n_per_class`` points of each class, drawn without replacement."""
    rng = np.random.default_rng(seed)
    parts = [rng.choice(np.flatnonzero(target == c), n_per_class, replace=False) for c in classes]
    return np.sort(np.concatenate(parts))


def draw_sample(size: int, n: int, seed: int) -> np.ndarray:
    """Sorted indices of ``n`` of ``size`` points drawn without replacement (no classes: regression)."""
    return np.sort(np.random.default_rng(seed).choice(size, n, replace=False))


def standardize(X: np.ndarray) -> np.ndarray:
    """Z-score the columns (population std; constant columns are only centered)."""
    std = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(std > 0, std, 1.0)


def _sample(definition: dict) -> tuple[np.ndarray, np.ndarray]:
    """Features and targets of the record's drawn sample."""
    X, target = load_dataset(field(definition, "dataset"))
    indices = np.asarray(field(field(definition, "sample"), "indices"), dtype=int)
    return X[indices], target[indices]


def _features(definition: dict) -> np.ndarray:
    X, _ = _sample(definition)
    if definition.get("features", "standardize") == "standardize":
        return standardize(X)
    if definition["features"] == "raw":
        return X
    raise InvalidInputError(f"unknown feature preprocessing {definition['features']!r}.")


def build_kernels(definition: dict) -> KernelSet:
    """The instance's kernel set, rebuilt deterministically from its definition."""
    specs = [(metric, dict(params)) for metric, params in field(definition, "kernels")]
    ks = KernelSet.from_data(_features(definition), specs)
    norm = definition.get("normalization") or {}
    if not norm:
        return ks
    options = {k: v for k, v in norm.items() if k != "method"}
    return ks.normalized(norm["method"], **options)


def loss_of(definition: dict) -> tuple[str, dict]:
    """``(name, parameters)`` of the instance's loss; a record without ``loss`` is the hinge."""
    spec = dict(definition.get("loss") or {"name": "hinge"})
    return spec.pop("name"), spec


def _standardized_targets(definition: dict, target: np.ndarray) -> np.ndarray:
    return standardize(target.astype(float))


#: How each loss's labels come from the sample's dataset targets.
_LABELS: dict[str, Callable[[dict, np.ndarray], np.ndarray | None]] = {
    "hinge": lambda definition, target: np.where(target == field(definition, "positive_class"), 1.0, -1.0),
    "epsilon_insensitive": _standardized_targets,
    "squared_error": _standardized_targets,
    "ovr_hinge": lambda definition, target: target,
    "one_class": lambda definition, target: None,
}


def build_labels(definition: dict) -> np.ndarray | None:
    """Labels as the instance's loss takes them.

    Hinge: ``+1`` for ``definition['positive_class']``, else ``-1``;
    ``"epsilon_insensitive"`` and ``"squared_error"``: the sample's targets,
    standardized; ``"ovr_hinge"``: the sample's class labels;
    ``"one_class"``: None (the loss has no labels).
    """
    name, _ = loss_of(definition)
    if name not in _LABELS:
        raise InvalidInputError(f"no reference labels for loss {name!r}; known: {sorted(_LABELS)}.")
    _, target = _sample(definition)
    return _LABELS[name](definition, target)
