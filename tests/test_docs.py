"""``mklopt docs --quick`` builds the site (Sphinx ``-W``): every page is there and renders.

One quick build (about two minutes on two cores) is shared by the tests of
this module: the catalogue pages with typeset math and their module's code,
the executed gallery with its figures, the drivers' figures, the API pages and
the offline MathJax copy. A broken page, docstring or example fails the build.
"""

from __future__ import annotations

import contextlib
import html
import io
import re
from pathlib import Path

import pytest

from mklopt import cli
from mklopt._docs import check_dependencies, source_checkout
from mklopt._docs._staging import code_path
from mklopt.exceptions import InvalidInputError, MissingDependencyError

REPO = Path(__file__).resolve().parent.parent
PAGES = sorted(p for p in (REPO / "formulations").glob("*.md") if p.stem != "README")
TAGS = re.compile(r"<[^>]+>")


def _text(path: Path) -> str:
    """The visible text of an HTML page (tags removed, entities decoded)."""
    return html.unescape(TAGS.sub("", path.read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("site")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = cli.main(["docs", "--quick", "--out", str(out)])
    assert code == 0, "mklopt docs --quick failed (Sphinx warnings are errors; see stderr)"
    return out, printed.getvalue()


@pytest.fixture(scope="module")
def site(built) -> Path:
    return built[0]


def test_index_printed_and_written(built):
    site, printed = built
    assert printed.strip() == str(site.resolve() / "index.html")
    text = _text(site / "index.html").lower()
    for phrase in ("researchers prototyping mkl regularizers", "verifying their own mkl solvers",
                   "teachers", "mklopt demo", "pytest -q"):
        assert phrase in text, phrase


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_formulation_page_has_math_and_code(site, page):
    built = site / "formulations" / f"{page.stem}.html"
    assert built.is_file(), f"no page for formulations/{page.name}"
    raw = built.read_text(encoding="utf-8")
    assert 'class="math notranslate' in raw and ("\\(" in raw or "\\[" in raw)
    module = code_path(page.stem, page.read_text(encoding="utf-8"))
    assert module is not None, f"formulations/{page.name} names no module"
    source = (REPO / module).read_text(encoding="utf-8")
    first_def = next(line.strip() for line in source.splitlines() if line.startswith(("def ", "class ")))
    assert first_def.split("(")[0] in _text(built), f"the code of {module} is not on the page"


def test_catalogue_index_lists_every_page(site):
    raw = (site / "formulations" / "index.html").read_text(encoding="utf-8")
    for page in PAGES:
        assert f'href="{page.stem}.html' in raw


def test_gallery_pages_show_their_figures(site):
    """Every example with a ``main`` ran at its small size in this build (an error, or a file
    written outside ``out``, fails the build) and its page shows every PNG it saved."""
    from mklopt._docs._staging import NEVER_RUN

    pages = [p for p in (site / "gallery").glob("*.html") if p.stem not in ("index", "sg_execution_times")]
    assert len(pages) == len(list((REPO / "examples").glob("*.py")))
    executed = sorted(p.stem for p in (REPO / "examples").glob("*.py")
                      if re.search(r"^def main\(", p.read_text("utf-8"), re.M) and p.stem not in NEVER_RUN)
    assert len(executed) >= 15 and {"plot_convergence", "plot_local_rademacher", "lp_norm_toy"} <= set(executed)
    for stem in executed:
        raw = (site / "gallery" / f"{stem}.html").read_text("utf-8")
        shown = re.findall(rf'<img[^>]+src="[^"]*(sphx_glr_{stem}_\d+\.png)"', raw)
        assert shown, f"examples/{stem}.py: its gallery page shows no figure"
        for image in shown:
            assert (site / "_images" / image).is_file(), image


def test_drivers_page_has_a_figure_per_driver(site):
    """Every registered driver has its section with a figure computed at build time."""
    from mklopt.drivers import DRIVERS

    raw = (site / "drivers.html").read_text(encoding="utf-8")
    assert {"wrapper", "cutting_plane", "dca", "vkr_cd"} <= set(DRIVERS)
    assert len(re.findall(r"<img[^>]+\.png", raw)) >= len(DRIVERS)
    for driver in DRIVERS:
        assert f'"{driver}"' in html.unescape(TAGS.sub("", raw)), f"no fit(..., {driver!r}) on the page"


def test_api_pages_name_the_public_api(site):
    text = _text(site / "api.html")
    for name in ("mklopt.fit", "mklopt.solve", "mklopt.certify", "KernelSet", "MKLClassifier",
                 "check_solver", "plot_convergence", "MKLResult"):
        assert name in text or name.split(".")[-1] in text, name
    for stub in ("mklopt.fit", "mklopt.solve", "mklopt.certify", "mklopt.KernelSet",
                 "mklopt.estimators.MKLClassifier", "mklopt.testing.check_solver"):
        page = site / "generated" / f"{stub}.html"
        assert page.is_file(), stub
        assert stub.split(".")[-1] in _text(page)


#: What the reader must never see: TeX that MathJax did not get, roles Sphinx did not resolve.
_RAW_MARKUP = re.compile(r"\$\$|(?<![\w\\])\\(?:frac|mu|alpha|sum|mathbb|operatorname|tfrac|le|ge|top)\b"
                         r"|:(?:meth|func|class|mod|attr|math|ref|doc):`")
_HIDDEN = re.compile(r"<(script|style|pre|code|textarea)\b.*?</\1>", re.S | re.I)
_MATH = re.compile(r'<(span|div) class="math[^"]*"[^>]*>(.*?)</\1>', re.S)


def _reader_text(raw: str) -> str:
    """The prose of a page: no scripts, code or math (where TeX belongs)."""
    return html.unescape(TAGS.sub(" ", _MATH.sub(" ", _HIDDEN.sub(" ", raw))))


def test_no_page_shows_raw_tex_or_unresolved_roles(site):
    """Every rendered page: no ``$$``, no TeX command and no ``:meth:`` role in the prose (they
    rendered as garbled text), and no control character inside math (a non-raw docstring's
    ``\\a`` is a BEL: MathJax's "Math input error")."""
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 40
    bad = []
    for page in pages:
        raw = page.read_text(encoding="utf-8")
        for match in _RAW_MARKUP.finditer(_reader_text(raw)):
            text = _reader_text(raw)
            bad.append(f"{page.relative_to(site)}: ...{text[max(0, match.start() - 40):match.end() + 40]!r}")
            break
        for _, tex in _MATH.findall(raw):
            if re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f]", html.unescape(tex)):
                bad.append(f"{page.relative_to(site)}: a control character in {tex[:60]!r}")
    assert not bad, "\n".join(bad)


def test_mathjax_is_served_offline(site):
    assert (site / "_static" / "mathjax" / "tex-chtml.js").is_file()
    raw = (site / "formulations" / "lp_primal.html").read_text(encoding="utf-8")
    assert "_static/mathjax/tex-chtml.js" in raw and "cdn.jsdelivr" not in raw


def test_the_guides_driver_table_is_generated_from_the_registry():
    """One source per fact: the guide's driver table is made from the registered classes,
    so a driver registered with its method and notes lines appears without a page edit."""
    from mklopt._docs._tables import fill_tables
    from mklopt.drivers import DRIVERS, Driver, register

    page = (REPO / "mklopt" / "_docs" / "pages" / "guide_fitting.md").read_text(encoding="utf-8")
    assert "<!-- generated: drivers -->" in page and "| driver |" not in page

    class Mine(Driver):
        method = "my own method (a paper, a section)"
        notes = "my notes"

    register("mine", Mine)
    try:
        table = fill_tables(page, "guide_fitting.md")
    finally:
        del DRIVERS["mine"]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == [*DRIVERS, "mine"]
    # the last column is each driver's stall rule (issue 56): the base class's for a new driver
    assert f"| `mine` | my own method (a paper, a section) | my notes | {Driver.stall_rule} |" in rows
    assert all(len(row.split(" | ")) == 4 and row.split(" | ")[1].strip() for row in rows)

    class Silent(Driver):
        pass

    register("silent", Silent)
    try:
        with pytest.raises(InvalidInputError, match="'silent'.*method"):
            fill_tables(page, "guide_fitting.md")
    finally:
        del DRIVERS["silent"]
    with pytest.raises(InvalidInputError, match="'nothing'"):
        fill_tables("<!-- generated: nothing -->", "x.md")


def test_docstrings_hold_no_escape_characters():
    """A non-raw docstring's ``\\approx`` is a BEL and ``\\top`` a tab (the API page showed
    "Math input error"): no control character in any docstring, no invalid escape."""
    import ast
    import warnings

    for path in (REPO / "mklopt").rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            tree = compile(source, str(path), "exec", ast.PyCF_ONLY_AST)  # invalid escapes raise
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node, clean=False) or ""
                assert not re.search(r"[\x07\x08\x0b\x0c\t]", doc), f"{path.name}: {getattr(node, 'name', 'module')}"


def test_no_checkout_file_names_in_catalogue_citations():
    for page in (REPO / "formulations").glob("*.md"):
        text = page.read_text(encoding="utf-8")
        assert not re.search(r"\b00[1-4]_[0-9a-f]{16}\.txt|shared/seeds", text), page.name


def test_missing_docs_extra_is_one_line_error(monkeypatch, capsys):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "numpydoc" else real(name, *a))
    with pytest.raises(MissingDependencyError, match=r'pip install -e "\.\[docs\]"'):
        check_dependencies()
    assert cli.main(["docs", "--out", "unused"]) == 2
    assert 'pip install -e ".[docs]"' in capsys.readouterr().err


def test_no_source_checkout_is_said_clearly(tmp_path):
    with pytest.raises(InvalidInputError, match="source checkout"):
        source_checkout(tmp_path)
    assert source_checkout() == REPO


@pytest.mark.parametrize("where", [".", "mklopt", "formulations/site", "examples", ".."])
def test_out_inside_the_sources_is_refused_before_any_work(where, capsys):
    """Issue 27: --out at the checkout root left ~30 files there and then Sphinx failed."""
    before = sorted(p.name for p in REPO.iterdir())
    assert cli.main(["docs", "--out", str(REPO / where)]) == 2
    assert "would mix with the sources" in capsys.readouterr().err
    assert sorted(p.name for p in REPO.iterdir()) == before


def test_default_and_readme_output_folders_are_ignored_by_git():
    ignored = (REPO / ".gitignore").read_text().splitlines()
    assert "mklopt_site/" in ignored and "/site/" in ignored


def test_no_raw_double_backticks_in_rendered_titles(site):
    """Issue 27: gallery card titles showed ``mklopt.solve`` with its backticks."""
    for page in site.rglob("*.html"):
        html_text = page.read_text(encoding="utf-8")
        titles = re.findall(r"<title>(.*?)</title>|<h1[^>]*>(.*?)</h1>", html_text, re.S)
        titles += [(t, "") for t in re.findall(r'class="sphx-glr-thumbnail-title">(.*?)<', html_text, re.S)]
        for parts in titles:
            assert "``" not in html.unescape(TAGS.sub("", "".join(parts))), page


def test_every_gallery_card_has_its_own_thumbnail(site):
    index = (site / "gallery" / "index.html").read_text(encoding="utf-8")
    cards = re.findall(r'<div class="sphx-glr-thumbcontainer".*?<img[^>]*src="([^"]+)"', index, re.S)
    assert len(cards) == len(list((REPO / "examples").glob("*.py")))
    assert not [c for c in cards if "no_image" in c]
    assert len(set(cards)) == len(cards)


def test_page_titles_are_short_and_wrap(site):
    """The API page title was cut at "mklopt.estimators.MKLClas": titles are the object's name,
    and the site's stylesheet wraps long names (titles, the page contents)."""
    page = (site / "generated" / "mklopt.estimators.MKLClassifier.html").read_text(encoding="utf-8")
    assert re.search(r"<h1>MKLClassifier", page)
    assert "mklopt.css" in page and (site / "_static" / "mklopt.css").is_file()


def test_the_built_guide_shows_every_driver_in_its_table(site):
    from mklopt.drivers import DRIVERS

    page = (site / "guide_fitting.html").read_text(encoding="utf-8")
    table = page[page.index("<table"):page.index("</table>")]
    for name in DRIVERS:
        assert f'<span class="pre">{name}</span>' in table, name


def test_the_install_pages_dependencies_and_extras_are_pyprojects():
    """One source per fact: the install page's tables come from the package metadata,
    which is pyproject.toml's: every core dependency with its bounds, every extra."""
    from mklopt._docs._tables import EXTRA_PURPOSES, fill_tables

    page = (REPO / "mklopt" / "_docs" / "pages" / "install.md").read_text(encoding="utf-8")
    text = fill_tables(page, "install.md")
    project = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    core = re.search(r"^dependencies = \[(.*?)^\]", project, re.S | re.M).group(1)
    for spec in re.findall(r'^\s*"([^"]+)"', core, re.M):
        name = re.match(r"[\w.\-]+", spec).group(0)
        bounds = spec[len(name):].split(",")
        row = next(line for line in text.splitlines() if line.startswith(f"| {name} |"))
        assert all(b in row for b in bounds), (spec, row)
    extras = re.search(r"^\[project\.optional-dependencies\](.*?)^\[", project, re.S | re.M).group(1)
    for extra in re.findall(r"^(\w+) = \[", extras, re.M):
        assert f"| `{extra}` |" in text and extra in EXTRA_PURPOSES, extra
    assert "<!-- generated" not in text


def test_no_page_shows_the_builds_temporary_folder(site):
    """Examples print the files they write: relative to the build ("figures/<example>/x.png"),
    never the temporary staging folder a reader cannot open."""
    shown = [str(page.relative_to(site)) for page in site.rglob("*.html")
             if "mklopt-docs-" in page.read_text(encoding="utf-8")]
    assert not shown, shown
