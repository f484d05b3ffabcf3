"""The ``mklopt`` parser and entry point: one sub-command per module, one-line errors.

Exit codes (also in ``mklopt --help``): 0 certified/converged; 1 not
certified or not converged (or an internal error, reported in one line);
2 usage or input error; 130 interrupted (Ctrl-C). No path prints a traceback:
mklopt's own errors and those of corrupt input files become one line
``mklopt <cmd>: error: ...`` on stderr, Ctrl-C becomes ``mklopt <cmd>: interrupted``.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence

from ..exceptions import MKLError
from . import bench, compare, compile, demo, docs, solve, sweep, verify
from ._common import (CORRUPT_FILE_ERRORS, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK,
                      EXIT_STATUS_HELP, EXIT_USAGE, one_line)

#: Exceptions that mean bad input (exit 2): mklopt's own and those of unreadable files.
INPUT_ERRORS = (MKLError, *CORRUPT_FILE_ERRORS)

DESCRIPTION = ("Multiple Kernel Learning with certified duality gaps.\n"
               "p always means the WEIGHT norm ||mu||_p <= 1 (block norm b = 2p/(p+1)).")


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are a single line (exit status 2)."""

    def error(self, message: str):  # noqa: D401 - argparse API
        self.exit(EXIT_USAGE, f"{self.prog}: error: {one_line(message)} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The ``mklopt`` argument parser (one sub-parser per command).

    Returns
    -------
    argparse.ArgumentParser
        Each sub-parser sets ``handler(args) -> exit status``.
    """
    from .._version import __version__

    parser = _Parser(prog="mklopt", description=DESCRIPTION,
                     epilog="Run 'mklopt COMMAND --help' for the options of a command.\n\n"
                     + EXIT_STATUS_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"mklopt {__version__}")
    subs = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    subs.required = True
    for module in (demo, solve, compare, verify, sweep, compile, bench, docs):
        module.add_parser(subs)
    return parser


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _interrupted(command: str, detail: str = "") -> int:
    """Say that ``command`` was interrupted; the exit status 130.

    CPython records a KeyboardInterrupt that ends the evaluation of a string
    (``exec``/``eval``, as in numba's and dataclasses' generated code) even when a
    caller catches it, and ``python -m mklopt`` then dies by SIGINT at exit instead
    of returning this status (the check added for bpo-41602). Evaluating an empty
    string clears that record.
    """
    _say(f"{command}: interrupted" + (f"; {detail}" if detail else ""))
    exec("", {})  # noqa: S102 - see above; evaluates nothing
    return EXIT_INTERRUPTED


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    _say(f"mklopt: warning: {one_line(message)}")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mklopt`` console script.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name (default ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status: 0 certified/converged, 1 not certified or not
        converged, 2 usage or input error, 3 certified locally (``verify`` of a
        DCA result), 70 internal error, 130 interrupted.
        Usage errors (and ``--help``) raise ``SystemExit`` as in argparse.
    """
    try:
        args = build_parser().parse_args(argv)
    except KeyboardInterrupt:
        return _interrupted("mklopt")
    command = f"mklopt {args.command}"
    previous = warnings.showwarning
    warnings.showwarning = _show_warning
    try:
        return int(args.handler(args) or EXIT_OK)
    except KeyboardInterrupt as stop:
        return _interrupted(command, str(stop))
    except INPUT_ERRORS as exc:
        _say(f"{command}: error: {one_line(exc)}")
        return EXIT_USAGE
    except Exception as exc:  # noqa: BLE001 - the last line of defence: no traceback
        _say(f"{command}: internal error: {type(exc).__name__}: {one_line(exc)}; please report")
        return EXIT_INTERNAL
    finally:
        warnings.showwarning = previous
