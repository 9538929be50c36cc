"""RecoveringSession over a real MCP server in memory, traced through the SDK."""

from __future__ import annotations

from typing import Any

from mcp_demo_server import build_server
from mcp_sdk import MCP2, open_connection
from otel_support import Otel, attrs, events, status

from toolmend import LoopGuard
from toolmend_mcp import RecoveringSession


def ours(spans: list[Any]) -> list[Any]:
    """toolmend's spans (the MCP SDK adds its own ``tools/call`` spans as children)."""
    return [s for s in spans if s.name.startswith("execute_tool ")]


async def test_a_failing_write_gives_the_documented_span_and_is_refused_a_retry(
    otel: Otel,
) -> None:
    async with open_connection(build_server()) as client:
        session = RecoveringSession(client, trust_annotations=True)
        await session.call_tool("transfer", {"amount": 5, "to": "bob"})

    spans = otel.spans()
    [span] = ours(spans)
    assert span.name == "execute_tool transfer"
    assert status(span) == ("ERROR", None)
    assert attrs(span) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "transfer",
        "toolmend.framework": "mcp",
        "toolmend.attempts": 1,
        "toolmend.outcome": "unknown",
        "toolmend.effect": "write",
        "toolmend.effect.source": "annotations",
        "toolmend.form": "c3",
        "toolmend.neutralised": False,
        "error.type": "tool_error",
        "toolmend.kind": "transient",
        "toolmend.rule": "is_error",
        "toolmend.evidence.length": 26,
        "toolmend.evidence.hash": "411251e91b10265c",
        "toolmend.signature.hash": "aefb02833fee5729",
        "toolmend.stop_reason": "unsafe",
    }
    assert events(span) == [
        (
            "toolmend.attempt",
            {
                "toolmend.attempt": 1,
                "toolmend.attempt.wait": 0.0,
                "toolmend.kind": "transient",
                "toolmend.outcome_unknown": True,
                "error.type": "tool_error",
                "toolmend.evidence.length": 26,
                "toolmend.evidence.hash": "411251e91b10265c",
                "toolmend.stop_reason": "unsafe",
            },
        )
    ]
    if MCP2:  # the SDK's own span of the request is a child of the call's
        sdk_calls = [s for s in spans if s.name == "tools/call transfer"]
        assert [s.parent.span_id for s in sdk_calls if s.parent] == [span.context.span_id]
    assert otel.metrics() == {
        "toolmend.tool.failures": {
            (("gen_ai.tool.name", "transfer"), ("toolmend.kind", "transient")): 1
        },
        "toolmend.tool.retries_refused": {
            (("gen_ai.tool.name", "transfer"), ("toolmend.stop_reason", "unsafe")): 1
        },
        "toolmend.tool.attempts": {(("gen_ai.tool.name", "transfer"),): (1, 1)},
    }


async def test_a_retried_read_shows_its_attempts_and_succeeds(otel: Otel) -> None:
    async with open_connection(build_server()) as client:
        session = RecoveringSession(client, trust_annotations=True)
        await session.call_tool("search", {"query": "mcp"})

    [span] = ours(otel.spans())
    assert status(span) == ("UNSET", None)
    assert attrs(span)["toolmend.attempts"] == 2
    assert attrs(span)["toolmend.outcome"] == "landed"
    assert [(e["toolmend.attempt"], e["toolmend.attempt.wait"]) for _, e in events(span)] == [
        (1, 0.0),
        (2, 2.0),
    ]
    assert events(span)[0][1]["toolmend.retry.delay"] == 2.0


async def test_an_open_circuit_refusal_is_an_event(otel: Otel) -> None:
    guard = LoopGuard(max_consecutive_failures=1, hard_stop=True)
    async with open_connection(build_server()) as client:
        session = RecoveringSession(client, loop=guard)
        await session.call_tool("crash", {"path": "a.txt"})
        await session.call_tool("crash", {"path": "b.txt"})

    first, refused = ours(otel.spans())
    assert attrs(first)["toolmend.kind"] == "ambiguous"
    assert attrs(refused)["error.type"] == "toolmend.refused"
    assert attrs(refused)["toolmend.attempts"] == 0
    assert events(refused) == [
        (
            "toolmend.loop_guard.refusal",
            {
                "toolmend.rule": "loop-budget",
                "toolmend.kind": "ambiguous",
                "toolmend.reason": "1 consecutive failures",
            },
        )
    ]
    assert otel.metrics()["toolmend.loop_guard.refusals"] == {
        (("gen_ai.tool.name", "crash"), ("toolmend.rule", "loop-budget")): 1
    }
