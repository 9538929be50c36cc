"""What followed each failed tool result, read from the requests of a conversation.

The engine sees no run: each request carries the whole conversation so far.  The
tool results that are new in a request are those after the last assistant turn
with tool calls (the decision step the layer reads); each is joined to its call
(by call id) for the tool's name and arguments, and goes to the outcome recorder
(:func:`toolmend.integrations.observe_call`) as a call record: failed when the
layer's report has a detection for it (the core's verdict, read once for the
rewrite), else a success.  A reply with no tool call is a final answer, and ends
the run (:func:`toolmend.integrations.end_run`).

The run is the conversation: a hash of its first system text (the Messages
``system``, the Responses ``instructions``) and first user message, plus the
client's own ``user`` field (Anthropic: ``metadata.user_id``) when it sends one.
Two conversations that open alike and name no user are one run; a client that
runs many alike sends ``user`` to keep them apart.  A conversation with neither
a user message nor a ``user`` (a Responses request continued by
``previous_response_id``) is not followed.

A client re-sends the same conversation (a retry, a second model call on the
same turn): each result is observed once, kept by its place in the conversation
and its call id, per run, within bounds (runs and results per run, the oldest
forgotten first).  Nothing here raises into a request: what is not understood
is not observed, and logged.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolmend.integrations import (
    CallRecord,
    Detection,
    Report,
    end_run,
    observe_call,
    recording_outcomes,
)

__all__ = ["Conversations", "ReplyCalls"]

log = logging.getLogger("toolmend.engine")

_CALL_MARKERS = {
    "openai": re.compile(rb'"finish_reason"\s*:\s*"tool_calls"|"tool_calls"\s*:\s*\[\s*\{'),
    "anthropic": re.compile(rb'"stop_reason"\s*:\s*"tool_use"|"type"\s*:\s*"tool_use"'),
    "responses": re.compile(rb'"type"\s*:\s*"function_call"'),
}
"""How a reply in each format shows a tool call, as JSON (a quote inside a string is escaped)."""
_SYSTEM = ("system", "developer")
_CARRY = 64
"""Bytes of a streamed chunk kept for the next, so a marker split between chunks is found."""


@dataclass(frozen=True, slots=True)
class _Result:
    """A tool result of the decision step, joined to its call."""

    key: tuple[int, int, str | None]
    call_id: str | None
    tool: str | None
    arguments: Mapping[str, Any] | None


class ReplyCalls:
    """Whether a model's reply, read as it passes (whole or streamed), holds a tool call.

    Args:
        fmt: ``openai``, ``anthropic`` or ``responses``.
    """

    def __init__(self, fmt: str) -> None:
        self._marker = _CALL_MARKERS[fmt]
        self._tail = b""
        self.found = False

    def feed(self, chunk: bytes) -> None:
        """Read the next bytes of the reply.

        Args:
            chunk: The bytes, as they were relayed.
        """
        if self.found:
            return
        data = self._tail + chunk
        self.found = self._marker.search(data) is not None
        self._tail = data[-_CARRY:]


class Conversations:
    """Feeds the outcome recorder the new tool results of each request; ends a run at its answer.

    Args:
        runs: Conversations whose observed results are remembered at once.
        results: Observed results remembered per conversation.
    """

    def __init__(self, runs: int = 1024, results: int = 4096) -> None:
        self.runs = runs
        self.results = results
        self._seen: OrderedDict[str, OrderedDict[tuple[Any, ...], None]] = OrderedDict()
        self._lock = threading.Lock()

    def observe(self, body: Mapping[str, Any], fmt: str, report: Report) -> str | None:
        """Observe the request's new tool results; the run they belong to (``None``: not followed).

        Nothing happens unless a recorder is installed (``record_outcomes``).

        Args:
            body: The request body as the client sent it.
            fmt: ``openai``, ``anthropic`` or ``responses``.
            report: The layer's report on the request (its detections are the failures).
        """
        if recording_outcomes() is None:
            return None
        try:
            run = conversation_id(body, fmt)
            if run is None:
                return None
            conversation = body.get("input" if fmt == "responses" else "messages")
            if not isinstance(conversation, list):
                return run
            for record in self._new(run, _decision_results(conversation, fmt), report):
                observe_call(record, run)
            return run
        except Exception as exc:  # never in a request's way
            log.warning("toolmend-engine: tool results not observed: %r", exc)
            return None

    def replied(self, run: str | None, calls: bool | None) -> None:
        """The model replied: with no tool call (``calls`` false), the run ends.

        Args:
            run: The run :meth:`observe` returned.
            calls: Whether the reply holds a tool call (``None``: unknown, nothing ends).
        """
        if run is not None and calls is False:
            end_run(run)

    def _new(self, run: str, results: Sequence[_Result], report: Report) -> Iterator[CallRecord]:
        """The records of the results not observed before in ``run``, in order."""
        failed = {d.call_id: d for d in report.detections if d.call_id is not None}
        at = {d.index: d for d in report.detections if d.call_id is None}
        with self._lock:
            seen = self._seen.get(run)
            if seen is None:
                seen = self._seen[run] = OrderedDict()
                while len(self._seen) > self.runs:
                    self._seen.popitem(last=False)
            else:
                self._seen.move_to_end(run)
            fresh = [r for r in results if r.key not in seen]
            for result in fresh:
                seen[result.key] = None
            while len(seen) > self.results:
                seen.popitem(last=False)
        for result in fresh:
            detection = failed.get(result.call_id) if result.call_id else at.get(result.key[0])
            record = _record(result, detection)
            if record is not None:
                yield record


def _record(result: _Result, detection: Detection | None) -> CallRecord | None:
    """The result as a call record: failed per the layer's detection, else a success."""
    tool = result.tool or (detection.tool_name if detection is not None else None)
    if tool is None:
        return None
    if detection is None:
        return CallRecord(
            tool=tool, failed=False, attempts=1, call_id=result.call_id, arguments=result.arguments
        )
    return CallRecord(
        tool=tool,
        failed=True,
        attempts=1,
        kind=detection.kind.value,
        rule=detection.rule,
        source=detection.source.value,
        reason=detection.reason,
        guidance=detection.guidance,
        call_id=result.call_id,
        arguments=result.arguments,
        cause=detection.error,
    )


def conversation_id(body: Mapping[str, Any], fmt: str) -> str | None:
    """The conversation's stable id: a hash of how it opens, and the client's ``user``.

    Args:
        body: The request body.
        fmt: ``openai``, ``anthropic`` or ``responses``.

    Returns:
        ``conversation-<16 hex>``, or ``None`` when the body names neither a user
        message nor a ``user``.
    """
    conversation = body.get("input" if fmt == "responses" else "messages")
    messages = conversation if isinstance(conversation, list) else []
    said = [m for m in messages if isinstance(m, Mapping) and m.get("type", "message") == "message"]
    system: Any = body.get("system") if fmt == "anthropic" else body.get("instructions")
    if system is None:
        system = next((m.get("content") for m in said if m.get("role") in _SYSTEM), None)
    user: Any = conversation if isinstance(conversation, str) else None
    if user is None:
        user = next((m.get("content") for m in said if m.get("role") == "user"), None)
    metadata = body.get("metadata")
    who = body.get("user")
    if who is None and isinstance(metadata, Mapping):
        who = metadata.get("user_id")
    if user is None and who is None:
        return None
    opening = json.dumps([system, user, who], sort_keys=True, ensure_ascii=True, default=repr)
    return "conversation-" + hashlib.sha256(opening.encode()).hexdigest()[:16]


def _decision_results(conversation: list[Any], fmt: str) -> list[_Result]:
    """The tool results after the last assistant turn with tool calls, joined to their calls."""
    if fmt == "openai":
        return _openai_results(conversation)
    if fmt == "anthropic":
        return _anthropic_results(conversation)
    return _responses_results(conversation)


def _arguments(raw: Any) -> Mapping[str, Any] | None:
    """A call's arguments as a mapping: parsed when they are JSON text, else ``None``."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return None
    return raw if isinstance(raw, Mapping) else None


def _after(items: list[Any], last: int) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """The objects after index ``last`` (none when no turn made calls: ``last`` is -1)."""
    if last < 0:
        return
    for i in range(last + 1, len(items)):
        if isinstance(items[i], Mapping):
            yield i, items[i]


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


_Calls = dict[str, tuple[str | None, Any]]
"""Call id to the call's tool name and raw arguments."""


def _calls(messages: list[Any], made: Callable[[Mapping[str, Any]], _Calls]) -> tuple[int, _Calls]:
    """Every assistant turn's calls by id, and the index of the last turn that made any."""
    last, calls = -1, {}
    for i, message in enumerate(messages):
        if isinstance(message, Mapping) and message.get("role") == "assistant":
            turn = made(message)
            if turn:
                last = i
                calls.update(turn)
    return last, calls


def _openai_calls(message: Mapping[str, Any]) -> _Calls:
    made = message.get("tool_calls")
    calls: _Calls = {}
    for call in made if isinstance(made, list) else ():
        function = call.get("function") if isinstance(call, Mapping) else None
        if isinstance(function, Mapping) and isinstance(call.get("id"), str):
            calls[call["id"]] = (_text(function.get("name")), function.get("arguments"))
    return calls


def _anthropic_calls(message: Mapping[str, Any]) -> _Calls:
    content = message.get("content")
    blocks = [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []
    return {
        b["id"]: (_text(b.get("name")), b.get("input"))
        for b in blocks
        if b.get("type") == "tool_use" and isinstance(b.get("id"), str)
    }


def _openai_results(messages: list[Any]) -> list[_Result]:
    last, calls = _calls(messages, _openai_calls)
    found = []
    for i, message in _after(messages, last):
        if message.get("role") == "tool":
            call_id = _text(message.get("tool_call_id"))
            name, raw = calls.get(call_id or "", (_text(message.get("name")), None))
            found.append(_Result((i, 0, call_id), call_id, name, _arguments(raw)))
    return found


def _anthropic_results(messages: list[Any]) -> list[_Result]:
    last, calls = _calls(messages, _anthropic_calls)
    found = []
    for i, message in _after(messages, last):
        content = message.get("content")
        if not isinstance(content, list) or message.get("role") != "user":
            continue
        for j, block in enumerate(content):
            if isinstance(block, Mapping) and block.get("type") == "tool_result":
                call_id = _text(block.get("tool_use_id"))
                name, raw = calls.get(call_id or "", (None, None))
                found.append(_Result((i, j, call_id), call_id, name, _arguments(raw)))
    return found


def _responses_results(items: list[Any]) -> list[_Result]:
    last = -1
    calls: _Calls = {}
    for i, item in enumerate(items):
        if isinstance(item, Mapping) and item.get("type") == "function_call":
            last = i
            if isinstance(item.get("call_id"), str):
                calls[item["call_id"]] = (_text(item.get("name")), item.get("arguments"))
    found = []
    for i, item in _after(items, last):
        if item.get("type") == "function_call_output":
            call_id = _text(item.get("call_id"))
            name, raw = calls.get(call_id or "", (None, None))
            found.append(_Result((i, 0, call_id), call_id, name, _arguments(raw)))
    return found
