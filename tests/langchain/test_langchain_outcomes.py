"""Outcomes from a LangChain agent: what followed each failure, as rows for ``toolmend learn``."""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from lc_support import ai, call, shape, where

from outcome_rows import Rows, recording
from toolmend.integrations import Outcomes, end_run, record_outcomes
from toolmend_langchain import ToolMendMiddleware
from toolmend_langchain.testing import ScriptedChatModel, replies

CALLS: dict[str, int] = {}


def count(name: str) -> int:
    CALLS[name] = CALLS.get(name, 0) + 1
    return CALLS[name]


@tool
def fetch(order: int) -> str:
    """Fetch an order; the backend drops the first connection."""
    if count("fetch") == 1:
        raise ConnectionError("connection reset by peer")
    return f"order {order}"


@tool
def find(table: str) -> str:
    """Find rows in a table; the tool returns its errors as text."""
    if table != "orders":
        return f"Error: no such table: {table}"
    return "3 rows"


@tool
def drop(table: str) -> str:
    """Drop a table."""
    raise PermissionError(f"permission denied for table {table}")


@tool
def quote(symbol: str) -> str:
    """A read-only quote whose first attempt times out."""
    if count("quote") == 1:
        raise TimeoutError("read timed out")
    return f"{symbol} 12.5"


def agent_for(
    turns: list[AIMessage | str], *, saver: bool = True, **options: Any
) -> tuple[Any, ScriptedChatModel]:
    CALLS.clear()
    model = ScriptedChatModel(script=replies(turns))
    agent = create_agent(
        model,
        [fetch, find, drop, quote],
        middleware=[ToolMendMiddleware(**options)],
        checkpointer=InMemorySaver() if saver else None,
    )
    return agent, model


def thread(name: str) -> RunnableConfig:
    return {"configurable": {"thread_id": name}}


def raised(fn: Any, needle: str, text: str, attempts: int = 1) -> str:
    tries = "1 attempt" if attempts == 1 else f"{attempts} attempts"
    return f"Tool '{fn.name}' failed after {tries} with {text}\n" + where((fn.func, needle))[0]


RESET = raised(fetch, "ConnectionError(", "ConnectionError: connection reset by peer")
DENIED = raised(drop, "PermissionError(", "PermissionError: permission denied for table t1")
SAME_CALL = [ai(call("fetch", {"order": 7}, "f1")), ai(call("fetch", {"order": 7}, "f2")), "ok"]


def test_a_failure_then_the_same_call_succeeding_is_retry_succeeded() -> None:
    with recording() as rows:
        agent, _ = agent_for(SAME_CALL)
        agent.invoke({"messages": [HumanMessage("go")]}, thread("t1"))
    assert rows.brief() == [("fetch", RESET, {"order": 7}, "retry_succeeded", "t1")]


def test_a_changed_argument_that_succeeds_is_changed_arguments_succeeded() -> None:
    turns = [
        ai(call("find", {"table": "ordrs"}, "q1")),
        ai(call("find", {"table": "orders"}, "q2")),
    ]
    with recording() as rows:
        agent, _ = agent_for([*turns, "3 rows"])
        agent.invoke({"messages": [HumanMessage("go")]}, thread("t2"))
    assert rows.brief() == [
        (
            "find",
            "Error: no such table: ordrs",
            {"table": "ordrs"},
            "changed_arguments_succeeded",
            "t2",
        )
    ]


def test_the_same_error_twice_then_the_run_ending_is_failed_again_then_stopped() -> None:
    turns = [ai(call("drop", {"table": "t1"}, "d1")), ai(call("drop", {"table": "t1"}, "d2"))]
    with recording() as rows:
        agent, _ = agent_for([*turns, "I could not drop it."], loop_guard=False)
        agent.invoke({"messages": [HumanMessage("go")]}, thread("t3"))
        again = raised(drop, "PermissionError(", "PermissionError: permission denied for table t1")
        assert rows.brief() == [
            ("drop", DENIED, {"table": "t1"}, "failed_again", "t3"),
            ("drop", again, {"table": "t1"}, "stopped", "t3"),
        ]
        assert end_run("t3") == ()  # settled once, at the answer without a tool call


async def test_an_automatic_retry_that_succeeded_settles_its_failed_attempt() -> None:
    turns = [ai(call("quote", {"symbol": "ACME"}, "p1")), "12.5"]
    with recording() as rows:
        agent, _ = agent_for(turns, saver=False, effects={"quote": "read_only"})
        await agent.ainvoke({"messages": [HumanMessage("go", id="h1")]})
    # No thread: the run is the turn's user message.
    assert rows.brief() == [
        ("quote", "TimeoutError: read timed out", {"symbol": "ACME"}, "retry_succeeded", "turn:h1")
    ]


def test_without_a_recorder_nothing_is_recorded_and_the_run_is_unchanged() -> None:
    with recording():
        agent, model = agent_for(SAME_CALL)
        agent.invoke({"messages": [HumanMessage("go", id="h")]}, thread("on"))
    recorded = shape(model.seen[-1])
    agent, model = agent_for(SAME_CALL)
    agent.invoke({"messages": [HumanMessage("go", id="h")]}, thread("off"))
    assert shape(model.seen[-1]) == recorded
    rows = Rows()
    record_outcomes(Outcomes(rows, clock=lambda: 0.0))
    try:
        assert end_run("off") == ()
    finally:
        record_outcomes(None)
    assert rows.rows == []
