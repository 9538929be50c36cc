"""What each example's header says: what to install, and the commands that run it.

The docstring of every file under ``examples/`` holds one ``pip install ...`` line
and the commands a user types, e.g.::

    pip install 'toolmend-langchain[examples]'
    python examples/langchain_agent.py
    python examples/langchain_agent.py --base-url http://127.0.0.1:8080/v1 --model local

``./dev package-check`` (``pkgcheck/run.py``) installs exactly that line into a fresh
environment and runs exactly those commands; ``tests/test_examples.py`` checks the
same headers against the examples' imports.  Both read them here, so neither can
drift from the other.  ``KEY_LINES`` is what each command must print.
"""

from __future__ import annotations

import ast
import re
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Where the headers and the README send a client: ``toolmend-engine serve``'s default.
SERVE_URL = "http://127.0.0.1:8080/v1"
_INSTALL = re.compile(r"^\s*pip install (.+?)\s*$", re.M)
_COMMAND = re.compile(r"^\s*((?:python|toolmend-engine) .+?)\s*(?:#.*)?$", re.M)

# The line (a prefix of one line) each header command must print, exit status 0.
KEY_LINES = {
    "python examples/contracts_langchain.py": (
        "The model's next request ends with this tool result:"
    ),
    "python examples/contracts_receipt.py": (
        "--- silent failure: what the model reads instead of the raw result ---"
    ),
    "python examples/engine_clients/agents_sdk.py": (
        "Chat Completions: X-Tool-Errors: failed=2:get_weather:transient:generic/paper; "
        "form=c3; changed=true"
    ),
    "python examples/engine_clients/anthropic_messages.py": (
        "X-Tool-Errors: failed=2:get_weather:transient:is_error/paper; form=c3; changed=true"
    ),
    "python examples/engine_clients/langchain_openai_chat.py": (
        "X-Tool-Errors: failed=2:get_weather:transient:generic/paper; form=c3; changed=true"
    ),
    "python examples/engine_clients/openai_chat.py": (
        "X-Tool-Errors: failed=2:get_weather:transient:generic/paper; form=c3; changed=true"
    ),
    "python examples/engine_clients/openai_responses.py": (
        "X-Tool-Errors: failed=2:get_weather:transient:generic/paper; form=c3; changed=true"
    ),
    "python examples/langchain_agent.py": (
        "book_table: failed kind=unrecoverable attempts=1 stop=kind"
    ),
    f"python examples/langchain_agent.py --base-url {SERVE_URL} --model local": (
        "== toolmend reports =="
    ),
    "python examples/mcp_client.py": (
        "   is_error=True kind=transient attempts=1 effect=write stop=unsafe"
    ),
    "python examples/openai_agents_agent.py": (
        "book_table [call_booking]: failed kind=unrecoverable attempts=1 stop=kind"
    ),
    f"python examples/openai_agents_agent.py --base-url {SERVE_URL} --model local": (
        "== toolmend reports =="
    ),
    "python examples/otel_langchain.py": '{"name": "execute_tool get_weather"',
}


@dataclass(frozen=True)
class Header:
    """One example's header.

    Attributes:
        example: Its path from the repository root, e.g. ``examples/mcp_client.py``.
        install: The requirements of its one ``pip install`` line, quotes removed.
        commands: Its ``python ...`` lines, comments removed, in order.
        serves: Whether it starts ``toolmend-engine serve`` in its own environment
            (a ``toolmend-engine serve`` line), so that line must install the model.
    """

    example: str
    install: tuple[str, ...]
    commands: tuple[str, ...]
    serves: bool

    @property
    def needs_server(self) -> bool:
        """Whether a command talks to ``serve``: its own, or the README's (``--base-url``)."""
        return self.serves or any(SERVE_URL in command for command in self.commands)


def examples() -> list[str]:
    """Every example: each ``*.py`` under ``examples/``, as a path from the root."""
    return sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "examples").rglob("*.py"))


def header(example: str) -> Header:
    """The header of ``example`` (a path from the repository root).

    Args:
        example: e.g. ``examples/langchain_agent.py``.

    Raises:
        ValueError: the docstring has no ``pip install`` line, or more than one.
    """
    doc = ast.get_docstring(ast.parse((ROOT / example).read_text("utf-8"))) or ""
    installs = _INSTALL.findall(doc)
    if len(installs) != 1:
        raise ValueError(f"{example}: one 'pip install ...' line in its docstring, not {installs}")
    found = _COMMAND.findall(doc)
    return Header(
        example=example,
        install=tuple(shlex.split(installs[0])),
        commands=tuple(c for c in found if c.startswith("python ")),
        serves=any(shlex.split(c)[:2] == ["toolmend-engine", "serve"] for c in found),
    )


def readme_engine_install() -> tuple[str, ...]:
    """The README's Install line for the engine, as requirements by name.

    ``pip install ./packages/core './packages/engine[model]'`` becomes ``toolmend`` and
    ``toolmend-engine[model]``: the same projects, installed from the wheels built from
    those folders.

    Raises:
        ValueError: the README's Install section has no such line.
    """
    text = (ROOT / "README.md").read_text("utf-8")
    install = text.split("## Install", 1)[-1].split("\n## ", 1)[0]
    for line in _INSTALL.findall(install):
        words = shlex.split(line.split("#", 1)[0])
        if any(w.startswith("./packages/engine") for w in words):
            return tuple(_by_name(w) for w in words)
    raise ValueError("README.md: no 'pip install ... ./packages/engine...' line under Install")


def _by_name(path: str) -> str:
    """``./packages/engine[model]`` as ``toolmend-engine[model]``."""
    folder, _, extras = path.partition("[")
    pyproject = ROOT / folder / "pyproject.toml"
    name = str(tomllib.loads(pyproject.read_text("utf-8"))["project"]["name"])
    return f"{name}[{extras}" if extras else name
