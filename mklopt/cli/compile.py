"""``mklopt compile``: compile mklopt's core for this machine now (for images and CI).

Runs :func:`mklopt.compiling.compile` and prints each warm-up, what it compiled and how long
it took. A second run finds everything cached and compiles nothing.

Exit codes: 0 done; 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys

from ._common import EXIT_OK


def add_parser(subs: argparse._SubParsersAction) -> None:
    """Register ``compile`` on the sub-parser action ``subs``."""
    command = subs.add_parser(
        "compile", help="compile mklopt's core for this machine now (cached; for images and CI)",
        description="Compile the interleaved core (SMO steps, kernel columns, RBF tables, gradient "
        "updates) for this machine with small warm-up fits, so that no later fit waits for the "
        "compiler. The code is cached on disk (numba's cache beside the package, or "
        "NUMBA_CACHE_DIR).")
    command.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Compile; print each warm-up and the functions it compiled with their seconds."""
    from ..compiling import compile as compile_all

    report = compile_all(progress=lambda what: print(f"warming up: {what}", file=sys.stderr, flush=True))
    for line in report.lines():
        print(line)
    return EXIT_OK
