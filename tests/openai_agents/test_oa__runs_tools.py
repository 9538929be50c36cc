"""``function_tool``: schema, retries that never duplicate a write, the run's loop guard."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Hashable
from typing import Any

import httpx
import pytest
from agents import Agent, MaxTurnsExceeded, RunContextWrapper, Runner, UserError
from agents.testing import ScriptedModel, assistant_message, function_call
from oa_support import (
    TRANSIENT,
    UNRECOVERABLE,
    VERIFY_FIRST,
    call_item,
    config,
    http_error,
    line_of,
    note,
    output_item,
    runtime_note,
    script,
    user,
)

import toolmend_openai_agents as tm
from toolmend.integrations import LANDED, CallContext, SleepLog
from toolmend_openai_agents._runs import RUNS


def _timeout() -> httpx.ReadTimeout:
    return httpx.ReadTimeout("timed out", request=httpx.Request("POST", "http://127.0.0.1/pay"))


def test_schema_hides_the_context_and_the_idempotency_key() -> None:
    @tm.function_tool(effect="write", idempotency_key="key")
    def charge(ctx: RunContextWrapper[Any], amount: int, currency: str, key: str) -> str:
        """Charge the customer.

        Args:
            amount: Amount in cents.
            currency: ISO code.
        """
        return "ok"

    assert charge.name == "charge"
    assert charge.description == "Charge the customer."
    assert charge.params_json_schema == {
        "properties": {
            "amount": {"description": "Amount in cents.", "title": "Amount", "type": "integer"},
            "currency": {"description": "ISO code.", "title": "Currency", "type": "string"},
        },
        "required": ["amount", "currency"],
        "title": "charge_args",
        "type": "object",
        "additionalProperties": False,
    }


def test_an_idempotency_key_parameter_must_exist() -> None:
    def charge(amount: int) -> str:
        """Charge."""
        return "ok"

    with pytest.raises(TypeError, match="'key'"):
        tm.function_tool(charge, idempotency_key="key")


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
async def test_a_write_that_honours_its_key_is_retried_with_the_same_key(
    asynchronous: bool, sleeps: SleepLog
) -> None:
    keys: list[str] = []

    def charge_sync(amount: int, key: str) -> str:
        keys.append(key)
        if len(keys) < 3:
            raise _timeout()
        return f"charged {amount}"

    async def charge_async(amount: int, key: str) -> str:
        await asyncio.sleep(0)
        return charge_sync(amount, key)

    body = charge_async if asynchronous else charge_sync
    tool = tm.function_tool(body, name_override="charge", effect="write", idempotency_key="key")
    model = script("charge", {"amount": 5}, "call_c", "Charged.")
    agent = Agent(name="pay", model=model, tools=[tool])
    with tm.capture() as captured:
        await Runner.run(agent, "Charge 5", run_config=config())

    assert len(keys) == 3
    assert len(set(keys)) == 1
    assert len(sleeps.sleeps) == 2
    assert model.calls[1].input[2:] == [output_item("call_c", "charged 5")]
    # The success after retrying is reported, with each failed attempt.
    (retried,) = captured.retries
    assert (retried.call_id, retried.tool, dict(retried.arguments), retried.attempts) == (
        "call_c",
        "charge",
        {"amount": 5},
        3,
    )
    assert [(r["attempt"], r["error"], r["delay"]) for r in retried.history] == [
        (1, "httpx.ReadTimeout: timed out", sleeps.sleeps[0]),
        (2, "httpx.ReadTimeout: timed out", sleeps.sleeps[1]),
    ]
    assert captured.failures == ()


async def test_verify_hook_decides_whether_a_timed_out_write_is_repeated() -> None:
    ledger: list[int] = []
    landed: dict[int, bool] = {1: False, 2: True}

    def verify(call: CallContext, exc: BaseException) -> bool | None:
        return landed[call.arguments["amount"]]

    @tm.function_tool(effect="write", verify=verify)
    def pay(amount: int) -> str:
        """Pay."""
        ledger.append(amount)
        if ledger.count(amount) == 1:
            raise _timeout()
        return f"paid {amount}"

    model = ScriptedModel(
        [
            [
                function_call("pay", {"amount": 1}, call_id="call_1"),
                function_call("pay", {"amount": 2}, call_id="call_2"),
            ],
            [assistant_message("Done.")],
        ]
    )
    with tm.capture() as captured:
        await Runner.run(Agent(name="pay", model=model, tools=[pay]), "Pay", run_config=config())

    assert sorted(ledger) == [1, 1, 2]
    cause = (
        "Tool 'pay' failed after 1 attempt with httpx.ReadTimeout: timed out\n"
        f"Where: {line_of(pay, 'raise _timeout()')}"
    )
    assert model.calls[1].input[3:] == [
        output_item("call_1", "paid 1"),
        output_item("call_2", cause),
        note(runtime_note("pay", "amount=2", cause, LANDED)),
    ]
    assert captured.failures[0].stop == "landed"


async def test_the_runs_loop_guard_refuses_an_exact_repeat_of_an_unrecoverable_call() -> None:
    runs: list[str] = []

    @tm.function_tool
    def read_file(path: str) -> str:
        """Read a file."""
        runs.append(path)
        raise PermissionError(13, "Permission denied", path)

    model = ScriptedModel(
        [
            [function_call("read_file", {"path": "/root/x"}, call_id="call_1")],
            [function_call("read_file", {"path": "/root/x"}, call_id="call_2")],
            [assistant_message("I cannot read it.")],
        ]
    )
    agent = Agent(name="files", model=model, tools=[read_file])
    await Runner.run(agent, "Read /root/x", run_config=config())

    assert runs == ["/root/x"]
    cause = (
        "Tool 'read_file' failed after 1 attempt with PermissionError: [Errno 13] Permission "
        f"denied: '/root/x'\nWhere: {line_of(read_file, 'raise PermissionError')}"
    )
    refused = (
        "Tool 'read_file' was not run: this exact call already failed in this task. "
        f"The earlier error: {cause}"
    )
    assert model.calls[2].input == [
        user("Read /root/x"),
        call_item("read_file", {"path": "/root/x"}, "call_1"),
        output_item("call_1", cause),
        call_item("read_file", {"path": "/root/x"}, "call_2"),
        output_item("call_2", refused),
        note(runtime_note("read_file", "path=/root/x", refused, UNRECOVERABLE)),
    ]

    # A new run starts with a fresh guard: the body runs again.
    model.extend(
        [
            [function_call("read_file", {"path": "/root/x"}, call_id="call_1")],
            [assistant_message("Still no.")],
        ]
    )
    await Runner.run(agent, "Read /root/x", run_config=config())
    assert runs == ["/root/x", "/root/x"]


async def test_control_flow_exceptions_are_not_retried() -> None:
    runs: list[int] = []

    @tm.function_tool(effect="read_only")
    def nested(n: int) -> str:
        """Runs a nested agent."""
        runs.append(n)
        raise MaxTurnsExceeded("nested agent ran out of turns")

    model = script("nested", {"n": 1}, "call_n", "ok")
    await Runner.run(Agent(name="a", model=model, tools=[nested]), "go", run_config=config())
    assert runs == [1]


async def test_failure_function_none_raises_as_in_the_sdk_and_keeps_the_failure() -> None:
    @tm.function_tool(failure_error_function=None)
    def boom(x: int) -> str:
        """Boom."""
        raise PermissionError("no")

    model = script("boom", {"x": 1}, "call_b", "ok")
    with pytest.raises(UserError) as raised:
        await Runner.run(Agent(name="a", model=model, tools=[boom]), "go", run_config=config())
    cause = raised.value.__cause__
    assert isinstance(cause, tm.ToolFailed)
    assert cause.failure.kind.value == "unrecoverable"


async def test_a_users_failure_function_supplies_the_text_and_the_note_still_follows() -> None:
    def short(ctx: RunContextWrapper[Any], error: Exception) -> str:
        assert isinstance(error, tm.ToolFailed)
        return f"{error.failure.tool} is unavailable."

    @tm.function_tool(effect="read_only", failure_error_function=short)
    def quote(symbol: str) -> str:
        """A stock quote."""
        raise http_error(503)

    model = script("quote", {"symbol": "ACME"}, "call_q", "Later.")
    await Runner.run(Agent(name="a", model=model, tools=[quote]), "Quote", run_config=config())

    exhausted = (
        "All 3 attempts failed with a temporary error, so retrying now is unlikely to help. "
        "Continue with other steps and call it again later, or tell the user it is unavailable."
    )
    assert model.calls[1].input[2:] == [
        output_item("call_q", "quote is unavailable."),
        note(runtime_note("quote", "symbol=ACME", "quote is unavailable.", exhausted)),
    ]


async def test_timeouts_get_the_true_text_and_a_write_is_asked_to_verify() -> None:
    @tm.function_tool(effect="write", timeout=0.05)
    async def slow_write(x: int) -> str:
        """Slow."""
        await asyncio.Event().wait()
        return "never"

    model = script("slow_write", {"x": 1}, "call_s", "Checking.")
    await Runner.run(Agent(name="a", model=model, tools=[slow_write]), "go", run_config=config())

    cause = (
        "Tool 'slow_write' failed after 1 attempt with agents.ToolTimeoutError: "
        "Tool 'slow_write' timed out after 0.05 seconds."
    )
    assert model.calls[1].input[2:] == [
        output_item("call_s", cause),
        note(runtime_note("slow_write", "x=1", cause, VERIFY_FIRST)),
    ]


async def test_a_read_only_tool_without_retries_is_told_to_retry() -> None:
    @tm.function_tool(effect="read_only", retry=None)
    def feed(name: str) -> str:
        """A feed."""
        raise http_error(503)

    model = script("feed", {"name": "news"}, "call_f", "Retrying.")
    await Runner.run(Agent(name="a", model=model, tools=[feed]), "go", run_config=config())

    cause = (
        "Tool 'feed' failed after 1 attempt with httpx.HTTPStatusError: Server error "
        "'503 Service Unavailable' for url 'http://127.0.0.1/data'\n"
        f"Where: {line_of(feed, 'raise http_error')} > "
        f"{line_of(http_error, 'response.raise_for_status()')}"
    )
    assert model.calls[1].input[2:] == [
        output_item("call_f", cause),
        note(runtime_note("feed", "name=news", cause, TRANSIENT)),
    ]


async def test_run_records_are_dropped_when_the_run_ends() -> None:
    keys: list[Hashable] = []

    @tm.function_tool
    def fail(x: int) -> str:
        """Fails."""
        keys.append(RUNS.key())
        raise PermissionError("no")

    model = script("fail", {"x": 1}, "call_x", "ok")
    await Runner.run(Agent(name="a", model=model, tools=[fail]), "go", run_config=config())
    # The run's last references go with callbacks the loop runs after Runner.run
    # returns (the SDK's own and, with an OpenTelemetry SDK installed, its exporters'):
    # give them a bounded number of turns.
    for _ in range(50):
        await asyncio.sleep(0.01)
        gc.collect()
        if keys and keys[0] not in RUNS.registry:
            break

    assert len(keys) == 1
    assert keys[0] != RUNS.key()
    assert keys[0] not in RUNS.registry


async def test_callable_instances_and_bound_methods_work_like_functions() -> None:
    class Lookup:
        async def __call__(self, key: str) -> str:
            """Look up a key."""
            await asyncio.sleep(0)
            return f"value of {key}"

    class Store:
        def get(self, ctx: RunContextWrapper[Any], key: str) -> str:
            """Get a key."""
            return f"stored {key}"

    lookup = tm.function_tool(Lookup())
    get = tm.function_tool(Store().get)
    assert (lookup.name, lookup.description) == ("Lookup", "Look up a key.")
    assert (get.name, get.description) == ("get", "Get a key.")
    for tool in (lookup, get):
        assert tool.params_json_schema["properties"] == {"key": {"title": "Key", "type": "string"}}

    model = ScriptedModel(
        [
            [
                function_call("Lookup", {"key": "a"}, call_id="call_1"),
                function_call("get", {"key": "b"}, call_id="call_2"),
            ],
            [assistant_message("ok")],
        ]
    )
    await Runner.run(Agent(name="a", model=model, tools=[lookup, get]), "go", run_config=config())
    assert model.calls[1].input[3:] == [
        output_item("call_1", "value of a"),
        output_item("call_2", "stored b"),
    ]
