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


# -- private by default ---------------------------------------------------------------

DOORS = {
    "toolmend",
    "toolmend.integrations",
    "toolmend.contracts",
    "toolmend.durable",
    "toolmend.telemetry",
    "toolmend.cli",
    "toolmend_engine",
    "toolmend_engine.cli",
    "toolmend_langchain",
    "toolmend_langchain.testing",
    "toolmend_openai_agents",
    "toolmend_mcp",
    "toolmend_dbos",
    "toolmend_adk",
    "toolmend_adk.testing",
    "toolmend_pydantic_ai",
}
"""The public doors: everything else is implementation, free to change."""

ROLES = {
    "toolmend.classify",
    "toolmend.deliver",
    "toolmend.run",
    "toolmend_engine.http",
    "toolmend_engine.inference",
    "toolmend_engine.eval",
}
"""Subpackages that group private modules by role: a docstring, nothing exported."""


def _all_modules() -> dict[str, Path]:
    known: dict[str, Path] = {}
    for package in PACKAGES:
        known.update(modules(package))
    return known


def _exported(path: Path) -> list[str] | None:
    """The literal ``__all__`` of a module, or None when it has none."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        target = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        if isinstance(target, ast.Name) and target.id == "__all__":
            return list(ast.literal_eval(value))
    return None


def test_every_module_is_a_door_a_role_or_private() -> None:
    public = [
        name
        for name in _all_modules()
        if name not in DOORS
        and name not in ROLES
        and not any(part.startswith("_") for part in name.split("."))
    ]
    assert public == []


def test_every_door_declares_what_it_exports() -> None:
    known = _all_modules()
    assert set(known) >= DOORS
    assert {door: _exported(known[door]) is not None for door in DOORS} == dict.fromkeys(
        DOORS, True
    )


def test_role_packages_export_nothing() -> None:
    known = _all_modules()
    assert {role: _exported(known[role]) for role in ROLES} == {role: [] for role in ROLES}


def test_the_top_level_stays_small() -> None:
    exported = _exported(_all_modules()["toolmend"])
    assert exported is not None
    assert len(exported) <= 20


# -- tests and benchmarks go through the doors -------------------------------------------

WHITE_BOX = {
    # Each reaches into several private modules on purpose; named here so that the list
    # can only shrink.
    "tests/core/test_bounds.py": "every reader's bound, probed inside each reader",
    "tests/core/test_lookalikes.py": "every text we frame, fuzzed with look-alikes",
    "tests/core/test_retry.py": "the retry decision and the frames a failure names",
    "tests/engine/test_constraints.py": "grammars, through the request parser",
    "tests/engine/test_engine_context.py": "situations run through parser and evaluation",
    "tests/engine/test_engine_model.py": "the real model under parser and scenarios",
    "tests/engine/test_http.py": "the two request handlers side by side",
    "tests/engine/test_http_limits.py": "the limits of both servers and their base",
    "tests/engine/test_layer.py": "the layer on parsed requests",
    "tests/engine/test_scenarios.py": "scenarios, replies, scoring",
    "tests/engine/test_untrusted.py": "hostile input through every stage",
    "tests/test_packaging.py": "the embedded model's distribution name",
}


def _private_imports(path: Path) -> set[str]:
    """The non-door modules of ours that ``path`` imports."""
    roots = {package.name for package in PACKAGES}
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if node.module.split(".")[0] not in roots:
                continue
            for alias in node.names:
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                target = f"{node.module}.{alias.name}" if private else node.module
                if target not in DOORS:
                    found.add(target)
        elif isinstance(node, ast.Import):
            found |= {
                a.name for a in node.names if a.name.split(".")[0] in roots and a.name not in DOORS
            }
    return found


def test_tests_use_the_doors_or_name_the_one_module_they_open() -> None:
    """A unit test of one private module says so: ``test__<module>...`` or ``..._<x>__<module>``."""
    wrong: dict[str, list[str]] = {}
    for path in sorted((ROOT / "tests").rglob("*.py")):
        where = str(path.relative_to(ROOT))
        opened = _private_imports(path)
        if not opened or where in WHITE_BOX:
            continue
        leaves = {name.rsplit(".", 1)[-1].lstrip("_") for name in opened}
        named = len(leaves) == 1 and f"__{leaves.pop()}" in path.stem
        if not named:
            wrong[where] = sorted(opened)
    assert wrong == {}


def test_the_white_box_list_only_names_files_that_need_it() -> None:
    assert {w for w in WHITE_BOX if _private_imports(ROOT / w)} == set(WHITE_BOX)


def test_benchmarks_do_not_import_tests() -> None:
    """Shared helpers live in ``tools/``; a benchmark never edits ``sys.path`` to reach tests."""
    found = []
    for path in sorted((ROOT / "bench").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        imported = {
            (n.module or "").split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
        } | {
            a.name.split(".")[0]
            for n in ast.walk(tree)
            if isinstance(n, ast.Import)
            for a in n.names
        }
        if "sys.path" in text or "tests" in imported:
            found.append(str(path.relative_to(ROOT)))
    assert found == []
