"""Build the mklopt documentation site with Sphinx (``mklopt docs``).

The configuration and the hand-written pages live here (``conf.py``,
``pages/``); the catalogue ``formulations/``, the gallery ``examples/`` and the
docstrings are the other sources. :func:`build_site` stages all of them in a
temporary folder (nothing is written into the checkout) and runs
``sphinx-build -W`` on it. Requires the ``docs`` extra. A wheel ships the catalogue and
the examples inside the package (``_catalogue``, ``_examples``): without a checkout the
site is built from them, through a folder of links laid out as a checkout
(:func:`source_root`).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

from .._version import PACKAGE, install_hint
from ..exceptions import InvalidInputError, MissingDependencyError
from ._staging import stage, stray_outputs

#: Import names of the ``docs`` extra (distribution names in pyproject.toml).
REQUIRED = ("sphinx", "myst_parser", "sphinx_gallery", "numpydoc", "pydata_sphinx_theme")
INSTALL = install_hint("docs")


def check_dependencies() -> None:
    """Raise :class:`~mklopt.exceptions.MissingDependencyError` naming what is missing."""
    missing = [name for name in REQUIRED if importlib.util.find_spec(name) is None]
    if missing:
        raise MissingDependencyError(
            f"mklopt docs needs the docs extra ({', '.join(missing)} not installed); "
            f"run '{INSTALL}'.")


#: Folders of the checkout a site must not be written into (or be).
SOURCE_FOLDERS = ("mklopt", "formulations", "examples", "tests", ".ci", ".git")


def check_out_folder(out: Path, repo: Path) -> None:
    """Refuse an output folder that is the checkout itself or inside one of its source folders.

    Sphinx writes ``_static/``, ``_sources/`` and ~30 pages into ``out``; in the
    checkout root they would mix with the sources (and Sphinx then fails with
    "html_static_path ... inside outdir"). A new folder of the checkout
    (``mklopt docs --out site``) is fine: ``site/`` and ``mklopt_site/`` are in
    ``.gitignore``.
    """
    out, repo = Path(out).resolve(), Path(repo).resolve()
    inside = [name for name in SOURCE_FOLDERS if out == repo / name or (repo / name) in out.parents]
    if out == repo or out in repo.parents or inside:
        where = "the checkout itself" if out == repo or out in repo.parents else f"inside {inside[0]}/"
        raise InvalidInputError(
            f"--out {out} is {where}: the site's files would mix with the sources; choose a new "
            f"folder, e.g. --out {repo / 'site'} (ignored by git) or one outside the checkout.")


def source_root_of_checkout() -> Path:
    """The folder a checkout's package sits in (whether or not it is one)."""
    return PACKAGE.parent


def source_checkout(root: Path | None = None) -> Path:
    """The checkout holding ``formulations/``, ``examples/`` and ``mklopt/``.

    Parameters
    ----------
    root : Path, optional
        The folder to check (default: the one holding the installed package).

    Returns
    -------
    Path
        ``root``, when it has ``formulations/`` and ``examples/``.
    """
    root = Path(__file__).resolve().parents[2] if root is None else Path(root)
    missing = [name for name in ("formulations", "examples") if not (root / name).is_dir()]
    if missing:
        raise InvalidInputError(
            f"mklopt docs builds the site from the source checkout's formulations/ and "
            f"examples/, which are not next to the installed package ({root} has no "
            f"{' or '.join(missing)}/); use a source checkout installed with '{INSTALL}'.")
    return root


def source_root(folder: Path) -> Path:
    """The checkout, or (from a wheel) ``folder`` laid out as one: links ``mklopt``,
    ``formulations`` (the package's ``_catalogue``) and ``examples`` (its ``_examples``)."""
    try:
        return source_checkout()
    except InvalidInputError:
        if not ((PACKAGE / "_catalogue").is_dir() and (PACKAGE / "_examples").is_dir()):
            raise
    folder.mkdir(parents=True, exist_ok=True)
    for name, target in (("mklopt", PACKAGE), ("formulations", PACKAGE / "_catalogue"),
                         ("examples", PACKAGE / "_examples")):
        (folder / name).symlink_to(target, target_is_directory=True)
    return folder


def build_site(out: Path, quick: bool = False, staging: Path | None = None) -> int:
    """Stage the sources and run Sphinx (warnings are errors) into ``out``.

    Parameters
    ----------
    out : Path
        Folder of the HTML site (``out / "index.html"``); created if needed.
    quick : bool
        Run the gallery's examples at their small size (seconds each).
    staging : Path, optional
        Folder for the staged sources (default: a temporary folder, removed afterwards).

    Returns
    -------
    int
        ``sphinx-build``'s exit status (0: built without warnings).
    """
    check_dependencies()
    if staging is None:
        with tempfile.TemporaryDirectory(prefix="mklopt-docs-") as tmp:
            return build_site(out, quick, Path(tmp))
    repo = source_root(Path(staging) / "source")
    if repo == source_root_of_checkout():
        check_out_folder(Path(out), repo)
    print(f"mklopt docs: staging the sources in {staging}", file=sys.stderr, flush=True)
    staged = stage(repo, Path(staging) / "stage", quick)
    print(f"mklopt docs: running Sphinx into {out} (the gallery runs every example: "
          f"{'a few minutes' if quick else 'several minutes'}; warnings are errors)",
          file=sys.stderr, flush=True)
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
               "-d", str(staged.root / "doctrees"), str(staged.site), str(out)]
    code = subprocess.call(command, cwd=staged.root)
    stray = stray_outputs(staged)
    if stray:
        print(f"mklopt docs: examples wrote files outside their out folder (into the folder they "
              f"run in): {', '.join(stray)}; write every output under main(..., out=...)",
              file=sys.stderr, flush=True)
        return code or 1
    return code
