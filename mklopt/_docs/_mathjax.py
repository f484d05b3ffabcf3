"""Find an offline copy of MathJax 3, so the site renders math without a network.

The ``docs`` extra installs ``sphinx-mathjax-offline``, a wheel that ships the
official MathJax 3 distribution as data files (its folder name has a hyphen,
so it is used as data here, not as a Sphinx extension).
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

DISTRIBUTION = "sphinx-mathjax-offline"


def offline_mathjax() -> Path | None:
    """The installed ``mathjax/`` folder holding ``tex-chtml.js``, or ``None``.

    Returns
    -------
    Path or None
        ``None`` when the distribution is not installed; Sphinx then loads
        MathJax from its default CDN.
    """
    try:
        files = metadata.files(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return None
    for file in files:
        if file.name == "tex-chtml.js" and file.parent.name == "mathjax":
            path = Path(str(file.locate())).resolve()
            if path.is_file():
                return path.parent
    return None
