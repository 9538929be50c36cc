"""Acceptance tests of issue 5 with the real Runner and ScriptedModel (no network).

Each test asserts the exact item list the model receives on the turn after
the tool call (``ScriptedModel.calls`` keeps a snapshot of every input).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, cast

import agents
import httpx
import pytest
from agents import (
    Agent,
    RunConfig,
    RunContextWrapper,
    Runner,
    ToolGuardrailFunctionOutput,
    ToolOutputGuardrailData,
    tool_output_guardrail,
)
from agents.run_config import CallModelData, ModelInputData
from oa_support import (
    FIXABLE,
    GENERIC,
    TRANSIENT,
    UNRECOVERABLE,
    VERIFY_FIRST,
    answer_item,
    call_item,
    config,
    has_note,
    http_error,
    line_of,
    note,
    output_item,
    runtime_note,
    script,
    user,
    where,
)

import toolmend_openai_agents as tm
from toolmend import RetryPolicy
from toolmend.integrations import SleepLog

# -- 1. a tool raising PermissionError -------------------------------------------------


def _read_file(path: str) -> str:
    """Read a text file.

    Args:
        path: The file to read.
    """
    raise PermissionError(13, "Permission denied", path)


def _toolmend_tool() -> tuple[agents.FunctionTool, RunConfig]:
    return tm.function_tool(_read_file, name_override="read_file"), config()


def _plain_tool_with_run_config() -> tuple[agents.FunctionTool, RunConfig]:
    return agents.function_tool(_read_file, name_override="read_file"), config()


def _the_two_halves() -> tuple[agents.FunctionTool, RunConfig]:
    tool = agents.function_tool(
        _read_file, name_override="read_file", failure_error_function=tm.failure_error_function()
    )
    return tool, RunConfig(tracing_disabled=True, call_model_input_filter=tm.input_filter())


SETUPS = [_toolmend_tool, _plain_tool_with_run_config, _the_two_halves]


@pytest.mark.parametrize("setup", SETUPS, ids=lambda s: s.__name__.strip("_"))
async def test_permission_error_reaches_the_model_with_its_cause_and_the_c3_note(
    setup: Callable[[], tuple[agents.FunctionTool, RunConfig]],
) -> None:
    tool, run_config = setup()
    model = script("read_file", {"path": "/etc/shadow"}, "call_1", "I may not read that file.")
    agent = Agent(name="files", model=model, tools=[tool])

    with tm.capture() as captured:
        result = await Runner.run(agent, "Show me /etc/shadow", run_config=run_config)

    frames = where(captured)
    assert frames == line_of(_read_file, "raise PermissionError")
    cause = (
        "Tool 'read_file' failed after 1 attempt with PermissionError: "
        f"[Errno 13] Permission denied: '/etc/shadow'\nWhere: {frames}"
    )
    sent = [
        user("Show me /etc/shadow"),
        call_item("read_file", {"path": "/etc/shadow"}, "call_1"),
        output_item("call_1", cause),
    ]
    assert model.calls[0].input == [user("Show me /etc/shadow")]
    assert model.calls[1].input == [
        *sent,
        note(runtime_note("read_file", "path=/etc/shadow", cause, UNRECOVERABLE)),
    ]
    assert GENERIC not in str(model.calls[1].input)
    assert result.to_input_list() == [*sent, answer_item("I may not read that file.")]
    assert not has_note(result.to_input_list())
    assert [(f.call_id, f.kind, f.rule) for f in captured.failures] == [
        ("call_1", "unrecoverable", "exception")
    ]
    assert [r.header() for r in captured.rewrites] == [
        "failed=2:read_file:unrecoverable:exception; form=c3; changed=true"
    ]


# -- 2. a read-only tool failing with 503 twice, then succeeding ----------------------


async def test_read_only_tool_is_retried_inside_the_call_and_the_model_sees_the_success(
    sleeps: SleepLog,
) -> None:
    attempts: list[str] = []

    @tm.function_tool(effect="read_only")
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        attempts.append(city)
        if len(attempts) <= 2:
            raise http_error(503, "http://127.0.0.1/weather?city=Paris")
        return "Sunny, 21 C"

    model = script("get_weather", {"city": "Paris"}, "call_w", "It is sunny.")
    agent = Agent(name="weather", model=model, tools=[get_weather])

    with tm.capture() as captured:
        result = await Runner.run(agent, "Weather in Paris?", run_config=config())

    assert attempts == ["Paris", "Paris", "Paris"]
    assert len(sleeps.sleeps) == 2
    assert model.calls[1].input == [
        user("Weather in Paris?"),
        call_item("get_weather", {"city": "Paris"}, "call_w"),
        output_item("call_w", "Sunny, 21 C"),
    ]
    assert result.final_output == "It is sunny."
    assert captured.failures == ()
    assert captured.rewrites == ()


# -- 3. a write that commits, then times out ------------------------------------------


async def test_write_that_committed_then_timed_out_is_not_retried_and_asks_to_verify(
    sleeps: SleepLog,
) -> None:
    ledger: list[tuple[str, int]] = []

    def send_payment(to: str, amount: int) -> str:
        """Send money."""
        ledger.append((to, amount))
        raise httpx.ReadTimeout(
            "The read operation timed out", request=httpx.Request("POST", "http://127.0.0.1/pay")
        )

    tool = tm.function_tool(send_payment, effect="write")
    model = script("send_payment", {"to": "bob", "amount": 50}, "call_p", "Let me check first.")
    agent = Agent(name="payments", model=model, tools=[tool])

    with tm.capture() as captured:
        await Runner.run(agent, "Pay Bob 50", run_config=config())

    assert ledger == [("bob", 50)]
    assert sleeps.sleeps == []
    frames = where(captured)
    assert frames == line_of(send_payment, "raise httpx.ReadTimeout")
    cause = (
        "Tool 'send_payment' failed after 1 attempt with httpx.ReadTimeout: "
        f"The read operation timed out\nWhere: {frames}"
    )
    assert model.calls[1].input == [
        user("Pay Bob 50"),
        call_item("send_payment", {"to": "bob", "amount": 50}, "call_p"),
        output_item("call_p", cause),
        note(runtime_note("send_payment", "to=bob, amount=50", cause, VERIFY_FIRST)),
    ]
    failure = captured.failures[0]
    assert (failure.kind, failure.outcome_unknown, failure.attempts) == (
        "transient",
        True,
        1,
    )


async def test_write_that_returns_a_gateway_error_is_not_advised_to_be_repeated(
    sleeps: SleepLog,
) -> None:
    """Issue 29.3: a returned ``502 Bad Gateway`` from a write may have landed: check first."""
    ledger: list[str] = []

    def send_payment(to: str, amount: int) -> str:
        """Send money."""
        ledger.append(to)
        return "502 Bad Gateway"

    tool = tm.function_tool(send_payment, effect="write", retry=RetryPolicy(attempts=3))
    model = script("send_payment", {"to": "bob", "amount": 50}, "call_g", "Let me check first.")
    agent = Agent(name="payments", model=model, tools=[tool])

    with tm.capture() as captured:
        await Runner.run(agent, "Pay Bob 50", run_config=config())

    assert ledger == ["bob"]
    assert sleeps.sleeps == []
    assert model.calls[1].input == [
        user("Pay Bob 50"),
        call_item("send_payment", {"to": "bob", "amount": 50}, "call_g"),
        output_item("call_g", "502 Bad Gateway"),
        note(runtime_note("send_payment", "to=bob, amount=50", "502 Bad Gateway", VERIFY_FIRST)),
    ]
    (failure,) = captured.failures
    assert (failure.kind, failure.outcome_unknown, failure.attempts) == ("transient", True, 1)


async def test_read_that_returns_a_gateway_error_is_retried_by_the_core(sleeps: SleepLog) -> None:
    """The same returned text from a read-only tool is retried, and the success is all the
    model sees."""
    answers = ["502 Bad Gateway", "Sunny, 21 C"]

    def get_weather(city: str) -> str:
        """Weather now."""
        return answers.pop(0)

    tool = tm.function_tool(get_weather, effect="read_only", retry=RetryPolicy(attempts=3))
    model = script("get_weather", {"city": "Paris"}, "call_r", "Sunny.")
    agent = Agent(name="weather", model=model, tools=[tool])

    with tm.capture() as captured:
        await Runner.run(agent, "Weather in Paris?", run_config=config())

    assert answers == []
    assert len(sleeps.sleeps) == 1
    assert model.calls[1].input == [
        user("Weather in Paris?"),
        call_item("get_weather", {"city": "Paris"}, "call_r"),
        output_item("call_r", "Sunny, 21 C"),
    ]
    assert captured.failures == ()
    assert len(captured.retries) == 1


# -- 4. async failure function, streaming, composed filter, concurrent runs -----------


async def test_async_failure_function_redacts_and_the_note_still_follows() -> None:
    seen: list[str] = []

    async def redact(ctx: RunContextWrapper[Any], error: Exception) -> str:
        await asyncio.sleep(0)
        seen.append(type(error).__name__)
        return "The file could not be read (details withheld)."

    failure_function = tm.failure_error_function(then=redact)
    tool = agents.function_tool(
        _read_file, name_override="read_file", failure_error_function=failure_function
    )
    model = script("read_file", {"path": "/etc/shadow"}, "call_1", "Sorry.")
    agent = Agent(name="files", model=model, tools=[tool])

    await Runner.run(agent, "Show me /etc/shadow", run_config=config())

    shown = "The file could not be read (details withheld)."
    assert seen == ["PermissionError"]
    assert model.calls[1].input == [
        user("Show me /etc/shadow"),
        call_item("read_file", {"path": "/etc/shadow"}, "call_1"),
        output_item("call_1", shown),
        note(runtime_note("read_file", "path=/etc/shadow", shown, UNRECOVERABLE)),
    ]


async def test_streamed_run_gets_the_same_input_and_keeps_history_clean() -> None:
    tool = tm.function_tool(_read_file, name_override="read_file")
    model = script("read_file", {"path": "/etc/shadow"}, "call_1", "No access.")
    agent = Agent(name="files", model=model, tools=[tool])

    with tm.capture() as captured:
        streamed = Runner.run_streamed(agent, "Show me /etc/shadow", run_config=config())
        kinds = [event.type async for event in streamed.stream_events()]

    assert "run_item_stream_event" in kinds
    cause = (
        "Tool 'read_file' failed after 1 attempt with PermissionError: "
        f"[Errno 13] Permission denied: '/etc/shadow'\nWhere: {where(captured)}"
    )
    sent = [
        user("Show me /etc/shadow"),
        call_item("read_file", {"path": "/etc/shadow"}, "call_1"),
        output_item("call_1", cause),
    ]
    assert model.calls[1].streamed is True
    assert model.calls[1].input == [
        *sent,
        note(runtime_note("read_file", "path=/etc/shadow", cause, UNRECOVERABLE)),
    ]
    assert streamed.to_input_list() == [*sent, answer_item("No access.")]


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
async def test_a_users_filter_composes_after_ours(asynchronous: bool) -> None:
    received: list[list[Any]] = []

    def mark(data: CallModelData[Any]) -> ModelInputData:
        received.append(list(data.model_data.input))
        return ModelInputData(
            input=[*data.model_data.input, cast(Any, user("(user filter)"))],
            instructions=f"{data.model_data.instructions} [filtered]",
        )

    async def amark(data: CallModelData[Any]) -> ModelInputData:
        await asyncio.sleep(0)
        return mark(data)

    tool = agents.function_tool(_read_file, name_override="read_file")
    model = script("read_file", {"path": "/x"}, "call_1", "Done.")
    agent = Agent(name="files", instructions="Be brief.", model=model, tools=[tool])

    with tm.capture() as captured:
        result = await Runner.run(
            agent,
            "Read /x",
            run_config=config(call_model_input_filter=amark if asynchronous else mark),
        )

    cause = (
        "Tool 'read_file' failed after 1 attempt with PermissionError: "
        f"[Errno 13] Permission denied: '/x'\nWhere: {where(captured)}"
    )
    ours = [
        user("Read /x"),
        call_item("read_file", {"path": "/x"}, "call_1"),
        output_item("call_1", cause),
        note(runtime_note("read_file", "path=/x", cause, UNRECOVERABLE)),
    ]
    assert received == [[user("Read /x")], ours]
    assert model.calls[1].input == [*ours, user("(user filter)")]
    assert model.calls[1].system_instructions == "Be brief. [filtered]"
    assert not has_note(result.to_input_list())


class ServiceError(Exception):
    """An upstream error carrying an HTTP status, as many client libraries raise."""

    def __init__(self, message: str, status_code: int) -> None:
        super().__init__(message)
        self.status_code = status_code


async def test_concurrent_runs_with_the_same_call_ids_keep_their_own_failures() -> None:
    barrier = asyncio.Barrier(2)

    @tool_output_guardrail
    async def both_failed(data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
        # Both failures are recorded before either run's next model call.
        await barrier.wait()
        return ToolGuardrailFunctionOutput.allow()

    @tm.function_tool(
        tool_output_guardrails=[both_failed], effect="read_only", retry=RetryPolicy.none()
    )
    async def fetch_report(ctx: RunContextWrapper[dict[str, int]], name: str) -> str:
        """Fetch a report."""
        raise ServiceError("upstream refused the request", ctx.context["status"])

    models = {
        status: script("fetch_report", {"name": "q3"}, "call_1", f"done {status}")
        for status in (503, 403)
    }
    agent = Agent[dict[str, int]](name="reports", tools=[fetch_report])

    async def run(status: int) -> tm.Captured:
        with tm.capture() as captured:
            await Runner.run(
                agent,
                "Get the q3 report",
                context={"status": status},
                run_config=config(model=models[status]),
            )
        return captured

    transient, refused = await asyncio.gather(run(503), run(403))

    for status, captured, guidance in ((503, transient, TRANSIENT), (403, refused, UNRECOVERABLE)):
        cause = (
            "Tool 'fetch_report' failed after 1 attempt with test_oa_acceptance.ServiceError: "
            f"upstream refused the request\nWhere: {where(captured)}"
        )
        assert models[status].calls[1].input == [
            user("Get the q3 report"),
            call_item("fetch_report", {"name": "q3"}, "call_1"),
            output_item("call_1", cause),
            note(runtime_note("fetch_report", "name=q3", cause, guidance)),
        ]
    # The two outputs read the same; only the per-run records tell them apart.
    assert models[503].calls[1].input[2] == models[403].calls[1].input[2]


async def test_model_sending_invalid_arguments_is_told_which_field_to_fix() -> None:
    tool = tm.function_tool(_read_file, name_override="read_file")
    model = script("read_file", {"file": "/x"}, "call_1", "Retrying with path.")
    agent = Agent(name="files", model=model, tools=[tool])

    with tm.capture() as captured:
        await Runner.run(agent, "Read /x", run_config=config())

    shown = (
        "Tool 'read_file' was not run: invalid arguments. path: Field required (got {'file': '/x'})"
    )
    assert model.calls[1].input[2:] == [
        output_item("call_1", shown),
        note(runtime_note("read_file", "file=/x", shown, FIXABLE)),
    ]
    failure = captured.failures[0]
    assert (failure.kind, failure.rule, failure.attempts) == (
        "fixable",
        "invalid-arguments",
        0,
    )


async def test_plain_tool_with_invalid_arguments_names_what_to_change_and_is_fixable() -> None:
    tool = agents.function_tool(_read_file, name_override="read_file")
    model = script("read_file", {"file": "/x"}, "call_1", "Retrying with path.")
    agent = Agent(name="files", model=model, tools=[tool])

    await Runner.run(agent, "Read /x", run_config=config())

    shown = (
        "Tool 'read_file' was not run: invalid arguments. "
        "file: additional property 'file' is not allowed; path: 'path' is a required property"
    )
    assert model.calls[1].input[2:] == [
        output_item("call_1", shown),
        note(runtime_note("read_file", "file=/x", shown, FIXABLE)),
    ]
