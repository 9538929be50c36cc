"""``RecoveringToolset`` around Pydantic AI's ``MCPToolset`` over a real stdio MCP server.

Pydantic AI 2.x removed ``MCPServerStdio``; its ``MCPToolset`` takes a stdio transport
instead.  The server (``tests/openai_agents/oa_mcp_server.py``) appends a line per
execution to a file in ``tmp_path``, so every test counts what ran on the server.
Stock, the MCP toolset turns every error result into a ``ModelRetry``, and the run
ends once the tool's retries are spent; wrapped, transient failures of read-only
tools are retried inside the call and the rest are classified.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from fastmcp.client.transports import StdioTransport
from pa_support import Script
from pydantic_ai import Agent
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.mcp import MCPToolset

from toolmend import Kind
from toolmend.integrations import GUIDANCE, VERIFY_FIRST, SleepLog
from toolmend_pydantic_ai import RecoveringToolset

SERVER = str(Path(__file__).parents[1] / "openai_agents" / "oa_mcp_server.py")
UNAVAILABLE = "Error executing tool {tool}: 503 Service Unavailable"


def server(counts: Path) -> MCPToolset[None]:
    return MCPToolset(StdioTransport(command=sys.executable, args=[SERVER, str(counts)]))


def runs(counts: Path, tool: str) -> list[dict[str, Any]]:
    """The arguments of every execution of ``tool`` on the server, in order."""
    log = counts / tool
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def note(tool: str, arguments: str, error: str, guidance: str) -> str:
    return (
        f"Note from the tool runtime: the last attempt called {tool} with `{arguments}` and it "
        f"failed with: `{error}`\n\n{guidance}"
    )


def test_stock_mcp_toolset_ends_the_run_on_a_flaky_read(tmp_path: Path) -> None:
    script = Script([[("stock", {"sku": "A1"})], [("stock", {"sku": "A1"})]])
    agent = Agent(script.model, toolsets=[server(tmp_path)])
    with pytest.raises(UnexpectedModelBehavior, match="exceeded max retries count of 1"):
        agent.run_sync("Stock of A1?")
    assert len(runs(tmp_path, "stock")) == 2  # each try was the model's, each cost a retry


def test_a_flaky_read_only_mcp_tool_is_retried_inside_the_call(
    tmp_path: Path, sleeps: SleepLog
) -> None:
    script = Script([[("stock", {"sku": "A1"})]])
    toolset = RecoveringToolset(server(tmp_path), effects={"stock": "read_only"})
    result = Agent(script.model, toolsets=[toolset]).run_sync("Stock of A1?")
    assert result.output == "done"
    assert runs(tmp_path, "stock") == [{"sku": "A1"}] * 3
    assert len(sleeps.sleeps) == 2
    assert script.results(1) == [("stock", "A1: 12 in stock", "success")]


def test_a_failing_mcp_write_is_not_repeated_and_is_told_to_check(
    tmp_path: Path, sleeps: SleepLog
) -> None:
    script = Script([[("set_price", {"sku": "A1", "price": 5})]])
    toolset = RecoveringToolset(server(tmp_path))
    Agent(script.model, toolsets=[toolset]).run_sync("Set A1 to 5")
    assert runs(tmp_path, "set_price") == [{"sku": "A1", "price": 5}]
    assert sleeps.sleeps == []
    error = UNAVAILABLE.format(tool="set_price")
    expected = note("set_price", "sku=A1, price=5", error, VERIFY_FIRST)
    assert script.results(1) == [("set_price", expected, "failed")]


def test_a_permission_error_result_is_terminal(tmp_path: Path) -> None:
    script = Script([[("read_secret", {"path": "/etc/shadow"})]])
    toolset = RecoveringToolset(server(tmp_path), effects={"read_secret": "read_only"})
    Agent(script.model, toolsets=[toolset]).run_sync("Read it")
    assert len(runs(tmp_path, "read_secret")) == 1
    error = "Error executing tool read_secret: Permission denied: /etc/shadow"
    unrecoverable = GUIDANCE[Kind.UNRECOVERABLE]
    expected = note("read_secret", "path=/etc/shadow", error, unrecoverable)
    assert script.results(1) == [("read_secret", expected, "failed")]


@pytest.mark.parametrize("trusted", [False, True])
def test_annotations_count_only_when_trusted(
    tmp_path: Path, sleeps: SleepLog, trusted: bool
) -> None:
    script = Script([[("shelf", {"sku": "A1"})]])
    toolset = RecoveringToolset(server(tmp_path), trust_annotations=trusted)
    Agent(script.model, toolsets=[toolset]).run_sync("Which shelf?")
    if trusted:  # readOnlyHint: retried like a declared read
        assert len(runs(tmp_path, "shelf")) == 3
        assert script.results(1) == [("shelf", "A1: shelf 4", "success")]
    else:  # a hint nobody vouched for: a write, not repeated
        assert len(runs(tmp_path, "shelf")) == 1
        [(_, content, outcome)] = script.results(1)
        assert (outcome, content.endswith(VERIFY_FIRST)) == ("failed", True)


def test_mcp_arguments_that_fail_the_schema_never_reach_the_server(tmp_path: Path) -> None:
    script = Script([[("stock", {"sku": 7})]])
    toolset = RecoveringToolset(server(tmp_path), effects={"stock": "read_only"})
    Agent(script.model, toolsets=[toolset]).run_sync("Stock of 7?")
    error = "Tool 'stock' was not run: invalid arguments. sku: 7 is not of type 'string'"
    fixable = GUIDANCE[Kind.FIXABLE]
    assert script.results(1) == [("stock", note("stock", "sku=7", error, fixable), "retried")]
    assert runs(tmp_path, "stock") == []
