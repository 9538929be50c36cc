"""The input filter: other forms, text detection, reused call ids, odd input."""

from __future__ import annotations

from typing import Any

import agents
import pytest
from agents import Agent, Runner
from agents.run_config import CallModelData, ModelInputData
from oa_support import (
    TRANSIENT,
    UNRECOVERABLE,
    answer_item,
    call_item,
    config,
    line_of,
    note,
    output_item,
    runtime_note,
    script,
    user,
)

import toolmend_openai_agents as tm
from toolmend import Kind, Verdict
from toolmend_openai_agents._runs import Runs


def _read_file(path: str) -> str:
    """Read a file."""
    raise PermissionError(13, "Permission denied", path)


def _cause(path: str) -> str:
    return (
        "Tool 'read_file' failed after 1 attempt with PermissionError: [Errno 13] Permission "
        f"denied: '{path}'\nWhere: {line_of(_read_file, 'raise')}"
    )


async def test_a_plain_tool_returning_an_error_string_is_read_from_its_text() -> None:
    @agents.function_tool
    def fetch(url: str) -> str:
        """Fetch a URL."""
        return "Error: connection reset by peer"

    model = script("fetch", {"url": "http://x"}, "call_f", "Retrying.")
    with tm.capture() as captured:
        await Runner.run(Agent(name="a", model=model, tools=[fetch]), "Fetch", run_config=config())

    text = "Error: connection reset by peer"
    assert model.calls[1].input[2:] == [
        output_item("call_f", text),
        note(runtime_note("fetch", "url=http://x", text, TRANSIENT)),
    ]
    assert captured.failures == ()
    assert [r.header() for r in captured.rewrites] == [
        "failed=2:fetch:transient:generic; form=c3; changed=true"
    ]


async def test_form_c4_replaces_the_failed_call_with_the_note() -> None:
    tool = tm.function_tool(_read_file, name_override="read_file")
    model = script("read_file", {"path": "/x"}, "call_1", "No.")
    result = await Runner.run(
        Agent(name="a", model=model, tools=[tool]), "Read /x", run_config=config(form="c4")
    )

    assert model.calls[1].input == [
        user("Read /x"),
        note(runtime_note("read_file", "path=/x", _cause("/x"), UNRECOVERABLE)),
    ]
    assert result.to_input_list()[:3] == [
        user("Read /x"),
        call_item("read_file", {"path": "/x"}, "call_1"),
        output_item("call_1", _cause("/x")),
    ]


async def test_form_off_changes_nothing_but_reports() -> None:
    tool = tm.function_tool(_read_file, name_override="read_file")
    model = script("read_file", {"path": "/x"}, "call_1", "No.")
    with tm.capture() as captured:
        await Runner.run(
            Agent(name="a", model=model, tools=[tool]), "Read /x", run_config=config(form="off")
        )

    assert model.calls[1].input == [
        user("Read /x"),
        call_item("read_file", {"path": "/x"}, "call_1"),
        output_item("call_1", _cause("/x")),
    ]
    assert [r.header() for r in captured.rewrites] == [
        "failed=2:read_file:unrecoverable:exception; form=off; changed=false"
    ]


def test_a_record_applies_only_to_the_output_it_was_made_for() -> None:
    runs = Runs()
    runs.record("call_1", "Error A", Verdict(True, Kind.TRANSIENT, "exception"))
    runs.record("call_2", [{"type": "text", "text": "Error B"}], Verdict(False))

    def outputs(one: Any, two: Any) -> list[Any]:
        return [
            call_item("t", {}, "call_1"),
            call_item("t", {}, "call_2"),
            output_item("call_1", one),
            output_item("call_2", two),
            note("a user item after the outputs"),
        ]

    same = runs.recorded(outputs("Error A", [{"type": "input_text", "text": "Error B"}]))
    assert same == {
        "call_1": Verdict(True, Kind.TRANSIENT, "exception"),
        "call_2": Verdict(False),
    }
    assert runs.recorded(outputs("Error A2", "Error B")) == {"call_2": Verdict(False)}
    assert runs.recorded([output_item("call_1", "Error A"), answer_item("x")]) == {}


@pytest.mark.parametrize(
    "items",
    [
        [],
        [None, 3, "text"],
        [{"type": "function_call", "call_id": 5}, {"type": "function_call_output", "output": {}}],
    ],
    ids=["empty", "junk", "odd-shapes"],
)
def test_input_it_does_not_understand_is_passed_through(items: list[Any]) -> None:
    data = ModelInputData(input=items, instructions="x")
    agent: Agent[Any] = Agent(name="a")

    assert tm.input_filter().apply(data) is data
    assert tm.input_filter()(CallModelData(model_data=data, agent=agent, context=None)) is data


def test_unknown_form_is_an_error_at_setup() -> None:
    with pytest.raises(ValueError, match="c9"):
        tm.input_filter("c9")
