"""Errors in context through ``toolmend.rewrite``: collapse once resolved, identical runs,
the pile-up note and the developer-step filter, in each codec; history never mutated."""

from __future__ import annotations

import copy
import io
import json
from typing import Any

import pytest

import notes
import toolmend
from toolmend import ContextPolicy, Kind, LoopGuard
from toolmend.cli import main
from toolmend.deliver._actionable import MARKER, omit_developer_steps
from toolmend.integrations import PILE_UP, stub_superseded_failures

ERROR = (
    'Error: 400 Bad Request: date "2031-13-01" is not a valid date.\n'
    "Traceback (most recent call last):\n"
    '  File "/srv/tools/orders.py", line 88, in handle\n'
    "    return client.lookup(**arguments)\n"
    "ValueError: month must be in 1..12"
)
FIRST = 'Error: 400 Bad Request: date "2031-13-01" is not a valid date.'
RESOLVED = f"[Earlier failure of get_order, resolved by a later successful call: {FIRST}]"
REPEATED = f"[get_order failed again with the same error as its earlier call above: {FIRST}]"
OK = '{"order": "A-17", "status": "shipped"}'
COLLAPSE = ContextPolicy(collapse_resolved=True)
DEV = (
    "Error: 401 Unauthorized: the access token has expired. "
    "Run `gcloud auth login` to obtain new credentials. "
    "See https://cloud.google.com/docs/authentication for details."
)
DEV_SHOWN = f"Error: 401 Unauthorized: the access token has expired. {MARKER}"
DEV_OMITTED = [
    "Run `gcloud auth login` to obtain new credentials.",
    "See https://cloud.google.com/docs/authentication for details.",
]


def _call(call_id: str, date: str) -> dict[str, Any]:
    arguments = json.dumps({"date": date})
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": "get_order", "arguments": arguments},
            }
        ],
    }


def _result(call_id: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def _openai(*outcomes: str) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Where is my order?"}]
    for n, content in enumerate(outcomes, 1):
        messages += [_call(f"c{n}", f"2031-0{n}-01"), _result(f"c{n}", content)]
    return messages


def _check_pure(messages: Any, before: Any, out: list[Any], changed: set[int]) -> None:
    """The input is unchanged, and every message not in ``changed`` is the same object."""
    assert messages == before
    assert [i for i, (a, b) in enumerate(zip(out, messages, strict=False)) if a is not b] == sorted(
        changed
    )


# -- collapse on success ----------------------------------------------------------------


@pytest.mark.parametrize("form", ["c1", "c2", "c3", "c4"])
def test_openai_failure_resolved_by_a_later_success_collapses(form: str) -> None:
    messages = _openai(ERROR, OK)
    before = copy.deepcopy(messages)
    result = toolmend.rewrite(messages, form, context=COLLAPSE)
    assert result.messages == [
        *messages[:2],
        {"role": "tool", "tool_call_id": "c1", "content": RESOLVED},
        *messages[3:],
    ]
    _check_pure(messages, before, result.messages, {2})
    assert result.report.changed is True
    assert result.report.collapsed == ("2: get_order resolved",)
    assert result.report.to_dict()["collapsed"] == ["2: get_order resolved"]
    assert result.report.header() == "failed=none; form=" + form + "; changed=true; collapsed=1"


def test_collapse_is_off_by_default_and_never_under_off() -> None:
    messages = _openai(ERROR, OK)
    assert toolmend.rewrite(messages, "c3").messages is messages
    assert toolmend.rewrite(messages, "off", context=COLLAPSE).messages is messages


def test_a_one_line_error_collapses_too_the_stub_says_it_was_resolved() -> None:
    messages = _openai("Error: 503 Service Unavailable", OK)
    out = toolmend.rewrite(messages, "c3", context=COLLAPSE).messages
    assert out[2]["content"] == (
        "[Earlier failure of get_order, resolved by a later successful call: "
        "Error: 503 Service Unavailable]"
    )


def test_responses_failure_resolved_collapses() -> None:
    items: list[Any] = [{"role": "user", "content": "Where is my order?"}]
    for n, output in ((1, ERROR), (2, OK)):
        items += [
            {"type": "function_call", "call_id": f"c{n}", "name": "get_order", "arguments": "{}"},
            {"type": "function_call_output", "call_id": f"c{n}", "output": output},
        ]
    before = copy.deepcopy(items)
    result = toolmend.rewrite(items, "c3", format="responses", context=COLLAPSE)
    assert result.messages == [
        *items[:2],
        {"type": "function_call_output", "call_id": "c1", "output": RESOLVED},
        *items[3:],
    ]
    _check_pure(items, before, result.messages, {2})


def test_anthropic_failure_resolved_collapses() -> None:
    def use(n: int) -> dict[str, Any]:
        block = {"type": "tool_use", "id": f"t{n}", "name": "get_order", "input": {}}
        return {"role": "assistant", "content": [block]}

    def result(n: int, text: str, error: bool) -> dict[str, Any]:
        block = {"type": "tool_result", "tool_use_id": f"t{n}", "content": text, "is_error": error}
        return {"role": "user", "content": [block]}

    messages = [
        {"role": "user", "content": "Where is my order?"},
        use(1),
        result(1, ERROR, True),
        use(2),
        result(2, OK, False),
    ]
    before = copy.deepcopy(messages)
    out = toolmend.rewrite(messages, "c3", format="anthropic", context=COLLAPSE)
    assert out.messages == [*messages[:2], result(1, RESOLVED, True), *messages[3:]]
    _check_pure(messages, before, out.messages, {2})


# -- identical runs -----------------------------------------------------------------------


def test_of_a_run_of_identical_errors_only_the_first_stays_in_full() -> None:
    other = "Error: 404 Not Found: no order matches these arguments"
    messages = _openai(ERROR, ERROR, other, ERROR, ERROR)
    before = copy.deepcopy(messages)
    result = toolmend.rewrite(messages, "c1", context=COLLAPSE)
    # 2: first in full; 4: a repeat; 6: another error; 8: a new run; 10: the decision step.
    assert [m["content"] for m in result.messages if m["role"] == "tool"] == [
        ERROR,
        REPEATED,
        other,
        ERROR,
        ERROR + "\n" + toolmend.integrations.GUIDANCE[Kind.FIXABLE],
    ]
    assert result.report.collapsed == ("4: get_order repeated",)
    _check_pure(messages, before, result.messages, {4, 10})


# -- the pile-up note ---------------------------------------------------------------------


def _note(error: str, guidance: str, date: str = "2031-03-01") -> str:
    return notes.note("get_order", f"date={date}", error, guidance)


def test_the_third_failure_with_the_same_error_gets_the_pile_up_note() -> None:
    error = "Error: 503 Service Unavailable"
    two = toolmend.rewrite(_openai(error, error), "c3")
    assert two.messages[-1]["content"] == _note(
        error, toolmend.integrations.GUIDANCE[Kind.TRANSIENT], "2031-02-01"
    )
    messages = _openai(error, error, error)
    before = copy.deepcopy(messages)
    three = toolmend.rewrite(messages, "c3")
    piled = PILE_UP.format(count=3, tool="get_order", error_class="503")
    assert three.messages == [*messages, {"role": "user", "content": _note(error, piled)}]
    assert three.report.detections[0].guidance == piled
    assert messages == before
    off = toolmend.rewrite(messages, "c3", context=ContextPolicy(pile_up_after=None))
    assert off.messages[-1]["content"] == _note(
        error, toolmend.integrations.GUIDANCE[Kind.TRANSIENT]
    )
    later = toolmend.rewrite(messages, "c3", context=ContextPolicy(pile_up_after=4))
    assert later.messages[-1]["content"] == off.messages[-1]["content"]


def test_a_success_or_another_error_class_restarts_the_count() -> None:
    error = "Error: 503 Service Unavailable"
    for middle in (OK, "Error: 429 Too Many Requests"):
        messages = _openai(error, middle, error, error)
        out = toolmend.rewrite(messages, "c3")
        guidance = toolmend.integrations.GUIDANCE[Kind.TRANSIENT]
        assert out.messages[-1]["content"] == _note(error, guidance, "2031-04-01")


def test_the_loop_guard_gives_the_same_pile_up_sentence() -> None:
    guard = LoopGuard()
    for n in range(3):
        guard.record("get_order", {"n": n}, Kind.TRANSIENT, "Error: 503 Service Unavailable")
    assert guard.advice("get_order") == PILE_UP.format(count=3, tool="get_order", error_class="503")
    other = LoopGuard()
    for code in (503, 502, 504):
        other.record("get_order", {}, Kind.TRANSIENT, f"Error: HTTP {code}")
    assert other.advice("get_order") == (
        "The last 3 calls of get_order failed: if the next one fails too, "
        "try another way or tell the user what failed."
    )
    assert LoopGuard(pile_up_after=None).settings()["pile_up_after"] is None


# -- the developer-step filter ------------------------------------------------------------


@pytest.mark.parametrize("form", ["c2", "c3", "c4"])
def test_the_note_omits_developer_steps_and_reports_them(form: str) -> None:
    messages = _openai(DEV)
    result = toolmend.rewrite(messages, form)
    note = result.messages[-1]["content"]
    if form == "c2":  # the note is appended to the user turn
        assert note.startswith("Where is my order?\n\n")
        note = note.split("\n\n", 1)[1]
    assert note == _note(
        DEV_SHOWN, toolmend.integrations.GUIDANCE[Kind.UNRECOVERABLE], "2031-01-01"
    )
    detection = result.report.detections[0]
    assert list(detection.omitted) == DEV_OMITTED
    assert detection.to_dict()["omitted"] == DEV_OMITTED
    assert messages[2]["content"] == DEV


def test_the_filter_can_be_switched_off_or_waived_per_tool() -> None:
    messages = _openai(DEV)
    full = (  # the error holds a backtick, so its fence is two
        "Note from the tool runtime: the last attempt called get_order with `date=2031-01-01` "
        f"and it failed with: ``{DEV}``\n\n{toolmend.integrations.GUIDANCE[Kind.UNRECOVERABLE]}"
    )
    for policy in (
        ContextPolicy(filter_steps=False),
        ContextPolicy(agent_steps={"get_order"}),
        ContextPolicy(agent_steps=True),
    ):
        result = toolmend.rewrite(messages, "c3", context=policy)
        assert result.messages[-1]["content"] == full
        assert result.report.detections[0].omitted == ()
    other = toolmend.rewrite(messages, "c3", context=ContextPolicy(agent_steps={"shell"}))
    assert other.report.detections[0].omitted == tuple(DEV_OMITTED)


def test_the_filter_keeps_the_cause_and_the_first_sentence() -> None:
    assert omit_developer_steps("Please run `npm login` first.").omitted == ()
    kept = "AccessDenied: run `aws configure`. ExpiredToken: see https://aws.amazon.com/iam."
    assert omit_developer_steps(kept).text == kept
    text = "Quota exceeded. Contact your administrator. Visit https://x.io/billing. Retry later."
    assert omit_developer_steps(text).text == f"Quota exceeded. {MARKER} Retry later."
    benign = "Error: invalid date. Use YYYY-MM-DD."
    assert omit_developer_steps(benign).text is benign


# -- stub_superseded_failures and the CLI ----------------------------------------------------


def test_stub_superseded_failures_reads_through_the_codecs() -> None:
    messages = _openai(ERROR, ERROR, OK)
    out = stub_superseded_failures(messages)
    assert [m["content"] for m in out if m["role"] == "tool"] == [RESOLVED, RESOLVED, OK]


def test_cli_rewrite_collapse_option() -> None:
    body = json.dumps({"messages": _openai(ERROR, OK)})
    for options, expected in (([], ERROR), (["--collapse"], RESOLVED)):
        out = io.StringIO()
        assert main(["rewrite", "--form", "c3", *options], io.StringIO(body), out) == 0
        assert json.loads(out.getvalue())["messages"][2]["content"] == expected
    out = io.StringIO()
    body = json.dumps({"messages": _openai(DEV)})
    assert main(["rewrite", "--form", "c3", "--no-step-filter"], io.StringIO(body), out) == 0
    assert json.loads(out.getvalue())["report"]["detections"][0].get("omitted") is None
    out = io.StringIO()
    assert main(["rewrite", "--form", "c3"], io.StringIO(body), out) == 0
    assert json.loads(out.getvalue())["report"]["detections"][0]["omitted"] == DEV_OMITTED


# -- every codec: identical runs, the pile-up note, the filter's marker ------------------


def _conversation(fmt: str, outputs: list[str]) -> list[Any]:
    """A user turn, then one call of get_order and its result per output, in ``fmt``."""
    messages: list[Any] = [{"role": "user", "content": "Where is my order?"}]
    for n, output in enumerate(outputs, 1):
        if fmt == "openai":
            messages += [_call(f"c{n}", f"2031-0{n}-01"), _result(f"c{n}", output)]
        elif fmt == "responses":
            arguments = json.dumps({"date": f"2031-0{n}-01"})
            messages += [
                {"type": "function_call", "call_id": f"c{n}", "name": "get_order",
                 "arguments": arguments},
                {"type": "function_call_output", "call_id": f"c{n}", "output": output},
            ]  # fmt: skip
        else:
            use = {"type": "tool_use", "id": f"c{n}", "name": "get_order",
                   "input": {"date": f"2031-0{n}-01"}}  # fmt: skip
            result = {"type": "tool_result", "tool_use_id": f"c{n}", "content": output}
            messages += [
                {"role": "assistant", "content": [use]},
                {"role": "user", "content": [result]},
            ]
    return messages


def _text_at(fmt: str, message: Any) -> Any:
    if fmt == "openai":
        return message["content"]
    if fmt == "responses":
        return message["output"]
    return message["content"][0]["content"]


def _last_note(fmt: str, messages: list[Any]) -> str:
    last = messages[-1]
    if fmt == "anthropic" and isinstance(last["content"], list):
        return str(last["content"][-1]["text"])
    return str(last["content"])


@pytest.mark.parametrize("fmt", ["openai", "responses", "anthropic"])
def test_each_codec_collapses_runs_and_notes_pile_up(fmt: str) -> None:
    messages = _conversation(fmt, [ERROR, ERROR, ERROR])
    before = copy.deepcopy(messages)
    out = toolmend.rewrite(messages, "c4", format=fmt, context=COLLAPSE)
    assert messages == before
    assert [_text_at(fmt, out.messages[i]) for i in (2, 4)] == [ERROR, REPEATED]
    assert out.messages[:2] == messages[:2]
    assert out.messages[2] is messages[2]
    piled = PILE_UP.format(count=3, tool="get_order", error_class="ValueError")
    assert _last_note(fmt, out.messages) == _note(ERROR, piled)
    assert out.report.collapsed == ("4: get_order repeated",)


@pytest.mark.parametrize("fmt", ["openai", "responses", "anthropic"])
def test_each_codec_filters_the_developer_step(fmt: str) -> None:
    messages = _conversation(fmt, [DEV])
    out = toolmend.rewrite(messages, "c3", format=fmt)
    guidance = toolmend.integrations.GUIDANCE[Kind.UNRECOVERABLE]
    assert _last_note(fmt, out.messages) == _note(DEV_SHOWN, guidance, "2031-01-01")
    assert list(out.report.detections[0].omitted) == DEV_OMITTED
    assert _text_at(fmt, out.messages[2]) == DEV
