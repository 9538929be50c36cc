"""Every ```python block of every README (the repository's and each package's) and of
every page of the documentation site (docs/) runs as written.

All of them run offline: scripted models, in-memory MCP servers.  The blocks that
start an MCP server over stdio are run by tests/openai_agents/test_oa_readme.py, which
checks their exact output; they are left out here so that no block runs twice.  A block
that only includes a file (``--8<-- "examples/x.py"``, pymdownx.snippets) is that
file's, which its own test runs.
"""

from __future__ import annotations

import logging
import re
import sys
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
    "packages/adk/README.md",
    "packages/pydantic_ai/README.md",
]
# The documentation site's pages; their code is held to the same standard.
DOCS = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md"))
# (README or page, a text its block holds): blocks that another test runs.
RUN_ELSEWHERE = [
    ("README.md", "record_outcomes("),  # tests/core/test_learning.py, in a scratch folder
    ("packages/openai_agents/README.md", "RecoveringServer("),
    ("docs/getting-started/openai-agents.md", "RecoveringServer("),
]


def included(block: str) -> bool:
    """Whether a block only includes files (pymdownx.snippets), holding no code of its own."""
    lines = [line.strip() for line in block.splitlines() if line.strip()]
    return bool(lines) and all(line.startswith("--8<--") for line in lines)


def python_blocks(readme: str) -> list[str]:
    text = (ROOT / readme).read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    return [block for block in blocks if not included(block)]


def run_elsewhere(readme: str, block: str) -> bool:
    return any(readme == where and marker in block for where, marker in RUN_ELSEWHERE)


BLOCKS = [
    (readme, index, block)
    for readme in READMES + DOCS
    for index, block in enumerate(python_blocks(readme))
    if not run_elsewhere(readme, block)
]


def test_every_package_has_a_readme_and_the_list_is_complete() -> None:
    folders = sorted(p.parent.name for p in (ROOT / "packages").glob("*/pyproject.toml"))
    assert [f"packages/{name}/README.md" for name in folders] == sorted(READMES[1:])


def test_each_block_run_elsewhere_is_exactly_one_block() -> None:
    for readme, marker in RUN_ELSEWHERE:
        assert len([b for b in python_blocks(readme) if marker in b]) == 1


def test_the_docs_hold_code_that_runs() -> None:
    assert len([page for page in DOCS if python_blocks(page)]) >= 5


def test_the_readme_has_one_quickstart_per_framework() -> None:
    blocks = python_blocks("README.md")
    assert len(blocks) == 6
    assert [b for b in blocks if run_elsewhere("README.md", b)] == blocks[5:]  # the teaching one


@pytest.mark.parametrize(
    ("readme", "index", "block"), BLOCKS, ids=[f"{r}:{i}" for r, i, _ in BLOCKS]
)
def test_readme_block_runs(
    readme: str, index: int, block: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = compile(block, f"{readme} block {index}", "exec")
    captured = (sys.stdout, sys.stderr)
    try:
        exec(code, {"__name__": f"readme_block_{index}"})
    finally:
        release_captured_streams(captured)
    assert capsys.readouterr().out


def release_captured_streams(captured: tuple[object, ...]) -> None:
    """Point logging handlers a block bound to ``capsys``'s streams back at the real stderr.

    A library that sets up its console handler once per process (DBOS does) binds it to
    the stream of the block that ran first; that stream closes with its test, and the
    next block to log through the handler (the same quickstart on a README and on a
    docs page) would fail on a closed file.
    """
    loggers = [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]
    for logger in loggers:
        for handler in getattr(logger, "handlers", []):
            if isinstance(handler, logging.StreamHandler) and handler.stream in captured:
                handler.setStream(sys.__stderr__)


def test_the_readme_fits_in_two_screens() -> None:
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 150
