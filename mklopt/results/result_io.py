"""Saving and loading results (``.npz``), written atomically.

A saved result holds everything needed to re-certify it and to predict with
it: weights, alpha, bias, C, the weight set (a registered regularizer and its
parameters), loss, formulation/driver, status, the certificate's values, the
history and a fingerprint of the training kernels and labels. The file is
written atomically (a temporary file in the same folder, then ``os.replace``).
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from ..exceptions import InvalidInputError
from ..regularizers import from_spec, spec_of
from .saved_fields import check_meta

__all__ = ["save_result", "load_result", "atomic_write", "jsonable"]

FORMAT = "mklopt-result-1"


def atomic_write(path, write, suffixes: tuple[str, ...]) -> None:
    """Call ``write(handle)`` on a temporary file next to ``path``, then rename it into place.

    Raises :class:`InvalidInputError` before writing anything if the folder
    does not exist or the suffix is not one of ``suffixes``.
    """
    target = Path(path)
    if target.suffix.lower() not in suffixes:
        raise InvalidInputError(f"output file must end in {' or '.join(suffixes)}, got {str(path)!r}.")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise InvalidInputError(f"cannot write {str(path)!r}: folder {str(folder)!r} does not exist.")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)  # mkstemp creates 0600; give the usual permissions
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def jsonable(value):
    """``value`` with arrays as lists, NumPy scalars as numbers and non-finite floats as strings."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (np.floating, np.integer)):
        return value.item()
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, float) and not np.isfinite(value):
        return str(value)
    return value


def _meta(result) -> dict:
    reg = result.regularizer
    spec = spec_of(reg) if reg is not None else None
    return jsonable({
        "format": FORMAT, "bias": None if np.ndim(result.bias) else float(result.bias),
        "loss_params": result.loss_params, "primal": result.primal,
        "dual": result.dual, "gap": result.gap, "rel_gap": result.rel_gap,
        "status": result.status, "iterations": int(result.iterations),
        "backend": result.backend, "formulation": result.formulation,
        "solve_time": float(result.solve_time), "message": result.message,
        "C": result.C, "regularizer": spec, "regularizer_repr": repr(reg), "loss": result.loss,
        "fingerprint": result.fingerprint, "kernel_names": result.kernel_names,
        "history": result.history,
        "info": {k: v for k, v in result.info.items() if isinstance(v, (int, float, str, bool))},
    })


def save_result(result, path) -> None:
    """Write ``result`` to ``path`` atomically: ``.npz``, or ``.json`` (the same fields, arrays as lists)."""
    arrays = {"weights": np.asarray(result.weights, dtype=float),
              "alpha": np.asarray(result.alpha, dtype=float)}
    if result.dual_coef is not None:
        arrays["dual_coef"] = np.asarray(result.dual_coef, dtype=float)
    if result.classes is not None:
        arrays["classes"] = np.asarray(result.classes)
    if np.ndim(result.bias):  # one offset per class
        arrays["bias"] = np.asarray(result.bias, dtype=float)
    meta = _meta(result)
    if str(path).lower().endswith(".json"):
        text = json.dumps({**meta, **jsonable(arrays)})
        atomic_write(path, lambda handle: handle.write(text.encode()), (".json",))
        return
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    atomic_write(path, lambda handle: np.savez(handle, **arrays), (".npz",))


def is_saved_result(data: dict) -> bool:
    """Whether a JSON object is a result written by :func:`save_result` (not hand-made arrays)."""
    return isinstance(data, dict) and data.get("format") == FORMAT


def _float(value) -> float:
    return float(value) if not isinstance(value, str) else float(value.replace("Infinity", "inf"))


def load_result(path) -> dict:
    """The fields of a result written by :func:`save_result` (``MKLResult(**fields)``)."""
    if str(path).lower().endswith(".json"):
        meta = _read_json(path)
        arrays = {key: np.asarray(meta[key]) for key in ("weights", "alpha", "dual_coef", "classes")
                  if meta.get(key) is not None}
        if isinstance(meta.get("bias"), list):
            arrays["bias"], meta["bias"] = np.asarray(meta["bias"], dtype=float), None
        return _fields(meta, arrays, path)
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {key: data[key] for key in data.files}
    except FileNotFoundError:
        raise InvalidInputError(f"no such file: {str(path)!r}.") from None
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise InvalidInputError(f"{str(path)!r} is not a readable .npz file ({exc}).") from None
    if "meta" not in arrays or not {"weights", "alpha"} <= set(arrays):
        raise InvalidInputError(
            f"{str(path)!r} is not a saved mklopt result (no 'meta', 'weights' or 'alpha'); "
            "write one with MKLResult.save or 'mklopt solve --out FILE.npz'.")
    try:
        meta = json.loads(arrays["meta"].tobytes().decode())
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"{str(path)!r} is a damaged mklopt result ({exc}).") from None
    return _fields(meta, arrays, path)


def _read_json(path) -> dict:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        raise InvalidInputError(f"no such file: {str(path)!r}.") from None
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"{str(path)!r} is not a readable JSON file ({exc}).") from None
    if not is_saved_result(data):
        raise InvalidInputError(
            f"{str(path)!r} is not a saved mklopt result (no 'format': {FORMAT!r}); write one "
            "with MKLResult.save or 'mklopt solve --out FILE.json'.")
    return data


def _fields(meta: dict, arrays: dict, path) -> dict:
    """``MKLResult(**fields)`` from a saved result's metadata and arrays."""
    try:
        if meta.get("format") != FORMAT:
            raise ValueError(f"format {meta.get('format')!r}")
        check_meta(meta)
        reg = from_spec(meta["regularizer"]) if meta.get("regularizer") else None
        result = dict(
            weights=np.asarray(arrays["weights"], dtype=float), alpha=np.asarray(arrays["alpha"], dtype=float),
            bias=arrays["bias"] if meta["bias"] is None else _float(meta["bias"]),
            primal=_float(meta["primal"]), dual=_float(meta["dual"]), gap=_float(meta["gap"]),
            rel_gap=_float(meta["rel_gap"]), status=meta["status"],
            iterations=meta["iterations"], history=meta["history"], backend=meta["backend"],
            formulation=meta["formulation"], solve_time=meta["solve_time"],
            dual_coef=arrays.get("dual_coef"), classes=arrays.get("classes"),
            kernel_names=meta["kernel_names"], message=meta["message"], info=meta["info"],
            C=meta["C"], regularizer=reg, fingerprint=meta["fingerprint"], loss=meta["loss"],
            loss_params=meta.get("loss_params") or {})
    except KeyError as exc:
        raise InvalidInputError(f"{str(path)!r} is a damaged mklopt result (its field {exc} is missing).") from None
    except (TypeError, ValueError, AttributeError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"{str(path)!r} is a damaged mklopt result ({exc}).") from None
    for record in result["history"]:
        if isinstance(record.get("weights"), list):
            record["weights"] = np.asarray(record["weights"], dtype=float)
    result["info"]["regularizer_repr"] = meta.get("regularizer_repr")
    return result
