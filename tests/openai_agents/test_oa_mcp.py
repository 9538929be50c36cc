"""MCP tools through the SDK's own ``MCPServerStdio``, against a real server subprocess."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agents import Agent, Runner
from agents.mcp import MCPServerStdio, MCPToolCustomDataContext
from agents.testing import ScriptedModel, assistant_message, function_call
from oa_support import (
    FIXABLE,
    UNRECOVERABLE,
    call_item,
    config,
    note,
    output_item,
    runtime_note,
    user,
)

import toolmend_openai_agents as tm

SERVER = str(Path(__file__).with_name("oa_mcp_server.py"))


def _server(**options: Any) -> MCPServerStdio:
    return MCPServerStdio(
        {"command": sys.executable, "args": [SERVER]}, client_session_timeout_seconds=30, **options
    )


async def test_mcp_error_results_and_raised_errors_get_the_note_like_function_tools() -> None:
    seen: list[tuple[str, bool | None]] = []

    def mine(context: MCPToolCustomDataContext) -> Mapping[str, Any] | None:
        seen.append((context.tool_name, context.is_error))
        return None

    model = ScriptedModel(
        [
            [
                function_call("read_secret", {"path": "/etc/shadow"}, call_id="c1"),
                function_call("lookup", {"key": "KEY"}, call_id="c2"),
                function_call("echo", {"text": "all good"}, call_id="c3"),
            ],
            [assistant_message("done")],
        ]
    )
    async with _server(**tm.mcp_server_options(then=mine)) as server:
        agent = Agent(name="mcp", model=model, mcp_servers=[server])
        with tm.capture() as captured:
            result = await Runner.run(agent, "go", run_config=config())

    refused = "Error executing tool read_secret: Permission denied: /etc/shadow"
    raised = "Tool 'lookup' failed after 1 attempt with mcp.MCPError: key must be lowercase: KEY"
    sent = [
        user("go"),
        call_item("read_secret", {"path": "/etc/shadow"}, "c1"),
        call_item("lookup", {"key": "KEY"}, "c2"),
        call_item("echo", {"text": "all good"}, "c3"),
        output_item("c1", [{"type": "input_text", "text": refused}]),
        output_item("c2", raised),
        output_item("c3", [{"type": "input_text", "text": "all good"}]),
    ]
    notes = "\n\n".join(
        [
            runtime_note("read_secret", "path=/etc/shadow", refused, UNRECOVERABLE),
            runtime_note("lookup", "key=KEY", raised, FIXABLE),
        ]
    )
    assert model.calls[1].input == [*sent, note(notes)]
    assert result.to_input_list()[:-1] == sent
    assert sorted(seen) == [("echo", False), ("read_secret", True)]
    # -32602 (invalid params) is fixable by its JSON-RPC code, which the text does not show.
    assert [(f.call_id, f.kind, f.rule) for f in captured.failures] == [
        ("c1", "unrecoverable", "is_error"),
        ("c2", "fixable", "exception"),
    ]


async def test_without_our_options_the_sdk_default_hides_the_mcp_error() -> None:
    model = ScriptedModel(
        [[function_call("lookup", {"key": "KEY"}, call_id="c2")], [assistant_message("done")]]
    )
    async with _server() as server:
        agent = Agent(name="mcp", model=model, mcp_servers=[server])
        await Runner.run(agent, "go", run_config=config())

    # run_config() cannot reach MCP tools: the SDK passes its default failure
    # function to them explicitly, so the server options are needed.
    assert (
        model.calls[1].input[2]["output"]
        == "An error occurred while running the tool. Please try again."
    )
