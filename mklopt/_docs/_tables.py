"""Tables of the manual generated from the registries: one source per fact.

A page holds a marker line ``<!-- generated: NAME -->``; staging replaces it by
the table :data:`TABLES` makes from the registry, so a driver registered with
:func:`mklopt.drivers.register` and its ``method``/``notes`` lines appears in
the user guide without an edit to the page.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..exceptions import InvalidInputError

MARKER = re.compile(r"^<!-- generated: (\w+) -->$", re.MULTILINE)


def driver_table() -> str:
    """The user guide's table of drivers: name, method, notes (from each driver class)."""
    from ..drivers import DRIVERS

    lines = ["| driver | method | notes |", "| --- | --- | --- |"]
    for name, cls in DRIVERS.items():
        if not cls.method:
            raise InvalidInputError(f"driver {name!r} ({cls.__name__}) has no 'method' line for the "
                                    "user guide's table; give the class method = '...' and notes = '...'.")
        lines.append(f"| `{name}` | {cls.method} | {cls.notes} |")
    return "\n".join(lines)


TABLES: dict[str, Callable[[], str]] = {"drivers": driver_table}


def fill_tables(text: str, page: str) -> str:
    """``text`` with each marker line replaced by its generated table."""
    def table(match: re.Match) -> str:
        name = match.group(1)
        if name not in TABLES:
            raise InvalidInputError(f"page {page} asks for a generated table {name!r}; "
                                    f"known: {', '.join(TABLES)}.")
        return TABLES[name]()

    return MARKER.sub(table, text)
