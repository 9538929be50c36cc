"""Decide whether a tool result is a failure, and which rule says so.

Three sources of evidence, in the paper's order (Appendix A): explicit client
flags for every client, recorded rules for known coding agents chosen by their
User-Agent, and standard error start texts for everyone else.  Error words in
the middle of a result are never enough: a log with ERROR lines, a source file
or a test's output quoting a ``TypeError`` is a successful call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .classify import Classification, classify_text
from .model import Kind, Source

__all__ = ["Verdict", "agent_of", "inspect", "text_of"]

_JSON_LIMIT = 256 * 1024
_TEXT_PART_TYPES = frozenset({"text", "input_text", "output_text"})


@dataclass(frozen=True, slots=True)
class Verdict:
    """The outcome of inspecting one tool result."""

    failed: bool
    kind: Kind | None = None
    rule: str | None = None
    source: Source | None = None
    reason: str | None = None
    guidance: str | None = None
    """Overrides the kind's sentence, e.g. the verify-first text for a write that may have landed."""


CLEAN = Verdict(False)


def text_of(content: Any) -> str | None:
    """The text of a message's content; ``None`` when it holds no text we can read.

    Lists of parts keep only their text parts (images and other blocks are not
    the error); anything else is not understood and is left alone.
    """
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence) and not isinstance(content, bytes | bytearray):
        texts: list[str] = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, Mapping):
                kind = part.get("type", "text")
                text = part.get("text")
                if kind in _TEXT_PART_TYPES and isinstance(text, str):
                    texts.append(text)
        return "\n".join(texts) if texts else (None if content else "")
    return None


# Agent rules (Appendix A, rules 4-13), keyed by User-Agent prefix.
_QWEN_EXIT = re.compile(r"^Exit Code: *(.*)$", re.M)
_QWEN_ERROR_LINE = re.compile(r"^Error: *(.*)$", re.M)
_CODEX_EXITED = re.compile(r"Process exited with code (-?\d+)")
_CODEX_EXIT_CODE = re.compile(r"Exit code: *(-?\d+)")
_OPENCODE_EXIT = re.compile(r"Exited with code (-?\d+)\s*$")

AGENTS = {"qwencode/": "qwen", "codex": "codex", "kilo-code/": "kilo", "opencode/": "opencode"}


def agent_of(client: str | None) -> str | None:
    """Which recorded coding agent a User-Agent names, if any."""
    if not client:
        return None
    lowered = client.strip().lower()
    for prefix, agent in AGENTS.items():
        if lowered.startswith(prefix):
            return agent
    return None


def _nonzero(value: str) -> bool:
    try:
        return int(value.strip()) != 0
    except ValueError:
        return False


def _agent_rule(agent: str, text: str) -> str | None:
    if agent == "qwen":
        if text.startswith("File not found:"):
            return "qwen-notfound"
        if text.startswith("Command:"):
            codes = _QWEN_EXIT.findall(text)
            errors = _QWEN_ERROR_LINE.findall(text)
            if (codes and _nonzero(codes[-1])) or (errors and errors[-1].strip() != "(none)"):
                return "qwen-exit"
            return None
        if text.startswith("Error") or (
            text.startswith("File") and "has not been read" in text
        ):
            return "qwen-error"
    elif agent == "codex":
        exited = _CODEX_EXITED.search(text)
        if exited and _nonzero(exited.group(1)):
            return "codex-exit"
        if text.startswith("Exit code:"):
            code = _CODEX_EXIT_CODE.match(text)
            if code and _nonzero(code.group(1)):
                return "codex-exit"
        if "command timed out" in text:
            return "codex-timeout"
        if "apply_patch verification failed" in text:
            return "codex-patch"
    elif agent == "kilo":
        if text.startswith("File not found:"):
            return "kilo-notfound"
        if text.startswith("Unknown: FileSystem."):
            return "kilo-fs"
        if text.startswith("oldString"):
            return "kilo-usage"
    elif agent == "opencode":
        last = text.rstrip().rsplit("\n", 1)[-1]
        exited = _OPENCODE_EXIT.search(last)
        if exited and _nonzero(exited.group(1)):
            return "opencode-exit"
    return None


# Generic start texts (Table 5), plus the wrappers the frameworks put around errors.
_GENERIC_PREFIXES = (
    "Error:",
    "ERROR:",
    "error:",
    "Error executing tool",
    "MCP error ",
    "An error occurred while running the tool",
    "Traceback (most recent call last):",
    "HTTP Error",
    "HTTP 4",
    "HTTP 5",
    "Client error '",
    "Server error '",
    "Unknown tool:",
)
_GENERIC_PATTERN = re.compile(
    r"[A-Za-z_][\w.]*(?:Error|Exception|Timeout|timeout)[:(]"
    r"|\d{3} (?:Client|Server) Error:"
    r"|Error code: \d{3} - "
    r"|Tool '[^'\n]*' failed after \d+ attempts? with "
    r"|\[Errno -?\d+\] "
)
_JSON_ERROR_PREFIX = re.compile(r'\{\s*"error"\s*:\s*(?:\{\s*"|"[^"])')


def _json_object(text: str) -> dict[str, Any] | None:
    if len(text) > _JSON_LIMIT:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _json_flag(text: str, obj: dict[str, Any] | None) -> str | None:
    if obj is None:
        return None
    if obj.get("isError") is True:
        return "mcp-iserror"
    if text.startswith('{"query":') and obj.get("success") is False:
        return "cline"
    error = obj.get("error")
    if (
        text.startswith('{"error":{"type":"tool.execution"')
        and isinstance(error, Mapping)
        and error.get("type") == "tool.execution"
    ):
        return "opencode"
    return None


def _json_error(obj: dict[str, Any] | None, stripped: str) -> bool:
    if obj is None:
        return len(stripped) > _JSON_LIMIT and bool(_JSON_ERROR_PREFIX.match(stripped))
    error = obj.get("error")
    return (isinstance(error, str) and error.strip() != "") or (
        isinstance(error, Mapping) and len(error) > 0
    )


def _generic(stripped: str) -> bool:
    return stripped.startswith(_GENERIC_PREFIXES) or bool(_GENERIC_PATTERN.match(stripped))


def _verdict(text: str, rule: str, source: Source, *, wide: bool) -> Verdict:
    found: Classification = classify_text(_strip_wrapper(text), wide=wide)
    return Verdict(True, found.kind, rule, source, found.reason)


_WRAPPER = re.compile(r"(?:Error executing tool|Tool '[^'\n]*' failed after)[^:\n]*:?")


def _strip_wrapper(text: str) -> str:
    """Drop a framework's wrapper text, whose tool name could carry any word."""
    stripped = text.lstrip()
    match = _WRAPPER.match(stripped)
    return stripped[match.end() :] if match else text


def inspect(
    content: Any,
    *,
    is_error: bool | None = None,
    status: str | None = None,
    client: str | None = None,
) -> Verdict:
    """Judge one tool result.  Never raises: unreadable content is not a failure."""
    text = text_of(content)
    if text is None:
        if is_error is True or status == "error":
            return Verdict(True, Kind.AMBIGUOUS, "is_error" if is_error else "status", Source.FLAG)
        return CLEAN
    agent = agent_of(client)
    wide = agent is None
    if is_error is True:
        return _verdict(text, "is_error", Source.FLAG, wide=wide)
    if status == "error":
        return _verdict(text, "status", Source.FLAG, wide=wide)
    stripped = text.lstrip()
    obj = _json_object(stripped) if stripped.startswith("{") else None
    flag = _json_flag(stripped, obj)
    if flag is not None:
        return _verdict(text, flag, Source.FLAG, wide=flag == "mcp-iserror" or wide)
    if agent is not None:
        rule = _agent_rule(agent, text)
        if rule is None:
            return CLEAN
        return _verdict(text, rule, Source.AGENT, wide=False)
    if _generic(stripped) or (stripped.startswith("{") and _json_error(obj, stripped)):
        return _verdict(text, "generic", Source.GENERIC, wide=True)
    return CLEAN
