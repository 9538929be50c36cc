"""Outcomes from Agents SDK runs: what followed each failure, as rows for ``toolmend learn``."""

from __future__ import annotations

import gc
from typing import Any

from agents import Agent, Runner
from agents.testing import ScriptedModel, assistant_message, function_call
from oa_support import config, line_of

import toolmend_openai_agents as tm
from outcome_rows import Rows, recording
from toolmend.integrations import Outcomes, record_outcomes

CALLS: dict[str, int] = {}


def count(name: str) -> int:
    CALLS[name] = CALLS.get(name, 0) + 1
    return CALLS[name]


def _fetch(order: int) -> str:
    """Fetch an order; the backend drops the first connection."""
    if count("fetch") == 1:
        raise ConnectionError(RESET)
    return f"order {order}"


def _find(table: str) -> str:
    """Find rows in a table; the tool returns its errors as text."""
    if table != "orders":
        return f"Error: no such table: {table}"
    return "3 rows"


def _sync(account: str) -> str:
    """Sync an account; its backend is down."""
    raise ConnectionError("connection refused")


def _quote(symbol: str) -> str:
    """A read-only quote whose first attempt times out."""
    if count("quote") == 1:
        raise TimeoutError("read timed out")
    return f"{symbol} 12.5"


RESET = "connection reset by peer"
TOOLS = [
    tm.function_tool(_fetch, name_override="fetch"),
    tm.function_tool(_find, name_override="find"),
    tm.function_tool(_sync, name_override="sync"),
    tm.function_tool(_quote, name_override="quote", effect="read_only"),
]


def raised(name: str, fn: Any, needle: str, text: str) -> str:
    return f"Tool '{name}' failed after 1 attempt with {text}\nWhere: {line_of(fn, needle)}"


async def run(*turns: list[Any]) -> None:
    CALLS.clear()
    agent = Agent(name="assistant", model=ScriptedModel(list(turns)), tools=TOOLS)
    await Runner.run(agent, "go", run_config=config())


async def next_run() -> None:
    """Another run: the run before it has ended, and its failures settle."""
    gc.collect()
    await run([assistant_message("hello")])


def one_run(rows: Rows) -> str:
    """The run every row belongs to (a fresh name per run)."""
    (name,) = {row["run"] for row in rows.rows}
    assert name.startswith("run-")
    return str(name)


SAME_CALL = (
    [function_call("fetch", {"order": 7}, call_id="f1")],
    [function_call("fetch", {"order": 7}, call_id="f2")],
    [assistant_message("order 7")],
)


async def test_a_failure_then_the_same_call_succeeding_is_retry_succeeded() -> None:
    with recording() as rows:
        await run(*SAME_CALL)
        reset = raised(
            "fetch", _fetch, "ConnectionError(", "ConnectionError: connection reset by peer"
        )
        assert rows.brief() == [("fetch", reset, {"order": 7}, "retry_succeeded", one_run(rows))]


async def test_a_changed_argument_that_succeeds_is_changed_arguments_succeeded() -> None:
    with recording() as rows:
        await run(
            [function_call("find", {"table": "ordrs"}, call_id="q1")],
            [function_call("find", {"table": "orders"}, call_id="q2")],
            [assistant_message("3 rows")],
        )
        assert rows.brief() == [
            (
                "find",
                "Error: no such table: ordrs",
                {"table": "ordrs"},
                "changed_arguments_succeeded",
                one_run(rows),
            )
        ]


async def test_the_same_error_twice_settles_when_the_run_has_ended() -> None:
    refused = raised("sync", _sync, "ConnectionError(", "ConnectionError: connection refused")
    with recording() as rows:
        await run(
            [function_call("sync", {"account": "a1"}, call_id="s1")],
            [function_call("sync", {"account": "a1"}, call_id="s2")],
            [assistant_message("The sync service is down.")],
        )
        assert rows.rows == []  # the run's end is seen at the next run's first call
        await next_run()
        name = one_run(rows)
        assert rows.brief() == [
            ("sync", refused, {"account": "a1"}, "failed_again", name),
            ("sync", refused, {"account": "a1"}, "stopped", name),
        ]


async def test_an_automatic_retry_that_succeeded_settles_its_failed_attempt() -> None:
    with recording() as rows:
        await run(
            [function_call("quote", {"symbol": "ACME"}, call_id="p1")],
            [assistant_message("12.5")],
        )
        assert rows.brief() == [
            (
                "quote",
                "TimeoutError: read timed out",
                {"symbol": "ACME"},
                "retry_succeeded",
                one_run(rows),
            )
        ]


async def test_without_a_recorder_nothing_is_recorded() -> None:
    await run(
        [function_call("sync", {"account": "a1"}, call_id="s1")],
        [assistant_message("The sync service is down.")],
    )
    rows = Rows()
    record_outcomes(Outcomes(rows, clock=lambda: 0.0))
    try:
        await next_run()
    finally:
        record_outcomes(None)
    assert rows.rows == []
