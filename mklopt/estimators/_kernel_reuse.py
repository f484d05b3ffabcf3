"""Training kernels of recent fits, reused by a later fit on the same features and specs.

A grid search over C (or any regularization parameter) fits the same training features
again and again: scikit-learn's ``GridSearchCV`` over four values of C fits each fold's
training data four times, and each fit would build the same dense stack of kernels (on digits,
five kernels of 838 points: ~20 ms, about an SVC's whole fit; scikit-learn fits the folds in
turn for each C). The estimators keep the dense training sets they built recently, at most
:data:`REUSE_BYTES` of them (the least recently used dropped first), each under a key
of everything it depends on: a BLAKE2 digest of the features' bytes (with their shape and
dtype), the resolved specs, the normalization and its θ. Any change to the features, even
in place, changes the digest; the stack is read-only, so no fit can alter what the next
one reuses. Specs with a callable (a user's kernel function, possibly not a pure function)
are not reused, nor a set whose build clipped a kernel (the next fit warns again).
:func:`forget_kernels` empties it (the benchmarks time a first fit after it).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["REUSE_BYTES", "reused", "forget_kernels"]

#: Bytes of dense stacks kept at most, all together (the least recently used go first).
REUSE_BYTES = 256 * 2**20

_lock = threading.Lock()
_kept: OrderedDict[tuple, Any] = OrderedDict()


def reused(X: np.ndarray, specs: Sequence[Any], normalization: str | None, theta: int | None,
           build: Callable[[], Any]) -> Any:
    """The kernel set of an earlier fit with the same key, else ``build()`` (kept when small).

    A set whose build clipped a kernel (and warned about it) is not kept: the next fit builds
    it again and says so again."""
    key = _key(X, specs, normalization, theta)
    if key is None:
        return build()
    with _lock:
        if key in _kept:
            _kept.move_to_end(key)
            return _kept[key]
    kernels = build()
    if kernels.K.nbytes <= REUSE_BYTES and not kernels.clipped:
        with _lock:
            _kept[key] = kernels
            while sum(kept.K.nbytes for kept in _kept.values()) > REUSE_BYTES:
                _kept.popitem(last=False)
    return kernels


def forget_kernels() -> None:
    """Drop the kept kernel sets (their memory is freed once no estimator uses them)."""
    with _lock:
        _kept.clear()


def _key(X: np.ndarray, specs: Sequence[Any], normalization: str | None, theta: int | None) -> tuple | None:
    """What the training set depends on; None where it cannot be told from values (callables)."""
    described = _described(specs)
    if described is None:
        return None
    X = np.ascontiguousarray(X)
    digest = hashlib.blake2b(X.view(np.uint8).reshape(-1), digest_size=32).hexdigest()
    return (digest, X.shape, X.dtype.str, described, normalization, theta)


def _described(specs: Sequence[Any]) -> str | None:
    """The specs as text: metric names and their parameters' values (None for a callable)."""
    parts = []
    for spec in specs:
        if isinstance(spec, str):
            name, params = spec, {}
        elif isinstance(spec, tuple | list) and len(spec) == 2 and isinstance(spec[0], str) \
                and isinstance(spec[1], dict):
            name, params = spec
        else:
            return None
        if not all(isinstance(value, int | float | str | None) for value in params.values()):
            return None
        parts.append(repr((name, sorted(params.items()))))
    return "|".join(parts)
