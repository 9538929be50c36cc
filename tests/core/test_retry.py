"""execute / aexecute: safe retries, exact texts, budget, deadline, hooks, pass-through."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from typing import Any

import httpx
import pytest
from core_support import Loopback, Reply
from langgraph.errors import GraphInterrupt
from mcp.shared.exceptions import MCPError

from toolmend import Kind, RetryPolicy, ToolFailed, ToolFailure, Verdict, testing
from toolmend.integrations import (
    AttemptRecord,
    BudgetScope,
    CallContext,
    RetryBudget,
    Source,
    Stop,
    aexecute,
    execute,
    run_budgets,
)
from toolmend.run._failure import user_frames
from toolmend.run._retry import STOP_SENTENCES, budget_for

TRANSIENT = "This is a temporary failure. Retrying the same call is expected to succeed."
FIXABLE = (
    "This call cannot succeed as written. The error says what to change; "
    "call the tool again with the corrected value."
)
UNRECOVERABLE = (
    "This cannot be fixed by retrying or by changing the arguments. Tell the user what happened."
)
VERIFY_FIRST = (
    "This call may already have taken effect. Check whether it did before calling it again."
)
LATER = "Continue with other steps and call it again later, or tell the user it is unavailable."


def line_of(marker: str) -> int:
    """The line of this file that carries ``marker`` (exactly one does)."""
    with open(__file__) as source:
        lines = [i for i, text in enumerate(source, 1) if text.rstrip().endswith(marker)]
    assert len(lines) == 1
    return lines[0]


def here() -> int:
    """The line number of the caller's next line."""
    return sys._getframe(1).f_lineno + 1


def post(url: str, ctx: CallContext, timeout: float = 5.0) -> Any:
    response = httpx.post(
        url, json={"amount": 5}, headers={"Idempotency-Key": ctx.idempotency_key}, timeout=timeout
    )
    response.raise_for_status()
    return response.json()


def get(url: str) -> Any:
    response = httpx.get(url, timeout=5.0)
    response.raise_for_status()
    return response.json()


POST_LINE = post.__code__.co_firstlineno + 1
GET_RAISES = get.__code__.co_firstlineno + 2


# -- writes: never duplicated --------------------------------------------------------


def test_lost_reply_on_write_lands_once_and_says_verify_first(loopback: Loopback) -> None:
    url = loopback.script("/pay", Reply(delay=0.3), Reply(200))
    line = 0

    def pay(ctx: CallContext) -> Any:
        nonlocal line
        line = here()
        return post(url, ctx, timeout=0.05)

    with testing() as log:
        result = execute(pay, tool="pay", arguments={"amount": 5}, effect="write")

    assert isinstance(result, ToolFailure)
    assert len(loopback.hits("/pay")) == 1
    assert log.sleeps == []
    assert str(result) == (
        "Tool 'pay' failed after 1 attempt with httpx.ReadTimeout: timed out\n"
        f"Where: test_retry.py:{line} in pay > test_retry.py:{POST_LINE} in post\n" + VERIFY_FIRST
    )
    assert (result.kind, result.attempts, result.outcome_unknown, result.stop) == (
        Kind.TRANSIENT,
        1,
        True,
        Stop.UNSAFE,
    )


def test_unknown_effect_is_treated_as_write(loopback: Loopback) -> None:
    url = loopback.script("/pay", Reply(delay=0.3))
    with testing():
        result = execute(lambda ctx: post(url, ctx, timeout=0.05), tool="pay")
    assert isinstance(result, ToolFailure)
    assert result.guidance == VERIFY_FIRST
    assert len(loopback.hits("/pay")) == 1


def test_write_with_honoured_key_retries_with_the_same_key(loopback: Loopback) -> None:
    url = loopback.script("/pay", Reply(delay=0.3), Reply(200, body=b'{"charged": 5}'))
    keys: list[str] = []

    def pay(ctx: CallContext) -> Any:
        keys.append(ctx.idempotency_key)
        return post(url, ctx, timeout=0.05)

    with testing():
        result = execute(pay, tool="pay", effect="write", honours_key=True)

    assert result == {"charged": 5}
    sent = [seen.headers["idempotency-key"] for seen in loopback.hits("/pay")]
    assert len(keys) == 2
    assert sent == keys
    assert keys[0] == keys[1]


def test_explicit_key_is_used_on_every_attempt() -> None:
    seen: list[tuple[int, str]] = []

    def flaky(ctx: CallContext) -> str:
        seen.append((ctx.attempt, ctx.idempotency_key))
        if ctx.attempt < 3:
            raise ConnectionResetError(104, "Connection reset by peer")
        return "done"

    with testing():
        result = execute(flaky, tool="t", effect="write", honours_key=True, key="call-7")
    assert result == "done"
    assert seen == [(1, "call-7"), (2, "call-7"), (3, "call-7")]


def _timeout_write(effects: list[int]) -> Any:
    def pay(ctx: CallContext) -> str:
        if ctx.attempt == 1:
            raise TimeoutError("read timed out")  # RAISES
        effects.append(ctx.attempt)
        return "paid"

    return pay


def test_verify_false_makes_the_retry_safe() -> None:
    effects: list[int] = []
    asked: list[tuple[int, str]] = []

    def verify(ctx: CallContext, exc: BaseException) -> bool | None:
        asked.append((ctx.attempt, type(exc).__name__))
        return False

    with testing():
        result = execute(_timeout_write(effects), tool="pay", effect="write", verify=verify)
    assert result == "paid"
    assert effects == [2]
    assert asked == [(1, "TimeoutError")]


def test_verify_true_reports_that_the_call_landed() -> None:
    effects: list[int] = []
    with testing():
        result = execute(
            _timeout_write(effects), tool="pay", effect="write", verify=lambda ctx, exc: True
        )
    assert isinstance(result, ToolFailure)
    assert effects == []
    assert str(result) == (
        "Tool 'pay' failed after 1 attempt with TimeoutError: read timed out\n"
        f"Where: test_retry.py:{line_of('# RAISES')} in pay\n"
        "A check after the error found that this call did take effect. "
        "Do not call it again for the same purpose."
    )
    assert (result.outcome_unknown, result.stop) == (False, Stop.LANDED)


@pytest.mark.parametrize("answer", [None, "yes", RuntimeError("verify broke")])
def test_verify_unknown_or_broken_withholds_retry(answer: Any) -> None:
    def verify(ctx: CallContext, exc: BaseException) -> Any:
        if isinstance(answer, Exception):
            raise answer
        return answer

    effects: list[int] = []
    with testing():
        result = execute(_timeout_write(effects), tool="pay", effect="write", verify=verify)
    assert isinstance(result, ToolFailure)
    assert effects == []
    assert result.guidance == VERIFY_FIRST
    assert result.outcome_unknown is True


def test_write_refused_with_429_is_not_retried_and_may_have_landed(loopback: Loopback) -> None:
    """A Python tool may have done anything before the 429 it raised: check first."""
    url = loopback.script("/pay", Reply(429, {"Retry-After": "5"}))
    with testing() as log:
        result = execute(lambda ctx: post(url, ctx), tool="pay", effect="write")
    assert isinstance(result, ToolFailure)
    assert len(loopback.hits("/pay")) == 1
    assert log.sleeps == []
    assert result.outcome_unknown is True
    assert result.guidance == VERIFY_FIRST


def test_write_refused_with_429_may_be_repeated_when_the_tool_opts_in(loopback: Loopback) -> None:
    """A tool that is one request opts in to be read from its exception: a 429 is a refusal."""
    url = loopback.script("/pay", Reply(429, {"Retry-After": "5"}))
    policy = RetryPolicy(retry_before_dispatch=True)
    with testing() as log:
        result = execute(lambda ctx: post(url, ctx), tool="pay", effect="write", policy=policy)
    assert isinstance(result, ToolFailure)
    assert len(loopback.hits("/pay")) == 1
    assert log.sleeps == []
    assert result.outcome_unknown is False
    assert (
        result.guidance == TRANSIENT + " The service asked for a wait of 5 seconds before a retry."
    )


def test_write_that_was_never_dispatched_is_retried_when_the_tool_opts_in(
    loopback: Loopback, closed_port: str
) -> None:
    ok = loopback.script("/pay", Reply(200, body=b'{"charged": 5}'))

    def pay(ctx: CallContext) -> Any:
        return post(closed_port + "/pay" if ctx.attempt == 1 else ok, ctx)

    with testing() as log:
        result = execute(
            pay, tool="pay", effect="write", policy=RetryPolicy(retry_before_dispatch=True)
        )
    assert result == {"charged": 5}
    assert len(loopback.hits("/pay")) == 1
    assert len(log.sleeps) == 1


def test_before_dispatch_is_not_trusted_by_default(closed_port: str) -> None:
    with testing():
        result = execute(lambda ctx: post(closed_port, ctx), tool="pay", effect="write")
    assert isinstance(result, ToolFailure)
    assert result.attempts == 1
    assert result.outcome_unknown is True
    assert result.guidance == VERIFY_FIRST


def test_ambiguous_write_failure_may_have_landed() -> None:
    def tool(ctx: CallContext) -> None:
        raise KeyError("receipt")

    result = execute(tool, tool="pay", effect="write")
    assert isinstance(result, ToolFailure)
    assert result.guidance == VERIFY_FIRST


# -- reads: recovered, bounded ---------------------------------------------------------


def test_read_recovers_from_503s(loopback: Loopback) -> None:
    url = loopback.script("/q", Reply(503), Reply(503), Reply(200, body=b'{"rows": 3}'))
    with testing(seed=1) as log:
        result = execute(lambda ctx: get(url), tool="search", effect="read_only")
    assert result == {"rows": 3}
    assert len(loopback.hits("/q")) == 3
    assert len(log.sleeps) == 2
    assert 0 <= log.sleeps[0] <= 0.5
    assert 0 <= log.sleeps[1] <= 1.0


def test_retry_after_seconds_is_honoured(loopback: Loopback) -> None:
    url = loopback.script("/q", Reply(429, {"Retry-After": "5"}), Reply(200))
    with testing() as log:
        result = execute(lambda ctx: get(url), tool="search", effect="read_only")
    assert result == {"ok": True}
    assert log.sleeps == [5.0]


def test_retry_after_http_date_is_honoured(loopback: Loopback) -> None:
    from datetime import UTC, datetime
    from email.utils import format_datetime

    when = datetime.fromtimestamp(datetime.now(UTC).timestamp() + 20, UTC)
    url = loopback.script(
        "/q", Reply(503, {"Retry-After": format_datetime(when, usegmt=True)}), Reply(200)
    )
    with testing() as log:
        result = execute(lambda ctx: get(url), tool="search", effect="read_only")
    assert result == {"ok": True}
    assert len(log.sleeps) == 1
    assert 10 < log.sleeps[0] <= 20


def test_retry_after_beyond_the_deadline_stops_and_reports(loopback: Loopback) -> None:
    url = loopback.script("/q", Reply(503, {"Retry-After": "60"}))
    with testing() as log:
        result = execute(lambda ctx: get(url), tool="search", effect="read_only")
    assert isinstance(result, ToolFailure)
    assert log.sleeps == []
    assert (result.attempts, result.retry_after, result.stop) == (1, 60.0, Stop.DEADLINE)
    assert result.guidance == (
        "The service asked for a wait of 60 seconds before a retry, "
        "longer than the time left for this call. " + LATER
    )


def test_deadline_counts_the_waits_already_made() -> None:
    def tool(ctx: CallContext) -> None:
        raise ValueError("Service Unavailable, retry after 0.4s")

    with testing() as log:
        result = execute(tool, tool="t", effect="read_only", policy=RetryPolicy(
            attempts=10, deadline=1.0
        ))  # fmt: skip
    assert isinstance(result, ToolFailure)
    assert log.sleeps == [0.4, 0.4]
    assert (result.attempts, result.stop) == (3, Stop.DEADLINE)
    assert result.guidance == (
        "The service asked for a wait of 0.4 seconds before a retry, "
        "longer than the time left for this call. " + LATER
    )


def test_deadline_spent_without_a_hint() -> None:
    def tool(ctx: CallContext) -> None:
        raise TimeoutError("read timed out")

    result = execute(tool, tool="t", effect="read_only", policy=RetryPolicy(deadline=0))
    assert isinstance(result, ToolFailure)
    assert result.guidance == "The time allowed for this call ran out after 1 attempt. " + LATER


def test_attempts_exhausted(loopback: Loopback) -> None:
    url = loopback.script("/q", Reply(503))
    with testing() as log:
        result = execute(lambda ctx: get(url), tool="search", effect="read_only")  # EXHAUST
    assert isinstance(result, ToolFailure)
    assert len(loopback.hits("/q")) == 3
    assert len(log.sleeps) == 2
    assert str(result) == (
        "Tool 'search' failed after 3 attempts with httpx.HTTPStatusError: "
        f"Server error '503 Service Unavailable' for url '{url}'\n"
        f"Where: test_retry.py:{line_of('# EXHAUST')} in <lambda> > "
        f"test_retry.py:{GET_RAISES} in get\n"
        "All 3 attempts failed with a temporary error, so retrying now is unlikely to help. "
        + LATER
    )
    assert [r.stop for r in result.history] == [None, None, Stop.ATTEMPTS]


def test_single_attempt_policy_leaves_the_retry_to_the_model(loopback: Loopback) -> None:
    url = loopback.script("/q", Reply(503))
    result = execute(
        lambda ctx: get(url), tool="search", effect="read_only", policy=RetryPolicy.none()
    )
    assert isinstance(result, ToolFailure)
    assert result.guidance == TRANSIENT


@pytest.mark.parametrize(
    ("status", "kind", "guidance"),
    [(403, Kind.UNRECOVERABLE, UNRECOVERABLE), (422, Kind.FIXABLE, FIXABLE)],
)
def test_permanent_faults_are_not_retried(
    loopback: Loopback, status: int, kind: Kind, guidance: str
) -> None:
    url = loopback.script("/q", Reply(status))
    with testing() as log:
        result = execute(lambda ctx: get(url), tool="search", effect="read_only")
    assert isinstance(result, ToolFailure)
    assert len(loopback.hits("/q")) == 1
    assert log.sleeps == []
    assert (result.kind, result.attempts, result.guidance) == (kind, 1, guidance)


def test_ambiguous_read_failure_gets_no_guidance() -> None:
    def tool(ctx: CallContext) -> None:
        raise KeyError("customer_id")

    result = execute(tool, tool="lookup", effect="read_only")
    assert isinstance(result, ToolFailure)
    assert result.guidance is None
    assert str(result) == result.cause
    assert result.cause.startswith("Tool 'lookup' failed after 1 attempt with KeyError: ")


# -- the shared budget --------------------------------------------------------------------


def test_budget_stops_retries_across_calls(loopback: Loopback) -> None:
    url = loopback.script("/q", Reply(503))
    budget = RetryBudget(capacity=2, per_call=0)
    policy = RetryPolicy(budget=budget)
    with testing():
        first = execute(lambda ctx: get(url), tool="search", effect="read_only", policy=policy)
        second = execute(lambda ctx: get(url), tool="search", effect="read_only", policy=policy)
    assert isinstance(first, ToolFailure)
    assert isinstance(second, ToolFailure)
    assert (first.attempts, second.attempts) == (3, 1)
    assert second.stop is Stop.BUDGET
    assert second.guidance == (
        "Automatic retries of search are paused because its recent calls keep failing. " + LATER
    )


def test_retries_that_pay_off_are_refunded() -> None:
    budget = RetryBudget(capacity=1, per_call=0)

    def flaky(ctx: CallContext) -> str:
        if ctx.attempt == 1:
            raise TimeoutError("timed out")
        return "ok"

    with testing():
        for _ in range(5):
            assert (
                execute(flaky, tool="t", effect="read_only", policy=RetryPolicy(budget=budget))
                == "ok"
            )
    assert budget.available == 1.0


def test_sustained_outage_is_bounded_by_the_default_budget() -> None:
    attempts = 0

    def down(ctx: CallContext) -> None:
        nonlocal attempts
        attempts += 1
        raise ConnectionResetError(104, "Connection reset by peer")

    with testing():
        for _ in range(100):
            execute(down, tool="inventory", effect="read_only")
        assert budget_for("inventory").available < 1.0
    assert attempts == 119
    assert budget_for("inventory").available == 10.0


async def _burst(policy: RetryPolicy, per_run: bool, runs: int = 50) -> tuple[int, int]:
    """``runs`` concurrent runs whose first attempt times out: (retries refused, successes)."""
    refused = 0

    async def one() -> Any:
        nonlocal refused

        async def flaky(ctx: CallContext) -> str:
            await asyncio.sleep(0)
            if ctx.attempt == 1:
                raise TimeoutError("timed out")
            return "ok"

        if per_run:
            with run_budgets():
                out = await aexecute(flaky, tool="quote", effect="read_only", policy=policy)
        else:
            out = await aexecute(flaky, tool="quote", effect="read_only", policy=policy)
        if isinstance(out, ToolFailure) and out.stop is Stop.BUDGET:
            refused += 1
        return out

    with testing():
        outcomes = await asyncio.gather(*(one() for _ in range(runs)))
    return refused, sum(1 for o in outcomes if o == "ok")


async def test_the_default_budget_is_per_process_and_refuses_part_of_a_burst() -> None:
    """Issue 29.13, the documented default: one bucket per tool in the process."""
    assert RetryPolicy().budget_scope is BudgetScope.PROCESS
    refused, ok = await _burst(RetryPolicy(), per_run=False)
    assert (refused, ok) == (37, 13)


async def test_a_run_scoped_budget_lets_a_burst_of_independent_runs_retry() -> None:
    refused, ok = await _burst(RetryPolicy(budget_scope="run"), per_run=True)
    assert (refused, ok) == (0, 50)
    # without a run_budgets() block, the run scope is the process's
    refused, ok = await _burst(RetryPolicy(budget_scope="run"), per_run=False)
    assert (refused, ok) == (37, 13)


async def test_a_call_scoped_budget_is_bounded_by_attempts_alone() -> None:
    refused, ok = await _burst(RetryPolicy(budget_scope=BudgetScope.CALL), per_run=False)
    assert (refused, ok) == (0, 50)
    with pytest.raises(ValueError, match="'galaxy' is not a valid BudgetScope"):
        RetryPolicy(budget_scope="galaxy")


def test_a_budget_that_fails_counts_as_no_token_and_never_breaks_the_call(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A budget kept in a database that fails: no retry, and the call's outcome stands."""

    class Broken(RetryBudget):
        def acquire(self) -> bool:
            raise OSError("disk I/O error")

        def settle(self, *, succeeded: bool, retries: int) -> None:
            raise OSError("database is locked")

    calls: list[int] = []

    def flaky(ctx: CallContext) -> str:
        calls.append(ctx.attempt)
        if ctx.attempt == 1:
            raise TimeoutError("timed out")
        return "ok"

    policy = RetryPolicy(budget=Broken())
    with testing():
        out = execute(flaky, tool="quote", effect="read_only", policy=policy)
        assert execute(lambda ctx: "fine", tool="quote", policy=policy) == "fine"
    assert isinstance(out, ToolFailure)
    assert out.stop is Stop.BUDGET
    assert calls == [1]
    messages = [r.getMessage() for r in caplog.records if r.name == "toolmend.retry"]
    assert "retry budget acquire failed (OSError: disk I/O error); no retry" in messages
    assert "retry budget settle failed (OSError: database is locked); ignored" in messages


# -- hooks, logging, pass-through -----------------------------------------------------------


def test_hooks_are_called_and_cannot_break_the_call() -> None:
    events: list[Any] = []

    def on_attempt(ctx: CallContext) -> None:
        events.append(("attempt", ctx.attempt))
        raise RuntimeError("hook bug")

    policy = RetryPolicy(
        on_attempt=on_attempt,
        on_sleep=lambda ctx, delay: events.append(("sleep", ctx.attempt, delay)),
        on_give_up=lambda failure: events.append(("give_up", failure.attempts)),
    )

    def tool(ctx: CallContext) -> None:
        raise ValueError("Too Many Requests, retry in 2s")

    with testing():
        result = execute(tool, tool="t", effect="read_only", policy=policy)
    assert isinstance(result, ToolFailure)
    assert events == [
        ("attempt", 1),
        ("sleep", 1, 2.0),
        ("attempt", 2),
        ("sleep", 2, 2.0),
        ("attempt", 3),
        ("give_up", 3),
    ]


def test_logging(caplog: pytest.LogCaptureFixture) -> None:
    def tool(ctx: CallContext) -> None:
        raise PermissionError(13, "Permission denied")

    with caplog.at_level(logging.INFO, logger="toolmend"):
        execute(tool, tool="t", effect="read_only")
    messages = [(r.name, r.getMessage()) for r in caplog.records]
    assert messages == [
        (
            "toolmend.retry",
            "tool t attempt 1 failed: PermissionError: [Errno 13] Permission denied "
            "(kind=unrecoverable, reason=errno EACCES); stop=kind",
        ),
        (
            "toolmend.retry",
            "tool t failed: kind=unrecoverable reason=errno EACCES attempts=1 stop=kind "
            "outcome_unknown=False",
        ),
    ]
    assert [r.exc_info for r in caplog.records] == [None, None]


def test_the_traceback_is_logged_at_debug_only(caplog: pytest.LogCaptureFixture) -> None:
    def tool(ctx: CallContext) -> None:
        raise PermissionError(13, "Permission denied")

    with caplog.at_level(logging.DEBUG, logger="toolmend.retry"):
        execute(tool, tool="t", effect="read_only")
    (debug,) = [r for r in caplog.records if r.levelno == logging.DEBUG]
    assert debug.getMessage() == "tool t: traceback of the last attempt"
    assert debug.exc_info is not None
    assert isinstance(debug.exc_info[1], PermissionError)
    assert [r.exc_info for r in caplog.records if r.levelno == logging.INFO] == [None, None]


class Interrupt(Exception):
    pass


@pytest.mark.parametrize(
    ("exc", "passthrough"),
    [
        (KeyboardInterrupt(), ()),
        (SystemExit(1), ()),
        (GraphInterrupt(()), ()),
        (Interrupt("stop"), (Interrupt,)),
        (MCPError(-32042, "URL elicitation required"), ()),
    ],
)
def test_control_flow_passes_through(exc: BaseException, passthrough: Any) -> None:
    calls = 0

    def tool(ctx: CallContext) -> None:
        nonlocal calls
        calls += 1
        raise exc

    with pytest.raises(type(exc)) as raised:
        execute(tool, tool="t", effect="read_only", passthrough=passthrough)
    assert raised.value is exc
    assert calls == 1


async def test_cancellation_passes_through_async() -> None:
    calls = 0

    async def tool(ctx: CallContext) -> None:
        nonlocal calls
        calls += 1
        raise asyncio.CancelledError()

    with pytest.raises(asyncio.CancelledError):
        await aexecute(tool, tool="t", effect="read_only")
    assert calls == 1


async def test_cancelling_a_waiting_retry_cancels_it() -> None:
    async def tool(ctx: CallContext) -> None:
        raise TimeoutError("timed out")

    policy = RetryPolicy(base=30, cap=30, attempts=3, deadline=None, max_wait=60)
    task = asyncio.ensure_future(aexecute(tool, tool="t", effect="read_only", policy=policy))
    for _ in range(5):
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


# -- async ---------------------------------------------------------------------------------


async def test_aexecute_recovers_and_keeps_the_key(loopback: Loopback) -> None:
    url = loopback.script("/pay", Reply(503), Reply(200, body=b'{"charged": 5}'))
    keys: list[str] = []

    async def pay(ctx: CallContext) -> Any:
        keys.append(ctx.idempotency_key)
        async with httpx.AsyncClient() as client:
            response = await client.post(url, headers={"Idempotency-Key": ctx.idempotency_key})
            response.raise_for_status()
            return response.json()

    with testing() as log:
        result = await aexecute(pay, tool="pay", effect="write", honours_key=True)
    assert result == {"charged": 5}
    assert len(log.sleeps) == 1
    assert [s.headers["idempotency-key"] for s in loopback.hits("/pay")] == keys
    assert len(set(keys)) == 1


async def test_aexecute_lost_reply_with_async_verify(loopback: Loopback) -> None:
    url = loopback.script("/pay", Reply(delay=0.3))

    async def pay(ctx: CallContext) -> Any:
        async with httpx.AsyncClient(timeout=0.05) as client:
            return (await client.post(url)).json()

    async def verify(ctx: CallContext, exc: BaseException) -> bool | None:
        return None

    with testing():
        result = await aexecute(pay, tool="pay", effect="write", verify=verify)
    assert isinstance(result, ToolFailure)
    assert result.guidance == VERIFY_FIRST
    assert len(loopback.hits("/pay")) == 1


def test_testing_switch_off_really_sleeps() -> None:
    def flaky(ctx: CallContext) -> str:
        if ctx.attempt == 1:
            raise TimeoutError("timed out")
        return "ok"

    policy = RetryPolicy(base=0.001, cap=0.001)
    with testing() as outer, testing(False) as inner:
        assert execute(flaky, tool="t", effect="read_only", policy=policy) == "ok"
    assert (outer.sleeps, inner.sleeps) == ([], [])


# -- the failure value ----------------------------------------------------------------------


def test_failure_record(loopback: Loopback) -> None:
    url = loopback.script("/q", Reply(503, {"Retry-After": "1"}))
    with testing():
        result = execute(
            lambda ctx: get(url), tool="search", arguments={"q": "x"}, effect="read_only"
        )
    assert isinstance(result, ToolFailure)
    assert result.verdict() == Verdict(
        True, Kind.TRANSIENT, "exception", Source.EXCEPTION, "HTTP 503", result.guidance
    )
    detection = result.detection
    assert (detection.tool_name, detection.arguments, detection.source) == (
        "search",
        {"q": "x"},
        Source.EXCEPTION,
    )
    data = json.loads(json.dumps(result.to_dict()))
    assert data["attempts"] == 3
    assert data["exception"].startswith("httpx.HTTPStatusError: Server error '503")
    assert [h["delay"] for h in data["history"]] == [1.0, 1.0, None]
    assert [h["stop"] for h in data["history"]] == [None, None, "attempts"]
    assert data["history"][0]["reason"] == "HTTP 503"


def test_huge_errors_are_capped() -> None:
    def tool(ctx: CallContext) -> None:
        raise ValueError("x" * 10_000)

    result = execute(tool, tool="t", effect="read_only")
    assert isinstance(result, ToolFailure)
    assert len(result.cause) < 2100
    assert "characters omitted" in result.cause


# -- reports and effects ---------------------------------------------------------------------


def test_history_reports_retries_that_succeeded() -> None:
    def flaky(ctx: CallContext) -> str:
        if ctx.attempt == 1:
            raise ValueError("Service Unavailable, retry in 3s")
        return "ok"

    history: list[Any] = []
    with testing():
        assert execute(flaky, tool="t", effect="read_only", history=history) == "ok"
    assert [(r.attempt, r.kind, r.reason, r.delay, r.stop) for r in history] == [
        (1, Kind.TRANSIENT, "text 'Service Unavailable'", 3.0, None)
    ]


def test_a_returned_failure_counts_as_a_failure_for_the_loop_guard() -> None:
    from toolmend import LoopGuard

    loop = LoopGuard(max_consecutive_failures=1, hard_stop=True)
    inner = execute(lambda ctx: int("x"), tool="parse", effect="read_only")
    assert isinstance(inner, ToolFailure)
    assert execute(lambda ctx: inner, tool="parse", effect="read_only", loop=loop) is inner
    blocked = execute(lambda ctx: 1, tool="parse", effect="read_only", loop=loop)
    assert isinstance(blocked, ToolFailure)
    assert blocked.rule == "loop-budget"


def test_a_failed_result_is_its_own_cause_and_the_loop_guard_quotes_it() -> None:
    from toolmend import LoopGuard
    from toolmend.integrations import ResultFailed

    text = "Error executing tool stock: 503 Service Unavailable"
    runs: list[int] = []

    def stock(ctx: CallContext) -> str:
        runs.append(ctx.attempt)
        raise ResultFailed(text, Kind.TRANSIENT, "Service Unavailable", {"isError": True})

    loop = LoopGuard()
    with testing() as log:
        result = execute(stock, tool="stock", effect="read_only", loop=loop)
    assert isinstance(result, ToolFailure)
    assert (runs, len(log.sleeps)) == ([1, 2, 3], 2)
    assert str(result) == (
        f"{text}\nAll 3 attempts failed with a temporary error, so retrying now is unlikely "
        "to help. " + LATER
    )
    assert isinstance(result.exception, ResultFailed)
    assert result.exception.result == {"isError": True}

    def denied(ctx: CallContext) -> str:
        raise ResultFailed("Permission denied: /etc/shadow", Kind.UNRECOVERABLE, "denied", None)

    first = execute(denied, tool="read", effect="read_only", loop=loop)
    again = execute(denied, tool="read", effect="read_only", loop=loop)
    assert isinstance(first, ToolFailure)
    assert isinstance(again, ToolFailure)
    assert first.cause == "Permission denied: /etc/shadow"
    assert again.cause == (
        "Tool 'read' was not run: this exact call already failed in this task. "
        "The earlier error: Permission denied: /etc/shadow"
    )


def test_a_failed_result_of_a_write_keeps_the_cores_decision_as_returned() -> None:
    from toolmend.integrations import VERIFY_FIRST, ResultFailed

    text = "HTTP 503 Service Unavailable"
    judged = Verdict(True, Kind.TRANSIENT, "status", Source.FLAG, "Service Unavailable")
    runs: list[int] = []

    def pay(ctx: CallContext) -> str:
        runs.append(ctx.attempt)
        raise ResultFailed(text, judged.kind, judged.reason, "the message")

    failure = execute(pay, tool="pay", arguments={"to": "bob"}, effect="write")
    assert isinstance(failure, ToolFailure)
    assert runs == [1]
    assert (failure.rule, failure.reason) == ("exception", "returned failure: Service Unavailable")

    shown, verdict = failure.as_returned(judged)
    assert shown.to_dict() == {
        **failure.to_dict(),
        "rule": "status",
        "reason": "Service Unavailable",
        "exception": None,
    }
    assert (shown.guidance, shown.stop, shown.outcome_unknown) == (VERIFY_FIRST, Stop.UNSAFE, True)
    assert verdict == Verdict(
        True, Kind.TRANSIENT, "status", Source.FLAG, "Service Unavailable", VERIFY_FIRST
    )
    assert judged.guidance is None


def test_effects() -> None:
    from types import SimpleNamespace

    from toolmend import Effect, declare_effect
    from toolmend.integrations import effect_from_mcp, effect_of

    assert Effect.parse("Read-Only") is Effect.READ_ONLY
    assert Effect.parse("readonly") is Effect.READ_ONLY
    assert Effect.parse("typo") is Effect.UNKNOWN
    assert Effect.parse(None) is Effect.UNKNOWN
    assert [e.repeatable for e in Effect] == [True, True, False, False]

    @declare_effect("idempotent")
    def put(key: str) -> None:
        return None

    wrapper = SimpleNamespace(name="put_tool", func=put)
    assert effect_of(put) is Effect.IDEMPOTENT
    assert effect_of(wrapper) is Effect.IDEMPOTENT
    assert effect_of(wrapper, {"put_tool": "write"}) is Effect.WRITE
    assert effect_of(lambda: None) is Effect.UNKNOWN
    assert effect_from_mcp({"readOnlyHint": True}) is Effect.READ_ONLY
    assert effect_from_mcp(SimpleNamespace(readOnlyHint=False, idempotentHint=True)) is (
        Effect.IDEMPOTENT
    )
    assert effect_from_mcp({"destructiveHint": False}) is Effect.WRITE
    assert effect_from_mcp(SimpleNamespace(read_only_hint=False)) is Effect.WRITE
    assert effect_from_mcp({"title": "Search"}) is Effect.UNKNOWN
    assert effect_from_mcp(None) is Effect.UNKNOWN


# -- why a call stopped, and failures built outside execute ------------------------------


def test_every_stop_has_its_sentence() -> None:
    assert set(STOP_SENTENCES) == set(Stop)
    assert Stop.UNSAFE.sentence == (
        "Not retried: the call may have taken effect, and the tool is not declared safe to repeat."
    )


def test_the_failure_and_its_attempts_say_why_they_stopped() -> None:
    def pay(ctx: CallContext) -> None:
        raise TimeoutError("timed out")

    history: list[AttemptRecord] = []
    failure = execute(pay, tool="pay", effect="write", history=history)
    assert isinstance(failure, ToolFailure)
    assert failure.why_stopped == Stop.UNSAFE.sentence
    assert failure.to_dict()["why_stopped"] == Stop.UNSAFE.sentence
    assert [h.to_dict()["why_stopped"] for h in history] == [Stop.UNSAFE.sentence]
    assert history[0].exception is failure.exception


def test_history_keeps_what_each_attempt_raised() -> None:
    errors = [ValueError("Service Unavailable"), ValueError("Service Unavailable, again")]

    def flaky(ctx: CallContext) -> str:
        if errors:
            raise errors.pop(0)
        return "ok"

    history: list[AttemptRecord] = []
    with testing():
        assert execute(flaky, tool="t", effect="read_only", history=history) == "ok"
    assert [str(h.exception) for h in history] == [
        "Service Unavailable",
        "Service Unavailable, again",
    ]
    assert [h.why_stopped for h in history] == [None, None]


def test_failure_from_one_raised_exception() -> None:
    exc = raised_at_line(TimeoutError("timed out"))
    failure = ToolFailure.from_exception(exc, tool="pay", arguments={"amount": 5}, effect="write")
    assert (failure.kind, failure.attempts, failure.stop, failure.outcome_unknown) == (
        Kind.TRANSIENT,
        1,
        None,
        True,
    )
    assert str(failure) == (
        "Tool 'pay' failed after 1 attempt with TimeoutError: timed out\n"
        f"Where: test_retry.py:{line_of('# FROM_EXCEPTION')} in raised_at_line\n" + VERIFY_FIRST
    )
    read = ToolFailure.from_exception(exc, tool="get", effect="read_only")
    assert (read.outcome_unknown, read.guidance, read.arguments) == (False, TRANSIENT, {})
    assert ToolFailure.from_exception(ToolFailed(failure), tool="other") is failure
    assert str(ToolFailed(failure)) == str(failure)


def raised_at_line(exc: BaseException) -> BaseException:
    try:
        raise exc  # FROM_EXCEPTION
    except BaseException as caught:
        return caught


def _raise_through(filename: str, module: str) -> BaseException:
    """An exception raised by :func:`user_tool` through code that claims ``filename``."""
    namespace: dict[str, Any] = {"__name__": module, "inner": user_tool}
    exec(compile("def adapter():\n    inner()\n", filename, "exec"), namespace)
    try:
        namespace["adapter"]()  # RAISE_THROUGH
    except BaseException as exc:
        return exc
    raise AssertionError("nothing raised")


def user_tool() -> None:
    raise ValueError("bad")  # USER_TOOL


@pytest.mark.parametrize(
    ("filename", "module"),
    [
        ("/work/app/packages/openai_agents/src/toolmend_openai_agents/tools.py", "adapter"),
        ("/home/u/proj/src/toolmend/execute.py", "__main__"),
        ("/home/u/proj/lib/wrapper.py", "toolmend_custom.wrapper"),
        ("/home/u/proj/lib/wrapper.py", "toolmend"),
    ],
)
def test_frames_of_every_toolmend_package_are_not_the_users(filename: str, module: str) -> None:
    assert user_frames(_raise_through(filename, module)) == (
        f"test_retry.py:{line_of('# RAISE_THROUGH')} in _raise_through > "
        f"test_retry.py:{line_of('# USER_TOOL')} in user_tool"
    )


def test_a_users_own_src_folder_is_the_users() -> None:
    exc = _raise_through("/home/u/proj/src/shop/tools.py", "shop.tools")
    assert user_frames(exc) == (
        f"test_retry.py:{line_of('# RAISE_THROUGH')} in _raise_through > "
        f"tools.py:2 in adapter > test_retry.py:{line_of('# USER_TOOL')} in user_tool"
    )
