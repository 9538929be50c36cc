"""Every public function and class documents its parameters (Google style).

ruff's pydocstyle rules check the form of a docstring, not that an ``Args:``
section names every parameter; this walks what each package exports (its
``__all__``, and ``toolmend.integrations``, ``toolmend.contracts`` and
``toolmend.durable``) and checks that.  A class documents what its constructor
takes in its own ``Args:`` or ``Attributes:`` section (a dataclass: its
fields), or in the ``Args:`` of its ``__init__``; a dataclass field may
instead carry its own docstring right below it.
"""

from __future__ import annotations

import ast
import enum
import importlib
import inspect
import itertools
import re
import textwrap
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pytest

MODULES = (
    "toolmend",
    "toolmend.integrations",
    "toolmend.contracts",
    "toolmend.durable",
    "toolmend.telemetry",
    "toolmend.cli",
    "toolmend_langchain",
    "toolmend_langchain.testing",
    "toolmend_openai_agents",
    "toolmend_mcp",
    "toolmend_engine",
    "toolmend_dbos",
    "toolmend_adk",
    "toolmend_adk.testing",
    "toolmend_pydantic_ai",
    "toolmend_engine.cli",
)
SECTIONS = ("Args", "Arguments", "Attributes", "Keyword Args", "Keyword Arguments")
_HEADER = re.compile(r"^(\s*)(" + "|".join(SECTIONS) + r"):\s*$")
_ENTRY = re.compile(r"^\s*\**(\w+)\s*(\([^)]*\))?\s*:")


def documented(doc: str | None) -> set[str]:
    """The names an ``Args:`` or ``Attributes:`` section of ``doc`` documents."""
    names: set[str] = set()
    lines = inspect.cleandoc(doc or "").splitlines()
    i = 0
    while i < len(lines):
        header = _HEADER.match(lines[i])
        i += 1
        if header is None:
            continue
        indent = len(header.group(1))
        entry_indent: int | None = None
        while i < len(lines):
            line = lines[i]
            if line.strip():
                depth = len(line) - len(line.lstrip())
                if depth <= indent:
                    break
                if entry_indent is None:
                    entry_indent = depth
                found = _ENTRY.match(line)
                if depth == entry_indent and found is not None:
                    names.add(found.group(1))
            i += 1
    return names


def attribute_docs(cls: type) -> set[str]:
    """The fields of ``cls`` that carry their own docstring on the next line."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError, SyntaxError):
        return set()
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    names = set()
    for field, after in itertools.pairwise(body):
        is_doc = isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
        if isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name) and is_doc:
            names.add(field.target.id)
    return names


def parameters(fn: Callable[..., Any]) -> list[str]:
    """The parameters a caller passes: all but ``self`` and ``cls``."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    return [name for name in signature.parameters if name not in ("self", "cls")]


def _ours(obj: Any) -> bool:
    return str(getattr(obj, "__module__", "")).startswith("toolmend")


def _init(cls: type) -> Callable[..., Any] | None:
    """The class's own ``__init__`` (or one it inherits from a toolmend class)."""
    for klass in cls.__mro__:
        if "__init__" in vars(klass):
            init = vars(klass)["__init__"]
            return init if _ours(klass) and inspect.isfunction(init) else None
    return None


def _methods(cls: type) -> Iterator[tuple[str, Callable[..., Any]]]:
    """The public methods a toolmend class defines (or inherits from one)."""
    seen: set[str] = set()
    for klass in cls.__mro__:
        if not _ours(klass):
            continue
        for name, value in vars(klass).items():
            if name.startswith("_") or name in seen:
                continue
            seen.add(name)
            if isinstance(value, staticmethod | classmethod):
                value = value.__func__
            if inspect.isfunction(value):
                yield name, value


def cases() -> Iterator[tuple[str, str, list[str]]]:
    """(where, what is missing, its parameters) for every public callable."""
    seen: set[int] = set()
    for module_name in MODULES:
        module: ModuleType = importlib.import_module(module_name)
        for name in module.__all__:
            obj = getattr(module, name)
            if id(obj) in seen or not _ours(obj):
                continue
            seen.add(id(obj))
            where = f"{module_name}.{name}"
            if inspect.isclass(obj):
                yield from _class_cases(where, obj)
            elif inspect.isfunction(obj):
                params = parameters(obj)
                if params:
                    yield where, _missing(params, documented(obj.__doc__)), params


def _class_cases(where: str, cls: type) -> Iterator[tuple[str, str, list[str]]]:
    skip = issubclass(cls, enum.Enum) or getattr(cls, "_is_protocol", False)
    init = None if skip else _init(cls)
    if init is not None and parameters(init):
        names = documented(cls.__doc__) | documented(init.__doc__) | attribute_docs(cls)
        yield f"{where}.__init__", _missing(parameters(init), names), parameters(init)
    if issubclass(cls, enum.Enum):
        return
    for name, method in _methods(cls):
        params = parameters(method)
        if params:
            yield f"{where}.{name}", _missing(params, documented(method.__doc__)), params


def _missing(params: list[str], names: set[str]) -> str:
    return ", ".join(p for p in params if p not in names)


ALL = sorted(cases())


def test_the_walk_finds_the_public_api() -> None:
    where = [case[0] for case in ALL]
    assert "toolmend.rewrite" in where
    assert "toolmend_langchain.ToolMendMiddleware.__init__" in where
    assert "toolmend.integrations.CallRecord.of_failure" in where
    assert len(where) > 100


def test_the_section_reader_reads_google_style() -> None:
    doc = """Do it.

    Args:
        first: One.
        second (int): Two,
            on two lines.
        *rest: The rest.
        **options: Options.

    Returns:
        nothing: Not a parameter.
    """
    assert documented(doc) == {"first", "second", "rest", "options"}


@pytest.mark.parametrize(("where", "missing", "params"), ALL, ids=[case[0] for case in ALL])
def test_public_callables_document_every_parameter(
    where: str, missing: str, params: list[str]
) -> None:
    assert missing == "", f"{where} does not document: {missing}"
