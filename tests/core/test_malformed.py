"""Malformed calls: unknown tools, unusable arguments and schema errors become fixable
failures with exact texts; JSON is repaired only where exactly one repair exists."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from toolmend import Kind, classify_result
from toolmend.integrations import (
    GUIDANCE,
    check_call,
    parse_arguments,
    unknown_tool,
    validation_details,
)

TOOLS: dict[str, dict[str, Any] | None] = {
    "get_time": {
        "type": "object",
        "properties": {"timezone": {"type": "string"}},
        "required": ["timezone"],
    },
    "echo": None,
}


def test_an_unknown_tool_names_the_closest_tool_first_and_lists_the_rest() -> None:
    check = check_call("get_tim", '{"timezone": "UTC"}', TOOLS)
    assert check.failure is not None
    assert str(check.failure) == (
        "Tool 'get_tim' does not exist. Did you mean 'get_time'? "
        "Available tools: get_time, echo.\n" + GUIDANCE[Kind.FIXABLE]
    )
    assert (check.failure.kind, check.failure.rule, check.failure.attempts) == (
        Kind.FIXABLE,
        "unknown-tool",
        0,
    )


def test_the_list_of_available_tools_is_capped_with_a_count() -> None:
    names = [f"tool_{i:03d}" for i in range(100)]
    failure = unknown_tool("zzz", names)
    assert failure.cause == (
        "Tool 'zzz' does not exist. Available tools: " + ", ".join(names[:40]) + " (and 60 more)."
    )
    assert unknown_tool("zzz", None).cause == (
        "Tool 'zzz' does not exist. Call one of the tools you were given."
    )
    long = ["x" * 300, "y" * 300, "z" * 300, "w" * 300]
    capped = unknown_tool("v", long).cause
    assert capped == (
        "Tool 'v' does not exist. Available tools: "
        + ", ".join(n[:200] + "…" for n in long[:4])
        + "."
    )


@pytest.mark.parametrize(
    ("raw", "value", "repair"),
    [
        ('{"timezone": "UTC",}', {"timezone": "UTC"}, "removed a trailing comma"),
        ('{"timezone": "UTC"', {"timezone": "UTC"}, "closed '}' at the end"),
        (
            '{"a": [1, 2,], "timezone": "x",',
            None,
            None,
        ),
        ('{"timezone": "x", "a": [1, 2', {"timezone": "x", "a": [1, 2]}, "closed ']}' at the end"),
        (
            '{"timezone": "x", "a": [1,], ',
            None,
            None,
        ),
        ('{"timezone": "a,}"', {"timezone": "a,}"}, "closed '}' at the end"),
        ("", {}, None),
        (None, {}, None),
        ({"timezone": "UTC"}, {"timezone": "UTC"}, None),
    ],
)
def test_json_is_repaired_only_where_one_repair_exists(
    raw: Any, value: dict[str, Any] | None, repair: str | None
) -> None:
    parsed = parse_arguments(raw)
    assert (parsed.value, parsed.repair) == (value, repair)


@pytest.mark.parametrize(
    ("raw", "cause"),
    [
        (
            '{"timezone": "UT',
            "Tool 'get_time' was not run: its arguments are not valid JSON "
            "(Unterminated string starting at: line 1 column 14 (char 13)).",
        ),
        (
            '{"timezone": "UTC"}}',
            "Tool 'get_time' was not run: its arguments are not valid JSON "
            "(Extra data: line 1 column 20 (char 19)).",
        ),
        (
            "{'timezone': 'UTC'}",
            "Tool 'get_time' was not run: its arguments are not valid JSON "
            "(Expecting property name enclosed in double quotes: line 1 column 2 (char 1)).",
        ),
        (
            '["UTC"]',
            "Tool 'get_time' was not run: its arguments must be a JSON object, not an array.",
        ),
        (
            '"UTC"',
            "Tool 'get_time' was not run: its arguments must be a JSON object, not a string.",
        ),
        (
            '{"a": [1, 2}',
            "Tool 'get_time' was not run: its arguments are not valid JSON "
            "(Expecting ',' delimiter: line 1 column 12 (char 11)).",
        ),
    ],
)
def test_unusable_arguments_are_a_fixable_failure_that_says_why(raw: str, cause: str) -> None:
    check = check_call("get_time", raw, TOOLS)
    assert check.failure is not None
    assert (check.failure.cause, check.failure.kind, check.failure.rule) == (
        cause,
        Kind.FIXABLE,
        "invalid-arguments",
    )
    assert str(check.failure) == cause + "\n" + GUIDANCE[Kind.FIXABLE]


@pytest.mark.parametrize(
    ("raw", "details"),
    [
        ('{"timezone": 3}', "timezone: 3 is not of type 'string'"),
        ("{}", "timezone: 'timezone' is a required property"),
    ],
)
def test_schema_errors_name_the_path_and_what_was_expected(raw: str, details: str) -> None:
    check = check_call("get_time", raw, TOOLS)
    assert check.failure is not None
    assert check.failure.cause == f"Tool 'get_time' was not run: invalid arguments. {details}"
    assert check.failure.rule == "invalid-arguments"


def test_a_good_call_passes_and_a_repair_is_reported_in_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    assert check_call("get_time", '{"timezone": "UTC"}', TOOLS).failure is None
    assert check_call("echo", '{"anything": [1]}', TOOLS).arguments == {"anything": [1]}
    assert check_call("nope", "{}", None).ok
    with caplog.at_level(logging.WARNING, logger="toolmend"):
        check = check_call("get_time", '{"timezone": "UTC",}', TOOLS)
    assert (check.ok, check.arguments, check.repair) == (
        True,
        {"timezone": "UTC"},
        "removed a trailing comma",
    )
    assert caplog.messages == [
        "toolmend: arguments of 'get_time' repaired: removed a trailing comma"
    ]


def test_validation_can_be_switched_off_and_repair_too() -> None:
    assert check_call("get_time", "{}", TOOLS, validate=False).ok
    assert not check_call("get_time", '{"timezone": "UTC",}', TOOLS, repair=False).ok


def _cause(raw: str) -> str:
    failure = check_call("get_time", raw, TOOLS).failure
    assert failure is not None
    return failure.cause


@pytest.mark.parametrize(
    "text",
    [
        unknown_tool("get_tim", ["get_time"]).cause,
        unknown_tool("zzz", ["get_time"]).cause,
        unknown_tool("zzz", None).cause,
        _cause("[1]"),
        _cause('{"a": [1, 2}'),
        _cause("{}"),
    ],
)
def test_the_classifier_reads_these_texts_as_fixable(text: str) -> None:
    verdict = classify_result(text)
    assert (verdict.failed, verdict.kind) == (True, Kind.FIXABLE)


def test_validation_details_can_keep_only_the_arguments_the_model_wrote() -> None:
    class Args(BaseModel):
        city: str
        tool_call_id: str

    with pytest.raises(ValidationError) as caught:
        Args.model_validate({"city": 3})
    assert validation_details(caught.value, only={"city"}) == (
        "city: Input should be a valid string (got 3)"
    )
    assert validation_details(caught.value, only=()) == ""
    assert validation_details(caught.value).endswith(
        "tool_call_id: Field required (got {'city': 3})"
    )
