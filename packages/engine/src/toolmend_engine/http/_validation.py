"""Strict checks where the providers are strict: parameter types and ranges, tool results.

The engine ignores sampling parameters (decoding is greedy), but a client that
sends ``temperature: "hot"`` or a tool result for a call that was never made has
a bug that OpenAI or Anthropic would report, and a local server that accepts it
hides the bug until the client meets the real API.  So the same requests are
refused here, with the provider's error codes and messages (OpenAI's
``invalid_type``, ``decimal_above_max_value``...), and the layer never sees a
tool result it would have to attribute to an unknown tool.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._errors import BadRequest

__all__ = ["check_anthropic_params", "check_anthropic_tool_results", "check_chat_params",
           "check_tool_results"]  # fmt: skip

_JSON_TYPES = ((bool, "a boolean"), (str, "a string"), (list, "an array"), (dict, "an object"))
_EXPECTED = {
    "decimal": "a decimal",
    "integer": "an integer",
    "boolean": "a boolean",
    "string": "a string",
    "object": "an object",
}
_CHAT_NUMBERS: dict[str, tuple[str, float, float]] = {
    "temperature": ("decimal", 0, 2),
    "top_p": ("decimal", 0, 1),
    "presence_penalty": ("decimal", -2, 2),
    "frequency_penalty": ("decimal", -2, 2),
    "n": ("integer", 1, 128),
    "seed": ("integer", -(2**63), 2**63 - 1),
}
_CHAT_OTHERS = {
    "logprobs": "boolean",
    "parallel_tool_calls": "boolean",
    "store": "boolean",
    "user": "string",
    "logit_bias": "object",
    "stream_options": "object",
    "metadata": "object",
}
_ANTHROPIC_NUMBERS: dict[str, tuple[str, float, float]] = {
    "temperature": ("decimal", 0, 1),
    "top_p": ("decimal", 0, 1),
    "top_k": ("integer", 0, 2**31 - 1),
}


def _type_name(value: Any) -> str:
    """How OpenAI names the JSON type of a value: ``a string``, ``null``..."""
    if value is None:
        return "null"
    for kind, name in _JSON_TYPES:
        if isinstance(value, kind):
            return name
    return "an integer" if isinstance(value, int) else "a decimal"


def _fits(value: Any, kind: str) -> bool:
    if isinstance(value, bool):
        return kind == "boolean"
    if kind == "decimal":
        return isinstance(value, int | float)
    if kind == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    return isinstance(value, {"string": str, "object": Mapping, "boolean": bool}[kind])


def _invalid_type(name: str, kind: str, value: Any) -> BadRequest:
    return BadRequest(
        f"Invalid type for '{name}': expected {_EXPECTED[kind]}, but got {_type_name(value)} "
        "instead.",
        name,
        "invalid_type",
    )


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def check_chat_params(body: Mapping[str, Any]) -> None:
    """Check the Chat Completions parameters the engine accepts but does not use.

    OpenAI's types and ranges for the parameters the engine accepts but does not use,
    and ``top_logprobs`` only with ``logprobs`` (``null`` always means the default).
    """
    for name, (kind, low, high) in _CHAT_NUMBERS.items():
        value = body.get(name)
        if value is None:
            continue
        if not _fits(value, kind):
            raise _invalid_type(name, kind, value)
        if value < low or value > high:
            side, bound = ("below minimum", ">=") if value < low else ("above maximum", "<=")
            limit = low if value < low else high
            raise BadRequest(
                f"Invalid '{name}': {kind} {side} value. Expected a value {bound} "
                f"{_number(limit)}, but got {_number(value)} instead.",
                name,
                f"{kind}_{side.split()[0]}_{'min' if value < low else 'max'}_value",
            )
    for name, kind in _CHAT_OTHERS.items():
        value = body.get(name)
        if value is not None and not _fits(value, kind):
            raise _invalid_type(name, kind, value)
    if body.get("top_logprobs") is not None and body.get("logprobs") is not True:
        raise BadRequest(
            "The 'top_logprobs' parameter is only allowed when 'logprobs' is enabled.",
            "top_logprobs",
        )
    if body.get("stream_options") is not None and body.get("stream") is not True:
        raise BadRequest(
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
            "stream_options",
        )
    bias = body.get("logit_bias") or {}
    for token, value in bias.items():
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or not -100 <= value <= 100:
            raise BadRequest(
                f"Invalid 'logit_bias': the bias for token {token!r} must be a number "
                "from -100 to 100.",
                "logit_bias",
            )


def check_tool_results(messages: Sequence[Any]) -> None:
    """Check that each tool message answers a call.

    Each tool message answers a call of the assistant message before it (OpenAI's rule):
    a result for a call that was never made would otherwise be reported against no tool.
    """
    offered: set[str] | None = None
    for i, message in enumerate(messages):
        role = message.get("role")
        if role == "assistant":
            calls = message.get("tool_calls") or []
            offered = set()
            for j, call in enumerate(calls):
                where = f"messages[{i}].tool_calls[{j}]"
                function = call.get("function") if isinstance(call, Mapping) else None
                if not isinstance(call, Mapping) or not isinstance(call.get("id"), str):
                    raise BadRequest(f"{where}.id must be a string", f"{where}.id")
                if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
                    raise BadRequest(f"{where}.function.name must be a string", f"{where}.function")
                offered.add(call["id"])
            if not calls:
                offered = None
        elif role == "tool":
            if offered is None:
                raise BadRequest(
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceding message with 'tool_calls'.",
                    f"messages[{i}].role",
                )
            ident = message["tool_call_id"]
            if ident not in offered:
                raise BadRequest(
                    f"Invalid parameter: 'tool_call_id' of {ident!r} not found in 'tool_calls' "
                    "of previous message.",
                    f"messages[{i}].tool_call_id",
                )
        else:
            offered = None


def check_anthropic_params(body: Mapping[str, Any]) -> None:
    """Check Anthropic's sampling parameters.

    Anthropic's types and ranges for the sampling parameters (its messages: the field,
    then what is wrong).
    """
    for name, (kind, low, high) in _ANTHROPIC_NUMBERS.items():
        value = body.get(name)
        if value is None:
            continue
        if not _fits(value, kind) or (kind == "integer" and isinstance(value, float)):
            noun = "a valid number" if kind == "decimal" else "a valid integer"
            raise BadRequest(f"{name}: Input should be {noun}", name)
        if value < low:
            raise BadRequest(
                f"{name}: Input should be greater than or equal to {_number(low)}", name
            )
        if value > high:
            raise BadRequest(f"{name}: Input should be less than or equal to {_number(high)}", name)


def _blocks(message: Mapping[str, Any]) -> list[Any]:
    content = message.get("content")
    return content if isinstance(content, list) else []


def check_anthropic_tool_results(messages: Sequence[Any]) -> None:
    """Each ``tool_result`` answers a ``tool_use`` of the message before it (Anthropic's rule)."""
    for i, message in enumerate(messages):
        if message.get("role") != "user":
            continue
        previous = messages[i - 1] if i else {}
        used = {
            b.get("id")
            for b in _blocks(previous)
            if previous.get("role") == "assistant"
            and isinstance(b, Mapping)
            and b.get("type") == "tool_use"
        }
        for j, block in enumerate(_blocks(message)):
            if not isinstance(block, Mapping) or block.get("type") != "tool_result":
                continue
            ident = block.get("tool_use_id")
            if not isinstance(ident, str) or ident not in used:
                raise BadRequest(
                    f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` "
                    f"blocks: {ident}. Each `tool_result` block must have a corresponding "
                    "`tool_use` block in the previous message.",
                    f"messages[{i}].content[{j}].tool_use_id",
                )
