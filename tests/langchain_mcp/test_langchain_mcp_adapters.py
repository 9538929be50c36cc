"""langchain-mcp-adapters tools from a real stdio MCP server, under ``ToolMendMiddleware``.

``load_mcp_tools`` turns each tool of the demo server (a subprocess, over stdio)
into a LangChain tool, and ``create_agent`` runs them with a scripted model.
Since 0.3, langchain-mcp-adapters turns an MCP ``isError`` result into
``_MCPToolExecutionError`` (a ``ToolException``).  By default
(``handle_tool_errors=True``) LangChain hands it back as an error ``ToolMessage``
holding the result's content blocks; with ``handle_tool_errors=False`` it is
raised out of the tool.  Either way the middleware must see a failure, so every
test runs both ways: ``returned`` and ``raised``.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "langchain_mcp_adapters",
    reason="langchain-mcp-adapters needs mcp<2: it is installed only in the mcp 1.x "
    "environment (the second run of ./dev test)",
)

from langchain.agents import create_agent
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from langchain_mcp_adapters.tools import load_mcp_tools
from lc_support import ai, call, shape
from mcp.client.stdio import StdioServerParameters
from mcp_sdk import open_connection, structured

import notes
from call_records import attempt, call_record
from toolmend import Kind
from toolmend.integrations import GUIDANCE, VERIFY_FIRST, SleepLog
from toolmend_langchain import ToolMendMiddleware, reports
from toolmend_langchain.testing import ScriptedChatModel, replies

SERVER = Path(__file__).resolve().parents[1] / "mcp_client" / "mcp_demo_server.py"
WAYS = pytest.mark.parametrize("handled", [True, False], ids=["returned", "raised"])
RAISED = "langchain_mcp_adapters._MCPToolExecutionError"
"""How the core names the adapter's exception (its class, under the package it comes from)."""


@asynccontextmanager
async def agent_on_server(
    script: Sequence[Any], *, handled: bool, effects: dict[str, str] | None = None
) -> AsyncIterator[tuple[Any, ScriptedChatModel, Any]]:
    """An agent over the demo server's tools; also the model and the MCP session."""
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
    async with open_connection(params) as session:
        tools = await load_mcp_tools(session, handle_tool_errors=handled)
        model = ScriptedChatModel(script=replies(script))
        middleware = ToolMendMiddleware(effects=effects)
        yield create_agent(model, tools, middleware=[middleware]), model, session


async def executions(session: Any) -> dict[str, int]:
    """How often each tool body ran in the server process, asked past the agent."""
    counted = structured(await session.call_tool("counts", {}))
    assert isinstance(counted, dict)
    return counted


def seen(messages: Sequence[BaseMessage]) -> list[tuple[Any, ...]]:
    """``shape`` of what the model was sent, without the content blocks' generated ids."""
    plain = []
    for message in messages:
        content = message.content
        if isinstance(content, list):
            content = [
                {k: v for k, v in block.items() if k != "id"} if isinstance(block, dict) else block
                for block in content
            ]
        plain.append(message.model_copy(update={"content": content}))
    return shape(plain)


def error_content(handled: bool, text: str, tool: str) -> Any:
    """What the model reads for an ``isError`` result with one text block."""
    if handled:
        return [{"type": "text", "text": text}]
    return f"Tool '{tool}' failed after 1 attempt with {RAISED}: {text}"


def note_text(content: Any) -> str:
    return content[0]["text"] if isinstance(content, list) else content


# -- a transient failure of a read-only tool ---------------------------------------------


@WAYS
async def test_a_rate_limited_read_is_retried_after_the_hint(
    handled: bool, sleeps: SleepLog
) -> None:
    script = [ai(call("search", {"query": "mcp"}, "c1")), "3 results."]
    async with agent_on_server(script, handled=handled, effects={"search": "read_only"}) as (
        agent,
        model,
        session,
    ):
        out = await agent.ainvoke({"messages": [HumanMessage("find mcp")]})
        assert await executions(session) == {"search": 2}
    assert sleeps.sleeps == [2.0]
    assert seen(model.seen[1]) == [
        ("human", "find mcp"),
        ("ai", "", (("search", '{"query": "mcp"}', "c1"),)),
        ("tool", "c1", "search", "success", [{"type": "text", "text": "3 results for mcp"}]),
    ]
    error = "Error executing tool search: rate limit exceeded, retry in 2s"
    first = attempt(
        1,
        f"toolmend.ResultFailed: {error}" if handled else f"{RAISED}: {error}",
        "transient",
        "returned failure: ate limit" if handled else "text 'ate limit'",
        retry_after=2.0,
        delay=2.0,
    )
    assert reports(out["messages"]) == [
        {
            "message_id": out["messages"][2].id,
            "tool_call_id": "c1",
            "type": "tool",
            **call_record(
                tool="search",
                effect="read_only",
                effect_source="declared",
                form="c3",
                failed=False,
                attempts=2,
                history=[first],
            ),
        }
    ]


# -- an unrecoverable failure, delivered in form C3 ----------------------------------------


@WAYS
async def test_a_refused_call_reaches_the_model_in_form_c3(handled: bool, sleeps: SleepLog) -> None:
    script = [ai(call("read_secret", {"name": "db"}, "c1")), "I cannot read it."]
    async with agent_on_server(script, handled=handled, effects={"read_secret": "read_only"}) as (
        agent,
        model,
        session,
    ):
        out = await agent.ainvoke({"messages": [HumanMessage("read the db secret")]})
        assert await executions(session) == {"read_secret": 1}
    assert sleeps.sleeps == []
    content = error_content(
        handled, "Error executing tool read_secret: Permission denied: db", "read_secret"
    )
    note = notes.called(
        "read_secret with name=db", note_text(content), GUIDANCE[Kind.UNRECOVERABLE]
    )
    assert seen(model.seen[1]) == [
        ("human", "read the db secret"),
        ("ai", "", (("read_secret", '{"name": "db"}', "c1"),)),
        ("tool", "c1", "read_secret", "error", content),
        ("human", note),
    ]
    assert seen(out["messages"]) == [*seen(model.seen[1])[:3], ("ai", "I cannot read it.", ())]
    [record, rewrite] = reports(out["messages"])
    assert (record["failed"], record["kind"], record["rule"], record["source"]) == (
        (True, "unrecoverable", "status", "flag")
        if handled
        else (True, "unrecoverable", "exception", "exception")
    )
    assert rewrite["rewrite"]["form"] == "c3"


# -- isError results are failures even when their text says nothing ----------------------------


@WAYS
async def test_an_is_error_result_with_no_telling_text_is_a_failure(handled: bool) -> None:
    script = [ai(call("crash", {"path": "a.txt"}, "c1")), "It failed."]
    async with agent_on_server(script, handled=handled) as (agent, model, session):
        out = await agent.ainvoke({"messages": [HumanMessage("crash it")]})
        assert await executions(session) == {"crash": 1}
    tool = out["messages"][2]
    assert isinstance(tool, ToolMessage)
    assert tool.status == "error"
    content = error_content(handled, "Error executing tool crash: 'a.txt'", "crash")
    assert seen([tool])[0][4] == content
    record = reports(out["messages"])[0]
    assert (record["failed"], record["kind"], record["rule"], record["source"]) == (
        (True, "ambiguous", "status", "flag")
        if handled
        else (True, "ambiguous", "exception", "exception")
    )
    # An undeclared tool may write: the core's verify-first step, returned or raised.
    assert (record["stop"], record["outcome_unknown"]) == ("kind", True)
    assert seen(model.seen[1])[-1] == (
        "human",
        notes.called("crash with path=a.txt", note_text(content), VERIFY_FIRST),
    )


# -- a write that failed transiently: not repeated, and the model checks first ---------------


@WAYS
async def test_a_write_that_met_a_503_is_not_repeated_and_gets_verify_first(
    handled: bool, sleeps: SleepLog
) -> None:
    script = [ai(call("transfer", {"amount": 5, "to": "bob"}, "c1")), "I will check."]
    async with agent_on_server(script, handled=handled, effects={"transfer": "write"}) as (
        agent,
        model,
        session,
    ):
        await agent.ainvoke({"messages": [HumanMessage("pay bob 5")]})
        assert await executions(session) == {"transfer": 1}
    assert sleeps.sleeps == []
    error = "Error executing tool transfer: 503 Service Unavailable: ledger busy, retry in 1s"
    content = error_content(handled, error, "transfer")
    assert seen(model.seen[1])[-1] == (
        "human",
        notes.called("transfer with amount=5, to=bob", note_text(content), VERIFY_FIRST),
    )
