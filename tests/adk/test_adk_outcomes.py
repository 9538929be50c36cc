"""What followed each failed call, recorded with the invocation id; ``after_run_callback`` ends it.

The real ``InMemoryRunner`` and the scripted model play three invocations: a call
that fails and then succeeds as it was, one that succeeds with another argument,
and one that fails twice alike before the model answers.  A spy plugin notes the
invocation id, so each row is asserted exactly.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from adk_support import run_agent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.plugins.base_plugin import BasePlugin

from outcome_rows import Rows, raised, recording
from toolmend_adk import ToolMendPlugin
from toolmend_adk.testing import call, reply


class Invocations(BasePlugin):
    """Notes each invocation's id as it starts."""

    def __init__(self) -> None:
        super().__init__("invocations")
        self.ids: list[str] = []

    async def before_run_callback(self, *, invocation_context: InvocationContext) -> None:
        self.ids.append(invocation_context.invocation_id)


@pytest.fixture
def rows() -> Iterator[Rows]:
    with recording() as sink:
        yield sink


def shop(calls: list[str]) -> list[Any]:
    """A payment locked once, a lookup with a typo'd table, a quote whose gateway is down."""

    def pay(invoice: str) -> dict[str, Any]:
        """Pay an invoice."""
        calls.append(f"pay {invoice}")
        if calls.count(f"pay {invoice}") == 1:
            raise ValueError(f"invoice {invoice} is locked")  # locked
        return {"paid": invoice}

    def lookup(table: str) -> dict[str, Any]:
        """Count a table's rows."""
        calls.append(f"lookup {table}")
        if table == "ordrs":
            raise LookupError("no such table: ordrs")  # no-table
        return {"rows": 3}

    def quote(invoice: str) -> dict[str, Any]:
        """Quote an invoice's total."""
        calls.append(f"quote {invoice}")
        raise TimeoutError("gateway timed out")  # timed-out

    return [pay, lookup, quote]


def play(tool: str, first: dict[str, str], second: dict[str, str]) -> tuple[str, list[str]]:
    """One invocation: ``tool`` called with ``first``, then ``second``, then an answer."""
    calls: list[str] = []
    spy = Invocations()
    plugin = ToolMendPlugin(effects={"pay": "write", "lookup": "read_only", "quote": "read_only"})
    script = [call(tool, first, id="c1"), call(tool, second, id="c2"), reply("done")]
    run_agent(shop(calls), script, [plugin, spy])
    [invocation] = spy.ids
    return invocation, calls


def test_a_failure_then_the_same_call_succeeding_is_retry_succeeded(rows: Rows) -> None:
    run, calls = play("pay", {"invoice": "7"}, {"invoice": "7"})
    assert calls == ["pay 7", "pay 7"]
    locked = raised(__file__, "pay", "ValueError: invoice 7 is locked", "locked")
    assert rows.brief() == [("pay", locked, {"invoice": "7"}, "retry_succeeded", run)]


def test_a_changed_argument_that_succeeds_is_changed_arguments_succeeded(rows: Rows) -> None:
    run, _ = play("lookup", {"table": "ordrs"}, {"table": "orders"})
    missing = raised(__file__, "lookup", "LookupError: no such table: ordrs", "no-table")
    assert rows.brief() == [
        ("lookup", missing, {"table": "ordrs"}, "changed_arguments_succeeded", run)
    ]


def test_the_same_failure_twice_settles_when_the_invocation_ends(rows: Rows) -> None:
    run, calls = play("quote", {"invoice": "8"}, {"invoice": "8"})
    assert calls == ["quote 8"] * 6  # each call retried by the core, twice
    down = raised(__file__, "quote", "TimeoutError: gateway timed out", "timed-out", 3)
    assert rows.brief() == [
        ("quote", down, {"invoice": "8"}, "failed_again", run),
        ("quote", down, {"invoice": "8"}, "stopped", run),
    ]


def test_each_invocation_is_its_own_run(rows: Rows) -> None:
    first, _ = play("lookup", {"table": "ordrs"}, {"table": "orders"})
    second, _ = play("quote", {"invoice": "8"}, {"invoice": "8"})
    assert first != second
    assert [(r[0], r[3], r[4]) for r in rows.brief()] == [
        ("lookup", "changed_arguments_succeeded", first),
        ("quote", "failed_again", second),
        ("quote", "stopped", second),
    ]
