"""ToolMendPlugin on the real ADK runner: what the model's next request carries, and side effects.

Each test runs ``InMemoryRunner`` with a scripted ``BaseLlm`` and asserts the exact
function response in the model's next request, and how many times each tool body ran.
"""

from __future__ import annotations

import inspect
import json
from collections import Counter
from typing import Any

import pytest
from adk_support import FIXABLE, TRANSIENT, UNRECOVERABLE, VERIFY_FIRST, arun_agent, run_agent
from google.adk.plugins import ReflectAndRetryToolPlugin

from toolmend import LoopGuard, RetryPolicy, declare_effect
from toolmend.contracts import Contracts
from toolmend.integrations import CallContext
from toolmend_adk import ToolMendPlugin
from toolmend_adk.testing import call, reply

PILE_UP = (
    "The last 3 calls of lookup failed with the same error (PermissionError), so another "
    "attempt is unlikely to help. Stop retrying it: tell the user what failed and what you "
    "tried, or ask the user how to proceed."
)


class Bookings:
    """A booking backend whose write lands, then the reply is lost (a TimeoutError)."""

    def __init__(self) -> None:
        self.booked: list[str] = []
        self.runs: Counter[str] = Counter()

    def book_room(self, room: str) -> dict[str, Any]:
        """Book a hotel room."""
        self.runs["book_room"] += 1
        self.booked.append(room)
        raise TimeoutError("the booking service did not answer in 10 s")


def where(fn: Any) -> str:
    """``file:line in name`` of the ``raise`` in ``fn``, as the core's cause cites it."""
    lines, start = inspect.getsourcelines(fn)
    line = start + next(i for i, text in enumerate(lines) if "raise " in text)
    return f"test_adk_plugin.py:{line} in {fn.__name__}"


def forecast_tool(runs: Counter[str], fails: int) -> Any:
    def forecast(city: str) -> dict[str, Any]:
        """The weather forecast for a city."""
        runs["forecast"] += 1
        if runs["forecast"] <= fails:
            raise ConnectionError("connection reset by peer")
        return {"city": city, "forecast": "sunny"}

    return forecast


def test_stock_runner_ends_the_run_when_a_tool_raises_timeout_error() -> None:
    """Without a plugin ADK re-raises the tool's exception: the run is over, the model never
    hears of it."""
    bookings = Bookings()
    with pytest.raises(TimeoutError, match="did not answer"):
        run_agent([bookings.book_room], [call("book_room", {"room": "A12"}), reply("Booked.")])
    assert bookings.booked == ["A12"]


def test_reflect_and_retry_restates_the_checklist_for_a_write_that_landed() -> None:
    """ADK's own plugin: one fixed checklist for every failure, no word that the booking
    may have gone through; the model is told not to repeat the call, whatever it was."""
    bookings = Bookings()
    model = run_agent(
        [bookings.book_room],
        [call("book_room", {"room": "A12"}), reply("Sorry.")],
        [ReflectAndRetryToolPlugin()],
    )
    [seen] = model.function_responses(1)
    guidance = seen["response"]["reflection_guidance"]
    assert seen["response"]["error_details"] == "the booking service did not answer in 10 s"
    assert "Do not repeat the exact same call." in guidance
    assert "taken effect" not in guidance
    assert bookings.runs["book_room"] == 1


def test_a_write_that_landed_before_a_timeout_lands_once_and_the_model_checks_first() -> None:
    bookings = Bookings()
    plugin = ToolMendPlugin(effects={"book_room": "write"})
    model = run_agent(
        [bookings.book_room],
        [call("book_room", {"room": "A12"}), reply("Let me check the booking.")],
        [plugin],
    )
    assert bookings.booked == ["A12"]
    assert model.function_responses(1) == [
        {
            "id": "call_1",
            "name": "book_room",
            "response": {
                "error": "Tool 'book_room' failed after 1 attempt with TimeoutError: the booking "
                f"service did not answer in 10 s\nWhere: {where(Bookings.book_room)}",
                "guidance": VERIFY_FIRST,
            },
        }
    ]
    [record] = plugin.records
    assert (record.effect, record.effect_source, record.outcome_unknown) == (
        "write",
        "declared",
        True,
    )


def test_an_undeclared_tool_is_a_write() -> None:
    bookings = Bookings()
    model = run_agent(
        [bookings.book_room], [call("book_room", {"room": "A12"}), reply("Checking.")],
        [ToolMendPlugin()],
    )  # fmt: skip
    assert model.function_responses(1)[0]["response"]["guidance"] == VERIFY_FIRST
    assert bookings.runs["book_room"] == 1


def test_a_verify_hook_that_finds_nothing_landed_lets_the_write_run_again() -> None:
    runs: Counter[str] = Counter()

    def send_invoice(customer: str) -> dict[str, Any]:
        """Send an invoice."""
        runs["send_invoice"] += 1
        if runs["send_invoice"] == 1:
            raise TimeoutError("gateway timeout")
        return {"sent": customer}

    asked: list[tuple[int, str]] = []

    def landed(ctx: CallContext, exc: BaseException) -> bool:
        asked.append((ctx.attempt, type(exc).__name__))
        return False

    plugin = ToolMendPlugin(effects={"send_invoice": "write"}, verify={"send_invoice": landed})
    model = run_agent(
        [send_invoice], [call("send_invoice", {"customer": "ACME"}), reply("Sent.")], [plugin]
    )
    assert model.function_responses(1)[0]["response"] == {"sent": "ACME"}
    assert runs["send_invoice"] == 2
    assert asked == [(1, "TimeoutError")]


def test_a_transient_read_is_retried_inside_the_call(sleeps: Any) -> None:
    runs: Counter[str] = Counter()
    forecast = forecast_tool(runs, 2)
    plugin = ToolMendPlugin(effects={"forecast": "read_only"})
    model = run_agent([forecast], [call("forecast", {"city": "Oslo"}), reply("Sunny.")], [plugin])
    assert model.function_responses(1) == [
        {"id": "call_1", "name": "forecast", "response": {"city": "Oslo", "forecast": "sunny"}}
    ]
    assert runs["forecast"] == 3
    assert len(sleeps.sleeps) == 2
    [record] = plugin.records
    assert (record.failed, record.attempts) == (False, 3)


def test_retries_stop_at_the_policy_and_the_model_is_told_not_to_retry_now(sleeps: Any) -> None:
    runs: Counter[str] = Counter()
    forecast = forecast_tool(runs, 99)
    plugin = ToolMendPlugin(effects={"forecast": "read_only"}, retry=RetryPolicy(attempts=2))
    model = run_agent([forecast], [call("forecast", {"city": "Oslo"}), reply("Down.")], [plugin])
    response = model.function_responses(1)[0]["response"]
    assert response == {
        "error": "Tool 'forecast' failed after 2 attempts with ConnectionError: connection "
        f"reset by peer\nWhere: {where(forecast)}",
        "guidance": "All 2 attempts failed with a temporary error, so retrying now is unlikely "
        "to help. Continue with other steps and call it again later, or tell the user it is "
        "unavailable.",
    }
    assert runs["forecast"] == 2
    assert len(sleeps.sleeps) == 1


def test_retry_none_never_retries_and_says_retrying_is_expected_to_succeed() -> None:
    runs: Counter[str] = Counter()
    forecast = forecast_tool(runs, 1)
    plugin = ToolMendPlugin(effects={"forecast": "read_only"}, retry=None)
    model = run_agent([forecast], [call("forecast", {"city": "Oslo"}), reply("Later.")], [plugin])
    assert model.function_responses(1)[0]["response"]["guidance"] == TRANSIENT
    assert runs["forecast"] == 1


def test_a_failure_inside_a_successful_result_is_found_and_retried() -> None:
    runs: Counter[str] = Counter()

    def stock(sku: str) -> dict[str, Any]:
        """Units in stock."""
        runs["stock"] += 1
        if runs["stock"] == 1:
            return {"error": "503 Service Unavailable"}
        return {"sku": sku, "units": 12}

    plugin = ToolMendPlugin(effects={"stock": "read_only"})
    model = run_agent([stock], [call("stock", {"sku": "X1"}), reply("12.")], [plugin])
    assert model.function_responses(1)[0]["response"] == {"sku": "X1", "units": 12}
    assert runs["stock"] == 2


def test_a_returned_failure_of_a_write_is_not_repeated() -> None:
    runs: Counter[str] = Counter()

    def transfer(amount: int) -> dict[str, Any]:
        """Transfer money."""
        runs["transfer"] += 1
        return {"error": "503 Service Unavailable"}

    plugin = ToolMendPlugin(effects={"transfer": "write"})
    model = run_agent([transfer], [call("transfer", {"amount": 5}), reply("Checking.")], [plugin])
    assert model.function_responses(1)[0]["response"] == {
        "error": '{"error": "503 Service Unavailable"}',
        "guidance": VERIFY_FIRST,
    }
    assert runs["transfer"] == 1


def test_an_unrecoverable_failure_says_so() -> None:
    def read_file(path: str) -> str:
        """Read a file."""
        raise PermissionError(f"access denied: {path}")

    model = run_agent(
        [read_file], [call("read_file", {"path": "/etc/shadow"}), reply("I can't.")],
        [ToolMendPlugin(effects={"read_file": "read_only"})],
    )  # fmt: skip
    assert model.function_responses(1)[0]["response"] == {
        "error": "Tool 'read_file' failed after 1 attempt with PermissionError: access denied: "
        f"/etc/shadow\nWhere: {where(read_file)}",
        "guidance": UNRECOVERABLE,
    }


def test_form_off_shows_the_cause_alone() -> None:
    bookings = Bookings()
    model = run_agent(
        [bookings.book_room], [call("book_room", {"room": "A1"}), reply("Hm.")],
        [ToolMendPlugin(form="off")],
    )  # fmt: skip
    assert list(model.function_responses(1)[0]["response"]) == ["error"]


def test_an_unknown_tool_gets_the_fixable_error_naming_the_tools() -> None:
    bookings = Bookings()
    model = run_agent(
        [bookings.book_room],
        [call("book_rooms", {"room": "A12"}), reply("Retrying.")],
        [ToolMendPlugin()],
    )
    assert model.function_responses(1) == [
        {
            "id": "call_1",
            "name": "book_rooms",
            "response": {
                "error": "Tool 'book_rooms' does not exist. Did you mean 'book_room'? "
                "Available tools: book_room.",
                "guidance": FIXABLE,
            },
        }
    ]
    assert bookings.runs["book_room"] == 0


def test_arguments_that_break_the_schema_are_refused_unrun() -> None:
    bookings = Bookings()
    model = run_agent(
        [bookings.book_room], [call("book_room", {"rooms": "A12"}), reply("Fixing.")],
        [ToolMendPlugin()],
    )  # fmt: skip
    assert model.function_responses(1)[0]["response"] == {
        "error": "Tool 'book_room' was not run: invalid arguments. room: 'room' is a required "
        "property",
        "guidance": FIXABLE,
    }
    assert bookings.runs["book_room"] == 0


def test_malformed_calls_false_keeps_adks_own_answer() -> None:
    bookings = Bookings()
    model = run_agent(
        [bookings.book_room], [call("book_rooms", {"room": "A12"}), reply("Retrying.")],
        [ToolMendPlugin(malformed_calls=False)],
    )  # fmt: skip
    assert model.function_responses(1)[0]["response"]["error"].startswith(
        "Invoking `book_rooms()` failed as no tool with that name is available."
    )


def test_the_loop_guard_refuses_an_exact_repeat_and_piles_up() -> None:
    runs: Counter[str] = Counter()

    def lookup(key: str) -> str:
        """Look up a key."""
        runs[key] += 1
        raise PermissionError(f"no access to {key}")

    script = [call("lookup", {"key": "a"}, id="c1"), call("lookup", {"key": "a"}, id="c2")]
    script += [call("lookup", {"key": "b"}, id="c3"), call("lookup", {"key": "c"}, id="c4")]
    model = run_agent([lookup], [*script, reply("Stopping.")], [ToolMendPlugin()])
    assert model.function_responses(2)[0]["response"] == {
        "error": "Tool 'lookup' was not run: this exact call already failed in this task. The "
        "earlier error: Tool 'lookup' failed after 1 attempt with PermissionError: no access "
        f"to a\nWhere: {where(lookup)}",
        "guidance": UNRECOVERABLE,
    }
    assert model.function_responses(4)[0]["response"]["guidance"] == PILE_UP
    assert runs == Counter({"a": 1, "b": 1, "c": 1})


def test_a_success_resets_the_loop_guard_count() -> None:
    runs: Counter[str] = Counter()

    def lookup(key: str) -> str:
        """Look up a key."""
        runs[key] += 1
        if key == "ok":
            return "found"
        raise PermissionError(f"no access to {key}")

    script = [call("lookup", {"key": k}, id=k) for k in ("a", "b", "ok", "c")]
    plugin = ToolMendPlugin(loop=LoopGuard(pile_up_after=3))
    model = run_agent([lookup], [*script, reply("Done.")], [plugin])
    assert model.function_responses(4)[0]["response"]["guidance"] == UNRECOVERABLE


def test_effects_declared_on_the_function() -> None:
    runs: Counter[str] = Counter()

    @declare_effect("read_only")
    def forecast(city: str) -> str:
        """The forecast."""
        runs["forecast"] += 1
        if runs["forecast"] == 1:
            raise ConnectionError("connection reset by peer")
        return "sunny"

    model = run_agent([forecast], [call("forecast", {"city": "Oslo"}), reply("Sunny.")],
                      [ToolMendPlugin()])  # fmt: skip
    assert model.function_responses(1)[0]["response"] == {"result": "sunny"}
    assert runs["forecast"] == 2


SCHEMA = {"type": "object", "properties": {"price": {"type": "number"}}, "required": ["price"]}


def test_a_result_that_breaks_its_contract_reaches_the_model_as_the_receipt() -> None:
    def get_quote(symbol: str) -> dict[str, Any]:
        """Quote a stock."""
        return {"symbol": symbol, "price": "n/a"}

    contracts = Contracts().declare("get_quote", SCHEMA)
    plugin = ToolMendPlugin(contracts=contracts)
    model = run_agent([get_quote], [call("get_quote", {"symbol": "AAPL"}), reply("?")], [plugin])
    receipt = json.loads(model.function_responses(1)[0]["response"]["result"])
    assert receipt["tool_result"] == {"symbol": "AAPL", "price": "n/a"}
    assert receipt["outcome_contract"]["status"] == "inconsistent"
    [record] = plugin.records
    assert [v["code"] for v in record.to_dict()["violations"]] == ["schema_violation"]


async def test_parallel_calls_each_get_their_own_answer() -> None:
    from toolmend_adk.testing import calls

    bookings = Bookings()
    runs: Counter[str] = Counter()
    forecast = forecast_tool(runs, 1)
    plugin = ToolMendPlugin(effects={"forecast": "read_only"})
    turn = calls(("book_room", {"room": "B2"}, "w"), ("forecast", {"city": "Rome"}, "r"))
    model = await arun_agent([bookings.book_room, forecast], [turn, reply("Ok.")], [plugin])
    answers = {r["id"]: r["response"] for r in model.function_responses(1)}
    assert answers["w"]["guidance"] == VERIFY_FIRST
    assert answers["r"] == {"city": "Rome", "forecast": "sunny"}
    assert (bookings.runs["book_room"], runs["forecast"]) == (1, 2)
