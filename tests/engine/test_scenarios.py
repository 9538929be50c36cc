"""The scenario file, the simulated tools and the scoring rules."""

from __future__ import annotations

import json
import math
from collections import Counter

import pytest

import toolmend
from toolmend import Form, Kind
from toolmend_engine.eval._backends import Turn, log_odds
from toolmend_engine.eval._evaluate import classify_action, summarize
from toolmend_engine.eval._scenarios import (
    KINDS,
    NOT_FOUND,
    ToolWorld,
    contains_key,
    decision_messages,
    load_suite,
)
from toolmend_engine.inference._toolcalls import ParsedCall, call_from_object

SUITE = load_suite()
FLIGHT = SUITE.scenarios[0]


def test_six_tools_ten_scenarios_each_five_variants_per_kind() -> None:
    assert len(SUITE.tools) >= 6
    assert Counter(s.tool for s in SUITE.scenarios) == dict.fromkeys(SUITE.tool_names, 10)
    assert {k: len(v) for k, v in SUITE.errors.items()} == dict.fromkeys(KINDS, 5)
    assert len({s.id for s in SUITE.scenarios}) == 60
    for s in SUITE.scenarios:
        assert s.key.casefold() in json.dumps(s.result).casefold()
        assert s.fix_wrong != s.right


def test_no_key_can_be_copied_from_the_conversation() -> None:
    """A reply completes only with the tool's result, never by quoting the request or an error."""
    for s in SUITE.scenarios:
        seen = [s.request, json.dumps(dict(s.arguments)), str(s.fix_wrong)]
        seen += [SUITE.error_text(s, kind) for kind in KINDS]
        assert not [text for text in seen if contains_key(text, s.key)], s.id


@pytest.mark.parametrize("kind", KINDS)
def test_every_error_text_is_detected_with_its_kind_in_five_variants_per_tool(kind: Kind) -> None:
    variants: dict[str, set[int]] = {}
    texts = set()
    for s in SUITE.scenarios:
        text = SUITE.error_text(s, kind)
        verdict = toolmend.classify_result(text)
        assert (verdict.failed, verdict.kind) == (True, kind), text
        variants.setdefault(s.tool, set()).add(SUITE.variant(s, kind))
        texts.add(text)
    assert variants == {tool: {0, 1, 2, 3, 4} for tool in SUITE.tool_names}
    assert len(texts) == (60 if kind is Kind.FIXABLE else 30)


def test_decision_step_conversation_and_every_form_changes_it() -> None:
    messages = decision_messages(SUITE, FLIGHT, Kind.FIXABLE)
    assert messages == [
        {"role": "user", "content": "Which gate does flight QX 418 leave from on 12 April 2031?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {
                        "name": "get_flight_status",
                        "arguments": '{"flight_number": "QX 418", "date": "12/04/2031"}',
                    },
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_1",
            "content": 'Error: Invalid parameters: date "12/04/2031" must be written as '
            'YYYY-MM-DD. Use "2031-04-12".',
        },
    ]
    for form in (Form.C1, Form.C2, Form.C3, Form.C4):
        assert toolmend.rewrite(messages, form).report.changed


def test_select_interleaves_tools() -> None:
    assert [s.id for s in SUITE.select(1)] == [
        "flight-01",
        "order-01",
        "parcel-01",
        "book-01",
        "room-01",
        "menu-01",
    ]
    assert len(SUITE.select(None)) == 60


def test_simulated_tools() -> None:
    right = dict(FLIGHT.arguments)
    wrong = FLIGHT.failed_arguments(Kind.FIXABLE)
    result = json.dumps(dict(FLIGHT.result))
    fixable = ToolWorld(SUITE, FLIGHT, Kind.FIXABLE)
    assert (
        fixable.run("get_flight_status", {"flight_number": " QX 418 ", "date": "2031-04-12"})
        == result
    )
    assert fixable.run("get_flight_status", wrong) == SUITE.error_text(FLIGHT, Kind.FIXABLE)
    assert fixable.run("get_order", {"order_id": "ORD-1"}) == NOT_FOUND
    assert fixable.run("get_flight_status", {"flight_number": "QX 418", "date": "x"}) == NOT_FOUND

    assert ToolWorld(SUITE, FLIGHT, Kind.TRANSIENT).run("get_flight_status", right) == result
    parcel = next(s for s in SUITE.scenarios if s.id == "parcel-01")
    lower = {"tracking_number": "zp-77310-k"}
    assert ToolWorld(SUITE, parcel, Kind.FIXABLE).run("track_parcel", lower) == SUITE.error_text(
        parcel, Kind.FIXABLE
    )
    assert (
        classify_action(_turn(ParsedCall("track_parcel", lower)), parcel, Kind.FIXABLE) == "repeat"
    )
    unrecoverable = ToolWorld(SUITE, FLIGHT, Kind.UNRECOVERABLE)
    assert unrecoverable.run("get_flight_status", right) == SUITE.error_text(
        FLIGHT, Kind.UNRECOVERABLE
    )


def test_malformed_calls_get_the_cores_fixable_errors() -> None:
    world = ToolWorld(SUITE, FLIGHT, Kind.FIXABLE)
    assert world.run("launch", {}) == (
        "Tool 'launch' does not exist. Available tools: get_flight_status, get_order, "
        "track_parcel, find_book, check_room, get_menu."
    )
    assert world.run("get_flight_stats", {}) == (
        "Tool 'get_flight_stats' does not exist. Did you mean 'get_flight_status'? "
        "Available tools: get_flight_status, get_order, track_parcel, find_book, check_room, "
        "get_menu."
    )
    assert world.run("get_flight_status", {"flight_number": "QX 418"}) == (
        "Tool 'get_flight_status' was not run: invalid arguments. "
        "date: 'date' is a required property"
    )
    assert world.run("get_flight_status", '{"flight_number": "QX 418", "date": ') == (
        "Tool 'get_flight_status' was not run: its arguments are not valid JSON "
        "(Expecting value: line 1 column 37 (char 36))."
    )
    repaired = '{"flight_number": " QX 418 ", "date": "2031-04-12",}'
    assert world.run("get_flight_status", repaired) == json.dumps(dict(FLIGHT.result))
    call = call_from_object({"name": "get_order", "arguments": '{"order_id": '})
    assert call == ParsedCall("get_order", {})
    assert call is not None
    assert call.raw == '{"order_id": '


def _turn(*calls: ParsedCall, content: str = "") -> Turn:
    return Turn("raw", content, calls, "sha", 1, "h")


def test_classify_action() -> None:
    right = ParsedCall("get_flight_status", dict(FLIGHT.arguments))
    wrong = ParsedCall("get_flight_status", FLIGHT.failed_arguments(Kind.FIXABLE))
    only_date = ParsedCall("get_flight_status", {"flight_number": "QX418", "date": "2031-04-12"})
    other = ParsedCall("get_order", {"order_id": "x"})
    assert classify_action(_turn(right), FLIGHT, Kind.TRANSIENT) == "repeat"
    assert classify_action(_turn(right), FLIGHT, Kind.FIXABLE) == "corrected"
    assert classify_action(_turn(only_date), FLIGHT, Kind.FIXABLE) == "corrected"
    assert classify_action(_turn(wrong), FLIGHT, Kind.FIXABLE) == "repeat"
    assert classify_action(_turn(other, wrong, right), FLIGHT, Kind.FIXABLE) == "corrected"
    assert classify_action(_turn(other), FLIGHT, Kind.TRANSIENT) == "other_call"
    assert classify_action(_turn(right), FLIGHT, Kind.UNRECOVERABLE) == "repeat"
    assert classify_action(_turn(content="Sorry, no access."), FLIGHT, Kind.UNRECOVERABLE) == "text"
    assert classify_action(_turn(content=" "), FLIGHT, Kind.UNRECOVERABLE) == "empty"


def test_log_odds() -> None:
    assert log_odds(-2.0, -1.0) == pytest.approx(-2.0 - math.log1p(-math.exp(-1.0)))
    assert log_odds(0.0, 0.0) is None


def test_summarize() -> None:
    rows = [
        {
            "form": "c0",
            "kind": "transient",
            "correct": True,
            "log_odds": -1.0,
            "completed": True,
            "recomputed_tokens": 10,
            "futile_calls": 0,
        },
        {
            "form": "c0",
            "kind": "transient",
            "correct": False,
            "log_odds": -2.0,
            "completed": False,
            "recomputed_tokens": 20,
            "futile_calls": 0,
        },
        {
            "form": "c3",
            "kind": "unrecoverable",
            "correct": True,
            "log_odds": None,
            "completed": True,
            "recomputed_tokens": None,
            "futile_calls": 2,
        },
        {
            "form": "c3",
            "kind": "unrecoverable",
            "error": "down",
            "correct": False,
            "completed": False,
        },
    ]
    assert summarize(rows) == [
        {
            "form": "c0",
            "kind": "transient",
            "n": 2,
            "correct": 0.5,
            "log_odds": -1.5,
            "completed": 0.5,
            "futile_calls": None,
            "recomputed_tokens": 15.0,
            "errors": 0,
        },
        {
            "form": "c3",
            "kind": "unrecoverable",
            "n": 2,
            "correct": 0.5,
            "log_odds": None,
            "completed": 0.5,
            "futile_calls": 1.0,
            "recomputed_tokens": None,
            "errors": 1,
        },
    ]
