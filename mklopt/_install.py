"""How mklopt was installed, for the one-line hints that name the install command.

A source checkout installed with ``pip install -e`` has ``pyproject.toml`` next to the
package folder; a wheel (``pip install mklopt-*.whl``) has not. Hints for a missing extra
then say ``pip install -e ".[dask]"`` or ``pip install "mklopt[dask]"``.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["PACKAGE", "from_checkout", "install_hint"]

#: The installed package's folder.
PACKAGE = Path(__file__).resolve().parent


def from_checkout() -> bool:
    """Whether this mklopt runs from a source checkout (an editable install)."""
    return (PACKAGE.parent / "pyproject.toml").is_file()


def install_hint(extra: str) -> str:
    """The command that installs ``extra`` the way this mklopt was installed."""
    return f'pip install -e ".[{extra}]"' if from_checkout() else f'pip install "mklopt[{extra}]"'
