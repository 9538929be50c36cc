"""Request validation and the Anthropic conversion."""

from __future__ import annotations

from typing import Any

import pytest

from toolmend_engine.http._requests import (
    BadRequest,
    anthropic_to_chat,
    parse_anthropic,
    parse_chat,
)

USER = [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize(
    ("body", "message", "param"),
    [
        ([], "the request body must be a JSON object", None),
        ({}, "messages must be a non-empty list", "messages"),
        ({"messages": []}, "messages must be a non-empty list", "messages"),
        (
            {"messages": [{"role": "robot", "content": "x"}]},
            "messages[0].role must be one of assistant, developer, system, tool, user",
            "messages[0]",
        ),
        (
            {"messages": [{"role": "tool", "content": "x"}]},
            "messages[0].tool_call_id must be a string",
            "messages[0]",
        ),
        (
            {"messages": [{"role": "user", "content": 1}]},
            "messages[0].content must be a string or a list of parts",
            "messages[0]",
        ),
        (
            {"messages": USER, "max_tokens": 0},
            "max_tokens must be a positive integer",
            "max_tokens",
        ),
        (
            {"messages": USER, "max_tokens": True},
            "max_tokens must be a positive integer",
            "max_tokens",
        ),
        ({"messages": USER, "n": 2}, "only n=1 is supported", "n"),
        ({"messages": USER, "stream": "yes"}, "stream must be a boolean", "stream"),
        (
            {"messages": USER, "stop": ["a", 1]},
            "stop must be a non-empty string or a list of them",
            "stop",
        ),
        ({"messages": USER, "tools": {}}, "tools must be a list", "tools"),
        (
            {"messages": USER, "tools": [{"type": "function"}]},
            "tools[0] must be {'type': 'function', 'function': {'name': ...}}",
            "tools[0]",
        ),
        (
            {"messages": USER, "tool_errors": "c9"},
            "tool_errors must be one of off, c0, c1, c2, c3, c4; got 'c9'",
            "tool_errors",
        ),
        (
            {"messages": USER, "logprobs": True, "top_logprobs": 21},
            "top_logprobs must be an integer from 0 to 20",
            "top_logprobs",
        ),
    ],
)
def test_bad_chat_requests(body: Any, message: str, param: str | None) -> None:
    with pytest.raises(BadRequest) as info:
        parse_chat(body)
    assert info.value.body() == {
        "error": {"message": message, "type": "invalid_request_error", "param": param, "code": None}
    }


def test_chat_request_fields() -> None:
    request = parse_chat(
        {
            "messages": USER,
            "max_completion_tokens": 7,
            "stop": "END",
            "stream": True,
            "stream_options": {"include_usage": True},
            "logprobs": True,
            "top_logprobs": 2,
            "tool_errors": "c3",
            "model": "m",
            "tools": [{"type": "function", "function": {"name": "f"}}],
            "tool_choice": "auto",
        }
    )
    assert (request.max_tokens, request.stop, request.stream, request.include_usage) == (
        7,
        ("END",),
        True,
        True,
    )
    assert (request.logprobs, request.top_logprobs, request.tool_errors, request.model) == (
        True,
        2,
        "c3",
        "m",
    )
    assert request.tools == [{"type": "function", "function": {"name": "f"}}]
    none = parse_chat({"messages": USER, "tools": request.tools, "tool_choice": "none"})
    assert none.tools == []


def test_anthropic_request_and_conversion() -> None:
    request = parse_anthropic(
        {
            "model": "m",
            "max_tokens": 50,
            "system": [{"type": "text", "text": "Be brief."}],
            "tools": [
                {"name": "get_order", "description": "d", "input_schema": {"type": "object"}}
            ],
            "messages": [
                {"role": "user", "content": "Total of ORD-1?"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "..."},
                        {"type": "text", "text": "Checking."},
                        {
                            "type": "tool_use",
                            "id": "tu1",
                            "name": "get_order",
                            "input": {"order_id": "ORD-1"},
                        },
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "tu1",
                            "is_error": True,
                            "content": [{"type": "text", "text": "Error: 503 Service Unavailable"}],
                        },
                        {"type": "text", "text": "Please hurry."},
                    ],
                },
            ],
        }
    )
    assert request.tools == [
        {
            "type": "function",
            "function": {"name": "get_order", "description": "d", "parameters": {"type": "object"}},
        }
    ]
    assert anthropic_to_chat(request.messages, request.system) == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Total of ORD-1?"},
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                {
                    "id": "tu1",
                    "type": "function",
                    "function": {"name": "get_order", "arguments": '{"order_id": "ORD-1"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "tu1", "content": "Error: 503 Service Unavailable"},
        {"role": "user", "content": "Please hurry."},
    ]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"messages": USER}, "max_tokens is required"),
        (
            {"max_tokens": 5, "messages": [{"role": "system", "content": "x"}]},
            "messages[0].role must be user or assistant",
        ),
        (
            {"max_tokens": 5, "messages": USER, "system": 3},
            "system must be a string or a list of text blocks",
        ),
    ],
)
def test_bad_anthropic_requests(body: Any, message: str) -> None:
    with pytest.raises(BadRequest) as info:
        parse_anthropic(body)
    assert info.value.message == message


def test_unsupported_anthropic_blocks_are_refused() -> None:
    messages = [{"role": "user", "content": [{"type": "image", "source": {}}]}]
    with pytest.raises(BadRequest) as info:
        anthropic_to_chat(messages, "")
    assert (
        info.value.message == "messages[0].content[0]: block of type 'image' is not supported here"
    )


CALL = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}


@pytest.mark.parametrize(
    ("body", "message", "param", "code"),
    [
        (
            {"temperature": True},
            "Invalid type for 'temperature': expected a decimal, but got a boolean instead.",
            "temperature",
            "invalid_type",
        ),
        (
            {"temperature": -0.5},
            "Invalid 'temperature': decimal below minimum value. Expected a value >= 0, "
            "but got -0.5 instead.",
            "temperature",
            "decimal_below_min_value",
        ),
        (
            {"n": 0},
            "Invalid 'n': integer below minimum value. Expected a value >= 1, but got 0 instead.",
            "n",
            "integer_below_min_value",
        ),
        (
            {"presence_penalty": 3},
            "Invalid 'presence_penalty': decimal above maximum value. Expected a value <= 2, "
            "but got 3 instead.",
            "presence_penalty",
            "decimal_above_max_value",
        ),
        (
            {"seed": 1.5},
            "Invalid type for 'seed': expected an integer, but got a decimal instead.",
            "seed",
            "invalid_type",
        ),
        (
            {"user": 7},
            "Invalid type for 'user': expected a string, but got an integer instead.",
            "user",
            "invalid_type",
        ),
        (
            {"parallel_tool_calls": "yes"},
            "Invalid type for 'parallel_tool_calls': expected a boolean, but got a string instead.",
            "parallel_tool_calls",
            "invalid_type",
        ),
        (
            {"logit_bias": {"50256": -101}},
            "Invalid 'logit_bias': the bias for token '50256' must be a number from -100 to 100.",
            "logit_bias",
            None,
        ),
        (
            {"stream_options": {"include_usage": True}},
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
            "stream_options",
            None,
        ),
        (
            {"top_logprobs": 0, "logprobs": False},
            "The 'top_logprobs' parameter is only allowed when 'logprobs' is enabled.",
            "top_logprobs",
            None,
        ),
        (
            {"messages": [*USER, {"role": "assistant", "tool_calls": [{"type": "function"}]}]},
            "messages[1].tool_calls[0].id must be a string",
            "messages[1].tool_calls[0].id",
            None,
        ),
        (
            {
                "messages": [
                    *USER,
                    {"role": "assistant", "tool_calls": [CALL]},
                    {"role": "tool", "tool_call_id": "c1", "content": "ok"},
                    {"role": "user", "content": "again"},
                    {"role": "tool", "tool_call_id": "c1", "content": "ok"},
                ]
            },
            "Invalid parameter: messages with role 'tool' must be a response to a preceding "
            "message with 'tool_calls'.",
            "messages[4].role",
            None,
        ),
    ],
)
def test_strict_chat_requests(
    body: dict[str, Any], message: str, param: str, code: str | None
) -> None:
    with pytest.raises(BadRequest) as info:
        parse_chat({"messages": USER, **body})
    assert info.value.body() == {
        "error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    }


def test_strict_checks_accept_what_the_providers_accept() -> None:
    request = parse_chat(
        {
            "messages": [
                *USER,
                {"role": "assistant", "tool_calls": [CALL, {**CALL, "id": "c2"}]},
                {"role": "tool", "tool_call_id": "c2", "content": "ok"},
                {"role": "tool", "tool_call_id": "c1", "content": "ok"},
            ],
            "temperature": 2,
            "top_p": 0.0,
            "seed": -3,
            "n": 1.0,
            "frequency_penalty": None,
            "logit_bias": {"1": 100},
            "stream": True,
            "stream_options": {"include_usage": False},
            "logprobs": True,
            "top_logprobs": 0,
            "user": "u",
            "parallel_tool_calls": False,
        }
    )
    assert [m["role"] for m in request.messages] == ["user", "assistant", "tool", "tool"]
    counted = parse_anthropic(
        {"messages": USER, "temperature": 1, "top_k": 0, "top_p": 0.5}, counting=True
    )
    assert counted.max_tokens == 512


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"top_k": 1.5}, "top_k: Input should be a valid integer"),
        ({"top_k": -1}, "top_k: Input should be greater than or equal to 0"),
        ({"top_p": "x"}, "top_p: Input should be a valid number"),
        (
            {
                "messages": [
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}]}
                ]
            },
            "messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: t1. "
            "Each `tool_result` block must have a corresponding `tool_use` block in the previous "
            "message.",
        ),
    ],
)
def test_strict_anthropic_requests(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(BadRequest) as info:
        parse_anthropic({"max_tokens": 5, "messages": USER, **fields})
    assert (info.value.message, info.value.status) == (message, 400)
