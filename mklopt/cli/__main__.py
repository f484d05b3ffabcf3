"""``python -m mklopt.cli ...``: the ``mklopt`` console script."""

from __future__ import annotations

import sys

from .main import main

if __name__ == "__main__":
    sys.exit(main())
