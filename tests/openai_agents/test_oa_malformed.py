"""Malformed calls in the Agents SDK: a misspelled tool, arguments that are not JSON,
arguments that break the schema.  With toolmend the model reads a fixable error and
the run goes on; without it the SDK ends the run or hides the cause, as it does today."""

from __future__ import annotations

from typing import Any

import pytest
from agents import Agent, ModelBehaviorError, RunConfig, Runner
from agents import function_tool as sdk_function_tool
from agents.items import ResponseFunctionToolCall
from agents.testing import ScriptedModel, assistant_message, function_call
from oa_support import FIXABLE, GENERIC, call_item, config, output_item, user

import notes
import toolmend_openai_agents as tm

RAN: list[str] = []


@tm.function_tool(effect="read_only")
def get_time(timezone: str) -> str:
    """The current time in a timezone."""
    RAN.append(timezone)
    return f"12:00 {timezone}"


@sdk_function_tool
def get_date(timezone: str) -> str:
    """Today's date in a timezone (a plain SDK tool)."""
    RAN.append(timezone)
    return f"2026-12-01 {timezone}"


@pytest.fixture(autouse=True)
def _fresh() -> None:
    RAN.clear()


def _raw(name: str, arguments: str, call_id: str) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        arguments=arguments, call_id=call_id, name=name, type="function_call", id=call_id
    )


def _note(call: str, error: str) -> dict[str, Any]:
    return {
        "role": "user",
        "content": notes.called(call, error, FIXABLE),
    }


def _raw_item(name: str, arguments: str, call_id: str) -> dict[str, Any]:
    return {
        "arguments": arguments,
        "call_id": call_id,
        "name": name,
        "type": "function_call",
        "id": call_id,
    }


async def _run(first: Any, run_config: RunConfig, tool: Any = get_time) -> ScriptedModel:
    model = ScriptedModel(
        [
            [first],
            [function_call(tool.name, {"timezone": "UTC"}, call_id="c2")],
            [assistant_message("It is noon.")],
        ]
    )
    agent = Agent(name="clock", model=model, tools=[get_time, get_date])
    result = await Runner.run(agent, "What time is it?", run_config=run_config)
    assert result.final_output == "It is noon."
    return model


async def test_a_misspelled_tool_reads_a_fixable_error_naming_the_tool_and_runs_on() -> None:
    with tm.capture() as captured:
        model = await _run(function_call("get_tim", {"timezone": "UTC"}, call_id="c1"), config())
    error = (
        "Tool 'get_tim' does not exist. Did you mean 'get_time'? "
        "Available tools: get_time, get_date."
    )
    assert model.calls[1].input == [
        user("What time is it?"),
        call_item("get_tim", {"timezone": "UTC"}, "c1"),
        output_item("c1", error),
        _note("get_tim with timezone=UTC", error),
    ]
    assert model.calls[2].input[-2:] == [
        call_item("get_time", {"timezone": "UTC"}, "c2"),
        output_item("c2", "12:00 UTC"),
    ]
    assert RAN == ["UTC"]
    [failure] = captured.failures
    assert (failure.call_id, failure.kind, failure.rule) == (
        "c1",
        "fixable",
        "unknown-tool",
    )


async def test_without_toolmend_or_with_it_switched_off_the_sdk_ends_the_run() -> None:
    call = function_call("get_tim", {"timezone": "UTC"}, call_id="c1")
    for run_config in (RunConfig(tracing_disabled=True), config(malformed_calls=False)):
        with pytest.raises(ModelBehaviorError, match="Tool get_tim not found in agent clock"):
            await _run(call, run_config)
    assert RAN == []


@pytest.mark.parametrize("tool", [get_time, get_date], ids=["toolmend_tool", "sdk_tool"])
async def test_arguments_that_are_not_json_read_a_fixable_error(tool: Any) -> None:
    model = await _run(_raw(tool.name, '{"timezone": "UTC"', "c1"), config(), tool)
    error = (
        f"Tool '{tool.name}' was not run: its arguments are not valid JSON "
        "(Expecting ',' delimiter: line 1 column 19 (char 18))."
    )
    assert model.calls[1].input == [
        user("What time is it?"),
        _raw_item(tool.name, '{"timezone": "UTC"', "c1"),
        output_item("c1", error),
        _note(f'{tool.name} with {{"timezone": "UTC"', error),
    ]
    assert RAN == ["UTC"]


@pytest.mark.parametrize(
    ("tool", "details"),
    [
        (get_time, "timezone: Input should be a valid string (got 3)"),
        (get_date, "timezone: 3 is not of type 'string'"),
    ],
    ids=["toolmend_tool", "sdk_tool"],
)
async def test_arguments_that_break_the_schema_name_the_argument(tool: Any, details: str) -> None:
    model = await _run(_raw(tool.name, '{"timezone": 3}', "c1"), config(), tool)
    error = f"Tool '{tool.name}' was not run: invalid arguments. {details}"
    assert model.calls[1].input[2:] == [
        output_item("c1", error),
        _note(f"{tool.name} with timezone=3", error),
    ]
    assert RAN == ["UTC"]


async def test_without_toolmend_a_bad_json_call_hides_the_cause() -> None:
    model = await _run(
        _raw("get_date", '{"timezone": "UTC"', "c1"), RunConfig(tracing_disabled=True), get_date
    )
    assert model.calls[1].input[2] == output_item("c1", GENERIC)
    assert model.calls[2].input[-1] == output_item("c2", "2026-12-01 UTC")
