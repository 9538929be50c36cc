"""Policies under real conditions (issue: retry and loop-guard policies).

Each test reproduces a case where a policy did the wrong thing; it was written
before the fix and failed on the code before it.
"""

from __future__ import annotations

import socket
from typing import Any

import pytest

import toolmend
from toolmend import RetryPolicy, ToolFailure, testing
from toolmend.integrations import VERIFY_FIRST, CallContext, execute


class _Ledger:
    def __init__(self) -> None:
        self.entries: list[str] = []


@pytest.mark.parametrize(
    "raised",
    [
        ConnectionRefusedError(111, "Connection refused"),
        socket.gaierror(-3, "Temporary failure in name resolution"),
        RuntimeError("notify failed: [Errno 111] Connection refused"),
    ],
    ids=["refused", "gaierror", "wrapped"],
)
def test_a_write_that_committed_before_a_refused_follow_up_is_not_repeated(
    raised: BaseException,
) -> None:
    ledger = _Ledger()

    def place_order(ctx: CallContext) -> Any:
        ledger.entries.append("order")
        raise raised

    with testing():
        result = execute(place_order, tool="place_order", effect="write")
    assert ledger.entries == ["order"]
    assert isinstance(result, ToolFailure)
    assert result.attempts == 1
    assert result.outcome_unknown is True
    assert result.guidance == VERIFY_FIRST


def test_httpx_connect_error_after_a_write_is_not_repeated() -> None:
    httpx = pytest.importorskip("httpx")
    ledger = _Ledger()

    def place_order(ctx: CallContext) -> Any:
        ledger.entries.append("order")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        httpx.post(f"http://127.0.0.1:{port}/notify", timeout=2)

    with testing():
        result = execute(place_order, tool="place_order", effect="write")
    assert ledger.entries == ["order"]
    assert isinstance(result, ToolFailure)
    assert result.attempts == 1


def test_a_one_request_tool_may_opt_in_to_before_dispatch_retries() -> None:
    calls: list[int] = []

    def send(ctx: CallContext) -> Any:
        calls.append(ctx.attempt)
        if ctx.attempt == 1:
            raise ConnectionRefusedError(111, "Connection refused")
        return "sent"

    with testing():
        result = execute(
            send, tool="send", effect="write", policy=RetryPolicy(retry_before_dispatch=True)
        )
    assert (result, calls) == ("sent", [1, 2])
    assert toolmend.RetryPolicy().retry_before_dispatch is False


async def test_cancelled_calls_give_their_retry_tokens_back() -> None:
    import asyncio

    budget = toolmend.integrations.RetryBudget(capacity=10)
    policy = RetryPolicy(base=0.001, cap=0.001, budget=budget)
    hang = asyncio.Event()

    async def flaky(ctx: CallContext) -> Any:
        if ctx.attempt == 1:
            raise ConnectionResetError(104, "Connection reset by peer")
        await hang.wait()

    tasks = [
        asyncio.ensure_future(
            toolmend.integrations.aexecute(flaky, tool="status", effect="read_only", policy=policy)
        )
        for _ in range(10)
    ]
    for _ in range(200):
        await asyncio.sleep(0.005)
        if budget.available <= 0.5:
            break
    assert budget.available < 1
    for task in tasks:
        task.cancel()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert all(isinstance(r, asyncio.CancelledError) for r in results)
    assert budget.available == 10

    async def once_then_ok(ctx: CallContext) -> Any:
        if ctx.attempt < 3:
            raise ConnectionResetError(104, "Connection reset by peer")
        return "ok"

    assert (
        await toolmend.integrations.aexecute(
            once_then_ok, tool="status", effect="read_only", policy=policy
        )
        == "ok"
    )


async def test_concurrent_calls_under_testing_each_have_their_own_clock() -> None:
    import asyncio

    budget = toolmend.integrations.RetryBudget(capacity=1000)
    policy = RetryPolicy(attempts=3, base=8.0, cap=8.0, deadline=20.0, budget=budget)

    async def twice_then_ok(ctx: CallContext) -> Any:
        await asyncio.sleep(0)
        if ctx.attempt < 3:
            raise ConnectionResetError(104, "Connection reset by peer")
        return ctx.attempt

    with testing(seed=7):
        results = await asyncio.gather(
            *(
                toolmend.integrations.aexecute(
                    twice_then_ok, tool="status", effect="read_only", policy=policy
                )
                for _ in range(200)
            )
        )
    assert results == [3] * 200
    assert budget.available == 1000


def test_a_call_without_arguments_reads_naturally_in_the_note() -> None:
    assert toolmend.integrations.runtime_note("list_rooms", {}, "Error: HTTP Error 503", "G") == (
        "Note from the tool runtime: the last attempt called list_rooms with no arguments "
        "and it failed with: `Error: HTTP Error 503`\n\nG"
    )
    assert toolmend.integrations.runtime_note(
        "ping", None, "Error: HTTP Error 503", "G"
    ).startswith("Note from the tool runtime: the last attempt called ping with no arguments and")


async def test_the_deadline_bounds_a_running_attempt() -> None:
    import asyncio
    import time

    async def slow_failure(ctx: CallContext) -> Any:
        await asyncio.sleep(0.4)
        raise ConnectionResetError(104, "Connection reset by peer")

    policy = RetryPolicy(attempts=3, base=0.0, cap=0.0, deadline=1.0)
    start = time.monotonic()
    result = await toolmend.integrations.aexecute(
        slow_failure, tool="status", effect="read_only", policy=policy
    )
    wall = time.monotonic() - start
    assert isinstance(result, ToolFailure)
    assert result.attempts == 3
    assert 0.95 <= wall < 1.15
    assert result.history[-1].error == "TimeoutError: attempt timed out after 0.2 s"


async def test_an_attempt_timeout_bounds_each_attempt() -> None:
    import asyncio

    async def hang_once(ctx: CallContext) -> Any:
        if ctx.attempt == 1:
            await asyncio.sleep(30)
        return "ok"

    policy = RetryPolicy(attempts=2, base=0.0, cap=0.0, attempt_timeout=0.2)
    history: list[Any] = []
    result = await toolmend.integrations.aexecute(
        hang_once, tool="status", effect="read_only", policy=policy, history=history
    )
    assert result == "ok"
    assert [(h.attempt, h.kind.value) for h in history] == [(1, "transient")]
    assert history[0].error == "TimeoutError: attempt timed out after 0.2 s"


# -- 2. the loop guard: advice by default, a circuit breaker on opt-in -------------------


def test_a_short_outage_does_not_become_a_permanent_block() -> None:
    loop = toolmend.LoopGuard()
    down = {"n": 9}

    def status(ctx: CallContext) -> Any:
        if down["n"] > 0:
            down["n"] -= 1
            raise ConnectionResetError(104, "Connection reset by peer")
        return "up"

    outcomes = []
    with testing():
        for _ in range(6):
            outcomes.append(
                execute(
                    status,
                    tool="status",
                    effect="read_only",
                    loop=loop,
                    policy=RetryPolicy(attempts=1),
                )
            )
    assert down["n"] == 3
    assert all(isinstance(o, ToolFailure) and o.rule != "loop-budget" for o in outcomes)
    # Three failures with the same error class: the pile-up note replaces the guidance.
    assert outcomes[1].guidance == toolmend.integrations.GUIDANCE[toolmend.Kind.TRANSIENT]
    assert outcomes[2].guidance == (
        "The last 3 calls of status failed with the same error (ConnectionResetError), so "
        "another attempt is unlikely to help. Stop retrying it: tell the user what failed "
        "and what you tried, or ask the user how to proceed."
    )
    with testing():
        for _ in range(4):
            last = execute(
                status, tool="status", effect="read_only", loop=loop, policy=RetryPolicy(attempts=1)
            )
    assert last == "up"
    assert loop.consecutive_failures("status") == 0


def test_a_valid_call_after_three_invalid_ones_is_sent() -> None:
    loop = toolmend.LoopGuard()
    for zone in ("Mars/Olympus", "Moon/Base", "Pluto/Cold"):
        loop.record(
            "get_time", {"timezone": zone}, toolmend.Kind.FIXABLE, f"Invalid timezone: {zone}"
        )
    assert loop.before("get_time", {"timezone": "Europe/Paris"}) is None
    refused = loop.before("get_time", {"timezone": "Moon/Base"})
    assert refused is not None
    assert refused.rule == "loop-repeat"
    assert loop.consecutive_failures("get_time") == 3


def test_the_opt_in_hard_stop_half_opens_after_its_cool_down() -> None:
    clock = {"t": 0.0}
    loop = toolmend.LoopGuard(hard_stop=True, cool_down=60.0, clock=lambda: clock["t"])
    for i in range(3):
        loop.record("fetch", {"n": i}, toolmend.Kind.TRANSIENT, "503")
    first = loop.before("fetch", {"n": 9})
    assert first is not None
    assert first.rule == "loop-budget"
    assert loop.before("fetch", {"n": 10}) is not None
    assert loop.consecutive_failures("fetch") == 3
    clock["t"] = 61.0
    assert loop.before("fetch", {"n": 11}) is None
    loop.record("fetch", {"n": 11}, toolmend.Kind.TRANSIENT, "503")
    assert loop.before("fetch", {"n": 12}) is not None
    clock["t"] = 130.0
    assert loop.before("fetch", {"n": 13}) is None
    loop.record("fetch", {"n": 13}, None)
    assert loop.before("fetch", {"n": 14}) is None


def test_remembered_failures_expire_when_the_guard_is_bounded_in_time() -> None:
    clock = {"t": 0.0}
    loop = toolmend.LoopGuard(forget_after=300.0, clock=lambda: clock["t"])
    loop.record("get_time", {"timezone": "Mars"}, toolmend.Kind.FIXABLE, "Invalid timezone")
    assert loop.before("get_time", {"timezone": "Mars"}) is not None
    clock["t"] = 301.0
    assert loop.before("get_time", {"timezone": "Mars"}) is None
    assert loop.consecutive_failures("get_time") == 0


def test_a_status_code_in_the_text_means_the_request_was_refused_not_lost() -> None:
    """Only for a tool that opted in to be read from its exceptions (one request)."""

    def fetch(ctx: CallContext) -> Any:
        raise RuntimeError("Failed to fetch http://127.0.0.1/busy - status code 503")

    trusted = toolmend.RetryPolicy(retry_before_dispatch=True)
    with testing():
        result = execute(fetch, tool="fetch", effect="write", policy=trusted)
        untrusted = execute(fetch, tool="fetch", effect="write")
    assert isinstance(result, ToolFailure)
    assert (result.kind, result.outcome_unknown) == (toolmend.Kind.TRANSIENT, False)
    assert result.guidance == toolmend.integrations.GUIDANCE[toolmend.Kind.TRANSIENT]
    # by default a Python tool may have done anything before it raised
    assert isinstance(untrusted, ToolFailure)
    assert (untrusted.kind, untrusted.outcome_unknown) == (toolmend.Kind.TRANSIENT, True)
    assert untrusted.guidance == toolmend.integrations.VERIFY_FIRST
