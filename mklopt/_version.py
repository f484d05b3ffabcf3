"""mklopt's version and how it was installed.

The version is the installed distribution's own (one source, ``pyproject.toml``). A source
checkout installed with ``pip install -e`` has ``pyproject.toml`` next to the package folder;
a wheel has not: hints for a missing extra then say ``pip install -e ".[dask]"`` or
``pip install "mklopt[dask]"`` (:func:`install_hint`).
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

__all__ = ["__version__", "PACKAGE", "from_checkout", "install_hint"]

try:
    __version__ = metadata.version("mklopt")
except metadata.PackageNotFoundError:  # a checkout that was never installed
    __version__ = "0+unknown"

#: The installed package's folder.
PACKAGE = Path(__file__).resolve().parent


def from_checkout() -> bool:
    """Whether this mklopt runs from a source checkout (an editable install)."""
    return (PACKAGE.parent / "pyproject.toml").is_file()


def install_hint(extra: str) -> str:
    """The command that installs ``extra`` the way this mklopt was installed."""
    return f'pip install -e ".[{extra}]"' if from_checkout() else f'pip install "mklopt[{extra}]"'
