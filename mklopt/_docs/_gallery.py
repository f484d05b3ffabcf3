"""sphinx-gallery hooks of the site: the PNGs an example wrote are its figures.

Every example saves its figures with ``savefig`` into ``out`` and closes them,
so matplotlib's own scraper sees nothing. The staged copy of an example calls
``main(small=..., out=staging/figures/<stem>)`` (see :mod:`._staging`);
:func:`png_scraper` moves those PNGs into the gallery's image folder.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any


def figures_dir(gallery_conf: dict[str, Any], src_file: str) -> Path:
    """Where the staged example ``src_file`` writes its PNGs."""
    return Path(gallery_conf["src_dir"]).parent / "figures" / Path(src_file).stem


def png_scraper(block: Any, block_vars: dict[str, Any], gallery_conf: dict[str, Any]) -> str:
    """Collect the PNGs the example wrote so far (sphinx-gallery image scraper).

    Parameters
    ----------
    block : tuple
        The code block just executed (unused).
    block_vars : dict
        sphinx-gallery's per-example variables (``src_file``, ``image_path_iterator``).
    gallery_conf : dict
        The gallery configuration (``src_dir``).

    Returns
    -------
    str
        reST showing the images one below the other, or ``""`` when there are none.
    """
    from sphinx_gallery.scrapers import figure_rst

    folder = figures_dir(gallery_conf, block_vars["src_file"])
    images = []
    for png, target in zip(sorted(folder.glob("*.png")), block_vars["image_path_iterator"]):
        shutil.move(str(png), target)
        images.append(target)
    # one full-width image each (sphinx-gallery shrinks several into a row of thumbnails)
    return "".join(figure_rst([image], gallery_conf["src_dir"]) for image in images)
