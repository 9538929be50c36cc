"""Every example says what to install, and runs: offline, and against ``serve`` and ``proxy``.

The header of each example (its docstring) names what to install, e.g.
``pip install 'toolmend-langchain[examples]'``; the check below reads the example's
imports and the packages' declared dependencies and extras, and requires that the
named requirements bring every distribution the example imports, and that each named
extra brings at least one of them (no extra is named for nothing; ``model`` serves the
header's own ``toolmend-engine serve``).  ``./dev package-check`` proves the same end to
end (step 5 of ``pkgcheck/run.py``): a fresh environment per install line, from the
built wheels, offline, and every header command run as written, each printing its line
of ``tools/example_headers.KEY_LINES``; the tests here check that table covers every
command.  That costs minutes, too slow for every test run.

The examples that can use a model server run against ``toolmend-engine serve`` on
the embedded model, as a user starts it (``--model local`` unchanged), and the client
snippets of ``docs/how-to/engine-clients.md`` against ``serve`` and ``proxy``.
"""

from __future__ import annotations

import ast
import importlib.metadata
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tools.engine_process import Running, engine_process
from tools.example_headers import KEY_LINES, examples, header, readme_engine_install

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = examples()
CLIENTS = sorted(p for p in EXAMPLES if p.startswith("examples/engine_clients/"))


@cache
def _projects() -> dict[str, dict[str, list[str]]]:
    """Each local distribution: its dependencies ("") and each extra's, by name."""
    out = {}
    for path in (ROOT / "packages").glob("*/pyproject.toml"):
        project = tomllib.loads(path.read_text("utf-8"))["project"]
        extras = project.get("optional-dependencies", {})
        out[canonicalize_name(project["name"])] = {"": project["dependencies"], **extras}
    return out


def _brings(requirement: str) -> set[str]:
    """The distributions a requirement declares: itself, and a local one's dependencies."""
    parsed = Requirement(requirement)
    name = canonicalize_name(parsed.name)
    found = {name}
    local = _projects().get(name)
    if local is not None:
        for group in ("", *sorted(parsed.extras)):
            for dependency in local[group]:
                found |= _brings(dependency)
    return found


def header_requirements(example: str) -> list[str]:
    """The requirements of the ``pip install`` line of an example's docstring."""
    return list(header(example).install)


@cache
def _local_modules() -> dict[str, str]:
    """This repository's import names and their distributions (editable installs hide them)."""
    out = {}
    for path in (ROOT / "packages").glob("*/pyproject.toml"):
        name = tomllib.loads(path.read_text("utf-8"))["project"]["name"]
        for module in (path.parent / "src").iterdir():
            if module.is_dir() and not module.name.startswith((".", "_")):
                out[module.name] = canonicalize_name(name)
    return out


def _distributions_of(module: str) -> set[str]:
    """The installed distributions that provide ``module`` (a dotted name)."""
    top = module.split(".")[0]
    if top in _local_modules():
        return {_local_modules()[top]}
    names = importlib.metadata.packages_distributions().get(top, [])
    if len(names) > 1:  # a namespace package (opentelemetry): the one with the subpackage
        prefix = "/".join(module.split(".")[:2]) + "/"
        names = [
            n
            for n in names
            if any(str(f).startswith(prefix) for f in importlib.metadata.files(n) or ())
        ] or names
    return {canonicalize_name(n) for n in names}


def imported_distributions(example: str) -> set[str]:
    """The distributions an example imports (standard library left out)."""
    modules = set()
    for node in ast.walk(ast.parse((ROOT / example).read_text("utf-8"))):
        if isinstance(node, ast.Import):
            modules |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            # the name imported may be a submodule: it tells a namespace package's parts
            modules |= {f"{node.module}.{alias.name}" for alias in node.names}
    found = set()
    for module in modules:
        if module.split(".")[0] in sys.stdlib_module_names or module == "__future__":
            continue
        found |= _distributions_of(module)
    return found


@pytest.mark.parametrize("example", EXAMPLES)
def test_the_header_names_exactly_what_the_example_imports(example: str) -> None:
    named = header_requirements(example)
    imported = imported_distributions(example)
    brought = set().union(*(_brings(r) for r in named))
    assert imported - brought == set(), f"{example}: imported but not installed by {named}"
    for requirement in named:
        parsed = Requirement(requirement)
        local = _projects()[canonicalize_name(parsed.name)]
        for extra in parsed.extras:
            if extra == "model" and header(example).serves:
                continue  # the embedded model of the header's own `toolmend-engine serve`
            wanted = {canonicalize_name(Requirement(r).name) for r in local[extra]}
            assert wanted & imported, f"{example}: the extra [{extra}] brings nothing it imports"
    if not any(Requirement(r).extras for r in named):
        # without an extra, the package itself must be imported
        assert {canonicalize_name(Requirement(r).name) for r in named} & imported


def test_the_headers_are_as_documented() -> None:
    assert {e: header_requirements(e) for e in EXAMPLES} == {
        "examples/contracts_langchain.py": ["toolmend-langchain"],
        "examples/contracts_receipt.py": ["toolmend"],
        **{client: ["toolmend-engine[clients,model]"] for client in CLIENTS},
        "examples/langchain_agent.py": ["toolmend-langchain[examples]"],
        "examples/mcp_client.py": ["toolmend-mcp[examples]"],
        "examples/openai_agents_agent.py": ["toolmend-openai-agents[examples]"],
        "examples/otel_langchain.py": ["toolmend-langchain[examples]"],
    }


def test_every_header_command_has_its_key_line() -> None:
    """./dev package-check runs each command and looks for its line: none is left out."""
    commands = sorted(c for e in EXAMPLES for c in header(e).commands)
    assert commands == sorted(KEY_LINES)
    assert [e for e in EXAMPLES if not header(e).commands] == []


def test_the_headers_say_where_serve_comes_from() -> None:
    """A client snippet starts serve itself; the agents take the README's (--base-url)."""
    assert {e: (header(e).serves, header(e).needs_server) for e in EXAMPLES} == {
        **{e: (False, False) for e in EXAMPLES},
        **{client: (True, True) for client in CLIENTS},
        "examples/langchain_agent.py": (False, True),
        "examples/openai_agents_agent.py": (False, True),
    }
    assert readme_engine_install() == ("toolmend", "toolmend-engine[model]")


def test_a_missing_extra_is_found() -> None:
    """The check can fail: httpx is imported, and toolmend-langchain alone does not bring it."""
    imported = imported_distributions("examples/langchain_agent.py")
    assert {"httpx", "langchain-openai"} <= imported
    assert "httpx" not in _brings("toolmend-langchain")
    assert "httpx" in _brings("toolmend-langchain[examples]")


def test_every_example_is_run_by_a_test() -> None:
    tests = "\n".join(p.read_text("utf-8") for p in (ROOT / "tests").rglob("test_*.py"))
    others = [e for e in EXAMPLES if e not in CLIENTS]
    assert [e for e in others if Path(e).name not in tests] == []


# -- against the engine ------------------------------------------------------------------


def _run(path: str, *args: str, base_url: str | None = None) -> str:
    env = dict(os.environ)
    if base_url is not None:
        env["TOOLMEND_BASE_URL"] = base_url
    env.pop("OPENAI_API_KEY", None)
    done = subprocess.run(
        [sys.executable, str(ROOT / path), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def served() -> Iterator[Running]:
    pytest.importorskip("llama_cpp")
    with engine_process("serve") as running:
        yield running


@pytest.mark.engine
@pytest.mark.parametrize(
    ("example", "headings"),
    [
        (
            "examples/langchain_agent.py",
            ["== transcript (the graph state: no note in it) ==", "== toolmend reports =="],
        ),
        (
            "examples/openai_agents_agent.py",
            ["== history (result.to_input_list(): no note in it) ==", "== toolmend reports =="],
        ),
    ],
)
def test_the_agent_examples_run_against_serve_with_model_local(
    served: Running, example: str, headings: list[str]
) -> None:
    url = served.url
    out = _run(example, "--base-url", url + "/v1", "--model", "local", "--question", "Hi.")
    assert [line for line in out.splitlines() if line.startswith("== ")] == headings


HEADER = "X-Tool-Errors: failed=2:get_weather:transient:{rule}/paper; form=c3; changed=true"
CLIENT_HEADERS = {
    "examples/engine_clients/agents_sdk.py": [
        "Responses (the SDK's default model): " + HEADER.format(rule="generic"),
        "Chat Completions: " + HEADER.format(rule="generic"),
    ],
    "examples/engine_clients/anthropic_messages.py": [HEADER.format(rule="is_error")],
    "examples/engine_clients/langchain_openai_chat.py": [HEADER.format(rule="generic")],
    "examples/engine_clients/openai_chat.py": [HEADER.format(rule="generic")],
    "examples/engine_clients/openai_responses.py": [HEADER.format(rule="generic")],
}


def test_every_client_snippet_is_checked() -> None:
    assert sorted(CLIENT_HEADERS) == CLIENTS


@pytest.mark.engine
@pytest.mark.parametrize("through", ["serve", "proxy"])
@pytest.mark.parametrize("snippet", sorted(CLIENT_HEADERS))
def test_client_snippets_read_the_header_against_serve_and_proxy(
    served: Running, snippet: str, through: str
) -> None:
    url = served.url
    if through == "serve":
        out = _run(snippet, base_url=url + "/v1")
    else:
        with engine_process("proxy", "--upstream", url + "/v1") as proxy:
            out = _run(snippet, base_url=proxy.url + "/v1")
    lines = out.splitlines()
    assert [line for line in lines if "X-Tool-Errors" in line] == CLIENT_HEADERS[snippet]
    replies = [line for line in lines if line.startswith("reply: ")]
    assert len(replies) == len(CLIENT_HEADERS[snippet])
    assert all(len(line) > len("reply: ") for line in replies)
