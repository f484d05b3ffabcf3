"""Sphinx configuration of the mklopt site (staged by ``mklopt docs`` next to ``_options.json``).

Sources: the catalogue ``formulations/*.md`` (MyST with ``dollarmath`` and
``amsmath``, each page followed by its module's code), the gallery of
``examples/`` (sphinx-gallery; every script with a ``main`` is executed and its
PNGs are collected), the hand-written pages of ``mklopt/_docs/pages`` and the
numpydoc docstrings (the API page is generated from the modules' ``__all__``).
MathJax is served from the build's ``_static`` when the offline copy
(``sphinx-mathjax-offline``, part of the ``docs`` extra) is installed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import mklopt
from mklopt._docs._api import api_page
from mklopt._docs._mathjax import offline_mathjax

HERE = Path(__file__).resolve().parent
#: Sphinx executes this file with ``tags`` defined; an ordinary import (a tool walking the
#: package) gets the same settings without reading the staging's options or writing a page.
_SPHINX = "tags" in globals()
_STAGED = HERE / "_options.json"
OPTIONS = (json.loads(_STAGED.read_text(encoding="utf-8")) if _SPHINX or _STAGED.is_file()
           else {"quick": True, "executed": []})
QUICK = bool(OPTIONS["quick"])

project = "mklopt"
author = "the mklopt developers"
copyright = "the mklopt developers"  # noqa: A001 - Sphinx's name
release = version = mklopt.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "matplotlib.sphinxext.plot_directive",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_code", "**/GALLERY_HEADER.rst"]
nitpicky = False
templates_path = ["_templates"]

# --- MyST: the catalogue's $...$ and $$...$$ are math ------------------------
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_dmath_double_inline = True  # $$...$$ inside a list item or paragraph is display math too
myst_heading_anchors = 3

# --- autodoc / autosummary / numpydoc -----------------------------------------
if _SPHINX:
    (HERE / "api.rst").write_text(api_page(), encoding="utf-8")
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": False}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks: set[str] = set()
numpydoc_xref_param_type = False

# --- gallery --------------------------------------------------------------------
_executed = "|".join(re.escape(stem) for stem in OPTIONS["executed"]) or "^$"
sphinx_gallery_conf = {
    "examples_dirs": ["../examples"],
    "gallery_dirs": ["gallery"],
    "filename_pattern": rf"/({_executed})\.py$",
    "ignore_pattern": r"__init__\.py",
    "image_scrapers": ("mklopt._docs._gallery.png_scraper",),
    "abort_on_example_error": True,
    "download_all_examples": False,
    "show_memory": False,
    "show_signature": False,
    "remove_config_comments": True,
    "write_computation_times": False,
    "min_reported_time": 1,
    "within_subsection_order": "FileNameSortKey",
}

# --- the drivers page's figures (matplotlib plot directive) ----------------------
plot_include_source = True
plot_html_show_source_link = False
plot_html_show_formats = False
plot_formats = [("png", 90)]
plot_rcparams = {"figure.figsize": (8.0, 3.2), "figure.autolayout": True}  # no clipped labels
plot_pre_code = ""  # each page's first block imports what the page uses: the code runs as shown

# --- HTML -------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"mklopt {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "header_links_before_dropdown": 8,  # every top-level page in the header at 1280 px
    "show_toc_level": 2,
    # the Benchmarks page's tables and the catalogue's display equations take the
    # on-this-page column's width (at 1280 px a formulation's article is 645 px with it)
    "secondary_sidebar_items": {"**": ["page-toc"], "benchmarks": [],
                                **{f"formulations/{page.stem}": [] for page in (HERE / "formulations").glob("*.md")}},
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_static_path: list[str] = ["_static"]  # mklopt.css (staged from pages/_static) and thumbnails
html_css_files = ["mklopt.css"]
html_show_sourcelink = False
# pages without a section of their own get the full width (no empty "Section Navigation")
html_sidebars = {page: [] for page in ("index", "install", "drivers", "tutorial", "certificates", "api")}
_mathjax = offline_mathjax()
if _mathjax is not None:
    html_static_path.append(str(_mathjax.parent))  # copies mathjax/ into _static/
    mathjax_path = "mathjax/tex-chtml.js"


def _skip_sklearn_routing(app, what, name, obj, skip, options):
    """Leave out scikit-learn's generated ``set_*_request`` methods (their docstrings link
    into scikit-learn's own documentation)."""
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return None


def setup(app):
    """Sphinx hook: connect the member filter above."""
    app.connect("autodoc-skip-member", _skip_sklearn_routing)
