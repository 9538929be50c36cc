"""Reading calls out of generated text, and streaming the answer without leaking a call."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolmend_engine.inference._toolcalls import ContentStream, ParsedCall, Reply, parse_reply

CALL = ParsedCall("get_order", {"order_id": "ORD-1"})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '<tool_call>{"name": "get_order", "arguments": {"order_id": "ORD-1"}}</tool_call>',
            Reply("", (CALL,)),
        ),
        (
            '<tool_call>{"name": "get_order", "arguments": {"order_id": "ORD-1"}}',
            Reply("", (CALL,)),
        ),
        ('<tool_call>{"name": "get_order", "arguments": {"order_id": "ORD-1"}', Reply("", (CALL,))),
        (
            '<tool_call>\n```json\n{"name": "get_order", "parameters": {"order_id": "ORD-1"}}'
            "\n```\n</tool_call>",
            Reply("", (CALL,)),
        ),
        (
            '<tool_call>{"name": "get_order", '
            '"arguments": "{\\"order_id\\": \\"ORD-1\\"}"}</tool_call>',
            Reply("", (CALL,)),
        ),
        (
            "<tool_call>{'name': 'get_order', 'arguments': {'order_id': 'ORD-1'}}</tool_call>",
            Reply("", (CALL,)),
        ),
        (
            "Let me retry. "
            '<tool_call>{"name": "get_order", "arguments": {"order_id": "ORD-1"}}</tool_call> ok',
            Reply("Let me retry.  ok", (CALL,)),
        ),
        (
            '<tool_call>{"name": "a", "arguments": {}}<tool_call>{"name": "b"}</tool_call>',
            Reply("", (ParsedCall("a", {}), ParsedCall("b", {}))),
        ),
        (
            '<tool_call>{"name": "get_order", "arguments": {...}}</tool_call>',
            Reply('<tool_call>{"name": "get_order", "arguments": {...}}</tool_call>', ()),
        ),
        (
            '<tool_call>{"arguments": {"x": 1}}</tool_call>',
            Reply('<tool_call>{"arguments": {"x": 1}}</tool_call>', ()),
        ),
        (
            '<tool_call>{"name": "f", "arguments": [1]}</tool_call>',
            Reply('<tool_call>{"name": "f", "arguments": [1]}</tool_call>', ()),
        ),
        ('  {"name": "get_order", "arguments": {"order_id": "ORD-1"}}  ', Reply("", (CALL,))),
        (
            '```json\n{"name": "get_order", "arguments": {"order_id": "ORD-1"}}\n```',
            Reply("", (CALL,)),
        ),
        ('{"name": "unknown", "arguments": {}}', Reply('{"name": "unknown", "arguments": {}}', ())),
        ("  The order total is 12.80 EUR.\n", Reply("The order total is 12.80 EUR.", ())),
        ("", Reply("", ())),
    ],
)
def test_parse_reply(text: str, expected: Reply) -> None:
    assert parse_reply(text, {"get_order"}) == expected


def test_bare_json_is_a_call_for_any_name_when_tools_are_unknown() -> None:
    assert parse_reply('{"name": "x", "arguments": {"a": 1}}') == Reply(
        "", (ParsedCall("x", {"a": 1}),)
    )


def test_arguments_json_is_compact_and_keeps_unicode() -> None:
    assert ParsedCall("f", {"city": "Zürich"}).arguments_json() == '{"city": "Zürich"}'


def _stream(text: str, cuts: list[int]) -> str:
    stream = ContentStream()
    out = ""
    for cut in sorted(set(cuts)):
        out += stream.feed(text[:cut])
    out += stream.feed(text)
    out += stream.finish(parse_reply(text).content)
    return out


def test_stream_holds_back_a_call_and_white_space() -> None:
    stream = ContentStream()
    assert stream.feed("  Let me") == "Let me"
    assert stream.feed("  Let me check ") == " check"
    assert stream.feed("  Let me check <tool") == ""
    assert stream.feed('  Let me check <tool_call>{"name": "f"}</tool_call> done') == ""
    assert stream.finish("Let me check  done") == "  done"


def test_stream_holds_a_reply_that_starts_like_bare_json() -> None:
    stream = ContentStream()
    assert stream.feed('{"name"') == ""
    assert stream.finish("") == ""


@given(
    st.lists(
        st.sampled_from(
            [
                "Hi",
                " ",
                "\n",
                "<",
                "tool",
                "<tool_call>",
                '{"name": "f"}',
                "</tool_call>",
                "x<y",
                "{",
            ]
        ),
        max_size=12,
    ),
    st.lists(st.integers(min_value=0, max_value=80), max_size=10),
)
def test_streamed_content_always_equals_the_parsed_content(
    parts: list[str], cuts: list[int]
) -> None:
    text = "".join(parts)
    assert _stream(text, cuts) == parse_reply(text).content
