"""The layers as a newcomer should find them: no import cycle, no private name borrowed.

Every import of every module of every package counts, function-local ones too: a
cycle hidden in a function is still a cycle a reader has to untangle.  A module may
use its own private names and import public names from anywhere; importing another
module's ``_private`` name means that name is not private and should be exported
where it lives, or moved.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = sorted(p for p in (ROOT / "packages").glob("*/src/*") if (p / "__init__.py").exists())


def modules(package: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every module of ``package``."""
    found: dict[str, Path] = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> Iterator[tuple[str, str, int]]:
    """(imported module, imported name or "", line) for each import in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, "", node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                if not is_package:
                    base = base[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            for alias in node.names:
                full = f"{target}.{alias.name}"
                if full in known:  # ``from . import module``: an import of that module
                    yield full, "", node.lineno
                else:
                    yield target, alias.name, node.lineno


def graph() -> tuple[dict[str, set[str]], list[str]]:
    """The import graph of all packages and the private names borrowed across modules."""
    known: dict[str, Path] = {}
    for package in PACKAGES:
        known.update(modules(package))
    edges: dict[str, set[str]] = {name: set() for name in known}
    borrowed: list[str] = []
    for name, path in known.items():
        for target, imported, line in imports(name, path, known):
            module = target
            while module and module not in known:
                module = module.rpartition(".")[0]
            if not module or module == name:
                continue
            edges[name].add(module)
            private = imported.startswith("_") and not imported.startswith("__")
            if private and target in known and target != name:
                borrowed.append(f"{path.relative_to(ROOT)}:{line} imports {target}.{imported}")
    # a package's __init__ importing its own submodules is how a package is made, not a
    # layer: only edges out of the package count for a cycle through its __init__
    for name in edges:
        if known[name].name == "__init__.py":
            edges[name] = {t for t in edges[name] if not t.startswith(name + ".")}
    return edges, borrowed


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
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

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_every_package_is_found() -> None:
    names = {p.name for p in PACKAGES}
    assert {"toolmend", "toolmend_langchain", "toolmend_engine", "toolmend_mcp"} <= names


def test_no_import_cycle_in_any_package() -> None:
    edges, _ = graph()
    assert cycles(edges) == []


def test_no_module_imports_a_private_name_of_another() -> None:
    _, borrowed = graph()
    assert borrowed == []


@pytest.mark.parametrize(
    ("edges", "expected"),
    [
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, [["a", "b", "c"]]),
        ({"a": {"b"}, "b": set()}, []),
    ],
)
def test_the_cycle_finder_finds_cycles(
    edges: dict[str, set[str]], expected: list[list[str]]
) -> None:
    assert cycles(edges) == expected
