"""Streaming modes, threads, cancellation and process exits around the middleware."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from lc_support import ai, call, notes, tool_messages

from toolmend_langchain import ToolMendMiddleware
from toolmend_langchain.testing import ScriptedChatModel, replies


@tool
def locked(door: str) -> str:
    """Open a door."""
    raise PermissionError(f"{door} is locked")


def locked_agent() -> tuple[Any, ScriptedChatModel]:
    model = ScriptedChatModel(script=replies([ai(call("locked", {"door": "front"}, "l1")), "ok"]))
    return create_agent(model, [locked], middleware=[ToolMendMiddleware()]), model


def test_stream_messages_mode_yields_the_error_result() -> None:
    agent, model = locked_agent()
    parts = list(agent.stream({"messages": [HumanMessage("in")]}, stream_mode="messages"))

    streamed = [message for message, _ in parts]
    (result,) = [m for m in streamed if isinstance(m, ToolMessage)]
    assert result.status == "error"
    assert result.response_metadata["toolmend"]["kind"] == "unrecoverable"
    assert [m.content for m in streamed if m.type == "ai" and m.content] == ["ok"]
    assert notes(streamed) == []
    assert len(notes(model.seen[1])) == 1


async def test_astream_updates_mode_shows_no_note() -> None:
    agent, model = locked_agent()
    updates = [u async for u in agent.astream({"messages": [HumanMessage("in")]})]

    written = [m for update in updates for node in update.values() for m in node["messages"]]
    assert [type(m).__name__ for m in written] == ["AIMessage", "ToolMessage", "AIMessage"]
    assert notes(written) == []
    assert len(notes(model.seen[1])) == 1


def test_threads_share_one_agent_without_sharing_runs() -> None:
    @tool
    def lookup(key: str, config: RunnableConfig) -> str:
        """Look a key up."""
        if config["configurable"]["thread_id"].startswith("bad"):
            raise PermissionError("no access")
        return "value"

    def script(messages: list[BaseMessage]) -> Any:
        turns = sum(1 for m in messages if m.type == "ai")
        return ai(call("lookup", {"key": "k"}, f"k{turns}")) if turns < 2 else "end"

    agent = create_agent(
        ScriptedChatModel(script=script), [lookup], middleware=[ToolMendMiddleware()]
    )

    def one(thread: str) -> list[str]:
        config: RunnableConfig = {"configurable": {"thread_id": thread}}
        out = agent.invoke({"messages": [HumanMessage(thread)]}, config)
        return [
            str(m.response_metadata.get("toolmend", {}).get("rule"))
            for m in tool_messages(out["messages"])
        ]

    threads = [f"{kind}-{i}" for i in range(4) for kind in ("bad", "good")]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = dict(zip(threads, pool.map(one, threads), strict=True))

    for thread, rules in results.items():
        expected = ["exception", "loop-repeat"] if thread.startswith("bad") else ["None", "None"]
        assert rules == expected, thread


async def test_cancellation_passes_through() -> None:
    started = asyncio.Event()

    @tool
    async def slow(n: int) -> str:
        """Takes forever."""
        started.set()
        await asyncio.Event().wait()
        return "never"

    model = ScriptedChatModel(script=replies([ai(call("slow", {"n": 1}, "s1")), "x"]))
    agent = create_agent(
        model, [slow], middleware=[ToolMendMiddleware(effects={"slow": "read_only"})]
    )
    task = asyncio.create_task(agent.ainvoke({"messages": [HumanMessage("go")]}))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(model.seen) == 1


def test_system_exit_passes_through() -> None:
    exits: list[int] = []

    @tool
    def shutdown(code: int) -> str:
        """Stop the process."""
        exits.append(code)
        raise SystemExit(code)

    model = ScriptedChatModel(script=replies([ai(call("shutdown", {"code": 3}, "x1")), "x"]))
    middleware = ToolMendMiddleware(effects={"shutdown": "idempotent"})
    agent = create_agent(model, [shutdown], middleware=[middleware])
    with pytest.raises(SystemExit):
        agent.invoke({"messages": [HumanMessage("stop")]})
    assert exits == [3]
