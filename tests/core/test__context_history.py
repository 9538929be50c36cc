"""Errors in context over long runs (``deliver/_context.py``): each earlier result is read
once per process, and the pile-up count reads only as much history as it needs, with the
very counts a reading of the whole conversation gives."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolmend
from toolmend import ContextPolicy, Rule, Rules
from toolmend.deliver import _context
from toolmend.integrations import PILE_UP

OUTCOMES = {
    "ok": "12 C, rain",
    "503": "Error code: 503 - The service is busy.",
    "404": "Error: 404 Not Found",
    "value": "ValueError: day must be in 1..31",
}
Step = list[tuple[str, str]]


def turns(steps: list[Step]) -> list[tuple[int, list[tuple[str, str, str]]]]:
    """Each step's number and its calls as (call id, tool, result text)."""
    return [
        (n, [(f"c{n}_{k}", tool, OUTCOMES[outcome]) for k, (tool, outcome) in enumerate(step)])
        for n, step in enumerate(steps)
    ]


def openai(steps: list[Step]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Plan my trip."}]
    for n, calls in turns(steps):
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": i, "type": "function",
             "function": {"name": tool, "arguments": json.dumps({"n": n})}}
            for i, tool, _ in calls]})  # fmt: skip
        messages += [{"role": "tool", "tool_call_id": i, "content": text} for i, _, text in calls]
    return messages


def responses(steps: list[Step]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [{"role": "user", "content": "Plan my trip."}]
    for _, calls in turns(steps):
        items += [
            {"type": "function_call", "call_id": i, "name": tool, "arguments": "{}"}
            for i, tool, _ in calls
        ]
        items += [
            {"type": "function_call_output", "call_id": i, "output": text} for i, _, text in calls
        ]
    return items


def anthropic(steps: list[Step]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Plan my trip."}]
    for n, calls in turns(steps):
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": i, "name": tool, "input": {"n": n}}
            for i, tool, _ in calls]})  # fmt: skip
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": i, "content": text,
             "is_error": text != OUTCOMES["ok"]}
            for i, _, text in calls]})  # fmt: skip
    return messages


FORMATS: dict[str, Callable[[list[Step]], list[dict[str, Any]]]] = {
    "openai": openai,
    "responses": responses,
    "anthropic": anthropic,
}
calls = st.tuples(st.sampled_from("abc"), st.sampled_from(sorted(OUTCOMES)))
steps = st.lists(st.lists(calls, min_size=1, max_size=3), min_size=1, max_size=60)
failing = st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from(["503", "404", "value"])),
                   min_size=1, max_size=3)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(steps, failing, st.sampled_from(sorted(FORMATS)))
def test_the_pile_up_counts_are_those_of_the_whole_history(
    earlier: list[Step], last: Step, format: str
) -> None:
    messages = FORMATS[format]([*earlier, last])
    windowed = toolmend.rewrite(messages, "c3", format=format)
    # Collapsing reads the whole history, and the counts come from that reading.
    whole = toolmend.rewrite(
        messages, "c3", format=format, context=ContextPolicy(collapse_resolved=True)
    )
    assert windowed.report.detections == whole.report.detections
    assert windowed.report.detections  # the decision step failed: there is a count to check


@pytest.mark.parametrize("format", sorted(FORMATS))
def test_a_streak_far_back_is_counted_whole(format: str) -> None:
    # Five 503s of "a", each followed by twenty results of other tools: the streak
    # starts far outside the first window.
    others: list[Step] = [[("b", "ok")]] * 20
    history = [step for _ in range(4) for step in ([[("a", "503")]], others)]
    messages = FORMATS[format]([step for part in history for step in part] + [[("a", "503")]])
    result = toolmend.rewrite(messages, "c3", format=format)
    [detection] = result.report.detections
    assert detection.guidance == PILE_UP.format(count=5, tool="a", error_class="503")


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts classified from now on (the remembered verdicts forgotten first)."""
    texts: list[str] = []
    classify = _context.classify_result

    def counting(content: Any, **flags: Any) -> Any:
        texts.append(content)
        return classify(content, **flags)

    monkeypatch.setattr(_context, "classify_result", counting)
    monkeypatch.setattr(_context, "_VERDICTS", {})
    return texts


def test_each_earlier_result_is_read_once(counted: list[str]) -> None:
    policy = ContextPolicy(collapse_resolved=True)
    messages = openai([[("a", "ok")]] * 30 + [[("a", "503")]])
    first = toolmend.rewrite(messages, "c3", context=policy)
    assert len(counted) == 31
    messages += openai([[("a", "404")]])[1:]  # the next request: one more exchange
    second = toolmend.rewrite(messages, "c3", context=policy)
    assert counted[31:] == [OUTCOMES["404"]]
    assert first.report.detections[0].kind is toolmend.Kind.TRANSIENT
    assert second.report.collapsed == ()


def test_user_rules_are_read_afresh(counted: list[str]) -> None:
    messages = openai([[("a", "ok")], [("a", "503")]])
    toolmend.rewrite(messages, "c3")
    rules = Rules([Rule("clean", phrase="service is busy")])
    assert toolmend.rewrite(messages, "c3", rules=rules).report.detections == ()
    assert toolmend.rewrite(messages, "c3").report.detections != ()
    assert counted.count(OUTCOMES["503"]) == 2  # first read, then under the rules


def test_the_remembered_verdicts_are_bounded(
    counted: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_context, "MEMO", 16)
    messages = openai([[("a", "ok")]] * 40 + [[("a", "503")]])
    toolmend.rewrite(messages, "c3", context=ContextPolicy(collapse_resolved=True))
    assert len(_context._VERDICTS) == 16
    # The decision step's result is read first, dropped as the oldest, then read again.
    assert len(counted) == 42
