"""Shared helpers for the LangChain adapter tests: scripted turns and message shapes."""

from __future__ import annotations

import inspect
import json
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import httpx
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

NOTE_START = "Note from the tool runtime:"


def call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def ai(*calls: dict[str, Any], content: str = "") -> AIMessage:
    return AIMessage(content=content, tool_calls=list(calls))


def http_error(status: int, url: str = "http://127.0.0.1/data") -> httpx.HTTPStatusError:
    """The real exception ``raise_for_status`` raises, built without a network."""
    response = httpx.Response(status, request=httpx.Request("GET", url))
    try:
        response.raise_for_status()
    except httpx.HTTPStatusError as exc:
        return exc
    raise AssertionError("raise_for_status did not raise")


def shape(messages: Iterable[BaseMessage]) -> list[tuple[Any, ...]]:
    """What a model is shown, without the generated ids: exact, comparable tuples."""
    out: list[tuple[Any, ...]] = []
    for m in messages:
        if isinstance(m, ToolMessage):
            out.append(("tool", m.tool_call_id, m.name, m.status, m.content))
        elif isinstance(m, AIMessage):
            calls = tuple((c["name"], json.dumps(c["args"]), c["id"]) for c in m.tool_calls)
            out.append(("ai", m.content, calls))
        elif isinstance(m, HumanMessage):
            out.append(("human", m.content))
        elif isinstance(m, SystemMessage):
            out.append(("system", m.content))
        else:
            out.append((m.type, m.content))
    return out


def notes(messages: Sequence[BaseMessage]) -> list[str]:
    """Every text in ``messages`` that holds a runtime note."""
    return [m.content for m in messages if isinstance(m.content, str) and NOTE_START in m.content]


def tool_messages(messages: Sequence[BaseMessage]) -> list[ToolMessage]:
    return [m for m in messages if isinstance(m, ToolMessage)]


def line_of(fn: Callable[..., Any], needle: str) -> str:
    """``file:line in name``: how the core's ``Where:`` line names the line of ``fn`` with
    ``needle``."""
    lines, start = inspect.getsourcelines(fn)
    offset = next(i for i, line in enumerate(lines) if needle in line)
    return f"{Path(inspect.getfile(fn)).name}:{start + offset} in {fn.__name__}"


def where(*frames: tuple[Callable[..., Any], str]) -> list[str]:
    """The core's ``Where:`` line for a failure raised through ``frames`` (outermost first),
    as the lines after the first of a failed tool's content."""
    return ["Where: " + " > ".join(line_of(fn, needle) for fn, needle in frames)]


def thread_copies_timeouts() -> bool:
    """Whether a ``TimeoutError`` raised in a thread reaches ``await`` as a fresh copy.

    A sync tool under ``ainvoke``/``astream`` runs in a thread; before Python 3.13
    asyncio re-creates a bare ``TimeoutError`` from that thread without its
    traceback, so the core has no user frame to show for it.
    """
    return sys.version_info < (3, 13)
