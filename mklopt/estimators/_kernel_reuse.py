"""Training kernels of recent fits, reused by a later fit on the same data.

A grid search over C (or any regularization parameter) fits the same training data again
and again: scikit-learn's ``GridSearchCV`` over four values of C fits each fold's training
data four times (the folds in turn for each C), and each fit would build the same dense stack
of kernels from features (digits, five kernels of 838 points: ~20 ms, about an SVC's whole
fit), or copy a precomputed array into mklopt's layout and check it (UCI Multiple Features,
six kernels of 1,000 points: ~75 ms, finiteness, symmetry and the PSD screen). The
estimators keep the dense training sets they made recently, at most :data:`REUSE_BYTES` of
them (the least recently used dropped first), each under a key of everything it depends on:
a SHA-256 digest of the data's bytes (features, or the precomputed array as float64; with
their shape and dtype), the resolved kernel specs, the normalization and its θ. Any change to
the data, even in place, changes the digest (hashing 48 MB takes ~15 ms on 2 cores: a
precomputed array is hashed only from its second fit, when a sample of its entries was seen
before; an unnormalized float64 array is kept from its first fit under that sample and reused
only by an array equal to the kept stack bit for bit, one compiled pass that stops at the first
difference); the kept stack is read-only, so no fit can alter what the next one reuses. Specs with a callable
(a user's kernel function, possibly not a pure function) are not reused, nor a set whose
checks clipped a kernel (the next fit warns again). :func:`forget_kernels` empties it (the
benchmarks time a first fit after it).
"""

from __future__ import annotations

import hashlib
import threading
from concurrent.futures import ThreadPoolExecutor
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["REUSE_BYTES", "reused", "kept", "keep", "precomputed_key", "forget_kernels"]

#: Bytes of dense stacks kept at most, all together (the least recently used go first).
REUSE_BYTES = 256 * 2**20
#: Bytes hashed per thread at a time (hashlib releases the GIL on large buffers).
DIGEST_CHUNK = 8 * 2**20

#: Entries of a precomputed array sampled to tell whether it may have been seen before.
SAMPLE = 1024
#: Samples of precomputed arrays remembered (the most recent ones).
SEEN = 64
#: The key of a set kept under its array's sample, reused only where a later array equals it.
SAME_VALUES = "same values as kept"

_lock = threading.Lock()
_kept: OrderedDict[tuple, Any] = OrderedDict()
_seen: OrderedDict[tuple, None] = OrderedDict()


def reused(X: np.ndarray, specs: Sequence[Any], normalization: str | None, theta: int | None,
           build: Callable[[], Any]) -> Any:
    """The kernel set built from features ``X`` by an earlier fit with the same specs and
    normalization, else ``build()`` (kept for later fits)."""
    described = _described(specs)
    key = None if described is None else ("features", *_data_key(X), described, normalization, theta)
    found = kept(key)
    if found is not None:
        return found
    kernels = build()
    keep(key, kernels)
    return kernels


def precomputed_key(X: Any, normalization: str | None, theta: int | None,
                    order: np.ndarray | None = None) -> tuple | None:
    """The key of a precomputed training array ``X``, or None: for anything but a numeric array
    (lists and the like take the checked path every time), and for an array whose sample
    (:data:`SAMPLE` entries, evenly spaced) was not seen before. A single fit then pays no
    digest (~20 ms for digits' five kernels of 1,257 points); a grid search's second fit on a
    fold computes it and keeps the set, its later fits on the fold reuse it.

    A C-contiguous float64 (n, n, M) array taken without normalization is kept from its first
    fit under its sample alone (:data:`SAME_VALUES`): the set's stack then holds the array's
    values themselves, and a later fit whose sample matches reuses it only if its array is equal
    to that stack bit for bit (:func:`kept`: one pass, stopping at the first difference, about
    half a digest's time), so that no fit pays a digest. A stack whose points are put in
    ``order`` (one-vs-one's, by class) is kept under its digest and the order's."""
    if not isinstance(X, np.ndarray) or X.ndim not in (2, 3) or X.dtype.kind not in "fiu":
        return None
    positions = np.linspace(0, X.size - 1, min(SAMPLE, X.size)).astype(np.int64)
    sample = (X.shape, X.dtype.str, X.flat[positions].tobytes())  # no copy of X, whatever its layout
    if normalization is None and _comparable(X) and order is None:
        return ("precomputed", SAME_VALUES, sample, theta)
    with _lock:
        seen = sample in _seen
        _seen[sample] = None
        _seen.move_to_end(sample)
        while len(_seen) > SEEN:
            _seen.popitem(last=False)
    if not seen:
        return None
    ordered = () if order is None else ("in order", _data_key(np.asarray(order, dtype=np.int64))[0])
    return ("precomputed", *_data_key(np.asarray(X, dtype=np.float64)), normalization, theta, *ordered)


def kept(key: tuple | None, X: Any = None) -> Any:
    """The kernel set kept under ``key``, or None; under a :data:`SAME_VALUES` key only if its
    stack holds exactly the values of ``X``."""
    if key is None:
        return None
    with _lock:
        found = _kept.get(key)
        if found is not None:
            _kept.move_to_end(key)
    if found is not None and key[1] == SAME_VALUES:
        from .precomputed import same_stack

        return found if same_stack(X, found.K) else None
    return found


def _comparable(X: np.ndarray) -> bool:
    """Whether a precomputed array can be compared with a kept stack in place: (n, n, M), float64,
    C-contiguous, more than one kernel (one kernel's stack may be a view of ``X`` itself)."""
    return X.ndim == 3 and X.dtype == np.float64 and X.flags.c_contiguous and X.shape[2] > 1


def keep(key: tuple | None, kernels: Any) -> None:
    """Keep ``kernels`` under ``key`` when it fits in :data:`REUSE_BYTES` and no kernel of it was
    clipped (a clipped set is made again, with its warning, at the next fit)."""
    if key is None or kernels.K.nbytes > REUSE_BYTES or kernels.clipped:
        return
    with _lock:
        _kept[key] = kernels
        while sum(k.K.nbytes for k in _kept.values()) > REUSE_BYTES:
            _kept.popitem(last=False)


def forget_kernels() -> None:
    """Drop the training kernels kept from recent fits (their memory is freed once no
    estimator uses them); the next fit on any data makes its kernels afresh."""
    with _lock:
        _kept.clear()
        _seen.clear()


def _data_key(array: np.ndarray) -> tuple:
    """(digest, shape, dtype) of an array's values."""
    array = np.ascontiguousarray(array)
    return _digest(array.view(np.uint8).reshape(-1)), array.shape, array.dtype.str


def _digest(data: np.ndarray) -> str:
    """SHA-256 of the bytes ``data``, in chunks on the cores for large data (the chunks'
    digests hashed in order)."""
    if data.size <= DIGEST_CHUNK:
        return hashlib.sha256(data).hexdigest()
    from ..kernels._stack import cores

    chunks = [data[start:start + DIGEST_CHUNK] for start in range(0, data.size, DIGEST_CHUNK)]
    with ThreadPoolExecutor(min(cores(), len(chunks))) as pool:
        parts = list(pool.map(lambda chunk: hashlib.sha256(chunk).digest(), chunks))
    return hashlib.sha256(b"".join(parts)).hexdigest()


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
