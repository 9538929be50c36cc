"""LangChain messages to the core's OpenAI chat shape and back, losslessly.

The core rewriter reads and edits OpenAI Chat Completions dicts.  Each dict we
build carries the index of the LangChain message it stands for, so that what
comes back maps onto the original objects: an untouched message is returned as
the very same object, an edited one as a copy of its original with only the
changed field replaced, and only inserted notes are new messages.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

__all__ = ["from_openai", "to_openai"]

_INDEX = "_toolmend_lc_index"


def _assistant(message: AIMessage) -> dict[str, Any]:
    calls = [
        {
            "id": call.get("id"),
            "type": "function",
            "function": {"name": call.get("name"), "arguments": call.get("args")},
        }
        for call in message.tool_calls
    ]
    out: dict[str, Any] = {"role": "assistant", "content": message.content}
    if calls:
        out["tool_calls"] = calls
    return out


def _one(message: Any) -> dict[str, Any]:
    if isinstance(message, AIMessage):
        return _assistant(message)
    if isinstance(message, ToolMessage):
        return {
            "role": "tool",
            "tool_call_id": message.tool_call_id,
            "name": message.name,
            "content": message.content,
            "status": message.status,
        }
    if isinstance(message, HumanMessage):
        return {"role": "user", "content": message.content}
    if isinstance(message, SystemMessage):
        return {"role": "system", "content": message.content}
    return {"role": "other"}


def to_openai(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """One OpenAI chat dict per message, each tagged with its message's index."""
    out = []
    for i, message in enumerate(messages):
        converted = _one(message)
        converted[_INDEX] = i
        out.append(converted)
    return out


def _kept_calls(original: AIMessage, edited: Mapping[str, Any]) -> AIMessage:
    kept = {c.get("id") for c in edited.get("tool_calls") or [] if isinstance(c, Mapping)}
    gone = {c.get("id") for c in original.tool_calls} - kept
    content = original.content
    if isinstance(content, list):
        content = [
            block
            for block in content
            if not (
                isinstance(block, Mapping)
                and block.get("type") in ("tool_use", "tool_call", "function_call")
                and (block.get("id") in gone or block.get("call_id") in gone)
            )
        ]
    extra = dict(original.additional_kwargs)
    raw = extra.get("tool_calls")
    if isinstance(raw, list):
        left = [c for c in raw if not (isinstance(c, Mapping) and c.get("id") in gone)]
        if left:
            extra["tool_calls"] = left
        else:
            del extra["tool_calls"]
    return original.model_copy(
        update={
            "content": content,
            "tool_calls": [c for c in original.tool_calls if c.get("id") in kept],
            "invalid_tool_calls": [
                c for c in original.invalid_tool_calls if c.get("id") not in gone
            ],
            "additional_kwargs": extra,
        }
    )


def _edited(original: BaseMessage, edited: Mapping[str, Any]) -> BaseMessage:
    if isinstance(original, AIMessage) and edited.get("role") == "assistant":
        return _kept_calls(original, edited)
    return original.model_copy(update={"content": edited.get("content")})


def from_openai(
    converted: Sequence[Any],
    rewritten: Sequence[Any],
    originals: Sequence[BaseMessage],
) -> list[BaseMessage]:
    """Map the rewriter's output back onto ``originals``.

    ``converted`` is what :func:`to_openai` returned for ``originals``: a dict
    that is still that very object was not touched by the rewriter.
    """
    out: list[BaseMessage] = []
    for item in rewritten:
        index = item.get(_INDEX) if isinstance(item, Mapping) else None
        if isinstance(index, int) and 0 <= index < len(originals):
            original = originals[index]
            out.append(original if item is converted[index] else _edited(original, item))
        elif isinstance(item, Mapping):
            out.append(HumanMessage(content=item.get("content") or ""))
        else:
            raise TypeError(f"unexpected rewritten item {type(item).__name__}")
    return out
