"""Assemble the Sphinx source tree of the site in a staging folder (never in the checkout).

The site's sources stay where they live: the catalogue pages ``formulations/*.md``
(the README becomes the section index and every page gets the CVXPY code of its
module appended by ``literalinclude``), the scripts of ``examples/`` (the
gallery) and the hand-written pages and ``conf.py`` of :mod:`mklopt._docs`.
Everything is copied into ``staging/site`` (Sphinx's source folder),
``staging/examples`` (the gallery's input) and ``staging/figures`` (where the
examples write their PNGs).
"""

from __future__ import annotations

import ast
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from ..exceptions import InvalidInputError
from ._tables import fill_tables

PACKAGE = Path(__file__).resolve().parent
#: A page's module is named on its second line: "Module `mklopt/.../name.py` · ...".
MODULE_LINE = re.compile(r"^Module `(mklopt/[\w/]+\.py)`", re.MULTILINE)
#: Pages that name no module of their own and the module shown under them.
SPECIAL_CODE = {"losses": "mklopt/losses/base.py"}
#: Examples shown but never executed (they rewrite files of the checkout).
NEVER_RUN = ("make_reference_instances",)
#: Examples the site always runs at their small size: the benchmarks, and the papers'
#: tables (30+ minutes on two cores at full size; their full results are in README or on
#: the Benchmarks page).
ALWAYS_SMALL = ("vkr_table1", "plot_local_rademacher", "simplemkl_table", "plot_multiview")


@dataclass(frozen=True)
class Staging:
    """Paths of one staged build.

    Attributes
    ----------
    root : Path
        The staging folder (temporary).
    site : Path
        Sphinx's source and configuration folder.
    executed : tuple of str
        Stems of the examples the gallery runs.
    scripts : tuple of str
        File names of every staged example.
    """

    root: Path
    site: Path
    executed: tuple[str, ...]
    scripts: tuple[str, ...] = ()


def code_path(page: str, text: str) -> str | None:
    """The module (relative to the checkout) whose code goes under catalogue page ``page``.

    Parameters
    ----------
    page : str
        The page's name (file stem).
    text : str
        The page's Markdown; its "Module `mklopt/...py`" line names the module.

    Returns
    -------
    str or None
        ``None`` for the index (``README``).
    """
    if page in SPECIAL_CODE:
        return SPECIAL_CODE[page]
    match = MODULE_LINE.search(text)
    return match.group(1) if match else None


def _code_section(module: str) -> str:
    dotted = module[:-3].replace("/", ".")
    return (f"\n\n## Code: `{dotted}`\n\n"
            f"The CVXPY of this page, as it is in `{module}`:\n\n"
            f"```{{literalinclude}} /_code/{module}\n:language: python\n:linenos:\n```\n")


def stage_catalogue(repo: Path, site: Path) -> list[str]:
    """Copy ``formulations/*.md`` into ``site/formulations`` with their code appended.

    Parameters
    ----------
    repo : Path
        The source checkout (holding ``formulations/`` and ``mklopt/``).
    site : Path
        Sphinx's source folder.

    Returns
    -------
    list of str
        The staged page names (``README`` becomes ``index``).
    """
    target = site / "formulations"
    target.mkdir(parents=True)
    pages = []
    for md in sorted((repo / "formulations").glob("*.md")):
        text = md.read_text(encoding="utf-8")
        module = code_path(md.stem, text)
        if module is not None:
            if not (repo / module).is_file():
                raise InvalidInputError(f"formulations/{md.name} names module {module}, "
                                        "which does not exist in the checkout.")
            (site / "_code" / module).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(repo / module, site / "_code" / module)
            text = text.rstrip() + _code_section(module)
        name = "index" if md.stem == "README" else md.stem
        if name == "index":
            text = text.rstrip() + "\n\n```{toctree}\n:hidden:\n:glob:\n\n*\n```\n"
        text = text.replace("](README.md)", "](index.md)")
        (target / f"{name}.md").write_text(text, encoding="utf-8")
        pages.append(name)
    for data in (repo / "formulations").glob("*.json"):
        shutil.copy2(data, target / data.name)
    return pages


def _has_main(source: str) -> bool:
    tree = ast.parse(source)
    return any(isinstance(node, ast.FunctionDef) and node.name == "main" for node in tree.body)


def _titled(source: str, stem: str) -> str:
    """Give the module docstring a reST title line (sphinx-gallery's page title)."""
    tree = ast.parse(source)
    doc = ast.get_docstring(tree, clean=False)
    if not doc:
        return f'"""{stem}\n{"=" * len(stem)}\n"""\n' + source
    first = doc.lstrip().splitlines()[0]
    start = source.index(first)
    end = start + len(first)
    title = plain_title(first)  # a gallery card shows the title's source text
    return source[:start] + title + "\n" + "=" * max(len(title), 3) + source[end:]


def plain_title(line: str) -> str:
    """A docstring's first line without reST/Markdown literals (````x````, ```x```)."""
    return re.sub(r"``?([^`]+)``?", r"\1", line)


#: Hidden in each executed example: its printed output names the files it wrote relative
#: to the build folder ("figures/<example>/x.png"), not the build's temporary path.
_RELATIVE_PATHS = """# sphinx_gallery_start_ignore
class _RelativePaths:
    def __init__(self, stream, prefix):
        self.stream, self.prefix = stream, prefix

    def write(self, text):
        return self.stream.write(text.replace(self.prefix, ""))

    def __getattr__(self, name):
        return getattr(self.stream, name)
# sphinx_gallery_end_ignore

"""


def _with_gallery_call(source: str, original: Path, out: Path, small: bool) -> str:
    """Insert a hidden ``main(small=..., out=...)`` call before the ``__main__`` block."""
    doc = ast.get_docstring(ast.parse(original.read_text(encoding="utf-8")), clean=False) or ""
    staging = str(out.parent.parent) + "/"
    hidden = ("# sphinx_gallery_start_ignore\n"
              f"__file__, __doc__ = {str(original)!r}, {doc!r}  # as when run as a script\n"
              "import contextlib as _contextlib\n"
              f"with _contextlib.redirect_stdout(_RelativePaths(__import__('sys').stdout, {staging!r})):\n"
              f"    main(small={small!r}, out={str(out)!r})\n"
              '__name__ = "__gallery__"  # the __main__ block below is shown, not run again\n'
              "# sphinx_gallery_end_ignore\n\n")
    hidden = _RELATIVE_PATHS + hidden
    marker = '\nif __name__ == "__main__":'
    at = source.rfind(marker)
    if at < 0:
        return source.rstrip() + "\n\n" + hidden
    return source[:at + 1] + hidden + source[at + 1:]


def _with_thumbnail(source: str, stem: str, staging: Path) -> str:
    """A script shown without being run gets a thumbnail of its own (not the placeholder).

    For ``make_reference_instances`` it is drawn from the catalogue it writes:
    the certified relative gap of every reference instance.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    catalogue = json.loads((PACKAGE.parent / "_catalogue" / "reference_instances.json")
                           .read_text(encoding="utf-8"))
    gaps = [max(i["certified"]["rel_gap"], 1e-16) for i in catalogue["instances"]]
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.bar(range(len(gaps)), gaps, color="#4878cf")
    ax.set_yscale("log")
    ax.set_xlabel("reference instance")
    ax.set_ylabel("certified rel_gap")
    ax.set_title(f"{len(gaps)} certified instances")
    fig.tight_layout()
    image = staging / "site" / "_static" / f"thumb_{stem}.png"
    image.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(image, dpi=80)
    plt.close(fig)
    return source.rstrip() + f"\n\n# sphinx_gallery_thumbnail_path = '_static/thumb_{stem}.png'\n"


def stage_examples(repo: Path, staging: Path, quick: bool) -> tuple[str, ...]:
    """Copy ``examples/*.py`` into ``staging/examples`` ready for sphinx-gallery.

    Each script with a ``main(small, out)`` gets a hidden call of it (``small``
    in quick mode, for the benchmarks and for :data:`ALWAYS_SMALL`) writing its PNGs to
    ``staging/figures/<stem>``, which the gallery's scraper collects.

    Returns
    -------
    tuple of str
        Stems of the scripts that will be executed.
    """
    target = staging / "examples"
    target.mkdir(parents=True)
    header = (PACKAGE / "pages" / "GALLERY_HEADER.rst").read_text(encoding="utf-8")
    (target / "GALLERY_HEADER.rst").write_text(header, encoding="utf-8")
    executed = []
    for script in sorted((repo / "examples").glob("*.py")):
        source = _titled(script.read_text(encoding="utf-8"), script.stem)
        if script.stem in NEVER_RUN:
            source = _with_thumbnail(source, script.stem, staging)
        if _has_main(source) and script.stem not in NEVER_RUN:
            small = quick or script.stem.startswith("bench_") or script.stem in ALWAYS_SMALL
            out = staging / "figures" / script.stem
            source = _with_gallery_call(source, script, out, small)
            executed.append(script.stem)
        (target / script.name).write_text(source, encoding="utf-8")
    return tuple(executed)


def stray_outputs(staged: Staging) -> list[str]:
    """Files the executed examples left in the folder they ran in (sphinx-gallery runs each
    example in ``staging/examples``): everything there but the staged scripts and header.

    Parameters
    ----------
    staged : Staging
        A staged build, after Sphinx ran.

    Returns
    -------
    list of str
        Paths relative to ``staging/examples``, sorted.
    """
    folder = staged.root / "examples"
    expected = {"GALLERY_HEADER.rst", "__pycache__"} | set(staged.scripts)
    return sorted(str(p.relative_to(folder)) for p in folder.iterdir() if p.name not in expected)


def stage(repo: Path, staging: Path, quick: bool) -> Staging:
    """Stage the whole site: hand-written pages, ``conf.py``, catalogue and gallery.

    Parameters
    ----------
    repo : Path
        The source checkout.
    staging : Path
        An empty folder (created if needed).
    quick : bool
        Run the gallery's examples at their small size.

    Returns
    -------
    Staging
    """
    site = staging / "site"
    site.mkdir(parents=True)
    for page in (PACKAGE / "pages").iterdir():
        if page.suffix in (".md", ".rst") and page.name != "GALLERY_HEADER.rst":
            text = fill_tables(page.read_text(encoding="utf-8"), page.name)
            (site / page.name).write_text(text, encoding="utf-8")
    shutil.copytree(PACKAGE / "pages" / "_templates", site / "_templates")
    shutil.copytree(PACKAGE / "pages" / "_static", site / "_static", dirs_exist_ok=True)
    shutil.copy2(PACKAGE / "conf.py", site / "conf.py")
    stage_catalogue(repo, site)
    executed = stage_examples(repo, staging, quick)
    options = {"quick": quick, "executed": list(executed)}
    (site / "_options.json").write_text(json.dumps(options), encoding="utf-8")
    scripts = tuple(p.name for p in (staging / "examples").glob("*.py"))
    return Staging(root=staging, site=site, executed=executed, scripts=scripts)
