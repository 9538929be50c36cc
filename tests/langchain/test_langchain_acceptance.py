"""Acceptance 1-6 of the LangChain adapter: create_agent, a scripted model, no network.

Each scenario runs four ways (invoke, stream, ainvoke, astream) and must give
the same outcome every way.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from lc_support import (
    ai,
    call,
    http_error,
    notes,
    shape,
    thread_copies_timeouts,
    tool_messages,
    where,
)

from call_records import attempt, call_record
from toolmend import Kind
from toolmend.integrations import GUIDANCE, REPEATED, VERIFY_FIRST, runtime_note
from toolmend_langchain import ToolMendMiddleware, reports
from toolmend_langchain.testing import ScriptedChatModel, replies

MODES = ["invoke", "stream", "ainvoke", "astream"]
ASYNC = {"invoke": False, "stream": False, "ainvoke": True, "astream": True}


async def run(agent: Any, text: str, mode: str, config: RunnableConfig | None = None) -> Any:
    state = {"messages": [HumanMessage(text)]}
    if mode == "invoke":
        return agent.invoke(state, config)
    if mode == "ainvoke":
        return await agent.ainvoke(state, config)
    if mode == "stream":
        return list(agent.stream(state, config, stream_mode="values"))[-1]
    chunks = [chunk async for chunk in agent.astream(state, config, stream_mode="values")]
    return chunks[-1]


# -- 1. read-only, 503 twice then success -------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_read_only_503_is_retried_inside_the_step(mode: str, sleeps: Any) -> None:
    attempts: list[str] = []

    @tool
    def fetch(url: str) -> str:
        """Fetch a page."""
        attempts.append(url)
        if len(attempts) <= 2:
            raise http_error(503)
        return "page body"

    model = ScriptedChatModel(
        script=replies([ai(call("fetch", {"url": "http://127.0.0.1/a"}, "c1")), "done"])
    )
    agent = create_agent(
        model, [fetch], middleware=[ToolMendMiddleware(effects={"fetch": "read_only"})]
    )
    out = await run(agent, "get the page", mode)

    assert attempts == ["http://127.0.0.1/a"] * 3
    assert len(sleeps.sleeps) == 2
    assert shape(model.seen[1]) == [
        ("human", "get the page"),
        ("ai", "", (("fetch", '{"url": "http://127.0.0.1/a"}', "c1"),)),
        ("tool", "c1", "fetch", "success", "page body"),
    ]
    assert shape(out["messages"])[-2:] == [
        ("tool", "c1", "fetch", "success", "page body"),
        ("ai", "done", ()),
    ]
    error = "httpx.HTTPStatusError: Server error '503 Service Unavailable' for url"
    failed = [
        attempt(n, f"{error} 'http://127.0.0.1/data'", "transient", "HTTP 503", delay=delay)
        for n, delay in enumerate(sleeps.sleeps, 1)
    ]
    assert reports(out["messages"]) == [
        {
            "message_id": out["messages"][2].id,
            "tool_call_id": "c1",
            "type": "tool",
            **call_record(
                tool="fetch",
                effect="read_only",
                effect_source="declared",
                form="c3",
                failed=False,
                attempts=3,
                history=failed,
            ),
        }
    ]


# -- 2. a write that commits, then times out ------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_write_that_landed_is_not_repeated_and_gets_verify_first(
    mode: str, sleeps: Any
) -> None:
    ledger: list[int] = []

    @tool
    def send_payment(amount: int) -> str:
        """Send a payment."""
        ledger.append(amount)
        raise TimeoutError("timed out waiting for the bank")

    model = ScriptedChatModel(
        script=replies([ai(call("send_payment", {"amount": 5}, "p1")), "I will check."])
    )
    middleware = ToolMendMiddleware(effects={"send_payment": "write"})
    agent = create_agent(model, [send_payment], middleware=[middleware])
    out = await run(agent, "pay 5", mode)

    assert ledger == [5]
    assert sleeps.sleeps == []
    (result,) = tool_messages(out["messages"])
    assert result.status == "error"
    first, *frames = result.content.split("\n")
    assert first == (
        "Tool 'send_payment' failed after 1 attempt with TimeoutError: "
        "timed out waiting for the bank"
    )
    assert send_payment.func is not None
    if ASYNC[mode] and thread_copies_timeouts():
        assert frames == []
    else:
        assert frames == where((send_payment.func, "raise TimeoutError"))
    record = result.response_metadata["toolmend"]
    assert (record["kind"], record["outcome_unknown"], record["attempts"], record["stop"]) == (
        "transient",
        True,
        1,
        "unsafe",
    )
    seen = model.seen[1]
    assert shape(seen[:-1]) == shape(out["messages"][:3])
    assert shape(seen[-1:]) == [
        ("human", runtime_note("send_payment", {"amount": 5}, result.content, VERIFY_FIRST))
    ]
    assert GUIDANCE[Kind.TRANSIENT] not in seen[-1].content
    assert notes(out["messages"]) == []


# -- 3. PermissionError: no retry, C3 note, nothing in state or checkpointer ----


@pytest.mark.parametrize("mode", MODES)
async def test_permission_error_gets_the_c3_note_only_in_the_request(
    mode: str, sleeps: Any
) -> None:
    reads: list[str] = []

    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        reads.append(path)
        raise PermissionError(f"access denied: {path}")

    model = ScriptedChatModel(
        script=replies([ai(call("read_file", {"path": "/etc/shadow"}, "r1")), "No access."])
    )
    saver = InMemorySaver()
    agent = create_agent(
        model,
        [read_file],
        middleware=[ToolMendMiddleware(effects={"read_file": "read_only"})],
        checkpointer=saver,
        system_prompt="You are careful.",
    )
    config: RunnableConfig = {"configurable": {"thread_id": f"t-{mode}"}}
    out = await run(agent, "show the file", mode, config)

    assert reads == ["/etc/shadow"]
    assert sleeps.sleeps == []
    (result,) = tool_messages(out["messages"])
    note = runtime_note(
        "read_file", {"path": "/etc/shadow"}, result.content, GUIDANCE[Kind.UNRECOVERABLE]
    )
    assert shape(model.seen[1]) == [
        ("system", "You are careful."),
        ("human", "show the file"),
        ("ai", "", (("read_file", '{"path": "/etc/shadow"}', "r1"),)),
        ("tool", "r1", "read_file", "error", result.content),
        ("human", note),
    ]
    assert shape(out["messages"]) == [*shape(model.seen[1][1:-1]), ("ai", "No access.", ())]
    assert notes(out["messages"]) == []
    saved = agent.get_state(config).values["messages"]
    assert shape(saved) == shape(out["messages"])
    for checkpoint in saver.list(config):
        stored = checkpoint.checkpoint["channel_values"].get("messages", [])
        assert notes(stored) == []
    rewrite = reports(out["messages"])[-1]["rewrite"]
    assert rewrite["changed"] is True
    assert [d["kind"] for d in rewrite["detections"]] == ["unrecoverable"]


# -- 4. parallel calls, one failing ---------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_note_sits_after_both_parallel_results(mode: str) -> None:
    @tool
    def weather(city: str) -> str:
        """Weather of a city."""
        return f"sunny in {city}"

    @tool
    def calendar(day: str) -> str:
        """Calendar of a day."""
        raise PermissionError("calendar access revoked")

    model = ScriptedChatModel(
        script=replies(
            [
                ai(call("weather", {"city": "Oslo"}, "w1"), call("calendar", {"day": "mon"}, "k1")),
                "partial answer",
            ]
        )
    )
    agent = create_agent(
        model,
        [weather, calendar],
        middleware=[ToolMendMiddleware(effects={"weather": "read_only"})],
    )
    out = await run(agent, "plan monday", mode)

    seen = model.seen[1]
    failed = next(m for m in tool_messages(out["messages"]) if m.status == "error")
    assert shape(seen) == [
        ("human", "plan monday"),
        (
            "ai",
            "",
            (("weather", '{"city": "Oslo"}', "w1"), ("calendar", '{"day": "mon"}', "k1")),
        ),
        ("tool", "w1", "weather", "success", "sunny in Oslo"),
        ("tool", "k1", "calendar", "error", failed.content),
        (
            "human",
            runtime_note("calendar", {"day": "mon"}, failed.content, GUIDANCE[Kind.UNRECOVERABLE]),
        ),
    ]


# -- 5. two concurrent runs of one agent ----------------------------------------


async def test_concurrent_runs_do_not_share_failures() -> None:
    runs: dict[str, int] = {"A": 0, "B": 0}
    a_failed = asyncio.Event()

    @tool
    async def open_vault(name: str, config: RunnableConfig) -> str:
        """Open a vault."""
        thread = config["configurable"]["thread_id"]
        runs[thread] += 1
        if thread == "A":
            a_failed.set()
            raise PermissionError("vault is sealed")
        await a_failed.wait()
        return "vault opened"

    def script(messages: list[BaseMessage]) -> Any:
        turns = sum(1 for m in messages if m.type == "ai")
        if turns < 2:
            return ai(call("open_vault", {"name": "main"}, f"v{turns}"))
        return "finished"

    model = ScriptedChatModel(script=script)
    agent = create_agent(
        model, [open_vault], middleware=[ToolMendMiddleware()], checkpointer=InMemorySaver()
    )

    async def conversation(thread: str) -> Any:
        config: RunnableConfig = {"configurable": {"thread_id": thread}}
        return await agent.ainvoke({"messages": [HumanMessage(f"open it ({thread})")]}, config)

    out_a, out_b = await asyncio.gather(conversation("A"), conversation("B"))

    assert runs == {"A": 1, "B": 2}
    assert [m.content for m in tool_messages(out_b["messages"])] == ["vault opened"] * 2
    a_results = tool_messages(out_a["messages"])
    assert [m.status for m in a_results] == ["error", "error"]
    assert a_results[1].content == REPEATED.format(tool="open_vault", error=a_results[0].content)
    assert reports(out_a["messages"])[2]["rule"] == "loop-repeat"
    requests_b = [seen for seen in model.seen if "open it (B)" in str(seen[0].content)]
    requests_a = [seen for seen in model.seen if "open it (A)" in str(seen[0].content)]
    assert len(requests_a) == len(requests_b) == 3
    assert all(notes(seen) == [] for seen in requests_b)
    assert [len(notes(seen)) for seen in requests_a] == [0, 1, 1]
    assert reports(out_b["messages"]) == []


# -- 6. stock create_agent crashes; with toolmend the run completes -------------


@tool
def explode(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(f"boom: {reason}")


def crash_model() -> ScriptedChatModel:
    return ScriptedChatModel(
        script=replies([ai(call("explode", {"reason": "x"}, "e1")), "recovered"])
    )


async def test_stock_agent_crashes_on_a_raising_tool() -> None:
    agent = create_agent(crash_model(), [explode])
    with pytest.raises(RuntimeError, match="boom: x"):
        agent.invoke({"messages": [HumanMessage("go")]})
    agent = create_agent(crash_model(), [explode])
    with pytest.raises(RuntimeError, match="boom: x"):
        await agent.ainvoke({"messages": [HumanMessage("go")]})


@pytest.mark.parametrize("mode", MODES)
async def test_with_toolmend_the_run_completes(mode: str) -> None:
    agent = create_agent(crash_model(), [explode], middleware=[ToolMendMiddleware()])
    out = await run(agent, "go", mode)
    assert shape(out["messages"])[-1] == ("ai", "recovered", ())
    (result,) = tool_messages(out["messages"])
    assert result.status == "error"
    assert explode.func is not None
    assert result.content.split("\n") == [
        "Tool 'explode' failed after 1 attempt with RuntimeError: boom: x",
        *where((explode.func, "raise RuntimeError")),
    ]
