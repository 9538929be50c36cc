"""The package README's ``RecoveringServer`` example runs as written, against a real server."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from toolmend.retry import SleepLog

README = Path(__file__).resolve().parents[2] / "packages" / "openai_agents" / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_the_mcp_example_retries_and_prints_what_it_says(
    capfd: pytest.CaptureFixture[str], sleeps: SleepLog
) -> None:
    # capfd, not capsys: the stdio server subprocess needs a real stderr descriptor.
    (block,) = [b for b in BLOCKS if "RecoveringServer(" in b]
    code = compile(block, "packages/openai_agents/README.md (the MCP example)", "exec")
    exec(code, {"__name__": "readme"})
    assert capfd.readouterr().out == "A1: 12 in stock\n3\n"
    assert len(sleeps.sleeps) == 2
