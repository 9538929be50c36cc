"""langchain-mcp-adapters tools of the reference MCP servers (real subprocesses over
stdio) under ``ToolMendMiddleware`` in ``create_agent``: the servers' own error texts,
a retried read, an unrecoverable refusal delivered in C3, and an unknown tool."""

from __future__ import annotations

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
from langchain_core.messages import HumanMessage
from langchain_mcp_adapters.tools import load_mcp_tools
from lc_support import ai, call, shape
from mcp.client.stdio import StdioServerParameters
from mcp_sdk import open_connection

from reference_mcp import (
    FIXABLE,
    INVALID_SUM,
    MARS,
    NO_GET_TIME,
    UNRECOVERABLE,
    Site,
    fetch_server,
    note,
    npm_server,
    outside,
    python_server,
    time_server,
)
from toolmend_langchain import ToolMendMiddleware
from toolmend_langchain.testing import ScriptedChatModel, replies


@asynccontextmanager
async def agent_on(
    params: StdioServerParameters, script: Sequence[Any], effects: dict[str, str] | None = None
) -> AsyncIterator[tuple[Any, ScriptedChatModel]]:
    async with open_connection(params) as session:
        tools = await load_mcp_tools(session)
        model = ScriptedChatModel(script=replies(script))
        agent = create_agent(model, tools, middleware=[ToolMendMiddleware(effects=effects)])
        yield agent, model


def block(text: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": text}]


def plain(content: Any) -> Any:
    """Content blocks without their generated ids."""
    if isinstance(content, list):
        return [{k: v for k, v in b.items() if k != "id"} for b in content]
    return content


async def test_time_server_mistakes_get_fixable_notes() -> None:
    script = [
        ai(call("get_current_time", {"timezone": "Mars/Olympus"}, "c1")),
        ai(call("get_time", {"timezone": "UTC"}, "c2")),
        "It failed.",
    ]
    async with agent_on(time_server(), script) as (agent, model):
        await agent.ainvoke({"messages": [HumanMessage("time on Mars?")]})
    first = model.seen[1]
    assert [(m.type, plain(m.content)) for m in first[2:]] == [
        ("tool", block(MARS)),
        ("human", note("get_current_time with timezone=Mars/Olympus", MARS, FIXABLE)),
    ]
    second = model.seen[2]
    assert [(m.type, plain(m.content)) for m in second[-2:]] == [
        ("tool", NO_GET_TIME),
        ("human", note("get_time with timezone=UTC", NO_GET_TIME, FIXABLE)),
    ]


async def test_fetch_server_503_is_retried_for_a_read_only_tool() -> None:
    with Site() as site:
        url = f"{site.url}/flaky"
        script = [ai(call("fetch", {"url": url}, "c1")), "Fetched."]
        async with agent_on(fetch_server(), script, {"fetch": "read_only"}) as (agent, model):
            await agent.ainvoke({"messages": [HumanMessage("fetch it")]})
        hits = dict(site.hits)
    assert hits == {"/flaky": 2}
    [(kind, _, name, status, content)] = shape(model.seen[1][2:])
    assert (kind, name, status) == ("tool", "fetch", "success")
    assert plain(content)[0]["text"].startswith(f"Contents of {url}:\n")


async def test_filesystem_refusal_is_delivered_in_c3(tmp_path: Path) -> None:
    allowed = tmp_path / "files"
    allowed.mkdir()
    script = [ai(call("read_text_file", {"path": "/etc/passwd"}, "c1")), "I may not."]
    async with agent_on(npm_server("server-filesystem", str(allowed)), script) as (agent, model):
        await agent.ainvoke({"messages": [HumanMessage("read /etc/passwd")]})
    refused = outside("/etc/passwd", allowed)
    assert [(m.type, plain(m.content)) for m in model.seen[1][2:]] == [
        ("tool", block(refused)),
        ("human", note("read_text_file with path=/etc/passwd", refused, UNRECOVERABLE)),
    ]


async def test_git_and_everything_servers_errors_in_their_own_words(tmp_path: Path) -> None:
    missing = tmp_path / "not-a-repo"
    missing.mkdir()
    script = [ai(call("git_status", {"repo_path": str(missing)}, "c1")), "No repository."]
    git = python_server("mcp-server-git")
    async with agent_on(git, script, {"git_status": "read_only"}) as (agent, model):
        await agent.ainvoke({"messages": [HumanMessage("status?")]})
    # Only a path: ambiguous, so no note (wrong guidance costs more than none).
    assert [(m.type, plain(m.content)) for m in model.seen[1][2:]] == [
        ("tool", block(f"Error executing tool git_status: {missing}")),
    ]
    script = [ai(call("get-sum", {"a": "one", "b": 2}, "c1")), "Fixed."]
    async with agent_on(npm_server("server-everything"), script) as (agent, model):
        await agent.ainvoke({"messages": [HumanMessage("add")]})
    assert [(m.type, plain(m.content)) for m in model.seen[1][2:]] == [
        ("tool", block(INVALID_SUM)),
        ("human", note("get-sum with a=one, b=2", INVALID_SUM, FIXABLE)),
    ]
