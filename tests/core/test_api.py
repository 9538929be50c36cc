"""The public surface: a small top level, an explicit integrator API, adapters on exports only."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import subprocess
import sys
import typing
import warnings
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

import toolmend
import toolmend.contracts
import toolmend.durable
import toolmend.integrations
import toolmend.telemetry

ROOT = Path(__file__).resolve().parents[2]
ADAPTERS = ("langchain", "openai_agents", "mcp_client", "engine", "dbos")
PUBLIC = (
    "toolmend",
    "toolmend.integrations",
    "toolmend.contracts",
    "toolmend.telemetry",
    "toolmend.durable",
)
PACKAGES = (
    *PUBLIC,
    "toolmend_langchain",
    "toolmend_openai_agents",
    "toolmend_mcp",
    "toolmend_engine",
    "toolmend_dbos",
)


def _exported(module: str) -> set[str]:
    return set(importlib.import_module(module).__all__)


def _adapter_imports() -> list[tuple[str, int, str, str]]:
    """(file, line, module, name) for every toolmend name an adapter's source uses."""
    found: list[tuple[str, int, str, str]] = []
    for adapter in ADAPTERS:
        for path in sorted((ROOT / "packages" / adapter / "src").rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            where = str(path.relative_to(ROOT))
            aliases = set()
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    if node.module == "toolmend" or node.module.startswith("toolmend."):
                        for alias in node.names:
                            found.append((where, node.lineno, node.module, alias.name))
                elif isinstance(node, ast.Import):
                    for alias in node.names:
                        if alias.name == "toolmend" or alias.name.startswith("toolmend."):
                            found.append((where, node.lineno, alias.name, ""))
                            if alias.name == "toolmend":
                                aliases.add(alias.asname or "toolmend")
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.value, ast.Name)
                    and node.value.id in aliases
                ):
                    found.append((where, node.lineno, "toolmend", node.attr))
    return found


def test_top_level_is_small_and_every_name_resolves() -> None:
    assert len(toolmend.__all__) <= 20
    assert len(set(toolmend.__all__)) == len(toolmend.__all__)
    for module in PUBLIC:
        namespace = importlib.import_module(module)
        for name in namespace.__all__:
            assert getattr(namespace, name) is not None, (module, name)


def test_adapters_import_only_exported_names() -> None:
    allowed = {module: _exported(module) for module in PUBLIC}
    imports = _adapter_imports()
    assert len(imports) > 50  # the walk sees the adapters' imports
    wrong = []
    for where, line, module, name in imports:
        if name == "" and module in allowed:
            continue  # ``import toolmend``: its attribute uses are checked one by one
        if module not in allowed or name not in allowed[module] | {
            "contracts",
            "integrations",
            "telemetry",
        }:
            wrong.append(f"{where}:{line}: {module}.{name}")
    assert wrong == []


def test_integrations_export_what_adapters_need_and_no_more() -> None:
    allowed = _exported("toolmend.integrations")
    assert "verdict_from_record" in allowed
    assert "user_frames" not in allowed
    assert "check_call" in allowed
    assert "cap" not in allowed


def test_no_old_names_are_kept() -> None:
    """Nothing was ever published: no aliases for names that moved or were renamed."""
    for name in ("inspect", "guard", "stub_superseded", "execute", "CallContext", "cap_error"):
        assert not hasattr(toolmend, name)
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        _ = toolmend.nothing_here  # type: ignore[attr-defined]


def test_current_names_raise_no_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for module in PUBLIC:
            namespace = importlib.import_module(module)
            for name in namespace.__all__:
                getattr(namespace, name)


@pytest.mark.parametrize("package", PACKAGES)
def test_type_hints_resolve_for_every_public_class(package: str) -> None:
    module = importlib.import_module(package)
    classes = [value for name in module.__all__ if inspect.isclass(value := getattr(module, name))]
    assert classes
    for cls in classes:
        if cls.__name__ in UPSTREAM_UNRESOLVABLE:
            _own_hints(cls)
        else:
            typing.get_type_hints(cls)


UPSTREAM_UNRESOLVABLE = {"ToolMendMiddleware"}
"""Classes whose framework base class has annotations that cannot be resolved."""


def _own_hints(cls: type) -> None:
    """Resolve the annotations our own classes in the MRO declare, each in its module."""
    ours = [base for base in cls.__mro__ if base.__module__.startswith("toolmend")]
    assert ours
    for base in ours:
        holder = SimpleNamespace(__annotations__=inspect.get_annotations(base))
        typing.get_type_hints(holder, globalns=vars(sys.modules[base.__module__]))


def test_the_upstream_exemption_is_still_needed() -> None:
    """LangChain's AgentMiddleware imports BaseTool only for type checkers; drop it when fixed."""
    from langchain.agents.middleware.types import AgentMiddleware

    with pytest.raises(NameError, match="BaseTool"):
        typing.get_type_hints(AgentMiddleware)


def _core_modules() -> list[str]:
    names = ["toolmend"]
    for info in pkgutil.walk_packages(toolmend.__path__, "toolmend."):
        names.append(info.name)
    return sorted(names)


def test_core_modules_are_listed() -> None:
    modules = _core_modules()
    assert {"toolmend.integrations", "toolmend.run._attempts", "toolmend.contracts._values"} <= set(
        modules
    )


@pytest.mark.parametrize("module", _core_modules())
def test_every_core_module_imports_first_in_a_fresh_interpreter(module: str) -> None:
    done = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-c", f"import {module}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_public_modules_are_modules() -> None:
    assert isinstance(toolmend.integrations, ModuleType)
    assert isinstance(toolmend.contracts, ModuleType)
