"""The failure function and the formatter on their own, and the forms they work with."""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
from typing import Any

import agents
import pytest
from agents import Agent, RunConfig, RunContextWrapper, Runner, ToolErrorFormatterArgs
from agents.tool_context import ToolContext
from oa_support import (
    UNRECOVERABLE,
    call_item,
    config,
    line_of,
    output_item,
    script,
    user,
)

import toolmend_openai_agents as tm


def _context(call_id: str = "call_1") -> ToolContext[Any]:
    return ToolContext(
        context=None,
        tool_name="read_file",
        tool_call_id=call_id,
        tool_arguments='{"path": "/x"}',
    )


def _error() -> PermissionError:
    return PermissionError(13, "Permission denied", "/x")


CAUSE = (
    "Tool 'read_file' failed after 1 attempt with PermissionError: "
    "[Errno 13] Permission denied: '/x'"
)


def test_the_cause_replaces_the_generic_text() -> None:
    assert tm.failure_error_function()(_context(), _error()) == CAUSE


def test_form_c1_appends_the_next_step() -> None:
    assert tm.failure_error_function("c1")(_context(), _error()) == f"{CAUSE}\n{UNRECOVERABLE}"


def test_outside_a_tool_call_it_still_answers() -> None:
    shown = tm.failure_error_function()(RunContextWrapper(context=None), ValueError("x"))
    assert shown == "Tool 'tool' failed after 1 attempt with ValueError: x"


def test_an_unprintable_exception_does_not_break_it() -> None:
    class Odd(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no str")

    shown = tm.failure_error_function()(_context(), Odd())
    assert shown == "Tool 'read_file' failed after 1 attempt with test_oa_failure.Odd"


def test_user_function_text_wins_and_its_errors_fall_back_to_ours(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def redact(ctx: RunContextWrapper[Any], error: Exception) -> str:
        return "withheld"

    def broken(ctx: RunContextWrapper[Any], error: Exception) -> str:
        raise KeyError("bug")

    def not_text(ctx: RunContextWrapper[Any], error: Exception) -> Any:
        return 42

    assert tm.failure_error_function(then=redact)(_context(), _error()) == "withheld"
    assert tm.failure_error_function("c1", then=redact)(_context(), _error()) == (
        f"withheld\n{UNRECOVERABLE}"
    )
    with caplog.at_level(logging.ERROR, logger="toolmend.openai_agents"):
        assert tm.failure_error_function(then=broken)(_context(), _error()) == CAUSE
    assert "the user's failure function raised" in caplog.text
    assert tm.failure_error_function(then=not_text)(_context(), _error()) == CAUSE


async def test_an_async_user_function_makes_it_async() -> None:
    async def redact(ctx: RunContextWrapper[Any], error: Exception) -> str:
        return "withheld"

    pending = tm.failure_error_function(then=redact)(_context(), _error())
    assert inspect.isawaitable(pending)
    assert await pending == "withheld"


def test_failures_are_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="toolmend.openai_agents"):
        tm.failure_error_function()(_context("call_9"), _error())
    assert [r.getMessage() for r in caplog.records if r.name == "toolmend.openai_agents"] == [
        "toolmend: tool read_file failed (call call_9): kind=unrecoverable rule=exception "
        "reason=errno EACCES attempts=1 outcome_unknown=True"
    ]


async def _awaited(pending: Any) -> Any:
    return await pending


def test_formatter_leaves_other_errors_to_the_sdk() -> None:
    formatter = tm.tool_error_formatter()
    base: dict[str, Any] = {
        "tool_name": "read_file",
        "call_id": "call_1",
        "default_message": "default",
        "run_context": _context(),
    }
    missing = ToolErrorFormatterArgs(kind="tool_not_found", tool_type="function", **base)
    assert tm.tool_error_formatter(malformed_calls=False)(missing) is None
    pending = formatter(missing)
    assert inspect.isawaitable(pending)
    shown = contextvars.Context().run(asyncio.run, _awaited(pending))
    assert shown == "Tool 'read_file' does not exist. Call one of the tools you were given."
    assert (
        formatter(ToolErrorFormatterArgs(kind="approval_rejected", tool_type="function", **base))
        is None
    )
    assert (
        formatter(
            ToolErrorFormatterArgs(kind="tool_exception", tool_type="shell", error=_error(), **base)
        )
        is None
    )
    failed = ToolErrorFormatterArgs(
        kind="tool_exception", tool_type="function", error=_error(), **base
    )
    assert formatter(failed) == CAUSE


def _read_file(path: str) -> str:
    """Read a file."""
    raise PermissionError(13, "Permission denied", path)


@pytest.mark.parametrize("filter_form", ["c3", "c1"])
async def test_guidance_already_in_the_output_is_not_delivered_twice(filter_form: str) -> None:
    tool = agents.function_tool(
        _read_file,
        name_override="read_file",
        failure_error_function=tm.failure_error_function("c1"),
    )
    model = script("read_file", {"path": "/x"}, "call_1", "No.")
    run_config = RunConfig(
        tracing_disabled=True, call_model_input_filter=tm.input_filter(filter_form)
    )
    await Runner.run(Agent(name="a", model=model, tools=[tool]), "Read /x", run_config=run_config)

    shown = f"{CAUSE}\nWhere: {line_of(_read_file, 'raise')}\n{UNRECOVERABLE}"
    assert model.calls[1].input == [
        user("Read /x"),
        call_item("read_file", {"path": "/x"}, "call_1"),
        output_item("call_1", shown),
    ]


async def test_run_config_form_c1_puts_the_step_in_the_output_of_plain_tools() -> None:
    tool = agents.function_tool(_read_file, name_override="read_file")
    model = script("read_file", {"path": "/x"}, "call_1", "No.")
    await Runner.run(
        Agent(name="a", model=model, tools=[tool]), "Read /x", run_config=config(form="c1")
    )
    shown = f"{CAUSE}\nWhere: {line_of(_read_file, 'raise')}\n{UNRECOVERABLE}"
    assert model.calls[1].input[2:] == [output_item("call_1", shown)]


async def test_a_users_own_formatter_is_kept() -> None:
    def mine(args: ToolErrorFormatterArgs[Any]) -> str | None:
        return "mine"

    tool = agents.function_tool(_read_file, name_override="read_file")
    model = script("read_file", {"path": "/x"}, "call_1", "No.")
    await Runner.run(
        Agent(name="a", model=model, tools=[tool]),
        "Read /x",
        run_config=config(tool_error_formatter=mine),
    )
    # The filter still reads nothing failed-looking into "mine": no note.
    assert model.calls[1].input[2:] == [output_item("call_1", "mine")]
