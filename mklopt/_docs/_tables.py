"""Tables of the manual generated from the registries: one source per fact.

A page holds a marker line ``<!-- generated: NAME -->``; staging replaces it by
the table :data:`TABLES` makes from the registry, so a driver registered with
:func:`mklopt.drivers.register` and its ``method``/``notes`` lines appears in
the user guide without an edit to the page, and the install page's dependencies
and extras are those of the installed package's metadata (``pyproject.toml``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..exceptions import InvalidInputError

MARKER = re.compile(r"^<!-- generated: (\w+) -->$", re.MULTILINE)


def driver_table() -> str:
    """The user guide's table of drivers: name, method, notes, stall rule (from each driver class)."""
    from ..drivers import DRIVERS

    lines = ["| driver | method | notes | stops `\"stalled\"` when |", "| --- | --- | --- | --- |"]
    for name, cls in DRIVERS.items():
        if not cls.method:
            raise InvalidInputError(f"driver {name!r} ({cls.__name__}) has no 'method' line for the "
                                    "user guide's table; give the class method = '...' and notes = '...'.")
        lines.append(f"| `{name}` | {cls.method} | {cls.notes} | {cls.stall_rule} |")
    return "\n".join(lines)


#: What each extra is for (the packages it adds are read from the installed metadata).
EXTRA_PURPOSES = {
    "test": "running the test suite on every core (it builds the site and the wheel too)",
    "docs": "`mklopt docs`",
    "dask": "`mklopt sweep` on a cluster, its dashboard",
    "osqp": "`solve(..., backend=\"OSQP\")`",
    "mosek": "`solve(..., backend=\"MOSEK\")` (needs a licence)",
    "all": "everything above",
}


def _requirements() -> list[tuple[str, str, str]]:
    """``(package, versions, extra)`` of the installed mklopt (extra "" for the core)."""
    from importlib.metadata import requires

    rows = []
    for line in requires("mklopt") or []:
        spec, _, marker = line.partition(";")
        extra = re.search(r"""extra\s*==\s*["']([^"']+)["']""", marker)  # either quote: backends differ
        name = re.match(r"[A-Za-z0-9_.\-]+(\[[^\]]*\])?", spec.strip()).group(0)
        bounds = sorted(spec.strip()[len(name):].split(","), key=lambda b: (not b.startswith(">"), b))
        versions = ", ".join(bounds) or "any"
        rows.append((name, versions.strip(), extra.group(1) if extra else ""))
    return rows


def dependency_table() -> str:
    """The install page's core dependencies and their version ranges (from the metadata)."""
    lines = ["| package | versions |", "| --- | --- |"]
    lines += [f"| {name} | `{versions}` |" for name, versions, extra in _requirements() if not extra]
    return "\n".join(lines)


def extras_table() -> str:
    """The install page's extras: the packages each adds (from the metadata) and what for."""
    packages: dict[str, list[str]] = {}
    for name, _, extra in _requirements():
        if extra:
            packages.setdefault(extra, []).append(name)
    missing = sorted(set(packages) - set(EXTRA_PURPOSES))
    if missing:
        raise InvalidInputError(f"extras {missing} have no line in EXTRA_PURPOSES "
                                "(mklopt/_docs/_tables.py): say what each is for.")
    lines = ["| extra | adds | for |", "| --- | --- | --- |"]
    for extra, names in packages.items():
        adds = ", ".join(f"the `{n[7:-1].replace(',', '`, `')}` extras" if n.startswith("mklopt[") else n
                         for n in names)
        lines.append(f"| `{extra}` | {adds} | {EXTRA_PURPOSES[extra]} |")
    return "\n".join(lines)


TABLES: dict[str, Callable[[], str]] = {"drivers": driver_table, "dependencies": dependency_table,
                                        "extras": extras_table}


def fill_tables(text: str, page: str) -> str:
    """``text`` with each marker line replaced by its generated table."""
    def table(match: re.Match) -> str:
        name = match.group(1)
        if name not in TABLES:
            raise InvalidInputError(f"page {page} asks for a generated table {name!r}; "
                                    f"known: {', '.join(TABLES)}.")
        return TABLES[name]()

    return MARKER.sub(table, text)
