"""The fingerprint of the kernels and labels a result was computed on.

A saved result (and a sweep's log) keeps it; re-certifying the result against
other kernels or labels is refused with a message that says which differ.
"""

from __future__ import annotations

import hashlib

import numpy as np

from ..exceptions import InvalidInputError
from ..kernels._subset_sketch import subset_sketch

__all__ = ["kernel_fingerprint", "check_fingerprint"]


def kernel_fingerprint(kernels, y_pm: np.ndarray, kind: str | None = None) -> dict:
    """A sketch of the kernels and labels: :meth:`KernelSet.sketch` and a hash of the labels.

    The sketch :math:`W^\\top K_m W` (fixed random :math:`W`, 3 columns) is
    taken while validation reads each kernel; any material change of a
    kernel changes it with probability one.
    """
    kind = kind or getattr(kernels, "sketch_kind", "full")
    sketch = subset_sketch(kernels) if kind == "subset" else kernels.sketch()
    # the subset sketch beside the full one: kernels on the fly answer only with it
    subset = {} if kind == "subset" else {"subset": subset_sketch(kernels).reshape(kernels.M, -1).tolist()}
    y_pm = np.asarray(y_pm, dtype=float)
    binary = y_pm.ndim == 1 and np.all(np.abs(y_pm) == 1)  # the hinge's +-1 labels (as always)
    data = (y_pm > 0).astype(np.uint8) if binary else np.ascontiguousarray(y_pm)
    labels = hashlib.sha256(data.tobytes() + (b"" if binary else str(y_pm.shape).encode())).hexdigest()
    return {"M": int(kernels.M), "n": int(kernels.n), "labels": labels,
            "sketch": sketch.reshape(kernels.M, -1).tolist(), "names": list(kernels.names),
            **subset, **({"sketch_kind": kind} if kind != "full" else {})}


def check_fingerprint(saved: dict | None, kernels, y_pm: np.ndarray, where: str = "the result") -> None:
    """Raise :class:`InvalidInputError` unless ``kernels``/labels are the ones ``saved`` describes."""
    if not saved:
        return
    if (saved["M"], saved["n"]) != (kernels.M, kernels.n):
        raise InvalidInputError(
            f"{where} was computed on {saved['M']} kernels over {saved['n']} points, but these "
            f"kernels are {kernels.M} over {kernels.n}; certify it against its own kernels.")
    kind = saved.get("sketch_kind", "full")
    if kind == "full" and getattr(kernels, "sketch_kind", "full") == "subset":  # on the fly: no full sketch
        if "subset" not in saved:
            raise InvalidInputError(f"{where} was saved without the sketch that kernels on the fly can "
                                    "check; certify it against the dense kernels (lazy=False).")
        kind, saved = "subset", {**saved, "sketch": saved["subset"]}
    now = kernel_fingerprint(kernels, y_pm, kind)
    if now["labels"] != saved["labels"]:
        raise InvalidInputError(f"{where} was computed with other labels y than these.")
    old, new = np.asarray(saved["sketch"]), np.asarray(now["sketch"])
    scale = np.maximum(np.abs(old).max(axis=1), 1e-300)
    off = np.abs(old - new).max(axis=1) / scale
    bad = [kernels.names[m] for m in np.flatnonzero(off > 1e-8)]
    if bad:
        raise InvalidInputError(
            f"{where} was computed on other kernels: {bad} differ (relative change up to "
            f"{off.max():.2g}); normalize them as they were when it was solved.")
