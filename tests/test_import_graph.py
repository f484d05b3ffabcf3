"""Issue 27: mklopt's modules import each other without circles (DESIGN §2).

Every ``import`` counts, at module level or inside a function (an import moved
into a function to dodge a circle is still the circle); a package's
``__init__`` is a module like any other, so a submodule that imports from its
own package's face closes a circle with the face that imports it.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "mklopt"


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _targets(module: str, path: Path, node: ast.AST, modules: dict) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
    target = ".".join(base + ([node.module] if node.module else []))
    return [f"{target}.{a.name}" if f"{target}.{a.name}" in modules else target for a in node.names]


def import_graph() -> dict[str, set[str]]:
    """module -> the mklopt modules it imports (anywhere in its body)."""
    modules = _modules()
    graph = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)) or getattr(node, "module", "") == "__future__":
                continue
            for target in _targets(name, path, node, modules):
                while target not in modules and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target in modules and target != name:
                    graph[name].add(target)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return found


def test_the_checker_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _faces() -> set[str]:
    return {name for name, path in _modules().items() if path.name == "__init__.py"}


def with_package_faces(graph: dict[str, set[str]], faces: set[str]) -> dict[str, set[str]]:
    """Importing ``a.b.c`` runs the face ``a.b`` first: an edge to every package face on the
    way, except the packages the importing module lives in (Python runs those first)."""
    out = {name: set(targets) for name, targets in graph.items()}
    for name, targets in graph.items():
        for target in targets:
            parts = target.split(".")
            for k in range(1, len(parts)):
                face = ".".join(parts[:k])
                if face in faces and not name.startswith(face + "."):
                    out[name].add(face)
    return out


def test_mklopt_has_no_import_circle():
    graph = import_graph()
    assert graph["mklopt.certificates.recertify"] >= {"mklopt.certificates.gap",
                                                      "mklopt.certificates.fingerprint"}  # the parser sees imports
    assert circles(graph) == []
    assert circles(with_package_faces(graph, _faces())) == []


def test_the_face_implied_by_a_submodule_import_is_seen():
    """p's face imports p.b, which imports q.x, which imports p.a: running p.a's import
    runs p's face first, so q.x -> p -> p.b -> q.x is a circle the plain graph misses."""
    graph = {"p": {"p.a", "p.b"}, "p.a": set(), "p.b": {"q.x"}, "q.x": {"p.a"}}
    assert circles(graph) == []
    assert circles(with_package_faces(graph, {"p"})) == [["p", "p.b", "q.x"]]


def test_no_module_imports_the_face_of_its_own_package():
    """A module of package P never imports P's face (nor mklopt's): the face imports the
    module. Only the site's build (mklopt._docs) documents the public face."""
    graph = import_graph()
    upward = sorted((name, target) for name, targets in graph.items() for target in targets
                    if target in _faces() and name.startswith(target + ".")
                    and not name.startswith("mklopt._docs."))
    assert upward == []


def test_the_top_level_shows_the_architecture():
    """Issue 34: at most 12 modules at mklopt's top level; every subpackage says in one line
    what it holds."""
    import ast

    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= 12, top
    for init in PACKAGE.rglob("__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc and len(doc.splitlines()[0]) <= 100, f"{init.relative_to(PACKAGE.parent)}: no one-line docstring"
    for package in ("certificates", "results", "model_selection"):
        assert (PACKAGE / package / "__init__.py").is_file()
    install = (PACKAGE / "_docs" / "pages" / "install.md").read_text(encoding="utf-8")
    for init in PACKAGE.glob("[!_]*/__init__.py"):
        assert f"`mklopt.{init.parent.name}`" in install, f"install.md does not say what mklopt.{init.parent.name} holds"


def test_moved_modules_import_from_their_old_names_with_a_warning():
    import importlib
    import sys
    import warnings

    import mklopt

    for old, new in mklopt.MOVED.items():
        sys.modules.pop(old, None)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            module = importlib.import_module(old)
        assert module is importlib.import_module(new)
        assert any(issubclass(w.category, DeprecationWarning) and new in str(w.message) for w in caught), old
