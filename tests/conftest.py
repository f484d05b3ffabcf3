"""Test-suite wide settings: the order in which pytest-xdist hands out the test files.

The suite runs on every core (``-n auto --dist loadfile`` in ``pyproject.toml``): each
file goes whole to one worker, so module-scoped fixtures (the docs build, the installed
wheel) are computed once. A worker takes files in collection order; the files that take
minutes on their own are collected first, so that no worker starts one of them when the
others are nearly done.
"""

from __future__ import annotations

#: Files that take minutes on two cores (the site's build runs every example; the
#: packaging test builds a wheel and installs it with its dependencies in a fresh venv).
LONG_FILES = ("test_docs.py", "test_packaging.py", "test_sweep_resilience.py",
              "test_chunking.py", "test_drivers.py", "test_regularizers.py")


def pytest_collection_modifyitems(session, config, items):
    def rank(item) -> int:
        name = item.path.name
        return LONG_FILES.index(name) if name in LONG_FILES else len(LONG_FILES)

    items.sort(key=rank)  # stable: the order inside each file is kept
