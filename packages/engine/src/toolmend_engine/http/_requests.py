"""Validate OpenAI Chat Completions and Anthropic Messages requests, and convert Anthropic.

Everything a request can get wrong becomes a ``BadRequest`` with the field that
is wrong, which the server turns into a 400 with an OpenAI-style error body.
Anthropic conversations go through the layer in their own format (the core's
``anthropic`` codec) and are converted to chat messages only for rendering.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .._layer import parse_form
from ..inference._constraints import (
    FREE,
    ConstraintError,
    Decoding,
    parse_anthropic_tool_choice,
    parse_response_format,
    parse_tool_choice,
)
from ._errors import BadRequest
from ._validation import (
    check_anthropic_params,
    check_anthropic_tool_results,
    check_chat_params,
    check_tool_results,
)

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "AnthropicRequest",
    "BadRequest",
    "ChatRequest",
    "anthropic_to_chat",
    "parse_anthropic",
    "parse_chat",
    "read_bool",
    "read_model",
    "read_tool_errors",
]

DEFAULT_MAX_TOKENS = 512
MAX_TOP_LOGPROBS = 20
_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """The parts of a chat request the engine uses."""

    messages: list[Any]
    tools: list[Any] = field(default_factory=list)
    max_tokens: int = DEFAULT_MAX_TOKENS
    stop: tuple[str, ...] = ()
    stream: bool = False
    include_usage: bool = False
    logprobs: bool = False
    top_logprobs: int = 0
    tool_errors: object = None
    model: str | None = None
    decoding: Decoding = FREE


@dataclass(frozen=True, slots=True)
class AnthropicRequest:
    """An Anthropic Messages request as the engine serves it."""

    messages: list[Any]
    system: str
    tools: list[Any]
    max_tokens: int
    stop: tuple[str, ...]
    stream: bool
    tool_errors: object
    model: str | None
    decoding: Decoding = FREE
    """What the reply may be: ``tool_choice`` ``any`` or a named tool forces a call."""


def _object(body: Any) -> Mapping[str, Any]:
    if not isinstance(body, Mapping):
        raise BadRequest("the request body must be a JSON object")
    return body


def _positive_int(body: Mapping[str, Any], *names: str, default: int) -> int:
    for name in names:
        value = body.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise BadRequest(f"{name} must be a positive integer", name)
        return value
    return default


def _stop(value: Any, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(s, str) and s for s in value):
        raise BadRequest(f"{name} must be a non-empty string or a list of them", name)
    if len(value) > 4 and name == "stop":
        raise BadRequest("stop takes at most 4 sequences", name)
    return tuple(value)


def read_bool(body: Mapping[str, Any], name: str) -> bool:
    """A boolean field of a request body (missing or null: ``False``), shared by every route.

    Args:
        body: The request body.
        name: The field.

    Raises:
        BadRequest: The field is there and not a boolean.
    """
    value = body.get(name, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise BadRequest(f"{name} must be a boolean", name)
    return value


def read_tool_errors(body: Mapping[str, Any]) -> object:
    """The request's ``tool_errors`` form, checked but left as sent (``None``: not asked).

    Args:
        body: The request body.

    Raises:
        BadRequest: A value that names no delivery form.
    """
    value = body.get("tool_errors")
    if value is None:
        return None
    try:
        parse_form(value)
    except ValueError as exc:
        raise BadRequest(str(exc), "tool_errors") from None
    return value


def read_model(body: Mapping[str, Any]) -> str | None:
    """The model the request names, if any.

    Args:
        body: The request body.

    Raises:
        BadRequest: A ``model`` that is not a string.
    """
    value = body.get("model")
    if value is not None and not isinstance(value, str):
        raise BadRequest("model must be a string", "model")
    return value


def _chat_messages(value: Any) -> list[Any]:
    if not isinstance(value, list) or not value:
        raise BadRequest("messages must be a non-empty list", "messages")
    for i, message in enumerate(value):
        where = f"messages[{i}]"
        if not isinstance(message, Mapping):
            raise BadRequest(f"{where} must be an object", where)
        role = message.get("role")
        if role not in _ROLES:
            raise BadRequest(f"{where}.role must be one of {', '.join(sorted(_ROLES))}", where)
        content = message.get("content")
        if content is not None and not isinstance(content, str | list):
            raise BadRequest(f"{where}.content must be a string or a list of parts", where)
        if role == "tool" and not isinstance(message.get("tool_call_id"), str):
            raise BadRequest(f"{where}.tool_call_id must be a string", where)
        calls = message.get("tool_calls")
        if calls is not None and (role != "assistant" or not isinstance(calls, list)):
            raise BadRequest(f"{where}.tool_calls must be a list in an assistant message", where)
    check_tool_results(value)
    return value


def _chat_tools(body: Mapping[str, Any]) -> list[Any]:
    tools = body.get("tools")
    if tools is None:
        return []
    if not isinstance(tools, list):
        raise BadRequest("tools must be a list", "tools")
    for i, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            raise BadRequest(
                f"tools[{i}] must be {{'type': 'function', 'function': {{'name': ...}}}}",
                f"tools[{i}]",
            )
    if body.get("tool_choice") == "none":
        return []
    return tools


def parse_chat(body: Any) -> ChatRequest:
    """A validated Chat Completions request."""
    body = _object(body)
    check_chat_params(body)
    n = body.get("n", 1)
    if n != 1:
        raise BadRequest("only n=1 is supported", "n")
    top = body.get("top_logprobs", 0) or 0
    if isinstance(top, bool) or not isinstance(top, int) or not 0 <= top <= MAX_TOP_LOGPROBS:
        raise BadRequest(
            f"top_logprobs must be an integer from 0 to {MAX_TOP_LOGPROBS}", "top_logprobs"
        )
    options = body.get("stream_options")
    include_usage = isinstance(options, Mapping) and options.get("include_usage") is True
    tools = _chat_tools(body)
    try:
        decoding = parse_tool_choice(body.get("tool_choice"), tools, flat=False)
        schema = parse_response_format(body.get("response_format"), "response_format", flat=False)
    except ConstraintError as exc:
        raise BadRequest(str(exc), exc.param) from None
    return ChatRequest(
        messages=_chat_messages(body.get("messages")),
        tools=tools,
        max_tokens=_positive_int(
            body, "max_completion_tokens", "max_tokens", default=DEFAULT_MAX_TOKENS
        ),
        stop=_stop(body.get("stop"), "stop"),
        stream=read_bool(body, "stream"),
        include_usage=include_usage,
        logprobs=read_bool(body, "logprobs"),
        top_logprobs=top,
        tool_errors=read_tool_errors(body),
        model=read_model(body),
        decoding=Decoding(decoding.tool_choice, decoding.function, schema),
    )


def _system_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(
        isinstance(b, Mapping) and b.get("type") == "text" and isinstance(b.get("text"), str)
        for b in value
    ):
        return "\n".join(b["text"] for b in value)
    raise BadRequest("system must be a string or a list of text blocks", "system")


def _anthropic_tools(body: Mapping[str, Any]) -> list[Any]:
    tools = body.get("tools")
    if tools is None:
        return []
    if not isinstance(tools, list):
        raise BadRequest("tools must be a list", "tools")
    out = []
    for i, tool in enumerate(tools):
        if not isinstance(tool, Mapping) or not isinstance(tool.get("name"), str):
            raise BadRequest(f"tools[{i}] must have a name", f"tools[{i}]")
        function: dict[str, Any] = {"name": tool["name"]}
        if isinstance(tool.get("description"), str):
            function["description"] = tool["description"]
        function["parameters"] = tool.get("input_schema") or {"type": "object", "properties": {}}
        out.append({"type": "function", "function": function})
    choice = body.get("tool_choice")
    if isinstance(choice, Mapping) and choice.get("type") == "none":
        return []
    return out


def parse_anthropic(body: Any, *, counting: bool = False) -> AnthropicRequest:
    """A validated Anthropic Messages request (the conversation stays in its format).

    ``counting``: a ``count_tokens`` body, which has no ``max_tokens``.
    """
    body = _object(body)
    check_anthropic_params(body)
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("messages must be a non-empty list", "messages")
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, Mapping) or message.get("role") not in ("user", "assistant"):
            raise BadRequest(f"{where}.role must be user or assistant", where)
        if not isinstance(message.get("content"), str | list):
            raise BadRequest(f"{where}.content must be a string or a list of blocks", where)
    check_anthropic_tool_results(messages)
    if body.get("max_tokens") is None and not counting:
        raise BadRequest("max_tokens is required", "max_tokens")
    tools = _anthropic_tools(body)
    try:
        decoding = parse_anthropic_tool_choice(body.get("tool_choice"), tools)
    except ConstraintError as exc:
        raise BadRequest(str(exc), exc.param) from None
    return AnthropicRequest(
        messages=messages,
        system=_system_text(body.get("system")),
        tools=tools,
        decoding=decoding,
        max_tokens=_positive_int(body, "max_tokens", default=DEFAULT_MAX_TOKENS),
        stop=_stop(body.get("stop_sequences"), "stop_sequences"),
        stream=read_bool(body, "stream"),
        tool_errors=read_tool_errors(body),
        model=read_model(body),
    )


def _block_text(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if isinstance(content, list):
        texts = []
        for block in content:
            if (
                isinstance(block, Mapping)
                and block.get("type") == "text"
                and isinstance(block.get("text"), str)
            ):
                texts.append(block["text"])
            else:
                kind = block.get("type") if isinstance(block, Mapping) else type(block).__name__
                raise BadRequest(f"{where}: block of type {kind!r} is not supported", where)
        return "\n".join(texts)
    raise BadRequest(f"{where}: content must be a string or a list of blocks", where)


def anthropic_to_chat(messages: list[Any], system: str) -> list[dict[str, Any]]:
    """Chat messages for rendering: tool_use becomes tool_calls, tool_result a tool message."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, Mapping):
            raise BadRequest(f"{where} must be an object", where)
        role, content = message.get("role"), message.get("content")
        if isinstance(content, str):
            out.append({"role": role, "content": content})
            continue
        if not isinstance(content, list):
            raise BadRequest(f"{where}.content must be a string or a list of blocks", where)
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        results: list[dict[str, Any]] = []
        for j, block in enumerate(content):
            kind = block.get("type") if isinstance(block, Mapping) else None
            at = f"{where}.content[{j}]"
            if kind == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif kind == "tool_use" and role == "assistant":
                calls.append(
                    {
                        "id": str(block.get("id", f"toolu_{i}_{j}")),
                        "type": "function",
                        "function": {
                            "name": str(block.get("name", "")),
                            "arguments": json.dumps(block.get("input") or {}, ensure_ascii=False),
                        },
                    }
                )
            elif kind == "tool_result" and role == "user":
                results.append(
                    {
                        "role": "tool",
                        "tool_call_id": str(block.get("tool_use_id", "")),
                        "content": _block_text(block.get("content", ""), at),
                    }
                )
            elif kind in ("thinking", "redacted_thinking") and role == "assistant":
                continue
            else:
                raise BadRequest(f"{at}: block of type {kind!r} is not supported here", at)
        if role == "assistant":
            new: dict[str, Any] = {"role": "assistant", "content": "\n".join(texts)}
            if calls:
                new["tool_calls"] = calls
            out.append(new)
        else:
            out.extend(results)
            if texts or not results:
                out.append({"role": "user", "content": "\n".join(texts)})
    return out
