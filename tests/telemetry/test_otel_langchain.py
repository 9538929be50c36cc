"""A failing LangChain agent (create_agent, scripted model) traced through the SDK."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from lc_support import ai, call, http_error
from opentelemetry import trace
from otel_support import SECRET_ARGUMENT, Otel, attrs, events, status, text_of_spans

from toolmend import telemetry
from toolmend.integrations import SleepLog
from toolmend_langchain import ToolMendMiddleware
from toolmend_langchain.testing import ScriptedChatModel, replies


def failing_agent() -> Any:
    """fetch fails with 503 on every attempt; lookup fails as fixable, then is repeated."""

    @tool
    def fetch(email: str) -> str:
        """Fetch a customer's page."""
        raise http_error(503)

    @tool
    def lookup(email: str) -> str:
        """Look a customer up."""
        raise http_error(422)

    model = ScriptedChatModel(
        script=replies(
            [
                ai(call("fetch", {"email": SECRET_ARGUMENT}, "c1")),
                ai(call("lookup", {"email": SECRET_ARGUMENT}, "c2")),
                ai(call("lookup", {"email": SECRET_ARGUMENT}, "c3")),
                "I could not reach it.",
            ]
        )
    )
    agent = create_agent(
        model,
        [fetch, lookup],
        middleware=[ToolMendMiddleware(effects={"fetch": "read_only"})],
    )
    return agent


async def run(asynchronous: bool) -> None:
    agent = failing_agent()
    state = {"messages": [HumanMessage("Find the customer")]}
    with trace.get_tracer("app").start_as_current_span("agent"):
        if asynchronous:
            await agent.ainvoke(state)
        else:
            agent.invoke(state)


@pytest.mark.parametrize("asynchronous", [False, True], ids=["invoke", "ainvoke"])
async def test_a_failing_tool_gives_the_documented_span(
    otel: Otel, sleeps: SleepLog, asynchronous: bool
) -> None:
    await run(asynchronous)

    fetch, lookup, refused, root = otel.spans()
    assert [s.name for s in (fetch, lookup, refused, root)] == [
        "execute_tool fetch",
        "execute_tool lookup",
        "execute_tool lookup",
        "agent",
    ]
    assert all(s.parent is not None and s.parent.span_id == root.context.span_id
               for s in (fetch, lookup, refused))  # fmt: skip
    assert status(fetch) == ("ERROR", None)
    assert attrs(fetch) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "fetch",
        "gen_ai.tool.call.id": "c1",
        "toolmend.framework": "langchain",
        "toolmend.attempts": 3,
        "toolmend.outcome": "unknown",
        "toolmend.effect": "read_only",
        "toolmend.effect.source": "declared",
        "toolmend.form": "c3",
        "error.type": "httpx.HTTPStatusError",
        "toolmend.kind": "transient",
        "toolmend.rule": "exception",
        "toolmend.evidence.length": 8,
        "toolmend.evidence.hash": "1e682c53d8c50a63",
        "toolmend.signature.hash": "b9c7cc30848ad7d2",
        "toolmend.stop_reason": "attempts",
    }
    first, second = sleeps.sleeps
    assert [(e["toolmend.attempt"], e["toolmend.attempt.wait"]) for _, e in events(fetch)] == [
        (1, 0.0),
        (2, first),
        (3, second),
    ]
    assert events(fetch)[2][1]["toolmend.stop_reason"] == "attempts"

    assert attrs(lookup)["toolmend.kind"] == "fixable"
    assert attrs(lookup)["toolmend.effect.source"] == "default"
    assert attrs(lookup)["toolmend.outcome"] == "unknown"
    assert attrs(refused)["gen_ai.tool.call.id"] == "c3"
    assert attrs(refused)["error.type"] == "toolmend.refused"
    assert attrs(refused)["toolmend.rule"] == "loop-repeat"
    assert events(refused) == [
        (
            "toolmend.loop_guard.refusal",
            {
                "toolmend.rule": "loop-repeat",
                "toolmend.kind": "fixable",
                "toolmend.reason": "exact repeat of a failed call",
            },
        )
    ]
    rewrites = [e for name, e in events(root) if name == "toolmend.rewrite"]
    assert [(e["toolmend.form"], e["toolmend.kind"]) for e in rewrites] == [
        ("c3", ["transient"]),
        ("c3", ["fixable"]),
        ("c3", ["fixable"]),
    ]
    assert SECRET_ARGUMENT not in text_of_spans([fetch, lookup, refused, root])
    assert otel.metrics() == {
        "toolmend.tool.failures": {
            (("gen_ai.tool.name", "fetch"), ("toolmend.kind", "transient")): 1,
            (("gen_ai.tool.name", "lookup"), ("toolmend.kind", "fixable")): 2,
        },
        "toolmend.tool.retries": {
            (("gen_ai.tool.name", "fetch"), ("toolmend.kind", "transient")): 2
        },
        "toolmend.loop_guard.refusals": {
            (("gen_ai.tool.name", "lookup"), ("toolmend.rule", "loop-repeat")): 1
        },
        "toolmend.tool.attempts": {
            (("gen_ai.tool.name", "fetch"),): (1, 3),
            (("gen_ai.tool.name", "lookup"),): (1, 1),
        },
    }


async def test_with_content_opted_in_the_arguments_are_recorded(otel: Otel) -> None:
    telemetry.configure(record_content=True)

    await run(False)

    fetch = otel.spans()[0]
    assert attrs(fetch)["gen_ai.tool.call.arguments"] == '{"email": "alice@example.com"}'
    assert attrs(fetch)["toolmend.evidence"] == "HTTP 503"
