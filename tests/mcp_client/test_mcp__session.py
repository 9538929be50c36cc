"""RecoveringSession over a real MCP server, in memory and over stdio (acceptance 1-6)."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest
from mcp.types import CallToolResult, TextContent, ToolListChangedNotification
from mcp_demo_server import build_server
from mcp_sdk import (
    MCP2,
    Connect,
    MCPError,
    is_error,
    listening,
    notification,
    open_connection,
    session_of,
    structured,
)

import notes
from call_records import attempt
from toolmend import Kind, LoopGuard, RetryPolicy
from toolmend.contracts import Contracts
from toolmend.integrations import GUIDANCE, PILE_UP, REMEMBERED, VERIFY_FIRST, SleepLog
from toolmend_mcp import RecoveringSession
from toolmend_mcp._session import SESSION_MEMORY

FIXABLE = GUIDANCE[Kind.FIXABLE]
CRASH = "Error executing tool crash" if MCP2 else "Error executing tool crash: 'a.txt'"
"""What the server says about an unexpected exception: SDK 2.x withholds its text, 1.x not."""
TIMEOUT = -32001 if MCP2 else 408
"""The code of the SDK's own read timeout: 2.x ``REQUEST_TIMEOUT``, 1.x HTTP's 408."""
ADVISORY = (
    "[OUTCOME CONTRACT ADVISORY] The result from `quote` is inconsistent with a known "
    "invariant of its outcome contract.\n"
    'Violation: schema_violation at `price`; expected {"type": "number"}, observed "n/a".\n'
    "This advisory is nonbinding. Treat the result as unreliable and verify or recover "
    "using the available tools and task context before relying on it. "
    "All actions remain available."
)


def texts(result: CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, TextContent)]


def found(result: CallToolResult) -> dict[str, Any]:
    assert result.meta is not None
    findings = result.meta["toolmend"]
    assert isinstance(findings, dict)
    return findings


async def counts(client: Any) -> dict[str, int]:
    """How often each tool body ran on the server, asked past the wrapper."""
    result = await client.call_tool("counts", {})
    assert isinstance(structured(result), dict)
    return structured(result)


# -- 1. a read-only tool with a retry hint -------------------------------------------


@pytest.mark.parametrize(
    "options",
    [{"effects": {"search": "read_only"}}, {"trust_annotations": True}],
    ids=["declared", "annotations"],
)
async def test_read_only_rate_limit_is_retried_after_the_hint(
    connect: Connect, sleeps: SleepLog, options: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="toolmend.mcp")
    async with connect() as client:
        session = RecoveringSession(client, **options)
        result = await session.call_tool("search", {"query": "mcp"})
        assert await counts(client) == {"search": 2}
    assert is_error(result) is False
    assert texts(result) == ["3 results for mcp"]
    assert structured(result) == {"result": "3 results for mcp"}
    assert sleeps.sleeps == [2.0]
    findings = found(result)
    assert findings["attempts"] == 2
    assert findings["failed"] is False
    assert findings["effect"] == "read_only"
    assert findings["effect_source"] == ("declared" if "effects" in options else "annotations")
    assert findings["history"] == [
        attempt(
            1,
            "Error executing tool search: rate limit exceeded, retry in 2s",
            "transient",
            "text 'ate limit'",
            retry_after=2.0,
            delay=2.0,
        )
    ]
    assert "toolmend.mcp: search succeeded after 2 attempts" in caplog.messages


async def test_annotations_are_not_trusted_by_default(connect: Connect, sleeps: SleepLog) -> None:
    async with connect() as client:
        session = RecoveringSession(client)
        result = await session.call_tool("search", {"query": "mcp"})
        assert await counts(client) == {"search": 1}
    findings = found(result)
    assert is_error(result) is True
    assert (findings["effect"], findings["effect_source"]) == ("unknown", "default")
    assert (findings["kind"], findings["stop"], findings["attempts"]) == ("transient", "unsafe", 1)
    assert sleeps.sleeps == []


async def test_a_wrapped_client_session_recovers_the_same_way(
    connect: Connect, sleeps: SleepLog
) -> None:
    async with connect() as client:
        session = RecoveringSession(session_of(client), effects={"search": "read_only"})
        result = await session.call_tool("search", {"query": "mcp"})
    assert (is_error(result), found(result)["attempts"], sleeps.sleeps) == (False, 2, [2.0])


# -- 2. a destructive tool failing transiently -----------------------------------------


@pytest.mark.parametrize(
    ("options", "effect"),
    [
        ({"trust_annotations": True}, ("write", "annotations")),
        ({"effects": {"transfer": "write"}}, ("write", "declared")),
        ({}, ("unknown", "default")),
    ],
    ids=["annotated-destructive", "declared-write", "undeclared"],
)
async def test_destructive_tool_is_never_retried(
    connect: Connect, sleeps: SleepLog, options: dict[str, Any], effect: tuple[str, str]
) -> None:
    async with connect() as client:
        session = RecoveringSession(client, **options)
        result = await session.call_tool("transfer", {"amount": 5, "to": "bob"})
        assert await counts(client) == {"transfer": 1}
    assert is_error(result) is True
    assert texts(result) == [
        "Error executing tool transfer: 503 Service Unavailable: ledger busy, retry in 1s"
    ]
    assert sleeps.sleeps == []
    findings = found(result)
    assert (findings["effect"], findings["effect_source"]) == effect
    assert findings["kind"] == "transient"
    assert findings["attempts"] == 1
    assert findings["stop"] == "unsafe"
    assert findings["outcome_unknown"] is True
    assert findings["retry_after"] == 1.0
    assert findings["guidance"] == VERIFY_FIRST
    assert [h["stop"] for h in findings["history"]] == ["unsafe"]


# -- 3. an unexpected server exception -------------------------------------------------


async def test_unexpected_server_exception_is_ambiguous_without_guidance(
    connect: Connect,
) -> None:
    async with connect() as client:
        session = RecoveringSession(client, effects={"crash": "read_only"}, form="c1")
        result = await session.call_tool("crash", {"path": "a.txt"})
        assert await counts(client) == {"crash": 1}
    findings = found(result)
    assert is_error(result) is True
    assert texts(result) == [CRASH]
    assert (findings["kind"], findings["rule"], findings["source"]) == (
        "ambiguous",
        "is_error",
        "flag",
    )
    assert findings["guidance"] is None
    assert findings["note"] is None
    assert findings["attempts"] == 1


async def test_a_crash_of_a_possible_write_says_check_first(connect: Connect) -> None:
    async with connect() as client:
        session = RecoveringSession(client)
        result = await session.call_tool("crash", {"path": "a.txt"})
    findings = found(result)
    assert (findings["kind"], findings["outcome_unknown"]) == ("ambiguous", True)
    assert findings["guidance"] == VERIFY_FIRST
    assert findings["note"] == notes.called("crash with path=a.txt", CRASH, VERIFY_FIRST)


# -- 4. fixable: argument validation and unknown tools ----------------------------------


TOOLS = (
    "search, transfer, crash, add, lookup, connect_drive, quote, slow, enable_refund, "
    "read_secret, status, get_time, list_drive, counts"
)


async def test_arguments_that_break_the_input_schema_are_not_sent(connect: Connect) -> None:
    async with connect() as client:
        session = RecoveringSession(client, trust_annotations=True, form="c1")
        result = await session.call_tool("add", {"a": "one", "b": 2})
        assert await counts(client) == {}
    assert texts(result) == [
        "Tool 'add' was not run: invalid arguments. a: 'one' is not of type 'integer'\n" + FIXABLE
    ]
    findings = found(result)
    assert (findings["kind"], findings["rule"], findings["attempts"]) == (
        "fixable",
        "invalid-arguments",
        0,
    )


async def test_argument_validation_error_of_the_server_is_fixable(connect: Connect) -> None:
    async with connect() as client:
        session = RecoveringSession(
            client, trust_annotations=True, form="c1", malformed_calls=False
        )
        result = await session.call_tool("add", {"a": "one", "b": 2})
    [text] = texts(result)
    assert text.startswith(
        "Error executing tool add: 1 validation error for addArguments\na\n"
        "  Input should be a valid integer, unable to parse string as an integer"
    )
    assert text.endswith("\n" + FIXABLE)
    findings = found(result)
    assert (findings["kind"], findings["guidance"], findings["attempts"]) == (
        "fixable",
        FIXABLE,
        1,
    )


async def test_unknown_tool_is_fixable_and_names_the_listed_tools(connect: Connect) -> None:
    async with connect() as client:
        session = RecoveringSession(client)
        result = await session.call_tool("get_tim", {})
        misspelled = texts(result)
        result = await session.call_tool("refund", {"order": "o-1"})
    assert misspelled == [
        f"Tool 'get_tim' does not exist. Did you mean 'get_time'? Available tools: {TOOLS}."
    ]
    error = f"Tool 'refund' does not exist. Available tools: {TOOLS}."
    assert texts(result) == [error]
    findings = found(result)
    assert (findings["kind"], findings["rule"], findings["attempts"]) == (
        "fixable",
        "unknown-tool",
        0,
    )
    assert findings["note"] == notes.called("refund with order=o-1", error, FIXABLE)


async def test_unknown_tool_answered_by_the_server_is_fixable(connect: Connect) -> None:
    async with connect() as client:
        session = RecoveringSession(client, malformed_calls=False)
        result = await session.call_tool("refund", {"order": "o-1"})
    findings = found(result)
    assert texts(result) == ["Unknown tool: refund"]
    assert (findings["kind"], findings["rule"], findings["guidance"]) == (
        "fixable",
        "is_error",
        FIXABLE,
    )


async def test_exact_repeat_of_a_fixable_failure_is_not_run_again(connect: Connect) -> None:
    async with connect() as client:
        session = RecoveringSession(client, loop=LoopGuard(), malformed_calls=False)
        first = await session.call_tool("add", {"a": "one", "b": 2})
        second = await session.call_tool("add", {"b": 2, "a": "one"})
        assert await counts(client) == {}
    [earlier] = texts(first)
    assert texts(second) == [
        "Tool 'add' was not run: this exact call already failed in this task. "
        f"The earlier error: {earlier}"
    ]
    findings = found(second)
    assert (findings["rule"], findings["attempts"], findings["guidance"]) == (
        "loop-repeat",
        0,
        FIXABLE,
    )


async def test_a_long_session_remembers_a_bounded_number_of_failed_calls() -> None:
    """Thousands of distinct failures: the guard keeps the newest, and still refuses them."""
    async with open_connection(build_server()) as client:
        guard = LoopGuard(forget_after=SESSION_MEMORY, remember=16)
        session = RecoveringSession(client, loop=guard)
        for n in range(200):
            await session.call_tool("get_time", {"timezone": f"Mars/{n}"})
            again = await session.call_tool("get_time", {"timezone": f"Mars/{n}"})
            assert found(again)["rule"] == "loop-repeat"
        oldest = await session.call_tool("get_time", {"timezone": "Mars/0"})
        newest = await session.call_tool("get_time", {"timezone": "Mars/199"})
        assert await counts(client) == {"get_time": 201}
    assert (found(oldest)["rule"], found(newest)["rule"]) == ("is_error", "loop-repeat")
    assert len(guard.blocked) == 16
    assert [b.arguments["timezone"] for b in guard.blocked[-3:]] == [
        "Mars/198",
        "Mars/199",
        "Mars/199",  # newest, refused again
    ]


async def test_the_default_session_guard_forgets_the_oldest_past_its_bound() -> None:
    async with open_connection(build_server()) as client:
        session = RecoveringSession(client)
        for n in range(REMEMBERED + 8):
            await session.call_tool("get_time", {"timezone": f"Mars/{n}"})
        oldest = await session.call_tool("get_time", {"timezone": "Mars/0"})
        newest = await session.call_tool("get_time", {"timezone": f"Mars/{REMEMBERED + 7}"})
        assert await counts(client) == {"get_time": REMEMBERED + 9}
    assert (found(oldest)["rule"], found(newest)["rule"]) == ("is_error", "loop-repeat")


# -- 5. protocol errors and read timeouts ----------------------------------------------


async def test_protocol_error_is_returned_as_an_error_result(connect: Connect) -> None:
    async with connect() as client:
        session = RecoveringSession(client, trust_annotations=True)
        result = await session.call_tool("lookup", {"key": "ABC"})
        assert await counts(client) == {"lookup": 1}
    assert is_error(result) is True
    assert texts(result) == ["MCP error -32602: key must be lowercase: ABC"]
    findings = found(result)
    assert (findings["kind"], findings["source"], findings["reason"]) == (
        "fixable",
        "exception",
        "MCP error -32602 (invalid params)",
    )
    assert findings["guidance"] == FIXABLE


async def test_protocol_error_can_be_raised_instead(connect: Connect) -> None:
    async with connect() as client:
        session = RecoveringSession(client, raise_protocol_errors=True)
        with pytest.raises(MCPError) as caught:
            await session.call_tool("lookup", {"key": "ABC"})
    assert (caught.value.error.code, caught.value.error.message) == (
        -32602,
        "key must be lowercase: ABC",
    )


async def test_url_elicitation_is_not_a_failure_and_still_raises(connect: Connect) -> None:
    async with connect() as client:
        session = RecoveringSession(client, trust_annotations=True)
        with pytest.raises(MCPError) as caught:
            await session.call_tool("connect_drive", {})
        assert await counts(client) == {"connect_drive": 1}
    assert (caught.value.error.code, caught.value.error.message) == (
        -32042,
        "URL elicitation required",
    )


async def test_read_timeout_of_a_read_is_retried_then_returned(
    connect: Connect, sleeps: SleepLog
) -> None:
    async with connect() as client:
        session = RecoveringSession(
            client, effects={"slow": "read_only"}, retry=RetryPolicy(attempts=2)
        )
        result = await session.call_tool("slow", {"seconds": 30}, read_timeout_seconds=0.2)
    findings = found(result)
    [text] = texts(result)
    assert is_error(result) is True
    assert text.startswith(f"MCP error {TIMEOUT}: ")
    assert (findings["kind"], findings["reason"], findings["attempts"]) == (
        "transient",
        f"MCP error {TIMEOUT} (request timeout)",
        2,
    )
    assert findings["stop"] == "attempts"
    assert findings["why_stopped"] == (
        "Not retried again: every attempt the retry policy allows was used."
    )
    assert [(h["attempt"], h["error"] == text, h["stop"]) for h in findings["history"]] == [
        (1, True, None),
        (2, True, "attempts"),
    ]
    assert len(sleeps.sleeps) == 1


async def test_read_timeout_of_a_write_is_not_retried(connect: Connect, sleeps: SleepLog) -> None:
    async with connect() as client:
        session = RecoveringSession(client)
        result = await session.call_tool("slow", {"seconds": 30}, read_timeout_seconds=0.2)
    findings = found(result)
    assert (findings["attempts"], findings["stop"], findings["outcome_unknown"]) == (
        1,
        "unsafe",
        True,
    )
    assert findings["guidance"] == VERIFY_FIRST
    assert findings["why_stopped"] == (
        "Not retried: the call may have taken effect, and the tool is not declared safe to repeat."
    )
    assert sleeps.sleeps == []


# -- 6. a structured result that violates output_schema ----------------------------------


async def test_schema_violation_gets_an_advisory_receipt_and_keeps_the_raw_result(
    connect: Connect,
) -> None:
    async with connect() as client:
        session = RecoveringSession(client)
        result = await session.call_tool("quote", {"symbol": "ACME"})
        with pytest.raises(RuntimeError, match="Invalid structured content"):
            await client.call_tool("quote", {"symbol": "ACME"})
    assert is_error(result) is False
    assert structured(result) == {"symbol": "ACME", "price": "n/a"}
    assert texts(result) == ['{\n  "symbol": "ACME",\n  "price": "n/a"\n}', ADVISORY]
    violation = {
        "code": "schema_violation",
        "path": "price",
        "expected": {"type": "number"},
        "observed": "n/a",
        "detail": "'n/a' is not of type 'number'",
    }
    findings = found(result)
    assert findings["failed"] is False
    assert findings["source"] == "contract"
    assert findings["violations"] == [violation]
    assert findings["receipt"] == {
        "status": "inconsistent",
        "violations": [violation],
        "admissible_recovery_tools": [],
    }


async def test_receipt_names_recovery_tools_the_server_has(connect: Connect) -> None:
    contracts = Contracts(substitutes={"quote": ("quote_backup", "search")})
    async with connect() as client:
        session = RecoveringSession(client, contracts=contracts, form="off")
        result = await session.call_tool("quote", {"symbol": "ACME"})
    assert texts(result) == ['{\n  "symbol": "ACME",\n  "price": "n/a"\n}']
    assert found(result)["receipt"]["admissible_recovery_tools"] == ["search"]


async def test_a_failed_result_gets_no_receipt(connect: Connect) -> None:
    contracts = Contracts().declare("crash", {"type": "object"})
    async with connect() as client:
        session = RecoveringSession(client, contracts=contracts)
        result = await session.call_tool("crash", {"path": "a.txt"})
    findings = found(result)
    assert texts(result) == [CRASH]
    assert (findings["failed"], findings["source"]) == (True, "flag")
    assert (findings["violations"], findings["receipt"]) == ([], None)


async def test_a_clean_result_gets_clean_findings(connect: Connect) -> None:
    async with connect() as client:
        session = RecoveringSession(client, trust_annotations=True)
        result = await session.call_tool("add", {"a": 2, "b": 3})
    assert texts(result) == ["5"]
    assert result.meta is not None
    assert result.meta["toolmend"] == {
        "tool": "add",
        "effect": "read_only",
        "effect_source": "annotations",
        "form": "c3",
        "failed": False,
        "kind": None,
        "rule": None,
        "source": None,
        "reason": None,
        "guidance": None,
        "note": None,
        "attempts": 1,
        "retry_after": None,
        "outcome_unknown": False,
        "stop": None,
        "why_stopped": None,
        "history": [],
        "violations": [],
        "receipt": None,
    }
    if MCP2:  # the 2.x server names itself in every result; 1.x adds nothing
        assert result.meta["io.modelcontextprotocol/serverInfo"]["name"] == "toolmend-demo"
    else:
        assert list(result.meta) == ["toolmend"]
    wire = result.model_dump(by_alias=True, mode="json")
    assert wire["_meta"]["toolmend"] == result.meta["toolmend"]


# -- the tool listing follows notifications/tools/list_changed ---------------------------


async def test_tool_listing_is_refreshed_when_the_server_says_it_changed(
    connect: Connect, sleeps: SleepLog
) -> None:
    changed = anyio.Event()

    async def handler(message: Any) -> None:
        if isinstance(notification(message), ToolListChangedNotification):
            changed.set()

    async with connect(message_handler=handler) as client:
        session = RecoveringSession(client, trust_annotations=True)
        await session.call_tool("add", {"a": 1, "b": 1})
        async with listening(client):
            await session.call_tool("enable_refund", {})
            with anyio.fail_after(10):
                await changed.wait()
        result = await session.call_tool("refund_status", {"order": "o-1"})
    assert texts(result) == ["o-1: none"]
    findings = found(result)
    assert (findings["effect"], findings["attempts"]) == ("read_only", 2)
    assert len(sleeps.sleeps) == 1


@pytest.mark.parametrize(
    ("told", "malformed_calls"),
    [(True, False), (False, False), (False, True)],
    ids=["told", "not-told", "not-told-relisted"],
)
async def test_hosts_can_report_a_changed_listing_themselves(
    connect: Connect, told: bool, malformed_calls: bool
) -> None:
    async with connect() as client:
        session = RecoveringSession(client, trust_annotations=True, malformed_calls=malformed_calls)
        await session.call_tool("enable_refund", {})
        if told:
            await session.handle_message(ToolListChangedNotification())
        result = await session.call_tool("refund_status", {"order": "o-1"})
    findings = found(result)
    if told or malformed_calls or not MCP2:
        # SDK 1.x delivers notifications/tools/list_changed with no listen stream, and
        # the session watches its session's message handler itself; the check of a
        # call's name lists the tools again before calling a name unknown.
        assert (is_error(result), findings["effect"], findings["attempts"]) == (
            False,
            "read_only",
            2,
        )
    else:
        assert (is_error(result), findings["effect"], findings["stop"]) == (
            True,
            "unknown",
            "unsafe",
        )


async def test_cancellation_passes_through(connect: Connect) -> None:
    async with connect() as client:
        session = RecoveringSession(client, effects={"slow": "read_only"})
        with anyio.move_on_after(0.5) as scope:
            await session.call_tool("slow", {"seconds": 30})
        after = await session.call_tool("add", {"a": 1, "b": 2})
    assert scope.cancelled_caught is True
    assert texts(after) == ["3"]


# -- a hung server -------------------------------------------------------------------


async def test_a_hung_server_gives_a_transient_result_not_a_hang(connect: Connect) -> None:
    async with connect() as client:
        session = RecoveringSession(
            client,
            effects={"slow": "read_only"},
            retry=RetryPolicy(attempts=2, base=0.0, cap=0.0),
            read_timeout=0.3,
        )
        with anyio.fail_after(5):
            result = await session.call_tool("slow", {"seconds": 30})
    findings = found(result)
    assert is_error(result) is True
    assert (findings["kind"], findings["attempts"]) == ("transient", 2)


# -- policies under real conditions -----------------------------------------------------


async def test_a_short_outage_never_blocks_the_session(connect: Connect) -> None:
    async with connect() as client:
        session = RecoveringSession(
            client, effects={"status": "read_only"}, retry=RetryPolicy(attempts=1)
        )
        results = [await session.call_tool("status", {}) for _ in range(12)]
        assert (await counts(client))["status"] == 12
    rules = [found(r)["rule"] for r in results[:9]]
    assert "loop-budget" not in rules
    assert [is_error(r) for r in results] == [True] * 9 + [False] * 3
    # Nine failures with the same status: the pile-up note (stop, or ask the user).
    assert found(results[8])["guidance"] == PILE_UP.format(
        count=9, tool="status", error_class="503"
    )


async def test_a_valid_call_after_three_rejected_ones_is_sent(connect: Connect) -> None:
    async with connect() as client:
        session = RecoveringSession(client)
        guidance = []
        for zone in ("Mars/Olympus", "Moon/Base", "Pluto/Cold"):
            rejected = await session.call_tool("get_time", {"timezone": zone})
            findings = found(rejected)
            assert findings["kind"] == "fixable"
            assert findings["outcome_unknown"] is True  # undeclared: it may have acted
            guidance.append(findings["guidance"])
        ok = await session.call_tool("get_time", {"timezone": "Europe/Paris"})
        repeat = await session.call_tool("get_time", {"timezone": "Moon/Base"})
        assert (await counts(client))["get_time"] == 4
    assert texts(ok) == ["12:00 in Europe/Paris"]
    assert found(repeat)["rule"] == "loop-repeat"
    # The third failed fix of the same error: the pile-up note replaces the fix advice.
    assert guidance == [
        FIXABLE,
        FIXABLE,
        PILE_UP.format(count=3, tool="get_time", error_class="fixable"),
    ]


async def test_a_call_the_client_refused_before_sending_is_fixable(connect: Connect) -> None:
    async with connect() as client:
        session = RecoveringSession(client)
        result = await session.call_tool("get_time", {})
        assert "get_time" not in await counts(client)
    findings = found(result)
    assert (findings["kind"], findings["guidance"]) == ("fixable", FIXABLE)
    assert findings["note"].startswith(
        "Note from the tool runtime: the last attempt called get_time with no arguments"
    )


@pytest.mark.parametrize("mode", ["wrong-id", "null-result"])
async def test_a_server_that_never_answers_the_call_gives_a_result(mode: str) -> None:
    import sys
    from pathlib import Path

    from mcp.client.stdio import StdioServerParameters

    script = Path(__file__).with_name("mcp_broken_server.py")
    params = StdioServerParameters(command=sys.executable, args=[str(script), mode])
    async with open_connection(params) as client:
        session = RecoveringSession(
            client, effects={"status": "read_only"}, retry=RetryPolicy(attempts=2), read_timeout=0.5
        )
        with anyio.fail_after(10):
            result = await session.call_tool("status", {})
    assert is_error(result) is True
    findings = found(result)
    assert findings["failed"] is True
    assert (findings["kind"], findings["attempts"], findings["reason"]) == (
        "transient",
        2,
        f"MCP error {TIMEOUT} (request timeout)",
    )
