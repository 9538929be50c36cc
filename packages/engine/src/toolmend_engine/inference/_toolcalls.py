"""Read tool calls out of generated text, leniently, and stream the rest safely.

A small model's call is accepted when a client would still accept it: a missing
closing tag, a code fence around the JSON, ``parameters`` instead of
``arguments``, arguments given as a JSON string, Python-style quotes, or up to
two missing closing braces.  A reply that is nothing but such a JSON object
counts as a call only when it names one of the offered tools.  Text that does
not parse stays text: a wrong call is worse than none.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from ._template import CALL_CLOSE, CALL_OPEN

__all__ = ["ContentStream", "ParsedCall", "Reply", "call_from_object", "parse_reply"]

_NAME_KEYS = ("name", "function", "tool", "tool_name")
_ARGUMENT_KEYS = ("arguments", "parameters", "args", "input")


@dataclass(frozen=True, slots=True)
class ParsedCall:
    """A call as the model wrote it; ``raw`` keeps arguments that did not parse."""

    name: str
    arguments: dict[str, Any]
    raw: str | None = field(default=None, compare=False)

    def arguments_json(self) -> str:
        """The arguments as the JSON text the APIs carry."""
        return json.dumps(self.arguments, ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class Reply:
    """Generated text split into the answer and the calls."""

    content: str
    calls: tuple[ParsedCall, ...]


def _unfence(text: str) -> str:
    text = text.strip()
    if text.startswith("```"):
        text = text[3:]
        if text.startswith("json"):
            text = text[4:]
        end = text.rfind("```")
        if end != -1:
            text = text[:end]
    return text.strip()


def _load_object(text: str) -> Any:
    text = _unfence(text)
    start = text.find("{")
    if start == -1:
        return None
    text = text[start:]
    for candidate in (text, text + "}", text + "}}"):
        try:
            value, _ = json.JSONDecoder().raw_decode(candidate)
            return value
        except ValueError:
            pass
        try:
            return ast.literal_eval(candidate[: candidate.rfind("}") + 1])
        except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
            pass
    return None


def call_from_object(value: Any) -> ParsedCall | None:
    """A call from ``{"name": ..., "arguments": ...}`` and its lenient variants."""
    if not isinstance(value, Mapping):
        return None
    name: Any = None
    for key in _NAME_KEYS:
        candidate = value.get(key)
        if isinstance(candidate, Mapping):
            inner = call_from_object(candidate)
            if inner is not None:
                return inner
        if isinstance(candidate, str) and candidate.strip():
            name = candidate.strip()
            break
    if name is None:
        return None
    arguments: Any = {}
    for key in _ARGUMENT_KEYS:
        if key in value:
            arguments = value[key]
            break
    raw = None
    if isinstance(arguments, str):
        loaded = _load_object(arguments) if arguments.strip() else {}
        raw = arguments if loaded is None else None
        arguments = loaded if loaded is not None else None
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        return None
    return ParsedCall(name, dict(arguments), raw)


def _blocks(text: str, opening: str, closing: str) -> list[tuple[int, int, str]]:
    found = []
    start = text.find(opening)
    while start != -1:
        inner_start = start + len(opening)
        close = text.find(closing, inner_start)
        following = text.find(opening, inner_start)
        if close != -1 and (following == -1 or close < following):
            end, inner_end = close + len(closing), close
        elif following != -1:
            end = inner_end = following
        else:
            end = inner_end = len(text)
        found.append((start, end, text[inner_start:inner_end]))
        start = text.find(opening, end)
    return found


def parse_reply(
    text: str,
    tool_names: Collection[str] | None = None,
    *,
    opening: str = CALL_OPEN,
    closing: str = CALL_CLOSE,
) -> Reply:
    """Split generated text into the answer and the calls it makes."""
    calls: list[ParsedCall] = []
    kept: list[str] = []
    position = 0
    for start, end, inner in _blocks(text, opening, closing):
        call = call_from_object(_load_object(inner))
        if call is None:
            continue
        calls.append(call)
        kept.append(text[position:start])
        position = end
    if calls:
        kept.append(text[position:])
        return Reply("".join(kept).strip(), tuple(calls))
    stripped = text.strip()
    if stripped.startswith(("{", "`")):
        bare = call_from_object(_load_object(stripped))
        if bare is not None and (tool_names is None or bare.name in tool_names):
            return Reply("", (bare,))
    return Reply(stripped, ())


class ContentStream:
    """Emit answer text while it is generated, holding back whatever may become a call.

    The concatenated deltas equal the final ``Reply.content``: leading and trailing
    white space is held back as the final parse strips it, everything from a
    possible call opening on is held to the end, and a reply that starts like a
    bare JSON call is held whole.  With ``calls=False`` (the reply is read as
    text only) nothing but the outer white space is held back.
    """

    def __init__(self, opening: str = CALL_OPEN, *, calls: bool = True) -> None:
        self.opening = opening
        self.calls = calls
        self.emitted = ""

    def _safe(self, text: str) -> str:
        text = text.lstrip()
        if not self.calls:
            return text.rstrip()
        if text.startswith(("{", "`")):
            return ""
        cut = len(text)
        i = text.find(self.opening[0])
        while i != -1:
            rest = text[i:]
            if rest.startswith(self.opening) or self.opening.startswith(rest):
                cut = i
                break
            i = text.find(self.opening[0], i + 1)
        return text[:cut].rstrip()

    def feed(self, text: str) -> str:
        """The new safe delta, given all text generated so far."""
        safe = self._safe(text)
        if len(safe) <= len(self.emitted) or not safe.startswith(self.emitted):
            return ""
        delta = safe[len(self.emitted) :]
        self.emitted = safe
        return delta

    def finish(self, content: str) -> str:
        """The rest of the final content."""
        if not content.startswith(self.emitted):
            return ""
        delta = content[len(self.emitted) :]
        self.emitted = content
        return delta
