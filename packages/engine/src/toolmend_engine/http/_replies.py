"""Response bodies and stream events in the OpenAI and Anthropic wire formats."""

from __future__ import annotations

import json
from collections.abc import Generator
from typing import Any

from ..inference._service import Completion, Generation, TokenLogprob

__all__ = [
    "anthropic_body",
    "anthropic_events",
    "chat_body",
    "chat_chunks",
]


def _logprob_entry(item: TokenLogprob) -> dict[str, Any]:
    return {
        "token": item.text,
        "logprob": item.logprob,
        "bytes": list(item.raw),
        "top_logprobs": [
            {"token": text, "logprob": lp, "bytes": list(raw)} for text, raw, lp in item.top
        ],
    }


def _logprobs(completion: Completion, wanted: bool) -> dict[str, Any] | None:
    if not wanted:
        return None
    return {"content": [_logprob_entry(t) for t in completion.logprobs]}


def _tool_calls(completion: Completion) -> list[dict[str, Any]]:
    return [
        {
            "id": call_id,
            "type": "function",
            "function": {"name": call.name, "arguments": call.arguments_json()},
        }
        for call, call_id in zip(completion.calls, completion.call_ids, strict=True)
    ]


def _usage(completion: Completion) -> dict[str, int]:
    return {
        "prompt_tokens": completion.prompt_tokens,
        "completion_tokens": completion.completion_tokens,
        "total_tokens": completion.prompt_tokens + completion.completion_tokens,
    }


def chat_body(completion: Completion, model: str, created: int, logprobs: bool) -> dict[str, Any]:
    """A ``chat.completion`` object."""
    message: dict[str, Any] = {
        "role": "assistant",
        "content": completion.content if completion.content or not completion.calls else None,
    }
    if completion.calls:
        message["tool_calls"] = _tool_calls(completion)
    return {
        "id": completion.id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": _logprobs(completion, logprobs),
                "finish_reason": completion.finish_reason,
            }
        ],
        "usage": _usage(completion),
    }


def chat_chunks(
    generation: Generation, ident: str, model: str, created: int, *, logprobs: bool, usage: bool
) -> Generator[dict[str, Any], None, None]:
    """``chat.completion.chunk`` objects: content as it is generated, calls at the end."""

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        choice.update(extra)
        return {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [choice],
        }

    yield chunk({"role": "assistant", "content": ""})
    for delta in generation:
        yield chunk({"content": delta})
    completion = generation.completion
    assert completion is not None
    for i, call in enumerate(_tool_calls(completion)):
        yield chunk({"tool_calls": [{"index": i, **call}]})
    final = chunk({}, completion.finish_reason)
    if logprobs:
        final["choices"][0]["logprobs"] = _logprobs(completion, True)
    yield final
    if usage:
        yield {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [],
            "usage": _usage(completion),
        }


_STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}


def _stop_reason(completion: Completion) -> str:
    if completion.stop_sequence is not None:
        return "stop_sequence"
    return _STOP_REASONS[completion.finish_reason]


def _anthropic_id(completion: Completion) -> str:
    return "msg_" + completion.id.removeprefix("chatcmpl-")


def _tool_use_blocks(completion: Completion) -> list[dict[str, Any]]:
    return [
        {
            "type": "tool_use",
            "id": "toolu_" + call_id.removeprefix("call_"),
            "name": call.name,
            "input": call.arguments,
        }
        for call, call_id in zip(completion.calls, completion.call_ids, strict=True)
    ]


def anthropic_body(completion: Completion, model: str) -> dict[str, Any]:
    """An Anthropic ``message`` object."""
    content: list[dict[str, Any]] = []
    if completion.content:
        content.append({"type": "text", "text": completion.content})
    content.extend(_tool_use_blocks(completion))
    return {
        "id": _anthropic_id(completion),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": _stop_reason(completion),
        "stop_sequence": completion.stop_sequence,
        "usage": {
            "input_tokens": completion.prompt_tokens,
            "output_tokens": completion.completion_tokens,
        },
    }


def anthropic_events(
    generation: Generation, ident: str, model: str, prompt_tokens: int
) -> Generator[tuple[str, dict[str, Any]], None, None]:
    """Anthropic stream events as ``(event name, data)`` pairs."""
    yield (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": ident,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": prompt_tokens, "output_tokens": 0},
            },
        },
    )
    index = 0
    text_open = False
    for delta in generation:
        if not text_open:
            yield (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
            )
            text_open = True
        yield (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "text_delta", "text": delta},
            },
        )
    if text_open:
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
        index += 1
    completion = generation.completion
    assert completion is not None
    for block in _tool_use_blocks(completion):
        yield (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {**block, "input": {}},
            },
        )
        yield (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {
                    "type": "input_json_delta",
                    "partial_json": json.dumps(block["input"], ensure_ascii=False),
                },
            },
        )
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
        index += 1
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {
                "stop_reason": _stop_reason(completion),
                "stop_sequence": completion.stop_sequence,
            },
            "usage": {"output_tokens": completion.completion_tokens},
        },
    )
    yield "message_stop", {"type": "message_stop"}
