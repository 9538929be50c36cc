"""Deep, cyclic and huge values: every walk of a call's arguments is bounded and never raises.

A model can send valid JSON nested 600 levels deep, and a Python caller a
structure that holds itself.  The failure is still delivered: its record, its
note, the loop guard's key and the span's attributes show what lies beyond
the bounds as a marker (``…`` past the depth, ``<cycle>`` for a container met
inside itself) instead of raising ``RecursionError`` into the agent.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from hostile import BEYOND, CYCLE, CYCLIC_SHOWN, DEEP_SHOWN, cyclic, nest
from toolmend import Kind, LoopGuard, ToolFailure, rewrite, testing
from toolmend.integrations import CallContext, CallRecord, compose_note, execute
from toolmend.loop import canonical

GUIDE = "Correct the call."
ERROR = "Invalid arguments: the document is malformed"
DEEP = nest(600, {"x": 1})


def cyclic_list() -> list[Any]:
    value: list[Any] = [1]
    value.append(value)
    return value


CASES = {
    "deep dict": ({"doc": DEEP}, {"doc": DEEP_SHOWN}),
    "deep list": ({"rows": nest(600, 1)["a"]}, {"rows": nest(16, BEYOND)["a"]}),
    "cyclic dict": ({"doc": cyclic()}, {"doc": CYCLIC_SHOWN}),
    "cyclic list": ({"rows": cyclic_list()}, {"rows": [1, CYCLE]}),
    "cyclic arguments": (cyclic(), CYCLIC_SHOWN),
}


def failure_of(arguments: Any) -> ToolFailure:
    return ToolFailure.from_exception(ValueError(ERROR), tool="save", arguments=arguments)


@pytest.mark.parametrize(("arguments", "shown"), CASES.values(), ids=CASES.keys())
def test_the_failure_and_its_record_show_the_arguments_within_the_bounds(
    arguments: Any, shown: Any
) -> None:
    failure = failure_of(arguments)
    assert failure.to_dict()["arguments"] == shown
    assert CallRecord.of_failure(failure).to_dict()["arguments"] == shown
    json.dumps(failure.to_dict())  # JSON-ready, as the adapters send it


@pytest.mark.parametrize(("arguments", "shown"), CASES.values(), ids=CASES.keys())
def test_the_note_restates_the_arguments_within_the_bounds(arguments: Any, shown: Any) -> None:
    note = compose_note("save", arguments, ERROR, GUIDE).text
    assert note == compose_note("save", shown, ERROR, GUIDE).text


def test_the_note_of_a_cyclic_argument_names_the_cycle() -> None:
    note = compose_note("save", {"doc": cyclic()}, ERROR, GUIDE).text
    assert note == (
        'Note from the tool runtime: the last attempt called save with doc={"id":7,"self":'
        f'"<cycle>"}} and it failed with: {ERROR}\n\n{GUIDE}'
    )


def test_arguments_within_the_bounds_are_shown_as_they_were() -> None:
    """32 levels, the arguments' own included, are within the bounds."""
    arguments = {"doc": nest(15, [1, 2]), "tags": ("a", "b")}
    failure = failure_of(arguments)
    assert failure.to_dict()["arguments"] == {"doc": nest(15, [1, 2]), "tags": ["a", "b"]}
    note = compose_note("save", arguments, ERROR, GUIDE).text
    assert note.startswith(
        "Note from the tool runtime: the last attempt called save with doc="
        + '{"a":[' * 15
        + "[1,2]"
        + "]}" * 15
        + ', tags=["a","b"] and it failed with'
    )
    assert canonical(arguments) == json.dumps(arguments, sort_keys=True, separators=(",", ":"))


@pytest.mark.parametrize(("arguments", "shown"), CASES.values(), ids=CASES.keys())
def test_the_loop_guard_runs_a_call_it_cannot_key_again(arguments: Any, shown: Any) -> None:
    """Beyond the bounds two calls may look alike: the guard runs them rather than refuse."""
    loop = LoopGuard()
    calls = []

    def tool(ctx: CallContext) -> str:
        calls.append(ctx.attempt)
        raise ValueError(ERROR)

    with testing():
        first = execute(tool, tool="save", arguments=arguments, effect="write", loop=loop)
        second = execute(tool, tool="save", arguments=arguments, effect="write", loop=loop)
    assert isinstance(first, ToolFailure)
    assert isinstance(second, ToolFailure)
    assert (first.kind, second.kind, second.rule) == (Kind.FIXABLE, Kind.FIXABLE, "exception")
    assert calls == [1, 1]
    assert loop.blocked == []
    assert canonical(arguments) == json.dumps(shown, sort_keys=True, separators=(",", ":"))


def test_a_repeat_within_the_bounds_is_still_refused() -> None:
    loop = LoopGuard()
    arguments = {"doc": nest(10, {"x": 1})}

    def tool(ctx: CallContext) -> str:
        raise ValueError(ERROR)

    with testing():
        execute(tool, tool="save", arguments=arguments, effect="write", loop=loop)
        second = execute(tool, tool="save", arguments=arguments, effect="write", loop=loop)
    assert isinstance(second, ToolFailure)
    assert second.rule == "loop-repeat"


@pytest.mark.parametrize("codec", ["openai", "responses"])
def test_a_conversation_whose_arguments_are_too_deep_to_parse_gets_its_note(codec: str) -> None:
    """JSON text nested deeper than Python's parser goes is restated as text, capped."""
    text = "[" * 100_000 + "]" * 100_000
    if codec == "openai":
        messages: list[Any] = [
            {"role": "user", "content": "save it"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "save", "arguments": text},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "Error: " + ERROR},
        ]
    else:
        messages = [
            {"role": "user", "content": "save it"},
            {"type": "function_call", "call_id": "c1", "name": "save", "arguments": text},
            {"type": "function_call_output", "call_id": "c1", "output": "Error: " + ERROR},
        ]
    done = rewrite(messages, "c3", format=codec)
    assert done.report.skipped == ()
    assert [d.rule for d in done.report.detections] == ["generic"]
    note = done.messages[-1]["content"]
    shown = "[" * 800 + "\n[... 199050 characters omitted ...]\n" + "]" * 150
    assert note.startswith(f"Note from the tool runtime: the last attempt called save with {shown}")
