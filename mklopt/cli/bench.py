"""``mklopt bench NAME [ARGS...]``: run ``examples/bench_NAME.py`` (shipped in the wheel too).

``mklopt bench --list`` lists the names.

Exit codes: the script's own exit status (128 + N when it was killed by
signal N); 2 when there is no such benchmark or no ``examples/`` folder;
130 interrupted.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from .._version import PACKAGE
from ..exceptions import InvalidInputError


def add_parser(subs: argparse._SubParsersAction) -> None:
    """Register ``bench`` on the sub-parser action ``subs``."""
    names = ", ".join(available()) or "none in this installation"
    bench = subs.add_parser("bench", help=f"run a benchmark script from examples/ ({names})",
                            description="Run examples/bench_NAME.py of a source checkout; "
                            "arguments after NAME are passed to the script, whose exit status "
                            "is passed through.")
    bench.add_argument("name", nargs="?", help=f"benchmark name: {names}")
    bench.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    bench.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")
    bench.set_defaults(handler=run)


def available() -> list[str]:
    """The benchmark names of the checkout (``examples/bench_NAME.py``), empty when there is none."""
    try:
        folder = examples_dir()
    except InvalidInputError:
        return []
    return sorted(s.stem[len("bench_"):].replace("_", "-") for s in folder.glob("bench_*.py"))


def examples_dir() -> Path:
    """The examples: the package's ``_examples`` (in a checkout a link to ``examples/``; in a
    wheel the scripts themselves)."""
    folder = PACKAGE / "_examples"
    if not folder.is_dir():
        raise InvalidInputError(f"this installation of mklopt has no examples ({folder} is missing); "
                                "reinstall mklopt.")
    return folder


def run(args: argparse.Namespace) -> int:
    """Run ``examples/bench_<name>.py`` with the remaining arguments; its exit status."""
    folder = examples_dir()
    if args.list or args.name is None:
        if args.name is None and not args.list:
            raise InvalidInputError(f"name a benchmark: {', '.join(available())} (or --list).")
        for name in available():
            print(name)
        return 0
    script = folder / f"bench_{args.name.replace('-', '_')}.py"  # first-fit is bench_first_fit.py
    if not script.is_file():
        raise InvalidInputError(f"no benchmark {args.name!r} in {folder}; available: {available() or 'none'}.")
    extra = list(args.args)
    if extra[:1] == ["--"]:
        extra = extra[1:]
    code = subprocess.call([sys.executable, str(script), *extra])
    return 128 - code if code < 0 else code
