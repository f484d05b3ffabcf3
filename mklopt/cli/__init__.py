"""The ``mklopt`` command line, one module per command (``demo``, ``solve``, ``verify``, ...).

One module per command (``demo``, ``solve``, ``compare``, ``verify``,
``bench``), the shared argument types, instance loading and atomic output in
``_common``, the parser and the error handling in ``main``.

Exit codes (every command; also in ``mklopt --help``):

- 0 — certified / converged (``verify`` CERTIFIED, ``solve`` status
  ``optimal`` or ``converged``, ``compare`` agreement);
- 1 — not certified or not converged (or an internal error, in one line);
- 2 — usage or input error (bad option, missing or corrupt file, bad ``--out``);
- 130 — interrupted (Ctrl-C): one line on stderr, nothing written to ``--out``.
"""

from __future__ import annotations

from ._parsing import parse_kernel_spec, parse_number
from .bench import examples_dir
from .main import build_parser, main

__all__ = ["main", "build_parser", "parse_kernel_spec", "parse_number", "examples_dir"]
