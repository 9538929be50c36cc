"""The ``RecoveringServer`` example runs as written, against a real server.

It stands in the package README and on the documentation site's getting-started page.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from toolmend.integrations import SleepLog

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["packages/openai_agents/README.md", "docs/getting-started/openai-agents.md"]


@pytest.mark.parametrize("page", PAGES)
def test_the_mcp_example_retries_and_prints_what_it_says(
    page: str, capfd: pytest.CaptureFixture[str], sleeps: SleepLog
) -> None:
    # capfd, not capsys: the stdio server subprocess needs a real stderr descriptor.
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / page).read_text(encoding="utf-8"), re.S)
    (block,) = [b for b in blocks if "RecoveringServer(" in b]
    code = compile(block, f"{page} (the MCP example)", "exec")
    exec(code, {"__name__": "readme"})
    assert capfd.readouterr().out == "A1: 12 in stock\n3\n"
    assert len(sleeps.sleeps) == 2
