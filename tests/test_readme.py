"""Every ```python block of every README (the repository's and each package's) runs as written.

All of them run offline: scripted models, in-memory MCP servers.  The one block that
starts an MCP server over stdio is run by tests/openai_agents/test_oa_readme.py, which
checks its exact output; it is left out here so that no block runs twice.
"""

from __future__ import annotations

import re
from pathlib import Path

import mcp.client.stdio  # noqa: F401  (see below)
import pytest

# The MCP SDK's stdio client binds ``sys.stderr`` as a default argument when it is first
# imported.  Imported here, at collection, it binds a stream with a real descriptor, not the
# ``capsys`` stand-in of a README block that happens to import it first (through the Agents
# SDK); otherwise a later stdio server, like the one of test_oa_readme.py, cannot start.

ROOT = Path(__file__).resolve().parents[1]
READMES = [
    "README.md",
    "packages/core/README.md",
    "packages/langchain/README.md",
    "packages/openai_agents/README.md",
    "packages/mcp_client/README.md",
    "packages/engine/README.md",
    "packages/dbos/README.md",
]
# (README, a text its block holds): blocks that another test runs.
RUN_ELSEWHERE = [("packages/openai_agents/README.md", "RecoveringServer(")]


def python_blocks(readme: str) -> list[str]:
    text = (ROOT / readme).read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, re.S)


def run_elsewhere(readme: str, block: str) -> bool:
    return any(readme == where and marker in block for where, marker in RUN_ELSEWHERE)


BLOCKS = [
    (readme, index, block)
    for readme in READMES
    for index, block in enumerate(python_blocks(readme))
    if not run_elsewhere(readme, block)
]


def test_every_package_has_a_readme_and_the_list_is_complete() -> None:
    folders = sorted(p.parent.name for p in (ROOT / "packages").glob("*/pyproject.toml"))
    assert [f"packages/{name}/README.md" for name in folders] == sorted(READMES[1:])


def test_each_block_run_elsewhere_is_exactly_one_block() -> None:
    for readme, marker in RUN_ELSEWHERE:
        assert len([b for b in python_blocks(readme) if marker in b]) == 1


def test_the_readme_has_the_three_quickstarts() -> None:
    assert len(python_blocks("README.md")) == 3


@pytest.mark.parametrize(
    ("readme", "index", "block"), BLOCKS, ids=[f"{r}:{i}" for r, i, _ in BLOCKS]
)
def test_readme_block_runs(
    readme: str, index: int, block: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = compile(block, f"{readme} block {index}", "exec")
    exec(code, {"__name__": f"readme_block_{index}"})
    assert capsys.readouterr().out
