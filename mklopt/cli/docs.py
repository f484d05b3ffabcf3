"""``mklopt docs [--out DIR] [--quick]``: build the HTML site with Sphinx (warnings are errors).

Needs the ``docs`` extra (``pip install -e ".[docs]"`` in a checkout, ``pip install
"mklopt[docs]"`` for a wheel). The site is built from ``formulations/``, ``examples/`` and
the docstrings: a checkout's, or the copies a wheel ships inside the package.
Prints the path of ``index.html``.

Exit codes: 0 built without warnings; 1 Sphinx failed (a warning, a broken
page or a failing example; its messages are on stderr); 2 the docs extra is
missing; 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from ..exceptions import InvalidInputError
from ._common import EXIT_FAIL, EXIT_OK, one_line


def add_parser(subs: argparse._SubParsersAction) -> None:
    """Register ``docs`` on the sub-parser action ``subs``."""
    docs = subs.add_parser(
        "docs", help="build the HTML documentation site (Sphinx, needs the docs extra)",
        description="Build the documentation site (formulations with math and code, drivers, "
        "certificates, the examples gallery executed, the API reference) with Sphinx; "
        "warnings are errors. Needs the docs extra; works from a checkout or a wheel.")
    docs.add_argument("--out", type=Path, default=Path("mklopt_site"),
                      help="folder of the HTML site (default: ./mklopt_site)")
    docs.add_argument("--quick", action="store_true",
                      help="run the gallery's examples at their small size (what CI builds)")
    docs.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Build the site into ``args.out``; print ``index.html``'s path on success."""
    from .._docs import build_site  # Sphinx and its extensions: only for this command

    out = _writable_folder(args.out.resolve())
    start = time.perf_counter()
    code = build_site(out, quick=args.quick)
    if code != 0:
        print(f"mklopt docs: Sphinx failed (exit status {code}); see the messages above")
        return EXIT_FAIL
    print(f"mklopt docs: built in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    print(out / "index.html")
    return EXIT_OK


def _writable_folder(out: Path) -> Path:
    """``out``, made if missing; an :class:`InvalidInputError` before Sphinx starts where it
    cannot be made or written (Sphinx would fail late, with a traceback of its own)."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidInputError(f"--out {str(out)!r}: cannot make the folder ({one_line(exc)}).") from None
    if not os.access(out, os.W_OK):
        raise InvalidInputError(f"--out {str(out)!r}: the folder is not writable.")
    return out
