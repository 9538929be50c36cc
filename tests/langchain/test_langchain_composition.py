"""toolmend with the stock ToolRetryMiddleware: no double retries, no repeated writes.

The recommended order lists ToolMendMiddleware after ToolRetryMiddleware (the
list runs outermost first): toolmend sees the exception first and never
re-raises it, so the stock retry has nothing left to repeat.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import ToolRetryMiddleware
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from lc_support import ai, call, http_error, tool_messages, where

from toolmend import RetryPolicy
from toolmend_langchain import ToolMendMiddleware
from toolmend_langchain.testing import ScriptedChatModel, replies


def stock_retry() -> ToolRetryMiddleware:
    return ToolRetryMiddleware(max_retries=2, initial_delay=0.0, jitter=False)


def one_call(name: str, args: dict[str, Any]) -> ScriptedChatModel:
    return ScriptedChatModel(script=replies([ai(call(name, args, "c1")), "done"]))


@pytest.mark.parametrize("asynchronous", [False, True])
async def test_transient_read_is_retried_by_toolmend_only(asynchronous: bool) -> None:
    attempts: list[int] = []

    @tool
    def quote(symbol: str) -> str:
        """Stock quote."""
        attempts.append(1)
        raise http_error(503)

    agent = create_agent(
        one_call("quote", {"symbol": "ACME"}),
        [quote],
        middleware=[
            stock_retry(),
            ToolMendMiddleware(effects={"quote": "read_only"}, retry=RetryPolicy(attempts=3)),
        ],
    )
    state = {"messages": [HumanMessage("price?")]}
    out = await agent.ainvoke(state) if asynchronous else agent.invoke(state)

    assert len(attempts) == 3
    (result,) = tool_messages(out["messages"])
    assert result.status == "error"
    assert result.response_metadata["toolmend"]["attempts"] == 3
    assert quote.func is not None
    assert result.content.split("\n") == [
        "Tool 'quote' failed after 3 attempts with httpx.HTTPStatusError: "
        "Server error '503 Service Unavailable' for url 'http://127.0.0.1/data'",
        *where((quote.func, "raise http_error"), (http_error, "raise_for_status()")),
    ]


@pytest.mark.parametrize("asynchronous", [False, True])
async def test_unsafe_write_is_retried_by_neither(asynchronous: bool) -> None:
    sent: list[str] = []

    @tool
    def send_email(to: str) -> str:
        """Send an email."""
        sent.append(to)
        raise ConnectionResetError("connection reset by peer")

    agent = create_agent(
        one_call("send_email", {"to": "a@example.com"}),
        [send_email],
        middleware=[stock_retry(), ToolMendMiddleware(effects={"send_email": "write"})],
    )
    state = {"messages": [HumanMessage("mail a")]}
    out = await agent.ainvoke(state) if asynchronous else agent.invoke(state)

    assert sent == ["a@example.com"]
    (result,) = tool_messages(out["messages"])
    record = result.response_metadata["toolmend"]
    assert (record["attempts"], record["stop"], record["outcome_unknown"]) == (1, "unsafe", True)


def test_wrong_order_is_reported(caplog: pytest.LogCaptureFixture) -> None:
    """Inside toolmend the stock retry repeats a write toolmend cannot stop; say so loudly."""
    sent: list[str] = []

    @tool
    def send_email(to: str) -> str:
        """Send an email."""
        sent.append(to)
        raise ConnectionResetError("connection reset by peer")

    agent = create_agent(
        one_call("send_email", {"to": "a@example.com"}),
        [send_email],
        middleware=[ToolMendMiddleware(effects={"send_email": "write"}), stock_retry()],
    )
    with caplog.at_level(logging.WARNING, logger="toolmend.langchain"):
        out = agent.invoke({"messages": [HumanMessage("mail a")]})

    assert len(sent) == 3
    warnings = [r.getMessage() for r in caplog.records if r.name == "toolmend.langchain"]
    assert warnings == [
        "toolmend.langchain: send_email (effect write) was repeated by a retry middleware "
        "listed after ToolMendMiddleware; list ToolMendMiddleware last"
    ]
    (result,) = tool_messages(out["messages"])
    assert result.response_metadata["toolmend"]["rule"] == "status"
