"""``RecoveringToolset`` on function tools: a real ``Agent`` and a scripted ``FunctionModel``.

Every test asserts what the model's next request carried (the exact tool results and
their outcome: ``failed`` for ``ToolFailed``, ``retried`` for ``ModelRetry``) and counts
what the tool did.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from pa_support import Script
from pydantic_ai import Agent, FunctionToolset, ModelRetry
from pydantic_ai.exceptions import UnexpectedModelBehavior

from toolmend import Kind
from toolmend.contracts import Contracts
from toolmend.integrations import GUIDANCE, VERIFY_FIRST, SleepLog
from toolmend_pydantic_ai import RecoveringToolset, idempotency_key

HERE = Path(__file__).name
FIXABLE = GUIDANCE[Kind.FIXABLE]


def line_of(marker: str) -> int:
    """The line of this file that holds ``marker`` (for the note's ``Where:`` line)."""
    lines = Path(__file__).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.rstrip().endswith(f"# {marker}"))


def pay_tools(ledger: list[str]) -> FunctionToolset[None]:
    tools: FunctionToolset[None] = FunctionToolset()

    @tools.tool_plain
    def pay(invoice: str) -> str:
        """Pay an invoice."""
        ledger.append(invoice)
        raise TimeoutError("upstream timed out after 30s")  # landed-then-timeout

    return tools


def test_stock_run_sync_ends_the_run_when_a_tool_raises_timeout_error() -> None:
    ledger: list[str] = []
    script = Script([[("pay", {"invoice": "7"})]])
    agent = Agent(script.model, toolsets=[pay_tools(ledger)])
    with pytest.raises(TimeoutError, match="upstream timed out after 30s"):
        agent.run_sync("Pay invoice 7")
    assert ledger == ["7"]
    assert len(script.seen) == 1  # the model never heard back


def test_a_write_that_landed_before_its_timeout_lands_once_and_is_told_to_check(
    sleeps: SleepLog,
) -> None:
    ledger: list[str] = []
    script = Script([[("pay", {"invoice": "7"})]])
    toolset = RecoveringToolset(pay_tools(ledger), effects={"pay": "write"})
    result = Agent(script.model, toolsets=[toolset]).run_sync("Pay invoice 7")
    assert result.output == "done"
    assert ledger == ["7"]  # not repeated
    assert sleeps.sleeps == []
    note = (
        "Note from the tool runtime: the last attempt called pay with `invoice=7` and it "
        "failed with:\n"
        "> Tool 'pay' failed after 1 attempt with TimeoutError: upstream timed out after 30s\n"
        f"> Where: {HERE}:{line_of('landed-then-timeout')} in pay\n\n"
        "This call may already have taken effect. Check whether it did before calling it again."
    )
    assert script.results(1) == [("pay", note, "failed")]
    assert VERIFY_FIRST in note


def test_an_undeclared_tool_is_a_write_too() -> None:
    ledger: list[str] = []
    script = Script([[("pay", {"invoice": "7"})]])
    Agent(script.model, toolsets=[RecoveringToolset(pay_tools(ledger))]).run_sync("Pay 7")
    assert ledger == ["7"]
    [(_, content, outcome)] = script.results(1)
    assert (outcome, content.endswith(VERIFY_FIRST)) == ("failed", True)


def test_a_transient_read_is_retried_inside_the_call_with_backoff(sleeps: SleepLog) -> None:
    attempts: list[str] = []
    tools: FunctionToolset[None] = FunctionToolset()

    @tools.tool_plain
    def stock(sku: str) -> str:
        """Units in stock."""
        attempts.append(sku)
        if len(attempts) < 3:
            raise ConnectionError("connection reset by peer")
        return f"{sku}: 12 in stock"

    script = Script([[("stock", {"sku": "A1"})]])
    toolset = RecoveringToolset(tools, effects={"stock": "read_only"})
    Agent(script.model, toolsets=[toolset]).run_sync("Stock of A1?")
    assert attempts == ["A1", "A1", "A1"]
    assert len(sleeps.sleeps) == 2
    assert script.results(1) == [("stock", "A1: 12 in stock", "success")]


def test_retry_after_is_waited_for_exactly(sleeps: SleepLog) -> None:
    attempts: list[int] = []
    tools: FunctionToolset[None] = FunctionToolset()

    @tools.tool_plain
    def rates(currency: str) -> str:
        """Exchange rates."""
        attempts.append(1)
        if len(attempts) == 1:
            request = httpx.Request("GET", "https://rates.example/v1")
            response = httpx.Response(429, headers={"Retry-After": "3"}, request=request)
            raise httpx.HTTPStatusError("429 Too Many Requests", request=request, response=response)
        return f"{currency}: 1.08"

    script = Script([[("rates", {"currency": "EUR"})]])
    toolset = RecoveringToolset(tools, effects={"rates": "read_only"})
    Agent(script.model, toolsets=[toolset]).run_sync("EUR?")
    assert len(attempts) == 2
    assert sleeps.sleeps == [3.0]
    assert script.results(1) == [("rates", "EUR: 1.08", "success")]


def test_a_transient_failure_that_outlasts_the_retries_is_a_failed_result(
    sleeps: SleepLog,
) -> None:
    attempts: list[int] = []
    tools: FunctionToolset[None] = FunctionToolset()

    @tools.tool_plain
    def stock(sku: str) -> str:
        """Units in stock."""
        attempts.append(1)
        raise ConnectionError("connection reset by peer")  # always-down

    script = Script([[("stock", {"sku": "A1"})]])
    toolset = RecoveringToolset(tools, effects={"stock": "read_only"})
    Agent(script.model, toolsets=[toolset]).run_sync("Stock of A1?")
    assert len(attempts) == 3
    assert len(sleeps.sleeps) == 2
    note = (
        "Note from the tool runtime: the last attempt called stock with `sku=A1` and it "
        "failed with:\n"
        "> Tool 'stock' failed after 3 attempts with ConnectionError: connection reset by peer\n"
        f"> Where: {HERE}:{line_of('always-down')} in stock\n\n"
        "All 3 attempts failed with a temporary error, so retrying now is unlikely to help. "
        "Continue with other steps and call it again later, or tell the user it is unavailable."
    )
    assert script.results(1) == [("stock", note, "failed")]


def test_a_fixable_failure_is_a_model_retry_carrying_the_cause() -> None:
    tools: FunctionToolset[None] = FunctionToolset()

    @tools.tool_plain
    def set_price(sku: str, price: float) -> str:
        """Set a price."""
        if price <= 0:
            raise ValueError("400 Bad Request: price must be positive")  # bad-price
        return f"{sku} now costs {price}"

    script = Script(
        [[("set_price", {"sku": "A1", "price": -1})], [("set_price", {"sku": "A1", "price": 5})]]
    )
    toolset = RecoveringToolset(tools, effects={"set_price": "idempotent"})
    Agent(script.model, toolsets=[toolset]).run_sync("Set A1 to -1")
    note = (
        "Note from the tool runtime: the last attempt called set_price with "
        "`sku=A1, price=-1.0` and it failed with:\n"
        "> Tool 'set_price' failed after 1 attempt with ValueError: 400 Bad Request: "
        "price must be positive\n"
        f"> Where: {HERE}:{line_of('bad-price')} in set_price\n\n" + FIXABLE
    )
    assert script.results(1) == [("set_price", note, "retried")]
    assert script.results(2) == [("set_price", "A1 now costs 5.0", "success")]


def test_an_unrecoverable_failure_is_terminal_and_spends_no_retry() -> None:
    reads: list[str] = []
    tools: FunctionToolset[None] = FunctionToolset(max_retries=0)

    @tools.tool_plain
    def read_file(path: str) -> str:
        """Read a file."""
        reads.append(path)
        raise PermissionError(f"Permission denied: {path}")

    # With no retries allowed, a ModelRetry would end the run; the failed result does not.
    script = Script([[("read_file", {"path": "/etc/shadow"})]])
    result = Agent(script.model, toolsets=[RecoveringToolset(tools)]).run_sync("Read it")
    assert result.output == "done"
    assert reads == ["/etc/shadow"]
    [(tool, content, outcome)] = script.results(1)
    assert (tool, outcome) == ("read_file", "failed")
    assert "PermissionError: Permission denied: /etc/shadow" in content
    assert content.endswith(GUIDANCE[Kind.UNRECOVERABLE])


def test_the_loop_guard_refuses_an_exact_repeat_of_a_failed_call() -> None:
    reads: list[str] = []
    tools: FunctionToolset[None] = FunctionToolset()

    @tools.tool_plain
    def read_file(path: str) -> str:
        """Read a file."""
        reads.append(path)
        raise PermissionError(f"Permission denied: {path}")  # denied

    call = ("read_file", {"path": "/etc/shadow"})
    script = Script([[call], [call]])
    Agent(script.model, toolsets=[RecoveringToolset(tools)]).run_sync("Read it")
    assert reads == ["/etc/shadow"]  # the repeat never ran
    cause = "failed after 1 attempt with PermissionError: Permission denied: /etc/shadow"
    where = f"> Where: {HERE}:{line_of('denied')} in read_file"
    said = "Note from the tool runtime: the last attempt called read_file with `path=/etc/shadow`"
    unrecoverable = GUIDANCE[Kind.UNRECOVERABLE]
    assert script.results(1) == [
        ("read_file", f"{said} and it failed with:\n> Tool 'read_file' {cause}\n{where}\n\n"
         + unrecoverable, "failed")
    ]  # fmt: skip
    refused = (
        f"{said} and it failed with:\n> Tool 'read_file' was not run: this exact call already "
        f"failed in this task. The earlier error: Tool 'read_file' {cause}\n{where}\n\n"
        + unrecoverable
    )
    assert script.results(2) == [("read_file", refused, "failed")]


def test_arguments_that_fail_the_schema_are_a_model_retry_naming_what_to_change() -> None:
    ledger: list[str] = []
    script = Script([[("pay", {"invoice": 7, "amount": 10})]])
    toolset = RecoveringToolset(pay_tools(ledger), effects={"pay": "write"})
    Agent(script.model, toolsets=[toolset]).run_sync("Pay 7")
    assert ledger == []
    note = (
        "Note from the tool runtime: the last attempt called pay with `invoice=7, amount=10` "
        "and it failed with: `Tool 'pay' was not run: invalid arguments. invoice: Input should "
        "be a valid string (got 7); amount: Extra inputs are not permitted (got 10)`\n\n" + FIXABLE
    )
    assert script.results(1) == [("pay", note, "retried")]


def test_a_model_retry_the_tool_raises_itself_passes_through_untouched() -> None:
    tools: FunctionToolset[None] = FunctionToolset()

    @tools.tool_plain
    def lookup(key: str) -> str:
        """Look up a key."""
        raise ModelRetry("keys are lowercase")

    script = Script([[("lookup", {"key": "ABC"})]])
    Agent(script.model, toolsets=[RecoveringToolset(tools)]).run_sync("Look up ABC")
    assert script.results(1) == [("lookup", "keys are lowercase", "retried")]


def test_the_run_still_ends_when_fixable_failures_exhaust_pydantic_ais_retries() -> None:
    tools: FunctionToolset[None] = FunctionToolset(max_retries=0)

    @tools.tool_plain
    def set_price(sku: str, price: float) -> str:
        """Set a price."""
        raise ValueError("400 Bad Request: price must be positive")

    script = Script([[("set_price", {"sku": "A1", "price": -1})]])
    agent = Agent(script.model, toolsets=[RecoveringToolset(tools)])
    with pytest.raises(UnexpectedModelBehavior, match="exceeded max retries count of 0"):
        agent.run_sync("Set A1 to -1")


def test_a_keyed_write_is_repeated_with_the_same_key(sleeps: SleepLog) -> None:
    keys: list[str | None] = []
    tools: FunctionToolset[None] = FunctionToolset()

    @tools.tool_plain
    def pay(invoice: str) -> str:
        """Pay an invoice; the bank deduplicates on the key."""
        keys.append(idempotency_key())
        if len(keys) == 1:
            raise TimeoutError("upstream timed out after 30s")
        return f"paid {invoice}"

    script = Script([[("pay", {"invoice": "7"})]])
    toolset = RecoveringToolset(tools, effects={"pay": "write"}, keyed={"pay"})
    Agent(script.model, toolsets=[toolset]).run_sync("Pay 7")
    assert len(keys) == 2
    assert keys[0] is not None
    assert keys[0] == keys[1]
    assert script.results(1) == [("pay", "paid 7", "success")]
    assert idempotency_key() is None


def test_a_verify_hook_that_finds_the_write_stops_the_repeat() -> None:
    ledger: list[str] = []

    def landed(call: Any, exc: BaseException) -> bool:
        return call.arguments["invoice"] in ledger

    script = Script([[("pay", {"invoice": "7"})]])
    toolset = RecoveringToolset(pay_tools(ledger), effects={"pay": "write"}, verify={"pay": landed})
    Agent(script.model, toolsets=[toolset]).run_sync("Pay 7")
    assert ledger == ["7"]
    [(_, content, outcome)] = script.results(1)
    assert outcome == "failed"
    assert content.endswith(
        "A check after the error found that this call did take effect. "
        "Do not call it again for the same purpose."
    )


SCHEMA = {"type": "object", "properties": {"price": {"type": "number"}}, "required": ["price"]}


def test_a_result_that_breaks_its_contract_reaches_the_model_as_the_receipt() -> None:
    tools: FunctionToolset[None] = FunctionToolset()

    @tools.tool_plain
    def get_quote(symbol: str) -> dict[str, Any]:
        """Quote a stock."""
        return {"symbol": symbol, "price": "n/a"}

    contracts = Contracts().declare("get_quote", SCHEMA)
    script = Script([[("get_quote", {"symbol": "ACME"})]])
    toolset = RecoveringToolset(tools, effects={"get_quote": "read_only"}, contracts=contracts)
    Agent(script.model, toolsets=[toolset]).run_sync("Quote ACME")
    [(tool, content, outcome)] = script.results(1)
    assert (tool, outcome) == ("get_quote", "success")
    assert isinstance(content, str)
    assert "'n/a' is not of type 'number'" in content
    assert '"price": "n/a"' in content  # the raw result is inside the receipt


def test_a_result_that_keeps_its_contract_is_returned_as_is() -> None:
    tools: FunctionToolset[None] = FunctionToolset()

    @tools.tool_plain
    def get_quote(symbol: str) -> dict[str, Any]:
        """Quote a stock."""
        return {"symbol": symbol, "price": 1.5}

    contracts = Contracts().declare("get_quote", SCHEMA)
    script = Script([[("get_quote", {"symbol": "ACME"})]])
    toolset = RecoveringToolset(tools, contracts=contracts)
    Agent(script.model, toolsets=[toolset]).run_sync("Quote ACME")
    assert script.results(1) == [("get_quote", {"symbol": "ACME", "price": 1.5}, "success")]


def test_the_c1_form_puts_cause_and_guidance_in_the_result() -> None:
    ledger: list[str] = []
    script = Script([[("pay", {"invoice": "7"})]])
    toolset = RecoveringToolset(pay_tools(ledger), effects={"pay": "write"}, form="c1")
    Agent(script.model, toolsets=[toolset]).run_sync("Pay 7")
    [(_, content, _)] = script.results(1)
    assert content == (
        "Tool 'pay' failed after 1 attempt with TimeoutError: upstream timed out after 30s\n"
        f"Where: {HERE}:{line_of('landed-then-timeout')} in pay\n" + VERIFY_FIRST
    )
