"""@fail_soft on plain sync and async tool functions."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import httpx
import pytest
from core_support import Loopback, Reply
from pydantic import BaseModel, ValidationError

from toolmend import Kind, LoopGuard, RetryPolicy, ToolFailure, fail_soft, testing
from toolmend.integrations import validation_details

FIXABLE = (
    "This call cannot succeed as written. The error says what to change; "
    "call the tool again with the corrected value."
)
VERIFY_FIRST = (
    "This call may already have taken effect. Check whether it did before calling it again."
)


def test_success_returns_the_value_unchanged() -> None:
    payload = {"rows": [1, 2]}

    @fail_soft(effect="read_only")
    def search(query: str) -> dict[str, Any]:
        return payload

    assert search("x") is payload


def test_bare_decorator_keeps_name_and_signature() -> None:
    @fail_soft
    def lookup(city: str, limit: int = 3) -> str:
        """Find a city."""
        return city

    assert lookup.__name__ == "lookup"
    assert lookup.__doc__ == "Find a city."
    assert str(inspect.signature(lookup)) == "(city: 'str', limit: 'int' = 3) -> 'str'"
    assert lookup("Oslo") == "Oslo"


def test_invalid_argument_names_the_field() -> None:
    calls = 0

    @fail_soft(effect="read_only")
    def forecast(city: str, days: int) -> str:
        nonlocal calls
        calls += 1
        return city

    result = forecast(city="Oslo", days="three")
    assert isinstance(result, ToolFailure)
    assert calls == 0
    assert str(result) == (
        "Tool 'forecast' was not run: invalid arguments. days: Input should be a valid integer, "
        "unable to parse string as an integer (got 'three')\n" + FIXABLE
    )
    assert (result.kind, result.attempts, result.rule) == (Kind.FIXABLE, 0, "invalid-arguments")


def test_the_invalid_arguments_failure_and_the_details_are_public() -> None:
    class Order(BaseModel):
        qty: int
        note: str

    try:
        Order.model_validate({"qty": "many"})
    except ValidationError as exc:
        error = exc
    assert validation_details(error) == (
        "qty: Input should be a valid integer, unable to parse string as an integer "
        "(got 'many'); note: Field required (got {'qty': 'many'})"
    )
    assert validation_details(error, prefix="order").startswith("order.qty: Input should")
    failure = ToolFailure.invalid_arguments("buy", {"qty": "many"}, "qty: not a number")
    assert str(failure) == (
        "Tool 'buy' was not run: invalid arguments. qty: not a number\n" + FIXABLE
    )
    assert (failure.kind, failure.attempts, failure.rule, failure.reason) == (
        Kind.FIXABLE,
        0,
        "invalid-arguments",
        "argument validation",
    )


def test_missing_and_unexpected_arguments() -> None:
    @fail_soft
    def forecast(city: str) -> str:
        return city

    missing = forecast()
    unexpected = forecast(city="Oslo", town="Bergen")
    assert str(missing) == (
        "Tool 'forecast' was not run: invalid arguments. missing a required argument: 'city'\n"
        + FIXABLE
    )
    assert str(unexpected) == (
        "Tool 'forecast' was not run: invalid arguments. "
        "got an unexpected keyword argument 'town'\n" + FIXABLE
    )


class Item(BaseModel):
    sku: str
    quantity: int


def test_nested_model_error_names_the_path() -> None:
    @fail_soft
    def order(items: list[Item]) -> int:
        return len(items)

    assert order([{"sku": "a", "quantity": 2}]) == 1
    result = order([{"sku": "a", "quantity": "lots"}])
    assert result.cause == (  # type: ignore[union-attr]
        "Tool 'order' was not run: invalid arguments. items.0.quantity: Input should be a valid "
        "integer, unable to parse string as an integer (got 'lots')"
    )


def test_an_unresolvable_annotation_does_not_disable_the_others() -> None:
    class Local:
        pass

    @fail_soft
    def tool(thing: Local, count: int) -> int:
        return count

    assert tool(Local(), "2") == 2
    assert isinstance(tool(Local(), "two"), ToolFailure)


def test_values_are_coerced_like_pydantic() -> None:
    @fail_soft
    def double(n: int) -> int:
        return n * 2

    assert double("21") == 42


def test_unannotated_and_variadic_parameters_pass_unchanged() -> None:
    @fail_soft
    def echo(a, *rest, **options):  # type: ignore[no-untyped-def]
        return a, rest, options

    assert echo(1, 2, k="v") == (1, (2,), {"k": "v"})


def test_sync_failure_is_a_value_with_user_frames() -> None:
    @fail_soft(effect="read_only")
    def read(path: str) -> str:
        with open(path) as handle:  # OPEN
            return handle.read()

    result = read("/nonexistent/file.txt")
    assert isinstance(result, ToolFailure)
    with open(__file__) as source:
        line = next(i for i, text in enumerate(source, 1) if text.rstrip().endswith("# OPEN"))
    assert str(result) == (
        "Tool 'read' failed after 1 attempt with FileNotFoundError: [Errno 2] "
        "No such file or directory: '/nonexistent/file.txt'\n"
        f"Where: test_guard.py:{line} in read"
    )


async def test_async_stays_async_and_recovers(loopback: Loopback) -> None:
    url = loopback.script("/q", Reply(502), Reply(200, body=b'{"temp": 4}'))

    @fail_soft(effect="read_only")
    async def weather(city: str) -> Any:
        async with httpx.AsyncClient() as client:
            response = await client.get(url, params={"city": city})
            response.raise_for_status()
            return response.json()

    assert inspect.iscoroutinefunction(weather)
    with testing() as log:
        assert await weather("Oslo") == {"temp": 4}
    assert len(log.sleeps) == 1


async def test_async_validation_error() -> None:
    @fail_soft
    async def weather(city: str) -> str:
        return city

    result = await weather(city=5)
    assert isinstance(result, ToolFailure)
    assert result.rule == "invalid-arguments"


async def test_async_cancellation_passes_through() -> None:
    @fail_soft(effect="read_only")
    async def slow() -> None:
        raise asyncio.CancelledError()

    with pytest.raises(asyncio.CancelledError):
        await slow()


def test_keyboard_interrupt_passes_through() -> None:
    @fail_soft
    def tool() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        tool()


def test_configured_passthrough() -> None:
    class Handoff(Exception):
        pass

    @fail_soft(passthrough=(Handoff,))
    def tool() -> None:
        raise Handoff

    with pytest.raises(Handoff):
        tool()


def test_idempotency_key_parameter(loopback: Loopback) -> None:
    url = loopback.script("/pay", Reply(504), Reply(200, body=b'{"charged": 5}'))

    @fail_soft(effect="write", idempotency_key="key")
    def pay(amount: int, key: str) -> Any:
        response = httpx.post(url, json={"amount": amount}, headers={"Idempotency-Key": key})
        response.raise_for_status()
        return response.json()

    assert str(inspect.signature(pay)) == "(amount: 'int') -> 'Any'"
    assert "key" not in pay.__annotations__
    with testing():
        assert pay(5) == {"charged": 5}
    keys = [seen.headers["idempotency-key"] for seen in loopback.hits("/pay")]
    assert len(keys) == 2
    assert keys[0] == keys[1]
    assert len(keys[0]) == 32


def test_key_parameter_must_exist() -> None:
    def pay(amount: int) -> int:
        return amount

    with pytest.raises(TypeError, match="pay has no parameter 'key' for the idempotency key"):
        fail_soft(pay, idempotency_key="key")


def test_write_without_key_is_not_retried(loopback: Loopback) -> None:
    url = loopback.script("/pay", Reply(504), Reply(200))

    @fail_soft(effect="write")
    def pay(amount: int) -> Any:
        response = httpx.post(url, json={"amount": amount})
        response.raise_for_status()
        return response.json()

    with testing():
        result = pay(5)
    assert isinstance(result, ToolFailure)
    assert result.guidance == VERIFY_FIRST
    assert len(loopback.hits("/pay")) == 1


def test_retry_none_disables_retries() -> None:
    calls = 0

    @fail_soft(effect="read_only", retry=None)
    def flaky() -> str:
        nonlocal calls
        calls += 1
        raise TimeoutError("timed out")

    result = flaky()
    assert isinstance(result, ToolFailure)
    assert (calls, result.attempts) == (1, 1)


def test_custom_name_and_policy() -> None:
    @fail_soft(name="db_query", effect="idempotent", retry=RetryPolicy(attempts=2))
    def query() -> None:
        raise ConnectionResetError(104, "Connection reset by peer")

    with testing():
        result = query()
    assert isinstance(result, ToolFailure)
    assert (result.tool, result.attempts) == ("db_query", 2)


def test_guard_with_loop_blocks_an_exact_repeat_of_invalid_arguments() -> None:
    loop = LoopGuard()

    @fail_soft(loop=loop)
    def forecast(days: int) -> int:
        return days

    first = forecast(days="x")
    second = forecast(days="x")
    assert isinstance(first, ToolFailure)
    assert isinstance(second, ToolFailure)
    assert second.rule == "loop-repeat"
    assert second.cause == (
        "Tool 'forecast' was not run: this exact call already failed in this task. "
        "The earlier error: " + first.cause
    )
    assert forecast(days=3) == 3


def test_method_tools() -> None:
    class Tools:
        factor = 3

        @fail_soft
        def triple(self, n: int) -> int:
            return n * self.factor

    assert Tools().triple("2") == 6
    failure = Tools().triple("two")
    assert isinstance(failure, ToolFailure)
    assert dict(failure.arguments) == {"n": "two"}


def test_failure_from_a_verdict_of_a_result_text() -> None:
    from toolmend import ToolFailure, classify_result

    text = "Error executing tool stock: 503 Service Unavailable"
    failure = ToolFailure.from_verdict(
        classify_result(text, is_error=True), tool="stock", arguments={"sku": "A"}, text=text
    )
    assert failure is not None
    assert (failure.kind.value, failure.rule, failure.attempts, failure.cause) == (
        "transient",
        "is_error",
        1,
        text,
    )
    # undeclared, so it may have acted before it reported the failure: check first
    assert failure.outcome_unknown is True
    assert failure.guidance == (
        "This call may already have taken effect. Check whether it did before calling it again."
    )
    read = ToolFailure.from_verdict(
        classify_result(text, is_error=True), tool="stock", arguments={"sku": "A"}, text=text,
        effect="read_only",
    )  # fmt: skip
    assert read is not None
    assert read.outcome_unknown is False
    assert read.guidance == (
        "This is a temporary failure. Retrying the same call is expected to succeed."
    )
    assert (
        ToolFailure.from_verdict(classify_result("fine"), tool="s", arguments={}, text="fine")
        is None
    )
