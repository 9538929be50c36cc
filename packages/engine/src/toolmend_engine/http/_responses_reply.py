"""Response objects and stream events of the OpenAI Responses API (``POST /v1/responses``).

A reply becomes output items in the order the text was generated: a
``message`` with one ``output_text`` part when there is text, then one
``function_call`` item per call.  The stream is the sequence the ``openai``
SDK's stream state and the Agents SDK read::

    response.created, response.in_progress,
    [response.output_item.added (message), response.content_part.added,
     response.output_text.delta..., response.output_text.done,
     response.content_part.done, response.output_item.done]
    [response.output_item.added (function_call), response.function_call_arguments.delta,
     response.function_call_arguments.done, response.output_item.done]...
    response.completed  (response.incomplete when max_output_tokens cut the text)

Every event carries ``sequence_number`` (from 0) and is sent with its type as
the SSE ``event:`` line.  The final response object equals the non-streamed one
but for ``created_at``.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from typing import Any

from ..inference._service import Completion, Generation
from ._responses_request import ResponsesRequest

__all__ = ["responses_body", "responses_events"]


class _Ids:
    """Item ids derived from the generation's random ``ident``, like the chat completion's id."""

    def __init__(self, ident: str) -> None:
        self.response = f"resp_{ident}"
        self.message = f"msg_{ident}"
        self._calls = ident[:16]

    def call(self, index: int) -> str:
        return f"fc_{self._calls}_{index}"


def _usage(completion: Completion) -> dict[str, Any]:
    return {
        "input_tokens": completion.prompt_tokens,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": completion.completion_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": completion.prompt_tokens + completion.completion_tokens,
    }


def _incomplete(completion: Completion) -> bool:
    return completion.finish_reason == "length" and not completion.calls


def _text_part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def _message(ids: _Ids, text: str | None, status: str) -> dict[str, Any]:
    return {
        "id": ids.message,
        "type": "message",
        "status": status,
        "role": "assistant",
        "content": [] if text is None else [_text_part(text)],
    }


def _calls(completion: Completion, ids: _Ids) -> list[dict[str, Any]]:
    return [
        {
            "id": ids.call(i),
            "type": "function_call",
            "status": "completed",
            "call_id": call_id,
            "name": call.name,
            "arguments": call.arguments_json(),
        }
        for i, (call, call_id) in enumerate(zip(completion.calls, completion.call_ids, strict=True))
    ]


def _output(completion: Completion, ids: _Ids) -> list[dict[str, Any]]:
    status = "incomplete" if _incomplete(completion) else "completed"
    message = [_message(ids, completion.content, status)] if completion.content else []
    return [*message, *_calls(completion, ids)]


def _response(
    request: ResponsesRequest,
    ids: _Ids,
    model: str,
    created: int,
    completion: Completion | None,
) -> dict[str, Any]:
    if completion is None:
        status, details, output, usage = "in_progress", None, [], None
    elif _incomplete(completion):
        status, details = "incomplete", {"reason": "max_output_tokens"}
        output, usage = _output(completion, ids), _usage(completion)
    else:
        status, details = "completed", None
        output, usage = _output(completion, ids), _usage(completion)
    body: dict[str, Any] = {
        "id": ids.response,
        "object": "response",
        "created_at": created,
        "status": status,
        "error": None,
        "incomplete_details": details,
        "model": model,
        "output": output,
        "previous_response_id": None,
        "reasoning": {"effort": None, "summary": None},
        "usage": usage,
        "user": None,
    }
    body.update(request.echo)
    return body


def responses_body(
    completion: Completion, request: ResponsesRequest, ident: str, model: str, created: int
) -> dict[str, Any]:
    """A ``response`` object for a finished reply."""
    return _response(request, _Ids(ident), model, created, completion)


def responses_events(
    generation: Generation, request: ResponsesRequest, ident: str, model: str, created: int
) -> Generator[tuple[str, dict[str, Any]], None, None]:
    """``(event type, event)`` pairs: text as it is generated, calls at the end."""
    ids = _Ids(ident)
    sequence = 0

    def event(kind: str, **fields: Any) -> tuple[str, dict[str, Any]]:
        nonlocal sequence
        data = {"type": kind, "sequence_number": sequence, **fields}
        sequence += 1
        return kind, data

    start = _response(request, ids, model, created, None)
    yield event("response.created", response=start)
    yield event("response.in_progress", response=start)
    text: str | None = None
    place: Mapping[str, Any] = {"item_id": ids.message, "output_index": 0}
    for delta in generation:
        if text is None:
            text = ""
            yield event(
                "response.output_item.added",
                output_index=0,
                item=_message(ids, None, "in_progress"),
            )
            yield event(
                "response.content_part.added", **place, content_index=0, part=_text_part("")
            )
        text += delta
        yield event(
            "response.output_text.delta", **place, content_index=0, delta=delta, logprobs=[]
        )
    completion = generation.completion
    assert completion is not None
    final = _response(request, ids, model, created, completion)
    index = 0
    if text is not None:
        if not completion.content:  # text streamed, then read as a call: keep what was sent
            status = "incomplete" if _incomplete(completion) else "completed"
            final["output"].insert(0, _message(ids, text, status))
        message = final["output"][0]
        yield event("response.output_text.done", **place, content_index=0, text=text, logprobs=[])
        yield event(
            "response.content_part.done", **place, content_index=0, part=message["content"][0]
        )
        yield event("response.output_item.done", output_index=0, item=message)
        index = 1
    for call in _calls(completion, ids):
        yield event(
            "response.output_item.added",
            output_index=index,
            item={**call, "arguments": "", "status": "in_progress"},
        )
        where = {"item_id": call["id"], "output_index": index}
        yield event("response.function_call_arguments.delta", **where, delta=call["arguments"])
        yield event("response.function_call_arguments.done", **where, arguments=call["arguments"])
        yield event("response.output_item.done", output_index=index, item=call)
        index += 1
    kind = "response.incomplete" if _incomplete(completion) else "response.completed"
    yield event(kind, response=final)
