"""What followed each failed call, recorded with the run's ``run_id``; the run ends with the agent.

A real ``Agent`` and the scripted ``FunctionModel`` play three runs: a call that
fails and then succeeds as it was, one that succeeds with another argument, and
one that fails twice alike before the model answers.  Each row is asserted
exactly, and so is when it came: at the evidence, or at the run's end.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pa_support import Script
from pydantic_ai import Agent, FunctionToolset

from outcome_rows import Rows, raised, recording
from toolmend.integrations import recording_outcomes
from toolmend_pydantic_ai import RecoveringToolset


@pytest.fixture
def rows() -> Iterator[Rows]:
    with recording() as sink:
        yield sink


def shop() -> tuple[FunctionToolset[None], list[str]]:
    """A payment locked once, a lookup with a typo'd table, a quote whose gateway is down."""
    tools: FunctionToolset[None] = FunctionToolset()
    calls: list[str] = []

    @tools.tool_plain
    def pay(invoice: str) -> str:
        """Pay an invoice."""
        calls.append(f"pay {invoice}")
        if calls.count("pay 7") == 1:
            raise ValueError("invoice 7 is locked")  # locked
        return f"paid {invoice}"

    @tools.tool_plain
    def lookup(table: str) -> str:
        """Count a table's rows."""
        calls.append(f"lookup {table}")
        if table == "ordrs":
            raise LookupError("no such table: ordrs")  # no-table
        return "3 rows"

    @tools.tool_plain
    def quote(invoice: str) -> str:
        """Quote an invoice's total."""
        calls.append(f"quote {invoice}")
        raise TimeoutError("gateway timed out")  # timed-out

    return tools, calls


def run(turns: list[list[tuple[str, dict[str, str]]]], run_id: str) -> list[str]:
    tools, calls = shop()
    toolset = RecoveringToolset(
        tools, effects={"pay": "write", "lookup": "read_only", "quote": "read_only"}
    )
    result = Agent(Script(turns).model, toolsets=[toolset]).run_sync("Go", run_id=run_id)
    assert result.output == "done"
    return calls


def cause(tool: str, error: str, marker: str, attempts: int = 1) -> str:
    return raised(__file__, tool, error, marker, attempts)


def test_a_failure_then_the_same_call_succeeding_is_retry_succeeded(rows: Rows) -> None:
    calls = run([[("pay", {"invoice": "7"})], [("pay", {"invoice": "7"})]], "run-a")
    assert calls == ["pay 7", "pay 7"]
    locked = cause("pay", "ValueError: invoice 7 is locked", "locked")
    assert rows.brief() == [("pay", locked, {"invoice": "7"}, "retry_succeeded", "run-a")]


def test_a_changed_argument_that_succeeds_is_changed_arguments_succeeded(rows: Rows) -> None:
    run([[("lookup", {"table": "ordrs"})], [("lookup", {"table": "orders"})]], "run-b")
    missing = cause("lookup", "LookupError: no such table: ordrs", "no-table")
    assert rows.brief() == [
        ("lookup", missing, {"table": "ordrs"}, "changed_arguments_succeeded", "run-b")
    ]


def test_the_same_failure_twice_settles_when_the_run_ends(rows: Rows) -> None:
    calls = run([[("quote", {"invoice": "8"})], [("quote", {"invoice": "8"})]], "run-c")
    assert calls == ["quote 8"] * 6  # each call retried by the core, twice
    down = cause("quote", "TimeoutError: gateway timed out", "timed-out", 3)
    assert rows.brief() == [
        ("quote", down, {"invoice": "8"}, "failed_again", "run-c"),
        ("quote", down, {"invoice": "8"}, "stopped", "run-c"),
    ]
    recorder = recording_outcomes()
    assert recorder is not None
    assert recorder.close() == ()  # nothing was left waiting


def test_runs_are_followed_apart(rows: Rows) -> None:
    run([[("pay", {"invoice": "7"})]], "run-d")
    run([[("pay", {"invoice": "7"})]], "run-e")  # a fresh tool: this run's call fails too
    locked = cause("pay", "ValueError: invoice 7 is locked", "locked")
    assert rows.brief() == [
        ("pay", locked, {"invoice": "7"}, "stopped", "run-d"),
        ("pay", locked, {"invoice": "7"}, "stopped", "run-e"),
    ]


def test_nothing_is_recorded_without_a_recorder() -> None:
    assert recording_outcomes() is None
    assert run([[("pay", {"invoice": "7"})], [("pay", {"invoice": "7"})]], "run-f") == [
        "pay 7",
        "pay 7",
    ]
