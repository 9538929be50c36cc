"""A failure the tool *returns* gets what the core decides, as one it raises.

Any LangChain tool can return an error ``ToolMessage`` (``status="error"``)
instead of raising, and langchain-mcp-adapters does so for an MCP ``isError``
result; a success whose text is an error is a returned failure too.  The core
decides about it as about a raised exception: a read-only tool is retried, a
write (declared, or undeclared and so possibly one) is not, and the model is
told to check first, since the call may have landed.
"""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId, tool
from lc_support import ai, call, shape, tool_messages

import notes
from call_records import attempt, call_record
from toolmend.integrations import SleepLog
from toolmend_langchain import ToolMendMiddleware, reports
from toolmend_langchain.testing import ScriptedChatModel, replies

UNAVAILABLE = "HTTP 503 Service Unavailable"
VERIFY_FIRST = (
    "This call may already have taken effect. Check whether it did before calling it again."
)
TEMPORARY = "This is a temporary failure. Retrying the same call is expected to succeed."
ASYNC = pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])


def transfer_tool(runs: list[dict[str, Any]], text: str = UNAVAILABLE) -> BaseTool:
    """A payment tool that answers every call with an error ``ToolMessage``."""

    @tool
    def transfer(
        amount: int, to: str, tool_call_id: Annotated[str, InjectedToolCallId]
    ) -> ToolMessage:
        """Send money."""
        runs.append({"amount": amount, "to": to})
        return ToolMessage(text, tool_call_id=tool_call_id, status="error")

    return transfer


def lookup_tool(runs: list[str], failures: int) -> BaseTool:
    """A read-only tool whose first ``failures`` calls return an error ``ToolMessage``."""

    @tool
    def lookup(key: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> ToolMessage:
        """Look a key up."""
        runs.append(key)
        if len(runs) <= failures:
            return ToolMessage(UNAVAILABLE, tool_call_id=tool_call_id, status="error")
        return ToolMessage(f"{key} = 42", tool_call_id=tool_call_id)

    return lookup


async def run(agent: Any, text: str, use_async: bool) -> list[Any]:
    state = {"messages": [HumanMessage(text)]}
    out = await agent.ainvoke(state) if use_async else agent.invoke(state)
    messages: list[Any] = out["messages"]
    return messages


# -- a write (declared, or undeclared) is run once and the model checks first ----------------


@ASYNC
@pytest.mark.parametrize("effects", [{"transfer": "write"}, {}], ids=["write", "undeclared"])
async def test_a_write_that_returned_a_503_runs_once_and_the_model_checks_first(
    effects: dict[str, str], use_async: bool, sleeps: SleepLog
) -> None:
    runs: list[dict[str, Any]] = []
    script = [ai(call("transfer", {"amount": 5, "to": "bob"}, "t1")), "I will check first."]
    model = ScriptedChatModel(script=replies(script))
    middleware = ToolMendMiddleware(effects=effects)
    agent = create_agent(model, [transfer_tool(runs)], middleware=[middleware])

    messages = await run(agent, "pay bob 5", use_async)

    assert runs == [{"amount": 5, "to": "bob"}]
    assert sleeps.sleeps == []
    asked = [
        ("human", "pay bob 5"),
        ("ai", "", (("transfer", '{"amount": 5, "to": "bob"}', "t1"),)),
        ("tool", "t1", None, "error", UNAVAILABLE),
    ]
    assert shape(model.seen[1]) == [
        *asked,
        (
            "human",
            notes.called("transfer with amount=5, to=bob", UNAVAILABLE, VERIFY_FIRST),
        ),
    ]
    assert shape(messages) == [*asked, ("ai", "I will check first.", ())]
    [record, rewrite] = reports(messages)
    decided = {k: record[k] for k in ("kind", "rule", "source", "attempts", "guidance")}
    assert decided == {
        "kind": "transient",
        "rule": "status",
        "source": "flag",
        "attempts": 1,
        "guidance": VERIFY_FIRST,
    }
    assert (record["stop"], record["outcome_unknown"], "exception" in record) == (
        "unsafe",
        True,
        False,
    )
    assert rewrite["rewrite"]["form"] == "c3"


async def test_an_ambiguous_failure_returned_by_an_undeclared_tool_gets_verify_first() -> None:
    runs: list[dict[str, Any]] = []
    text = "Error: something broke"
    script = [ai(call("transfer", {"amount": 5, "to": "bob"}, "t1")), "I will check first."]
    model = ScriptedChatModel(script=replies(script))
    agent = create_agent(model, [transfer_tool(runs, text)], middleware=[ToolMendMiddleware()])

    await run(agent, "pay bob 5", use_async=True)

    assert len(runs) == 1
    assert shape(model.seen[1][2:]) == [
        ("tool", "t1", None, "error", text),
        ("human", notes.called("transfer with amount=5, to=bob", text, VERIFY_FIRST)),
    ]


def test_an_error_text_returned_as_a_success_by_a_write_gets_verify_first() -> None:
    runs: list[str] = []

    @tool
    def book(room: str) -> str:
        """Book a room."""
        runs.append(room)
        return f"Error: {UNAVAILABLE}"

    script = [ai(call("book", {"room": "A1"}, "b1")), "I will check first."]
    model = ScriptedChatModel(script=replies(script))
    middleware = ToolMendMiddleware(effects={"book": "write"})
    create_agent(model, [book], middleware=[middleware]).invoke({"messages": [HumanMessage("A1")]})

    assert runs == ["A1"]
    assert shape(model.seen[1][2:]) == [
        ("tool", "b1", "book", "success", f"Error: {UNAVAILABLE}"),
        ("human", notes.called("book with room=A1", f"Error: {UNAVAILABLE}", VERIFY_FIRST)),
    ]


# -- a read-only tool is retried, as when it raises ---------------------------------------


@ASYNC
async def test_a_read_only_tool_that_returned_a_503_is_retried(
    use_async: bool, sleeps: SleepLog
) -> None:
    runs: list[str] = []
    script = [ai(call("lookup", {"key": "k"}, "l1")), "k is 42."]
    model = ScriptedChatModel(script=replies(script))
    middleware = ToolMendMiddleware(effects={"lookup": "read_only"})
    agent = create_agent(model, [lookup_tool(runs, failures=1)], middleware=[middleware])

    messages = await run(agent, "look k up", use_async)

    assert runs == ["k", "k"]
    assert len(sleeps.sleeps) == 1
    asked = [
        ("human", "look k up"),
        ("ai", "", (("lookup", '{"key": "k"}', "l1"),)),
        ("tool", "l1", None, "success", "k = 42"),
    ]
    assert shape(model.seen[1]) == asked
    assert shape(messages) == [*asked, ("ai", "k is 42.", ())]
    assert reports(messages) == [
        {
            "message_id": messages[2].id,
            "tool_call_id": "l1",
            "type": "tool",
            **call_record(
                tool="lookup",
                effect="read_only",
                effect_source="declared",
                form="c3",
                failed=False,
                attempts=2,
                history=[
                    attempt(
                        1,
                        f"toolmend.ResultFailed: {UNAVAILABLE}",
                        "transient",
                        "returned failure: Service Unavailable",
                        delay=sleeps.sleeps[0],
                    )
                ],
            ),
        }
    ]


def test_a_read_only_tool_that_keeps_returning_a_503_is_told_the_retries_are_spent(
    sleeps: SleepLog,
) -> None:
    runs: list[str] = []
    script = [ai(call("lookup", {"key": "k"}, "l1")), "It is down."]
    model = ScriptedChatModel(script=replies(script))
    middleware = ToolMendMiddleware(effects={"lookup": "read_only"})
    agent = create_agent(model, [lookup_tool(runs, failures=9)], middleware=[middleware])

    messages = agent.invoke({"messages": [HumanMessage("look k up")]})["messages"]

    assert runs == ["k", "k", "k"]
    assert len(sleeps.sleeps) == 2
    spent = (
        "All 3 attempts failed with a temporary error, so retrying now is unlikely to help. "
        "Continue with other steps and call it again later, or tell the user it is unavailable."
    )
    assert shape(model.seen[1][2:]) == [
        ("tool", "l1", None, "error", UNAVAILABLE),
        ("human", notes.called("lookup with key=k", UNAVAILABLE, spent)),
    ]
    [record, _] = reports(messages)
    assert (record["attempts"], record["stop"], record["guidance"]) == (3, "attempts", spent)
    assert [entry["error"] for entry in record["history"]] == [
        f"toolmend.ResultFailed: {UNAVAILABLE}"
    ] * 3
    assert TEMPORARY not in str(model.seen[1])
    assert tool_messages(messages)[0].content == UNAVAILABLE


def test_an_error_text_returned_as_a_success_by_a_read_only_tool_is_retried(
    sleeps: SleepLog,
) -> None:
    runs: list[str] = []

    @tool
    def quote(symbol: str) -> str:
        """A stock quote."""
        runs.append(symbol)
        return f"Error: {UNAVAILABLE}" if len(runs) == 1 else f"{symbol}: 101.5"

    script = [ai(call("quote", {"symbol": "ACME"}, "q1")), "101.5"]
    model = ScriptedChatModel(script=replies(script))
    middleware = ToolMendMiddleware(effects={"quote": "read_only"})
    agent = create_agent(model, [quote], middleware=[middleware])
    messages = agent.invoke({"messages": [HumanMessage("ACME?")]})["messages"]

    assert runs == ["ACME", "ACME"]
    assert len(sleeps.sleeps) == 1
    assert shape(model.seen[1][2:]) == [("tool", "q1", "quote", "success", "ACME: 101.5")]
    [found] = reports(messages)
    assert (found["failed"], found["attempts"], [e["error"] for e in found["history"]]) == (
        False,
        2,
        [f"toolmend.ResultFailed: Error: {UNAVAILABLE}"],
    )
