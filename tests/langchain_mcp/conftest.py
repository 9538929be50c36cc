"""langchain-mcp-adapters under toolmend: virtual time, fresh budgets, shared helpers.

These tests need ``langchain-mcp-adapters``, which requires the MCP SDK 1.x; they
run in the second environment of ``./dev test`` and skip in the main one.  The
LangChain helpers and the demo MCP server come from the neighbouring folders.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import toolmend
from toolmend.integrations import SleepLog, reset_budgets

TESTS = Path(__file__).resolve().parents[1]
for folder in ("langchain", "mcp_client"):
    if str(TESTS / folder) not in sys.path:
        sys.path.insert(0, str(TESTS / folder))


@pytest.fixture(autouse=True)
def sleeps() -> Iterator[SleepLog]:
    """Retry waits are recorded, not slept; budgets start full for each test."""
    reset_budgets()
    with toolmend.testing(seed=7) as log:
        yield log
    reset_budgets()
