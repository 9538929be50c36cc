"""The Responses and Anthropic codecs: exact outputs for every form, and round trips."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import notes
from toolmend import rewrite
from toolmend.deliver._codecs import CODECS, Edits

TRANSIENT = "This is a temporary failure. Retrying the same call is expected to succeed."
UNRECOVERABLE = (
    "This cannot be fixed by retrying or by changing the arguments. Tell the user what happened."
)
ERROR = "Error: 503 Server Error: Service Unavailable for url: http://api.test/parcel"
DENIED = "PermissionError: [Errno 13] Permission denied: '/srv/parcels'"
QUESTION = "Where is parcel P-77?"


def note(error: str, guidance: str, args: str = "parcel=P-77") -> str:
    return notes.note("parcel_status", args, error, guidance)


# -- Responses ----------------------------------------------------------------------

R_USER = {"role": "user", "content": QUESTION}
R_CALL = {
    "type": "function_call",
    "call_id": "call_1",
    "name": "parcel_status",
    "arguments": '{"parcel":"P-77"}',
}
R_OUT = {"type": "function_call_output", "call_id": "call_1", "output": ERROR}


def responses_single() -> list[dict[str, Any]]:
    return [R_USER, R_CALL, R_OUT]


@pytest.mark.parametrize(
    ("form", "expected"),
    [
        ("off", [R_USER, R_CALL, R_OUT]),
        ("c1", [R_USER, R_CALL, {**R_OUT, "output": ERROR + "\n" + TRANSIENT}]),
        ("c2", [{"role": "user", "content": QUESTION + "\n\n" + note(ERROR, TRANSIENT)}]),
        ("c3", [R_USER, R_CALL, R_OUT, {"role": "user", "content": note(ERROR, TRANSIENT)}]),
        ("c4", [R_USER, {"role": "user", "content": note(ERROR, TRANSIENT)}]),
    ],
)
def test_responses_forms(form: str, expected: list[Any]) -> None:
    items = responses_single()
    before = copy.deepcopy(items)
    result = rewrite(items, form, format="responses")
    assert result.messages == expected
    assert items == before
    assert [(d.index, d.tool_name, d.call_id) for d in result.report.detections] == [
        (2, "parcel_status", "call_1")
    ]


def test_responses_parallel_calls_note_after_both_outputs() -> None:
    call2 = {**R_CALL, "call_id": "call_2", "arguments": '{"parcel":"P-78"}'}
    out2 = {"type": "function_call_output", "call_id": "call_2", "output": "P-78: delivered"}
    items = [R_USER, R_CALL, call2, R_OUT, out2]
    result = rewrite(items, "c3", format="responses")
    assert result.messages == [*items, {"role": "user", "content": note(ERROR, TRANSIENT)}]


def test_responses_assistant_message_and_reasoning_stay_in_c2() -> None:
    said = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Checking."}],
    }
    items = [R_USER, said, R_CALL, R_OUT]
    result = rewrite(items, "c2", format="responses")
    assert result.messages == [R_USER, said, {"role": "user", "content": note(ERROR, TRANSIENT)}]


def test_responses_input_text_parts_get_the_c3_note() -> None:
    later = {"role": "user", "content": [{"type": "input_text", "text": "Hurry"}]}
    items = [*responses_single(), later]
    result = rewrite(items, "c3", format="responses")
    assert result.messages[-1] == {
        "role": "user",
        "content": [{"type": "input_text", "text": "Hurry\n\n" + note(ERROR, TRANSIENT)}],
    }


def test_responses_earlier_failure_is_not_the_decision_step() -> None:
    out_ok = {"type": "function_call_output", "call_id": "call_2", "output": "fine"}
    items = [R_USER, R_CALL, R_OUT, {**R_CALL, "call_id": "call_2"}, out_ok]
    result = rewrite(items, "c3", format="responses")
    assert result.messages == items
    assert result.report.detections == ()


# -- Anthropic ----------------------------------------------------------------------

A_USER = {"role": "user", "content": QUESTION}
A_USE = {"type": "tool_use", "id": "tu_1", "name": "parcel_status", "input": {"parcel": "P-77"}}
A_ASSISTANT = {"role": "assistant", "content": [A_USE]}


def a_result(content: Any = DENIED, is_error: bool | None = True) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": "tu_1", "content": content}
    if is_error is not None:
        block["is_error"] = is_error
    return block


def anthropic_single() -> list[dict[str, Any]]:
    return [A_USER, A_ASSISTANT, {"role": "user", "content": [a_result()]}]


@pytest.mark.parametrize(
    ("form", "expected"),
    [
        ("off", anthropic_single()),
        (
            "c1",
            [
                A_USER,
                A_ASSISTANT,
                {"role": "user", "content": [a_result(DENIED + "\n" + UNRECOVERABLE)]},
            ],
        ),
        ("c2", [{"role": "user", "content": QUESTION + "\n\n" + note(DENIED, UNRECOVERABLE)}]),
        (
            "c3",
            [
                A_USER,
                A_ASSISTANT,
                {
                    "role": "user",
                    "content": [
                        a_result(),
                        {"type": "text", "text": note(DENIED, UNRECOVERABLE)},
                    ],
                },
            ],
        ),
        ("c4", [A_USER, {"role": "user", "content": note(DENIED, UNRECOVERABLE)}]),
    ],
)
def test_anthropic_forms(form: str, expected: list[Any]) -> None:
    messages = anthropic_single()
    before = copy.deepcopy(messages)
    result = rewrite(messages, form, format="anthropic")
    assert result.messages == expected
    assert messages == before
    assert [(d.rule, d.tool_name) for d in result.report.detections] == [
        ("is_error", "parcel_status")
    ]


def test_anthropic_c3_appends_to_text_after_the_tool_results() -> None:
    messages = [
        A_USER,
        A_ASSISTANT,
        {"role": "user", "content": [a_result(), {"type": "text", "text": "Quickly."}]},
    ]
    result = rewrite(messages, "c3", format="anthropic")
    assert result.messages[-1] == {
        "role": "user",
        "content": [
            a_result(),
            {"type": "text", "text": "Quickly.\n\n" + note(DENIED, UNRECOVERABLE)},
        ],
    }


def test_anthropic_parallel_c2_keeps_the_successful_pair() -> None:
    use2 = {"type": "tool_use", "id": "tu_2", "name": "parcel_status", "input": {"parcel": "P-8"}}
    ok = {"type": "tool_result", "tool_use_id": "tu_2", "content": "P-8: delivered"}
    messages = [
        A_USER,
        {"role": "assistant", "content": [{"type": "text", "text": "Checking"}, A_USE, use2]},
        {"role": "user", "content": [a_result(), ok]},
    ]
    result = rewrite(messages, "c2", format="anthropic")
    assert result.messages == [
        A_USER,
        {"role": "assistant", "content": [{"type": "text", "text": "Checking"}, use2]},
        {"role": "user", "content": [ok, {"type": "text", "text": note(DENIED, UNRECOVERABLE)}]},
    ]


def test_anthropic_text_detection_without_flag() -> None:
    messages = [A_USER, A_ASSISTANT, {"role": "user", "content": [a_result(ERROR, None)]}]
    result = rewrite(messages, "c4", format="anthropic")
    assert result.messages == [A_USER, {"role": "user", "content": note(ERROR, TRANSIENT)}]
    assert result.report.detections[0].rule == "generic"


def test_anthropic_block_content_result() -> None:
    blocks = [{"type": "text", "text": DENIED}]
    messages = [A_USER, A_ASSISTANT, {"role": "user", "content": [a_result(blocks)]}]
    result = rewrite(messages, "c1", format="anthropic")
    assert result.messages[-1] == {
        "role": "user",
        "content": [a_result([{"type": "text", "text": DENIED + "\n" + UNRECOVERABLE}])],
    }


# -- Round trips --------------------------------------------------------------------

ROUND_TRIPS = {
    "openai": [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": "ok", "extra": [1]},
    ],
    "responses": [
        {"role": "developer", "content": "be brief"},
        R_USER,
        {"type": "reasoning", "id": "rs_1", "summary": []},
        R_CALL,
        {**R_OUT, "output": "fine"},
        {"type": "item_reference", "id": "x"},
    ],
    "anthropic": [
        A_USER,
        A_ASSISTANT,
        {"role": "user", "content": [a_result("fine", False), {"type": "text", "text": "more"}]},
    ],
}


@pytest.mark.parametrize("fmt", sorted(ROUND_TRIPS))
def test_round_trip_without_edits_is_identity(fmt: str) -> None:
    messages = ROUND_TRIPS[fmt]
    codec = CODECS[fmt]
    view = codec.view(messages)
    out = codec.apply(messages, view, Edits())
    assert out == messages
    assert all(a is b for a, b in zip(out, messages, strict=True))


@pytest.mark.parametrize("fmt", sorted(ROUND_TRIPS))
@pytest.mark.parametrize("form", ["off", "c1", "c2", "c3", "c4"])
def test_round_trip_through_rewrite_with_no_failure(fmt: str, form: str) -> None:
    result = rewrite(ROUND_TRIPS[fmt], form, format=fmt)
    assert result.messages == ROUND_TRIPS[fmt]
    assert result.report.changed is False


def test_unknown_format_is_reported() -> None:
    result = rewrite([A_USER], "c3", format="gemini")
    assert result.messages == [A_USER]
    assert result.report.skipped == ("not understood: unknown format 'gemini'",)
