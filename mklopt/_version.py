"""mklopt's version: the installed distribution's own (one source, ``pyproject.toml``)."""

from __future__ import annotations

from importlib import metadata

__all__ = ["__version__"]

try:
    __version__ = metadata.version("mklopt")
except metadata.PackageNotFoundError:  # a checkout that was never installed
    __version__ = "0+unknown"
