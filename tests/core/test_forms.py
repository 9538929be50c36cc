"""Forms C1-C4 on OpenAI Chat Completions messages: exact outputs."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

import notes
from toolmend import Form, Kind, rewrite

TRANSIENT = "This is a temporary failure. Retrying the same call is expected to succeed."
FIXABLE = (
    "This call cannot succeed as written. The error says what to change; "
    "call the tool again with the corrected value."
)
UNRECOVERABLE = (
    "This cannot be fixed by retrying or by changing the arguments. Tell the user what happened."
)

ERRORS = {
    "transient": ("Error: HTTP Error 503: Service Unavailable", TRANSIENT),
    "fixable": ("Error: flight must not be empty", FIXABLE),
    "unrecoverable": (
        "403 Client Error: Forbidden for url: http://api.test/flights",
        UNRECOVERABLE,
    ),
}
AMBIGUOUS = "HTTP Error 404: Not Found"

USER = {"role": "user", "content": "What is the status of flight AB12 on day 3?"}


def call(cid: str, name: str = "flight_status", args: str = '{"flight":"AB12","day":3}') -> Any:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


def assistant(*calls: Any, content: Any = None) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


def tool(cid: str, content: Any) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": cid, "content": content}


def note(
    error: str, guidance: str, name: str = "flight_status", args: str = "flight=AB12, day=3"
) -> str:
    return notes.note(name, args, error, guidance)


def single(error: str) -> list[dict[str, Any]]:
    return [USER, assistant(call("c1")), tool("c1", error)]


def expected_single(form: str, error: str, guidance: str) -> list[dict[str, Any]]:
    if form == "c1":
        return [USER, assistant(call("c1")), tool("c1", error + "\n" + guidance)]
    if form == "c2":
        return [{"role": "user", "content": USER["content"] + "\n\n" + note(error, guidance)}]
    if form == "c3":
        return [*single(error), {"role": "user", "content": note(error, guidance)}]
    if form == "c4":
        return [USER, {"role": "user", "content": note(error, guidance)}]
    return single(error)


FORMS = ["off", "c1", "c2", "c3", "c4"]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("kind", sorted(ERRORS))
def test_single_failure_each_kind_each_form(form: str, kind: str) -> None:
    error, guidance = ERRORS[kind]
    messages = single(error)
    before = copy.deepcopy(messages)
    result = rewrite(messages, form)
    assert result.messages == expected_single(form, error, guidance)
    assert messages == before
    assert result.report.changed is (form != "off")
    assert [(d.index, d.kind.value, d.rule) for d in result.report.detections] == [
        (2, kind, "generic")
    ]
    assert result.report.form is Form.parse(form)


@pytest.mark.parametrize("form", FORMS)
def test_ambiguous_failure_is_recorded_and_left_alone(form: str) -> None:
    messages = single(AMBIGUOUS)
    result = rewrite(messages, form)
    assert result.messages == messages
    assert result.report.changed is False
    assert [(d.kind, d.rule) for d in result.report.detections] == [(Kind.AMBIGUOUS, "generic")]
    expected_skip = () if form == "off" else ("2: ambiguous failure gets no guidance",)
    assert result.report.skipped == expected_skip


@pytest.mark.parametrize("form", FORMS)
def test_failure_before_the_decision_step_is_untouched(form: str) -> None:
    error, _ = ERRORS["transient"]
    messages = [
        USER,
        assistant(call("c1")),
        tool("c1", error),
        assistant(call("c2")),
        tool("c2", '{"flight": "AB12", "status": "on time"}'),
    ]
    result = rewrite(messages, form)
    assert result.messages == messages
    assert result.report.changed is False
    assert result.report.detections == ()


@pytest.mark.parametrize("form", FORMS)
def test_clean_conversation_comes_back_equal(form: str) -> None:
    messages = [USER, assistant(call("c1")), tool("c1", "AB12 departs 09:40 from gate 12.")]
    result = rewrite(messages, form)
    assert result.messages == messages
    assert result.report.to_dict() == {
        "detections": [],
        "form": Form.parse(form).value,
        "changed": False,
        "skipped": [],
    }


PARALLEL_OK = '{"room": "B2", "free": true}'


def parallel(err1: str | None, err2: str | None) -> list[dict[str, Any]]:
    return [
        USER,
        assistant(call("c1"), call("c2", "room_status", '{"room":"B2"}')),
        tool("c1", err1 or '{"flight": "AB12", "status": "delayed"}'),
        tool("c2", err2 or PARALLEL_OK),
    ]


def test_parallel_one_failure_c1() -> None:
    error, guidance = ERRORS["transient"]
    result = rewrite(parallel(None, error), "c1")
    assert result.messages == [*parallel(None, error)[:3], tool("c2", error + "\n" + guidance)]


def test_parallel_one_failure_c2_keeps_the_other_call() -> None:
    error, guidance = ERRORS["transient"]
    result = rewrite(parallel(None, error), "c2")
    n = note(error, guidance, "room_status", "room=B2")
    assert result.messages == [
        USER,
        assistant(call("c1")),
        tool("c1", '{"flight": "AB12", "status": "delayed"}'),
        {"role": "user", "content": n},
    ]


def test_parallel_one_failure_c3_note_after_both_results() -> None:
    error, guidance = ERRORS["transient"]
    messages = parallel(error, None)
    result = rewrite(messages, "c3")
    assert result.messages == [*messages, {"role": "user", "content": note(error, guidance)}]


def test_parallel_one_failure_c4() -> None:
    error, guidance = ERRORS["unrecoverable"]
    result = rewrite(parallel(error, None), "c4")
    assert result.messages == [
        USER,
        assistant(call("c2", "room_status", '{"room":"B2"}')),
        tool("c2", PARALLEL_OK),
        {"role": "user", "content": note(error, guidance)},
    ]


def test_parallel_two_failures_c1() -> None:
    e1, g1 = ERRORS["transient"]
    e2, g2 = ERRORS["fixable"]
    result = rewrite(parallel(e1, e2), "c1")
    assert result.messages == [
        USER,
        parallel(e1, e2)[1],
        tool("c1", e1 + "\n" + g1),
        tool("c2", e2 + "\n" + g2),
    ]


def test_parallel_two_failures_c2_drops_the_assistant_turn() -> None:
    e1, g1 = ERRORS["transient"]
    e2, g2 = ERRORS["fixable"]
    both = note(e1, g1) + "\n\n" + note(e2, g2, "room_status", "room=B2")
    result = rewrite(parallel(e1, e2), "c2")
    assert result.messages == [{"role": "user", "content": USER["content"] + "\n\n" + both}]


def test_parallel_two_failures_c3_one_user_message_in_result_order() -> None:
    e1, g1 = ERRORS["unrecoverable"]
    e2, g2 = ERRORS["transient"]
    messages = parallel(e1, e2)
    both = note(e1, g1) + "\n\n" + note(e2, g2, "room_status", "room=B2")
    result = rewrite(messages, "c3")
    assert result.messages == [*messages, {"role": "user", "content": both}]
    assert [d.kind for d in result.report.detections] == [Kind.UNRECOVERABLE, Kind.TRANSIENT]


def test_parallel_two_failures_c4() -> None:
    e1, g1 = ERRORS["fixable"]
    e2, g2 = ERRORS["fixable"]
    both = note(e1, g1) + "\n\n" + note(e2, g2, "room_status", "room=B2")
    result = rewrite(parallel(e1, e2), "c4")
    assert result.messages == [USER, {"role": "user", "content": both}]


def test_parallel_one_ambiguous_one_transient_c3_notes_only_the_transient() -> None:
    e2, g2 = ERRORS["transient"]
    messages = parallel(AMBIGUOUS, e2)
    result = rewrite(messages, "c3")
    n = note(e2, g2, "room_status", "room=B2")
    assert result.messages == [*messages, {"role": "user", "content": n}]
    assert result.report.skipped == ("2: ambiguous failure gets no guidance",)


def test_c3_appends_to_the_first_user_message_after_the_exchange() -> None:
    error, guidance = ERRORS["transient"]
    later = {"role": "user", "content": "Any news?"}
    messages = [*single(error), later, {"role": "user", "content": "Hello?"}]
    result = rewrite(messages, "c3")
    assert result.messages == [
        *single(error),
        {"role": "user", "content": "Any news?\n\n" + note(error, guidance)},
        {"role": "user", "content": "Hello?"},
    ]


def test_c3_appends_to_a_user_message_with_text_parts() -> None:
    error, guidance = ERRORS["transient"]
    later = {"role": "user", "content": [{"type": "text", "text": "Any news?"}]}
    result = rewrite([*single(error), later], "c3")
    assert result.messages[-1] == {
        "role": "user",
        "content": [{"type": "text", "text": "Any news?\n\n" + note(error, guidance)}],
    }


def test_c2_appends_to_the_earlier_user_message_with_parts_after_an_image() -> None:
    error, guidance = ERRORS["fixable"]
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    user = {"role": "user", "content": [{"type": "text", "text": "Check this"}, image]}
    result = rewrite([user, assistant(call("c1")), tool("c1", error)], "c2")
    assert result.messages == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Check this"},
                image,
                {"type": "text", "text": "\n\n" + note(error, guidance)},
            ],
        }
    ]


def test_c2_keeps_an_assistant_turn_that_has_text() -> None:
    error, guidance = ERRORS["transient"]
    messages = [USER, assistant(call("c1"), content="Let me check."), tool("c1", error)]
    result = rewrite(messages, "c2")
    assert result.messages == [
        USER,
        {"role": "assistant", "content": "Let me check."},
        {"role": "user", "content": note(error, guidance)},
    ]


def test_c1_on_text_part_content() -> None:
    error, guidance = ERRORS["fixable"]
    messages = [USER, assistant(call("c1")), tool("c1", [{"type": "text", "text": error}])]
    result = rewrite(messages, "c1")
    assert result.messages[-1] == tool("c1", [{"type": "text", "text": error + "\n" + guidance}])


def test_is_error_flag_is_read_and_wide_words_classify() -> None:
    messages = [USER, assistant(call("c1")), {**tool("c1", "upstream timed out"), "is_error": True}]
    result = rewrite(messages, "c3")
    assert result.messages[-1] == {
        "role": "user",
        "content": note("upstream timed out", TRANSIENT),
    }
    assert result.report.detections[0].rule == "is_error"


def test_long_error_is_capped_in_the_note_but_not_in_the_tool_message() -> None:
    body = "x" * 3000
    error = "Error: Service Unavailable " + body + " END"
    messages = single(error)
    result = rewrite(messages, "c3")
    omitted = len(error) - 1900
    capped = error[:1500] + f"\n[... {omitted} characters omitted ...]\n" + error[-400:]
    assert result.messages[:3] == messages
    assert result.messages[3] == {"role": "user", "content": note(capped, TRANSIENT)}


def test_error_exactly_at_the_cap_is_not_cut() -> None:
    error = "Error: Service Unavailable " + "y" * (2000 - 27)
    assert len(error) == 2000
    result = rewrite(single(error), "c4")
    assert result.messages[-1]["content"] == note(error, TRANSIENT)


def test_error_text_is_stripped_in_the_note() -> None:
    error = "\n  Error: Service Unavailable  \n"
    result = rewrite(single(error), "c3")
    assert result.messages[-1]["content"] == note("Error: Service Unavailable", TRANSIENT)


def test_an_error_of_several_lines_follows_the_sentence_each_line_quoted() -> None:
    error = (
        "Traceback (most recent call last):\n"
        '  File "app.py", line 3, in <module>\n'
        "TimeoutError: upstream timed out"
    )
    result = rewrite(single(error), "c3")
    assert result.messages[-1]["content"] == (
        "Note from the tool runtime: the last attempt called flight_status with "
        "`flight=AB12, day=3` and it failed with:\n"
        "> Traceback (most recent call last):\n"
        '>   File "app.py", line 3, in <module>\n'
        "> TimeoutError: upstream timed out\n\n" + TRANSIENT
    )


def test_backticks_in_the_error_get_a_longer_fence() -> None:
    error = "Error: unknown field `fligth`; did you mean `flight`?"
    result = rewrite(single(error), "c3")
    assert result.messages[-1]["content"] == (
        "Note from the tool runtime: the last attempt called flight_status with "
        f"`flight=AB12, day=3` and it failed with: ``{error}``\n\n{FIXABLE}"
    )


def test_arguments_keep_call_order_and_compact_json() -> None:
    args = json.dumps({"z": "plain text", "a": {"k": [1, 2]}, "n": None, "b": True, "u": "é"})
    messages = [USER, assistant(call("c1", "lookup", args)), tool("c1", ERRORS["transient"][0])]
    result = rewrite(messages, "c4")
    assert result.messages[-1]["content"] == note(
        ERRORS["transient"][0],
        TRANSIENT,
        "lookup",
        'z=plain text, a={"k":[1,2]}, n=null, b=true, u=é',
    )


def test_unparseable_arguments_are_shown_as_sent() -> None:
    messages = [USER, assistant(call("c1", "lookup", "{broken")), tool("c1", ERRORS["fixable"][0])]
    result = rewrite(messages, "c3")
    assert result.messages[-1]["content"] == note(
        ERRORS["fixable"][0], FIXABLE, "lookup", "{broken"
    )


def test_c2_skips_a_result_whose_call_is_missing() -> None:
    error, _ = ERRORS["transient"]
    messages = [USER, assistant(call("c1")), tool("zz", error)]
    result = rewrite(messages, "c2")
    assert result.messages == messages
    assert result.report.skipped == ("2: its call is not in the last assistant turn",)


def test_no_assistant_turn_is_reported() -> None:
    result = rewrite([USER], "c3")
    assert result.messages == [USER]
    assert result.report.skipped == ("no assistant turn: no decision step",)


@pytest.mark.parametrize(
    "messages",
    [None, "text", 42, {"messages": []}, [1, 2, 3], [USER, assistant(call("c1")), 7]],
)
def test_malformed_input_never_raises(messages: Any) -> None:
    result = rewrite(messages, "c3")
    assert result.messages == messages
    assert result.report.changed is False


def test_unknown_form_is_reported_not_raised() -> None:
    messages = single(ERRORS["transient"][0])
    result = rewrite(messages, "c9")
    assert result.messages == messages
    assert result.report.skipped == ("unknown form 'c9'; left unchanged",)


def test_untouched_messages_are_the_same_objects() -> None:
    messages = [{"role": "system", "content": "s"}, *single(ERRORS["transient"][0])]
    result = rewrite(messages, "c3")
    assert all(a is b for a, b in zip(result.messages, messages, strict=False))


def test_c0_is_an_alias_of_off() -> None:
    result = rewrite(single(ERRORS["transient"][0]), "c0")
    assert result.report.form is Form.OFF
    assert result.report.changed is False


def test_agent_rules_follow_the_client() -> None:
    text = "Command: pytest\nStdout: ok\nExit Code: 2"
    messages = single(text)
    assert rewrite(messages, "c3").report.detections == ()
    found = rewrite(messages, "c3", client="QwenCode/0.1.0 (linux)").report.detections
    assert [(d.rule, d.kind) for d in found] == [("qwen-exit", Kind.AMBIGUOUS)]


def test_report_header_is_one_line() -> None:
    report = rewrite(parallel(ERRORS["transient"][0], AMBIGUOUS), "c3").report
    assert report.header() == (
        "failed=2:flight_status:transient:generic,3:room_status:ambiguous:generic; "
        "form=c3; changed=true"
    )
