"""Form selection, the X-Tool-Errors header, and the byte-identical prompt when nothing failed."""

from __future__ import annotations

import dataclasses
import logging

import pytest
from engine_fakes import FakeModel

from toolmend import Form, Kind
from toolmend.integrations import Detection, Report, Source
from toolmend_engine import ChatEngine, choose_form, header_value
from toolmend_engine._layer import HEADER_LIMIT, apply_layer, parse_form
from toolmend_engine.http._requests import parse_chat


def _detection(index: int, name: str | None, kind: Kind = Kind.TRANSIENT) -> Detection:
    return Detection(index, name, f"c{index}", {}, "Error: x", kind, "generic", Source.GENERIC)


def test_request_field_overrides_server_option_overrides_default() -> None:
    assert choose_form(None, None) is Form.OFF
    assert choose_form(None, Form.C2) is Form.C2
    assert choose_form("c3", Form.C2) is Form.C3
    assert choose_form("off", Form.C2) is Form.OFF
    assert choose_form("c0", Form.C2) is Form.OFF


@pytest.mark.parametrize("value", ["c5", "", 3, None, ["c1"]])
def test_parse_form_rejects_unknown_values(value: object) -> None:
    with pytest.raises(ValueError) as info:
        parse_form(value)
    assert str(info.value) == f"tool_errors must be one of off, c0, c1, c2, c3, c4; got {value!r}"


def test_header_lists_each_failure_the_form_and_the_change() -> None:
    report = Report(
        (_detection(2, "get_order"), _detection(4, "find_book", Kind.FIXABLE)), Form.C3, True
    )
    assert header_value(report) == (
        "failed=2:get_order:transient:generic,4:find_book:fixable:generic; form=c3; changed=true"
    )
    assert header_value(Report((), Form.OFF, False)) == "failed=none; form=off; changed=false"


def test_header_names_the_classification_rule_after_the_detection_rule() -> None:
    report = Report(
        (
            dataclasses.replace(_detection(2, "notify"), basis="envelope/code:slack"),
            dataclasses.replace(_detection(3, "charge"), basis="user:billing quota; x=1"),
            dataclasses.replace(_detection(4, "get"), basis="none"),
        ),
        Form.C3,
        True,
    )
    assert header_value(report) == (
        "failed=2:notify:transient:generic/envelope/code.slack,"
        "3:charge:transient:generic/user.billing_quota__x_1,4:get:transient:generic; "
        "form=c3; changed=true"
    )


def test_header_is_ascii_on_one_line_even_for_odd_tool_names() -> None:
    report = Report((_detection(1, "wëird; form=c1\r\nX: y"), _detection(2, None)), Form.C1, True)
    assert header_value(report) == (
        "failed=1:w_ird__form_c1__X__y:transient:generic,2:?:transient:generic; "
        "form=c1; changed=true"
    )


def test_header_is_bounded_and_says_how_many_failures_it_left_out() -> None:
    report = Report(tuple(_detection(i, "t" * 40) for i in range(100)), Form.C3, True)
    value = header_value(report)
    assert len(value) <= HEADER_LIMIT
    shown = value.split("; form=")[0].removeprefix("failed=").split(",")
    assert shown[-1] == f"+{100 - (len(shown) - 1)} more"
    assert shown[0] == f"0:{'t' * 40}:transient:generic"
    assert value.endswith("; form=c3; changed=true")
    assert header_value(report, limit=40) == "failed=+100 more; form=c3; changed=true"


def test_detection_is_recorded_with_the_layer_off(caplog: pytest.LogCaptureFixture) -> None:
    messages = [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "tool_calls": [{"id": "a", "function": {"name": "t", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "a", "content": "Error: 429 Too Many Requests"},
    ]
    with caplog.at_level(logging.INFO, logger="toolmend"):
        result = apply_layer(messages, Form.OFF, format="openai", client=None)
    assert result.messages is messages
    assert (
        header_value(result.report) == "failed=2:t:transient:generic/paper; form=off; changed=false"
    )
    assert (
        "toolmend-engine: failed=2:t:transient:generic/paper; form=off; changed=false"
        in caplog.messages
    )


SUCCESSFUL = [
    {"role": "user", "content": "Where is ZP-1?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "a",
                "type": "function",
                "function": {"name": "track", "arguments": '{"n": "ZP-1"}'},
            }
        ],
    },
    {
        "role": "tool",
        "tool_call_id": "a",
        "content": '{"location": "Velmora hub", "log": "ERROR: none"}',
    },
]
TOOLS = [{"type": "function", "function": {"name": "track", "parameters": {"type": "object"}}}]


@pytest.mark.parametrize("form", ["c1", "c2", "c3", "c4"])
def test_prompt_is_byte_identical_with_the_layer_on_and_off_when_nothing_failed(form: str) -> None:
    engine = ChatEngine(FakeModel())
    off = engine.prepare_chat(parse_chat({"messages": SUCCESSFUL, "tools": TOOLS}))
    on = engine.prepare_chat(
        parse_chat({"messages": SUCCESSFUL, "tools": TOOLS, "tool_errors": form})
    )
    assert on.prompt.encode() == off.prompt.encode()
    assert on.tokens == off.tokens
    assert header_value(on.report) == f"failed=none; form={form}; changed=false"
