"""Outcomes from a RecoveringSession: what followed each failure, as rows for ``toolmend learn``.

One session is one run; the demo server runs in memory and over stdio.
"""

from __future__ import annotations

from mcp_sdk import Connect

from outcome_rows import Rows, recording
from toolmend.integrations import Outcomes, record_outcomes
from toolmend_mcp import RecoveringSession

RATE_LIMIT = "Error executing tool search: rate limit exceeded, retry in 2s"


async def test_a_failure_then_the_same_call_succeeding_is_retry_succeeded(
    connect: Connect,
) -> None:
    with recording() as rows:
        async with connect() as client, RecoveringSession(client) as session:
            await session.call_tool("search", {"query": "mcp"})  # not retried: undeclared
            await session.call_tool("search", {"query": "mcp"})
            assert rows.brief() == [
                ("search", RATE_LIMIT, {"query": "mcp"}, "retry_succeeded", session.run_id)
            ]
    assert len(rows.rows) == 1


async def test_a_changed_argument_that_succeeds_is_changed_arguments_succeeded(
    connect: Connect,
) -> None:
    with recording() as rows:
        async with connect() as client, RecoveringSession(client) as session:
            await session.call_tool("get_time", {"timezone": "Mars/Olympus"})
            await session.call_tool("get_time", {"timezone": "UTC"})
            run = session.run_id
    assert rows.brief() == [
        (
            "get_time",
            "Error executing tool get_time: Invalid timezone: 'Mars/Olympus'",
            {"timezone": "Mars/Olympus"},
            "changed_arguments_succeeded",
            run,
        )
    ]


async def test_the_same_error_twice_then_the_session_closing(connect: Connect) -> None:
    busy = "Error executing tool transfer: 503 Service Unavailable: ledger busy, retry in 1s"
    arguments = {"amount": 5, "to": "bob"}
    with recording() as rows:
        async with connect() as client:
            async with RecoveringSession(client) as session:
                await session.call_tool("transfer", arguments)
                await session.call_tool("transfer", arguments)
                assert rows.rows == []
                run = session.run_id
            assert rows.brief() == [
                ("transfer", busy, arguments, "failed_again", run),
                ("transfer", busy, arguments, "stopped", run),
            ]
            # The session goes on as a new run.
            await session.call_tool("transfer", arguments)
            second = session.run_id
            session.end_run()
    assert rows.brief()[2:] == [("transfer", busy, arguments, "stopped", second)]
    assert second != run


async def test_an_automatic_retry_that_succeeded_settles_its_failed_attempt(
    connect: Connect,
) -> None:
    with recording() as rows:
        async with connect() as client:
            session = RecoveringSession(client, effects={"search": "read_only"})
            await session.call_tool("search", {"query": "mcp"})
            assert rows.brief() == [
                ("search", RATE_LIMIT, {"query": "mcp"}, "retry_succeeded", session.run_id)
            ]


async def test_without_a_recorder_nothing_is_recorded(connect: Connect) -> None:
    rows = Rows()
    async with connect() as client, RecoveringSession(client) as session:
        await session.call_tool("search", {"query": "mcp"})
        record_outcomes(Outcomes(rows, clock=lambda: 0.0))
    record_outcomes(None)
    assert rows.rows == []


async def test_an_unclear_failure_of_a_call_that_worked_in_this_run_reads_as_temporary() -> None:
    from collections import Counter

    from mcp_sdk import is_error, new_server, open_connection

    server = new_server("flaky")
    calls: Counter[str] = Counter()

    @server.tool()
    def report(name: str) -> str:
        calls[name] += 1
        if calls[name] == 2:
            raise RuntimeError("something went wrong")
        return f"report {name}"

    async with open_connection(server) as client, RecoveringSession(client) as session:
        await session.call_tool("report", {"name": "q3"})
        other = await session.call_tool("report", {"name": "q4"})
        again = await session.call_tool("report", {"name": "q3"})
        fresh = await session.call_tool("report", {"name": "q4"})
    assert not is_error(other)
    findings = again.meta["toolmend"]
    assert (findings["kind"], findings["reason"]) == (
        "transient",
        "returned failure: the same call succeeded earlier in this run",
    )
    assert is_error(fresh)  # q4's second call: it worked once, then failed like this
    assert fresh.meta["toolmend"]["kind"] == "transient"
