"""Pieces shared by the ``mklopt`` commands: instance loading, output, formatting.

Every command validates its arguments (the ``type=`` functions of
:mod:`._parsing`) and its ``--out`` target before any work, reads its ``.npz`` inputs with
:func:`load_npz` (a missing, empty or corrupt file is one
:class:`~mklopt.exceptions.InvalidInputError` naming the file) and writes its
output with :func:`mklopt.results.result_io.atomic_write`, so a failed or interrupted run leaves no
partial file.

Exit codes: 0 certified/converged, 1 not certified or not converged, 2 usage
or input error, 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pickle
import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..exceptions import InvalidInputError
from ._parsing import (RegistryChoices, block_norm, nonnegative_int, parse_kernel_spec, parse_number,
                       positive_float, weight_norm)

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

#: ``verify``: certified, but only the convex subproblem a non-convex method (DCA) solved last.
EXIT_LOCAL = 3
#: An internal error (a bug: please report it), never confused with a verdict (sysexits' EX_SOFTWARE).
EXIT_INTERNAL = 70

#: Exceptions that mean "this file is not what it should be" when reading an ``.npz``.
CORRUPT_FILE_ERRORS = (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile, zlib.error,
                       pickle.UnpicklingError)


def _losses() -> dict:
    """The losses ``--loss`` names (imported when asked: the losses import CVXPY)."""
    from ..losses import LOSSES

    return LOSSES


EXIT_STATUS_HELP = """\
exit status:
  0    certified / converged: solve status optimal or converged, verify
       CERTIFIED, compare agreement, demo done
  1    not certified or not converged: solve status max_iter, time_limit,
       stalled, uncertified, ... (its --out is still written and records
       the status), verify NOT CERTIFIED (infeasible or rel_gap > --tol),
       compare disagreement
  2    usage or input error: bad option, missing or corrupt file, bad --out;
       nothing is written to --out
  3    verify: CERTIFIED LOCALLY: the saved result of a method without a
       global certificate (DCA) certifies the convex subproblem it solved last
  70   internal error (a bug in mklopt: please report it)
  130  interrupted (Ctrl-C); nothing is written to --out
"""


# -------------------------------------------------------------------- instance
def add_instance_args(sub: argparse.ArgumentParser, *, from_file: bool = False) -> None:
    """``--kernels``/``--data``, ``--kernel``, ``--normalize``, ``--theta``, ``--C``, ``--p``/``--b``.

    ``from_file=True`` (``verify``): ``--C``, ``--p`` and ``--b`` default to
    None, meaning "as saved in the candidate file" (else C = 1, p = 1).
    """
    default = "as saved in a result file, else 1" if from_file else "1"
    src = sub.add_mutually_exclusive_group(required=True)
    src.add_argument("--kernels", metavar="FILE.npz",
                     help="kernel matrices: arrays K (M, n, n) and y (n,)")
    src.add_argument("--data", metavar="FILE.npz",
                     help="features: arrays X (n, d) and y (n,); kernels from --kernel")
    sub.add_argument("--kernel", action="append", type=parse_kernel_spec, default=None,
                     metavar="SPEC", help="with --data: kernel spec, repeatable, e.g. "
                     "--kernel linear --kernel rbf:gamma=0.1 --kernel poly:degree=3 "
                     "(default: linear, quadratic and three RBF widths)")
    sub.add_argument("--normalize", choices=["trace", "multiplicative", "spherical", "tail_sum"],
                     help="normalize the kernels first (tail_sum uses --theta)")
    sub.add_argument("--theta", type=nonnegative_int, default=2,
                     help="tail-sum cutoff, an integer >= 0 (default 2)")
    sub.add_argument("--C", type=positive_float, default=None if from_file else 1.0,
                     help=f"soft-margin constant > 0 (default {default})")
    sub.add_argument("--loss", choices=RegistryChoices(_losses), default=None, metavar="LOSS",
                     help="one of %(choices)s (default hinge" + (", or as saved" if from_file else "") + "): "
                     "epsilon_insensitive/squared_error take real targets y, one_class needs no y, "
                     "ovr_hinge takes several classes")
    sub.add_argument("--epsilon", type=parse_number, default=None,
                     help="tube width >= 0 of --loss epsilon_insensitive (default 0.1)")
    sub.add_argument("--nu", type=parse_number, default=None,
                     help="nu in (0, 1] of --loss one_class (default 0.5)")
    norm = sub.add_mutually_exclusive_group()
    norm.add_argument("--p", type=weight_norm, default=None,
                      help=f"WEIGHT norm p in [1, inf]: ||mu||_p <= 1 (default {default}; "
                      "'4/3' and 'inf' work)")
    norm.add_argument("--b", type=block_norm, default=None,
                      help="thesis BLOCK norm b >= 1 instead of --p: b <= 2 means p = b/(2-b); "
                      "b > 2 only in 'mklopt solve --formulation lp_block_primal'")


def open_npz(path: str) -> np.lib.npyio.NpzFile:
    """Open the ``.npz`` archive ``path`` (close it, e.g. with ``with``).

    Raises
    ------
    InvalidInputError
        One line naming the file: missing, unreadable, corrupt or not an
        ``.npz`` archive.
    """
    try:
        data = np.load(path, allow_pickle=False)
    except OSError as exc:
        raise InvalidInputError(f"cannot read {path}: {exc.strerror or one_line(exc)}.") from None
    except CORRUPT_FILE_ERRORS as exc:
        raise InvalidInputError(f"{path} is not a valid .npz file ({one_line(exc)}); "
                                "write it with numpy.savez.") from None
    if not isinstance(data, np.lib.npyio.NpzFile):
        raise InvalidInputError(f"{path} holds a single array, not an .npz archive of named "
                                "arrays; write it with numpy.savez.")
    return data


def load_npz(path: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
    """The arrays ``keys`` of the ``.npz`` file ``path``.

    Raises
    ------
    InvalidInputError
        One line naming the file: missing, unreadable, corrupt, not an
        ``.npz`` archive, or without some of ``keys``.
    """
    with open_npz(path) as data:
        missing = [k for k in keys if k not in data.files]
        if missing:
            raise InvalidInputError(f"{path} has no array(s) {missing} "
                                    f"(it has {data.files or 'no arrays at all'}).")
        out = {}
        for key in keys:
            try:
                out[key] = np.asarray(data[key])
            except CORRUPT_FILE_ERRORS as exc:
                if "allow_pickle" in str(exc):
                    raise InvalidInputError(
                        f"array {key!r} of {path} holds Python objects (pickled), not numbers; save "
                        "it as a numeric array (numpy.savez with a float or int array).") from None
                raise InvalidInputError(f"array {key!r} of {path} cannot be read "
                                        f"({one_line(exc)}).") from None
        return out


def load_instance(args: argparse.Namespace, psd: bool = True, lazy: bool = False):
    """The ``(KernelSet, y)`` described by ``--kernels``/``--data`` and ``--normalize``.

    ``psd=False`` (formulations such as ``vkr_lp``) accepts indefinite and
    asymmetric kernels; ``lazy=True`` (with ``--data``) a
    :class:`~mklopt.kernels.LazyKernelSet`.
    """
    from ..estimators import resolve_kernel_specs
    from ..kernels import KernelSet

    checks = {"psd": psd, "symmetric": psd}
    if args.kernel and not args.data:
        raise InvalidInputError("--kernel builds kernels from features: use it with --data, "
                                "not --kernels.")
    labels = [] if getattr(args, "loss", None) == "one_class" else ["y"]  # one-class: no y
    if args.kernels:
        arrays = load_npz(args.kernels, ["K", *labels])
        _check_labels_finite(arrays, args.kernels)
        with _naming("K", args.kernels):
            ks = KernelSet(arrays["K"], **checks)
    else:
        arrays = load_npz(args.data, ["X", *labels])
        _check_labels_finite(arrays, args.data)
        X = np.asarray(arrays["X"])
        if X.ndim != 2 or X.dtype.kind not in "biuf":
            raise InvalidInputError(f"X in {args.data} must be a 2-D (n, d) numeric array, "
                                    f"got shape {X.shape} and dtype {X.dtype}.")
        bad = np.argwhere(~np.isfinite(X.astype(float)))
        if bad.size:
            count = f"{len(bad)} entr{'y' if len(bad) == 1 else 'ies'}"
            raise InvalidInputError(f"X in {args.data} contains NaN or infinite values ({count}, the first "
                                    f"at row {bad[0][0]}, column {bad[0][1]}); impute or drop them.")
        specs = resolve_kernel_specs(args.kernel, X)
        with _naming("X", args.data):
            if lazy:
                return KernelSet.from_data(X.astype(float), specs, lazy=True, normalization=args.normalize), \
                    arrays.get("y")
            ks = KernelSet.from_data(X.astype(float), specs, **checks)
    if args.normalize:
        ks = ks.normalized(args.normalize, theta=args.theta if args.normalize == "tail_sum" else None)
    return ks, arrays.get("y")


@contextlib.contextmanager
def _naming(array: str, path: str):
    """Errors about an array of a data file say which (``K in data.npz: ...``)."""
    try:
        yield
    except InvalidInputError as exc:
        raise type(exc)(f"{array} in {path}: {exc}") from None


def _check_labels_finite(arrays: dict, path: str) -> None:
    y = arrays.get("y")
    if y is not None and np.asarray(y).dtype.kind in "fc" and not np.all(np.isfinite(y)):
        where = int(np.flatnonzero(~np.isfinite(np.asarray(y)))[0])
        raise InvalidInputError(f"y in {path} contains NaN or infinite values (the first at position "
                                f"{where}); drop those points or give them labels.")


def loss_options(args: argparse.Namespace, default: str | None = "hinge") -> dict:
    """``loss=``, ``epsilon=``, ``nu=`` keyword arguments from ``--loss``/``--epsilon``/``--nu``.

    The combination is validated here (an ``--epsilon`` for another loss is an error).
    """
    from ..losses import as_loss

    name = args.loss or default
    if name is None:
        if args.epsilon is not None or args.nu is not None:
            raise InvalidInputError("--epsilon/--nu need --loss (or a saved result of that loss).")
        return {}
    as_loss(name, epsilon=args.epsilon, nu=args.nu)
    return {"loss": name, "epsilon": args.epsilon, "nu": args.nu}


def check_backend_names(names: Sequence[str]) -> list[str]:
    """Upper-cased backend names; an error for names neither mklopt nor CVXPY knows."""
    import cvxpy as cp

    from ..backends import BACKENDS

    names = [str(name).strip().upper() for name in names]
    unknown = [n for n in names if n not in BACKENDS and n not in cp.installed_solvers()]
    if unknown or not names:
        raise InvalidInputError(f"unknown backend(s) {unknown or names}; mklopt knows "
                                f"{sorted(BACKENDS)} (installed: {cp.installed_solvers()}).")
    return names


def norm_options(args: argparse.Namespace, formulation: str | None) -> tuple[float, dict]:
    """``(p, extra params)`` from ``--p``/``--b`` (block norms > 2 go to lp_block_primal)."""
    from ..regularizers import weight_from_block_norm

    if args.b is None:
        return (1.0 if args.p is None else args.p), {}
    if formulation == "lp_block_primal":
        return 1.0, {"b": args.b}
    return weight_from_block_norm(args.b), {}


# ---------------------------------------------------------------------- output
def check_out(path: str | None, suffixes: Sequence[str], flag: str = "--out") -> Path | None:
    """Validate an output path before any work: suffix, existing writable folder.

    Raises
    ------
    InvalidInputError
        When the suffix is not one of ``suffixes``, the folder does not exist
        or is not writable, or ``path`` is a folder.
    """
    if path is None:
        return None
    target = Path(path)
    if target.suffix.lower() not in suffixes:
        raise InvalidInputError(f"{flag} must end in {' or '.join(suffixes)}, got {path!r}.")
    folder = target.parent
    if not folder.is_dir():
        raise InvalidInputError(f"{flag} {path!r}: folder {str(folder)!r} does not exist.")
    if target.is_dir():
        raise InvalidInputError(f"{flag} {path!r} is a folder; give a file name.")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InvalidInputError(f"{flag} {path!r}: folder {str(folder)!r} is not writable.")
    return target


# ------------------------------------------------------------------ formatting
def one_line(exc: BaseException | str) -> str:
    """The message of ``exc`` on one line (its class name when it has none)."""
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def fmt_weights(weights, limit: int = 6) -> str:
    """The first ``limit`` weights with three decimals."""
    w = np.asarray(weights, dtype=float).ravel()
    if w.size == 0:
        return "-"
    text = " ".join(f"{v:.3f}" for v in w[:limit])
    return text + (" ..." if w.size > limit else "")


def table(rows: list[dict], columns: list[tuple[str, str]]) -> str:
    """Plain-text table: ``columns`` is a list of (key, header)."""
    cells = [[str(row.get(key, "")) for key, _ in columns] for row in rows]
    widths = [max(len(head), *(len(c[i]) for c in cells)) for i, (_, head) in enumerate(columns)]
    line = "  ".join(head.ljust(w) for (_, head), w in zip(columns, widths))
    rule = "  ".join("-" * w for w in widths)
    body = ["  ".join(c.ljust(w) for c, w in zip(cell, widths)) for cell in cells]
    return "\n".join([line, rule, *body])
