"""``python -m mklopt ...``: the same as the ``mklopt`` command."""

from __future__ import annotations

import sys

from .cli.main import main

if __name__ == "__main__":
    sys.exit(main())
