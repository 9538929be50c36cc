"""Shared helpers for the Agents SDK adapter tests: scripted turns and exact item shapes."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import httpx
from agents import RunConfig
from agents.testing import ScriptedModel, assistant_message, function_call

import notes
from toolmend_openai_agents import Captured, run_config

NOTE_START = "Note from the tool runtime:"
GENERIC = "An error occurred while running the tool. Please try again."
UNRECOVERABLE = (
    "This cannot be fixed by retrying or by changing the arguments. Tell the user what happened."
)
TRANSIENT = "This is a temporary failure. Retrying the same call is expected to succeed."
FIXABLE = (
    "This call cannot succeed as written. The error says what to change; "
    "call the tool again with the corrected value."
)
VERIFY_FIRST = (
    "This call may already have taken effect. Check whether it did before calling it again."
)


def config(**kwargs: Any) -> RunConfig:
    return run_config(tracing_disabled=True, **kwargs)


def script(name: str, arguments: dict[str, Any], call_id: str, answer: str) -> ScriptedModel:
    """One tool call, then a final answer."""
    return ScriptedModel(
        [[function_call(name, arguments, call_id=call_id)], [assistant_message(answer)]]
    )


def user(text: str) -> dict[str, Any]:
    return {"content": text, "role": "user"}


def note(text: str) -> dict[str, Any]:
    """A user item the C3 filter inserts (its key order differs from the SDK's)."""
    return {"role": "user", "content": text}


def call_item(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {
        "arguments": json.dumps(arguments, separators=(",", ":")),
        "call_id": call_id,
        "name": name,
        "type": "function_call",
        "id": call_id,
    }


def output_item(call_id: str, output: Any) -> dict[str, Any]:
    return {"call_id": call_id, "output": output, "type": "function_call_output"}


def answer_item(text: str) -> dict[str, Any]:
    return {
        "id": "scripted-message",
        "content": [{"annotations": [], "text": text, "type": "output_text", "logprobs": []}],
        "role": "assistant",
        "status": "completed",
        "type": "message",
    }


def runtime_note(name: str, shown_arguments: str, error: str, guidance: str) -> str:
    return notes.note(name, shown_arguments, error, guidance)


def line_of(fn: Any, needle: str) -> str:
    """``file:line in name`` for the source line of ``fn`` that contains ``needle``."""
    target = inspect.unwrap(fn)
    lines, start = inspect.getsourcelines(target)
    offset = next(i for i, line in enumerate(lines) if needle in line)
    return f"{Path(inspect.getfile(target)).name}:{start + offset} in {target.__name__}"


def where(captured: Captured, index: int = 0) -> str:
    """The ``Where:`` frames the core shows for a captured failure (the end of its cause)."""
    cause = captured.failures[index].cause
    assert cause is not None
    _, found, frames = cause.rpartition("\nWhere: ")
    assert found
    return frames


def http_error(status: int, url: str = "http://127.0.0.1/data") -> httpx.HTTPStatusError:
    """The real exception ``raise_for_status`` raises, built without a network."""
    response = httpx.Response(status, request=httpx.Request("GET", url))
    try:
        response.raise_for_status()
    except httpx.HTTPStatusError as exc:
        return exc
    raise AssertionError("raise_for_status did not raise")


def has_note(items: Any) -> bool:
    return NOTE_START in json.dumps(items, default=str)
