"""Unit test of ``toolmend_engine/_outcomes.py``: hostile conversations, replies read in pieces."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import toolmend
from hostile import CODECS, MEGABYTE_ARGUMENTS, QUESTION, conversation, cyclic, nest
from outcome_rows import Rows, recording
from toolmend_engine._outcomes import Conversations, ReplyCalls, conversation_id

FIELD = {"openai": "messages", "anthropic": "messages", "responses": "input"}


@pytest.fixture
def rows() -> Iterator[Rows]:
    with recording() as sink:
        yield sink


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize(
    "args",
    [cyclic(), nest(200, "x"), MEGABYTE_ARGUMENTS, {"blob": b"\x00\xff"}, "not json {", 7],
    ids=["cyclic", "deep", "megabyte", "binary", "bad-json", "number"],
)
def test_hostile_arguments_are_observed_without_raising(codec: str, args: Any, rows: Rows) -> None:
    messages = conversation(codec, ["Error: HTTP 503 Service Unavailable"], args)
    body = {FIELD[codec]: messages}
    report = toolmend.rewrite(messages, "off", format=codec).report
    conversations = Conversations()
    run = conversations.observe(body, codec, report)
    assert run == conversation_id(body, codec)
    conversations.replied(run, calls=False)
    [row] = rows.rows
    assert (row["tool"], row["content"], row["outcome"]) == (
        "payment_status",
        "Error: HTTP 503 Service Unavailable",
        "stopped",
    )


@pytest.mark.parametrize(
    "body",
    [
        {"messages": "hi"},
        {"messages": [None, 3, {"role": "assistant", "tool_calls": "x"}, {"role": "tool"}]},
        {"messages": [{"role": "user", "content": QUESTION}, {"role": "tool", "content": "x"}]},
        {"messages": [{"role": "assistant", "tool_calls": [{"id": 1}, None]}]},
    ],
    ids=["text", "junk", "orphan-result", "junk-calls"],
)
def test_what_is_not_understood_is_not_observed(body: dict[str, Any], rows: Rows) -> None:
    report = toolmend.rewrite(body["messages"], "off").report
    Conversations().observe(body, "openai", report)
    assert rows.rows == []


def test_nothing_is_kept_without_a_recorder() -> None:
    messages = conversation("openai", ["Error: HTTP 503 Service Unavailable"])
    report = toolmend.rewrite(messages, "off").report
    assert Conversations().observe({"messages": messages}, "openai", report) is None


def test_the_run_is_the_opening_and_the_user() -> None:
    first = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": QUESTION}]
    later = [*first, {"role": "assistant", "content": "Checking."}]
    assert conversation_id({"messages": first}, "openai") == conversation_id(
        {"messages": later}, "openai"
    )
    ids = {
        conversation_id({"messages": first}, "openai"),
        conversation_id({"messages": first, "user": "ann"}, "openai"),
        conversation_id({"messages": first[1:]}, "openai"),
        conversation_id({"messages": first[1:], "metadata": {"user_id": "ann"}}, "anthropic"),
    }
    assert len(ids) == 4
    assert conversation_id({"input": [], "previous_response_id": "resp_1"}, "responses") is None


@pytest.mark.parametrize(
    ("fmt", "pieces", "calls"),
    [
        ("openai", [b'{"choices":[{"finish_reason":', b' "tool_calls"}]}'], True),
        ("openai", [b'{"message":{"content":"say \\"tool_calls\\": [{"}}'], False),
        ("openai", [b'{"message":{"tool_calls":[],"content":"hi"},"finish_reason":"stop"}'], False),
        ("anthropic", [b'event: content_block_start\ndata: {"type":"tool', b'_use"}'], True),
        ("anthropic", [b'{"stop_reason":"end_turn","content":[{"type":"text"}]}'], False),
        ("responses", [b'{"output":[{"type": "function_call"}]}'], True),
        ("responses", [b'{"output":[{"type":"function_call_output"}]}'], False),
    ],
)
def test_a_reply_is_read_for_calls_across_its_pieces(
    fmt: str, pieces: list[bytes], calls: bool
) -> None:
    reply = ReplyCalls(fmt)
    for piece in pieces:
        reply.feed(piece)
    assert reply.found is calls
