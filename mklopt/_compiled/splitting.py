"""Whether small problems take the threaded variants of the compiled code (``mklopt compile``).

A problem below the parallel thresholds runs the variants compiled without parallel code
(a first fit compiles less); :func:`split_small` makes small problems take the threaded
ones, with the same answers, so that ``mklopt compile`` compiles those with quick fits.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["split_small", "splits_small"]


_SPLIT_SMALL = False


def splits_small() -> bool:
    """Inside :func:`split_small`: problems below the parallel thresholds take the threaded
    code paths too."""
    return _SPLIT_SMALL


@contextmanager
def split_small() -> Iterator[None]:
    """Small problems run the compiled variants with threads inside the block (the answers
    are the same): ``mklopt compile`` compiles those variants with small, quick fits."""
    global _SPLIT_SMALL
    previous, _SPLIT_SMALL = _SPLIT_SMALL, True
    try:
        yield
    finally:
        _SPLIT_SMALL = previous
