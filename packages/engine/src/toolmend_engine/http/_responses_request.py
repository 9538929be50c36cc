"""Validate OpenAI Responses requests (``POST /v1/responses``) and convert them for rendering.

The input items go through the layer in their own format (the core's
``responses`` codec), exactly as chat messages do, and are converted to chat
messages only to be rendered: ``instructions`` becomes the system message,
``function_call`` items the assistant turn's calls, ``function_call_output``
items tool messages.  The engine keeps no state, so ``previous_response_id``,
``conversation`` and stored prompts are refused: the client sends the whole
conversation, as the Agents SDK does by default.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..inference._constraints import (
    FREE,
    ConstraintError,
    Decoding,
    parse_response_format,
    parse_tool_choice,
)
from ._requests import DEFAULT_MAX_TOKENS, BadRequest, read_bool, read_model, read_tool_errors

__all__ = ["ResponsesRequest", "parse_responses", "responses_to_chat"]

_MESSAGE_ROLES = frozenset({"user", "system", "developer", "assistant"})
_STATELESS = ("previous_response_id", "conversation", "prompt")


@dataclass(frozen=True, slots=True)
class ResponsesRequest:
    """The parts of a Responses request the engine uses, and what the response echoes."""

    items: list[Any]
    instructions: str | None = None
    tools: list[Any] = field(default_factory=list)
    """Function tools in chat format (``{"type": "function", "function": ...}``), to render."""
    max_output_tokens: int | None = None
    stream: bool = False
    decoding: Decoding = FREE
    tool_errors: object = None
    model: str | None = None
    echo: Mapping[str, Any] = field(default_factory=dict)
    """Request settings the response object repeats (tools, tool_choice, text...)."""

    @property
    def max_tokens(self) -> int:
        """The output token limit asked for, else the engine's default."""
        return self.max_output_tokens or DEFAULT_MAX_TOKENS


def _object(body: Any) -> Mapping[str, Any]:
    if not isinstance(body, Mapping):
        raise BadRequest("the request body must be a JSON object")
    return body


def _string(body: Mapping[str, Any], name: str) -> str | None:
    value = body.get(name)
    if value is not None and not isinstance(value, str):
        raise BadRequest(f"{name} must be a string", name)
    return value


def _tools(value: Any) -> tuple[list[Any], list[Any]]:
    """Chat-format tools for rendering, and the tools as the response echoes them."""
    if value is None:
        return [], []
    if not isinstance(value, list):
        raise BadRequest("tools must be a list", "tools")
    chat, echo = [], []
    for i, tool in enumerate(value):
        where = f"tools[{i}]"
        kind = tool.get("type") if isinstance(tool, Mapping) else None
        if kind != "function":
            raise BadRequest(
                f"{where}: tool type {kind!r} is not supported; only function tools", where
            )
        name = tool.get("name")
        if not isinstance(name, str) or not name:
            raise BadRequest(f"{where} must be {{'type': 'function', 'name': ...}}", where)
        parameters = tool.get("parameters")
        if parameters is not None and not isinstance(parameters, Mapping):
            raise BadRequest(f"{where}.parameters must be a JSON schema object", where)
        function: dict[str, Any] = {"name": name}
        description = tool.get("description")
        if isinstance(description, str):
            function["description"] = description
        function["parameters"] = parameters or {"type": "object", "properties": {}}
        chat.append({"type": "function", "function": function})
        echo.append(
            {
                "type": "function",
                "name": name,
                "description": description if isinstance(description, str) else None,
                "parameters": parameters,
                "strict": tool.get("strict") if isinstance(tool.get("strict"), bool) else None,
            }
        )
    return chat, echo


def _check_text(content: Any, where: str, *, output: bool = False) -> None:
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        what = "output" if output else "content"
        raise BadRequest(f"{where}.{what} must be a string or a list of text parts", where)
    for part in content:
        kind = part.get("type") if isinstance(part, Mapping) else None
        text = part.get("refusal" if kind == "refusal" else "text") if kind else None
        if kind not in ("input_text", "output_text", "text", "refusal") or not isinstance(
            text, str
        ):
            raise BadRequest(
                f"{where}: content part of type {kind!r} is not supported; only text", where
            )


def _items(value: Any) -> list[Any]:
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    if not isinstance(value, list) or not value:
        raise BadRequest("input must be a string or a non-empty list of items", "input")
    for i, item in enumerate(value):
        where = f"input[{i}]"
        if not isinstance(item, Mapping):
            raise BadRequest(f"{where} must be an object", where)
        kind = item.get("type", "message")
        if kind == "message":
            if item.get("role") not in _MESSAGE_ROLES:
                roles = ", ".join(sorted(_MESSAGE_ROLES))
                raise BadRequest(f"{where}.role must be one of {roles}", where)
            _check_text(item.get("content"), where)
        elif kind == "function_call":
            for key in ("call_id", "name", "arguments"):
                if not isinstance(item.get(key), str):
                    raise BadRequest(f"{where}.{key} must be a string", where)
        elif kind == "function_call_output":
            if not isinstance(item.get("call_id"), str):
                raise BadRequest(f"{where}.call_id must be a string", where)
            _check_text(item.get("output"), where, output=True)
        elif kind != "reasoning":
            raise BadRequest(f"{where}: item of type {kind!r} is not supported", where)
    return value


def parse_responses(body: Any) -> ResponsesRequest:
    """A validated Responses request (the input items stay in their format)."""
    body = _object(body)
    for name in _STATELESS:
        if body.get(name) is not None:
            raise BadRequest(
                f"{name} is not supported: the engine stores nothing; send the whole "
                "conversation as input",
                name,
            )
    items = _items(body.get("input"))
    instructions = _string(body, "instructions")
    tools, echo_tools = _tools(body.get("tools"))
    max_output = body.get("max_output_tokens")
    if max_output is not None and (
        isinstance(max_output, bool) or not isinstance(max_output, int) or max_output < 1
    ):
        raise BadRequest("max_output_tokens must be a positive integer", "max_output_tokens")
    text = body.get("text")
    if text is not None and not isinstance(text, Mapping):
        raise BadRequest("text must be an object", "text")
    text_format = (text or {}).get("format")
    choice = body.get("tool_choice")
    try:
        decoding = parse_tool_choice(choice, tools, flat=True)
        schema = parse_response_format(text_format, "text.format", flat=True)
    except ConstraintError as exc:
        raise BadRequest(str(exc), exc.param) from None
    if decoding.tool_choice == "none":
        tools = []
    parallel = body.get("parallel_tool_calls")
    echo = {
        "instructions": instructions,
        "max_output_tokens": max_output,
        "metadata": body.get("metadata") if isinstance(body.get("metadata"), Mapping) else {},
        "parallel_tool_calls": parallel if isinstance(parallel, bool) else True,
        "temperature": body.get("temperature"),
        "top_p": body.get("top_p"),
        "tool_choice": choice if choice is not None else "auto",
        "tools": echo_tools,
        "text": {"format": dict(text_format) if text_format else {"type": "text"}},
        "truncation": body.get("truncation") or "disabled",
        "store": False,
    }
    return ResponsesRequest(
        items=items,
        instructions=instructions,
        tools=tools,
        max_output_tokens=max_output,
        stream=read_bool(body, "stream"),
        decoding=Decoding(decoding.tool_choice, decoding.function, schema),
        tool_errors=read_tool_errors(body),
        model=read_model(body),
        echo=echo,
    )


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = []
    for part in content:
        if isinstance(part, Mapping):
            value = part.get("refusal" if part.get("type") == "refusal" else "text")
            if isinstance(value, str):
                texts.append(value)
    return "\n".join(texts)


def responses_to_chat(items: list[Any], instructions: str | None) -> list[dict[str, Any]]:
    """Chat messages for rendering (after the layer): calls join the assistant turn before them."""
    out: list[dict[str, Any]] = (
        [{"role": "system", "content": instructions}] if instructions else []
    )
    for item in items:
        if not isinstance(item, Mapping):
            continue
        kind = item.get("type", "message")
        if kind == "function_call":
            call = {
                "id": item["call_id"],
                "type": "function",
                "function": {"name": item["name"], "arguments": item["arguments"]},
            }
            last = out[-1] if out else None
            if last is not None and last["role"] == "assistant":
                last.setdefault("tool_calls", []).append(call)
            else:
                out.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            out.append(
                {"role": "tool", "tool_call_id": item["call_id"], "content": _text(item["output"])}
            )
        elif kind == "message":
            out.append({"role": item.get("role"), "content": _text(item.get("content"))})
    return out
