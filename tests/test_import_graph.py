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


def test_mklopt_has_no_import_circle():
    graph = import_graph()
    assert graph["mklopt.recertify"] >= {"mklopt.certificates", "mklopt.result_io"}  # the parser sees imports
    assert circles(graph) == []
