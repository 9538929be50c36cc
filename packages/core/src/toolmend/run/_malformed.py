"""Malformed calls: the model wrote a call that cannot run as written.

Malformed calls: a tool that does not exist, arguments that are not a JSON object,
arguments that break the tool's schema.

Frameworks treat these differently: one ends the run (the Agents SDK raises
``ModelBehaviorError``), one lists the valid tools, one drops the call.  Each is
a mistake the model can fix on its next turn, so every adapter asks
:func:`check_call` before running a call and, when it answers with a failure,
hands that failure back to the model as a fixable tool error instead.  Nothing
ran, so nothing can be duplicated.

Unparseable JSON is repaired only where exactly one repair exists (trailing
commas, brackets left open at the very end); the repair is reported, never
silent.
"""

from __future__ import annotations

import difflib
import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..deliver._guidance import NAME_LIMIT
from ._failure import ToolFailure

__all__ = [
    "NOT_JSON",
    "NOT_OBJECT",
    "NOT_RUN",
    "UNKNOWN_TOOL",
    "UNLISTED_TOOL",
    "CallCheck",
    "ParsedArguments",
    "argument_errors",
    "check_call",
    "parse_arguments",
    "unknown_tool",
]

log = logging.getLogger("toolmend")

UNKNOWN_TOOL = "Tool '{tool}' does not exist.{hint} Available tools: {names}."
UNLISTED_TOOL = "Tool '{tool}' does not exist. Call one of the tools you were given."
NOT_RUN = "Tool '{tool}' was not run: {problem}."
NOT_JSON = "its arguments are not valid JSON ({error})"
NOT_OBJECT = "its arguments must be a JSON object, not {found}"
NAMES_SHOWN = 40
"""Available tools listed in an unknown-tool error: at most this many, then a count."""
NAMES_LIMIT = 1000
"""The list of available tools: at most this many characters, then a count."""
ERRORS_SHOWN = 5
"""Schema errors listed for one call: the first few say what to change."""
_CLOSERS = {"{": "}", "[": "]"}


@dataclass(frozen=True, slots=True)
class ParsedArguments:
    """Call arguments read from what the model sent.

    ``value`` is the object (``None`` when unusable, ``problem`` then says why, as
    the end of :data:`NOT_RUN`);
    ``repair`` names the one repair that made the text parse, if any.
    """

    value: dict[str, Any] | None
    problem: str | None = None
    repair: str | None = None


@dataclass(frozen=True, slots=True)
class CallCheck:
    """What :func:`check_call` found: the arguments to run with, or the failure to return."""

    arguments: dict[str, Any]
    failure: ToolFailure | None = None
    repair: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the call may run (no failure was found)."""
        return self.failure is None


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__


def _scan(text: str) -> tuple[list[str], list[int], bool]:
    """Where a truncated or sloppy JSON text went wrong.

    Open brackets left at the end, positions of trailing commas, and whether a
    string is still open: one pass outside strings.
    """
    stack: list[str] = []
    commas: list[int] = []
    pending: int | None = None
    in_string = escaped = False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch.isspace():
            continue
        if ch in "}]" and pending is not None:
            commas.append(pending)
        pending = i if ch == "," else None
        if ch == '"':
            in_string = True
        elif ch in _CLOSERS:
            stack.append(ch)
        elif ch in "}]" and stack and _CLOSERS[stack[-1]] == ch:
            stack.pop()
    return stack, commas, in_string


def _repair(text: str) -> tuple[Any, str] | None:
    """The value of ``text`` after its one possible repair, and what was repaired."""
    stack, commas, in_string = _scan(text)
    if in_string:
        return None
    dropped = set(commas)
    fixed = "".join(ch for i, ch in enumerate(text) if i not in dropped)
    stripped = fixed.rstrip()
    if stack and stripped.endswith((",", ":")):
        return None
    fixed = stripped + "".join(_CLOSERS[b] for b in reversed(stack))
    done = []
    if commas:
        done.append("removed a trailing comma" if len(commas) == 1 else "removed trailing commas")
    if stack:
        closed = "".join(_CLOSERS[b] for b in reversed(stack))
        done.append(f"closed {closed!r} at the end")
    if not done:
        return None
    try:
        return json.loads(fixed), " and ".join(done)
    except (ValueError, RecursionError):
        return None


def parse_arguments(raw: Any, *, repair: bool = True) -> ParsedArguments:
    """The arguments object of a call, from a mapping or a JSON text.

    An empty text means no arguments.  A text that does not parse is repaired
    only when ``repair`` and exactly one repair exists.

    Args:
        raw: The arguments: a mapping, a JSON text or ``None``.
        repair: Repair a text that does not parse, where exactly one repair exists.
    """
    if raw is None:
        return ParsedArguments({})
    if isinstance(raw, Mapping):
        return ParsedArguments(dict(raw))
    if not isinstance(raw, str):
        return ParsedArguments(None, NOT_OBJECT.format(found=_json_type(raw)))
    if not raw.strip():
        return ParsedArguments({})
    try:
        value = json.loads(raw)
    except RecursionError:
        return ParsedArguments(None, NOT_JSON.format(error="nested too deeply"))
    except ValueError as exc:
        fixed = _repair(raw) if repair else None
        if fixed is None or not isinstance(fixed[0], dict):
            return ParsedArguments(None, NOT_JSON.format(error=exc))
        return ParsedArguments(fixed[0], repair=fixed[1])
    if not isinstance(value, dict):
        return ParsedArguments(None, NOT_OBJECT.format(found=_json_type(value)))
    return ParsedArguments(value)


def _names(available: list[str]) -> str:
    shown: list[str] = []
    size = 0
    for name in available[:NAMES_SHOWN]:
        name = name if len(name) <= NAME_LIMIT else name[:NAME_LIMIT] + "…"
        if shown and size + len(name) + 2 > NAMES_LIMIT:
            break
        shown.append(name)
        size += len(name) + 2
    text = ", ".join(shown) if shown else "none"
    left = len(available) - len(shown)
    return f"{text} (and {left} more)" if left else text


def unknown_tool(tool: str, available: Iterable[str] | None, arguments: Any = None) -> ToolFailure:
    """The fixable failure of a call to a tool that does not exist, naming those that do.

    The closest name comes first in a "Did you mean" hint: a misspelling is the
    usual cause.  ``available=None`` when the framework cannot say which exist.

    Args:
        tool: The name the model called.
        available: The names of the tools that exist (``None``: unknown).
        arguments: The arguments the model sent.
    """
    shown = tool if len(tool) <= NAME_LIMIT else tool[:NAME_LIMIT] + "…"
    if available is None:
        cause = UNLISTED_TOOL.format(tool=shown)
    else:
        names = list(dict.fromkeys(available))
        close = difflib.get_close_matches(tool, names, n=1, cutoff=0.75)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        cause = UNKNOWN_TOOL.format(tool=shown, hint=hint, names=_names(names))
    shown_arguments = arguments if isinstance(arguments, Mapping) else {}
    return ToolFailure.not_run(
        shown, shown_arguments, cause, rule="unknown-tool", reason="no tool of that name"
    )


def argument_errors(schema: Mapping[str, Any] | None, arguments: Mapping[str, Any]) -> str | None:
    """What is wrong with ``arguments`` under the tool's input ``schema``.

    What is wrong with ``arguments`` under the tool's input ``schema``: each error's
    path and what was expected, joined by ``; `` (``None``: nothing, or no schema).

    Args:
        schema: The tool's input schema.
        arguments: The arguments the model sent.
    """
    if not schema:
        return None
    from ..contracts._schema import validate

    found = validate(schema, dict(arguments))
    if not found:
        return None
    lines = [f"{v.path}: {v.detail}" for v in found[:ERRORS_SHOWN]]
    if len(found) > ERRORS_SHOWN:
        lines.append(f"and {len(found) - ERRORS_SHOWN} more")
    return "; ".join(lines)


def check_call(
    tool: str,
    raw_arguments: Any,
    tools: Mapping[str, Mapping[str, Any] | None] | None,
    *,
    repair: bool = True,
    validate: bool = True,
) -> CallCheck:
    """Whether a call can run as the model wrote it.

    Whether a call can run as the model wrote it: the tool exists, its arguments
    are a JSON object (repaired where exactly one repair exists) and, with
    ``validate``, fit the tool's input schema.

    ``tools`` maps each available tool to its input schema (``None``: unknown
    schema); ``None`` for ``tools`` skips the name check.  A repair or failure
    is logged here, so every adapter reports it the same way.

    Args:
        tool: The name the model called.
        raw_arguments: The arguments as the model wrote them.
        tools: Each available tool with its input schema.
        repair: Repair arguments that do not parse, where exactly one repair exists.
        validate: Check the arguments against the tool's input schema.
    """
    if tools is not None and tool not in tools:
        failure = unknown_tool(tool, tools, raw_arguments)
        log.info("toolmend: call to unknown tool %r refused before it ran", tool)
        return CallCheck({}, failure)
    parsed = parse_arguments(raw_arguments, repair=repair)
    if parsed.value is None:
        cause = NOT_RUN.format(tool=tool, problem=parsed.problem)
        log.info("toolmend: arguments of %r unusable, call not run: %s", tool, cause)
        failure = ToolFailure.not_run(
            tool, {}, cause, rule="invalid-arguments", reason="arguments not a JSON object"
        )
        return CallCheck({}, failure)
    if parsed.repair is not None:
        log.warning("toolmend: arguments of %r repaired: %s", tool, parsed.repair)
    schema = tools.get(tool) if tools is not None else None
    details = argument_errors(schema, parsed.value) if validate else None
    if details is not None:
        failure = ToolFailure.invalid_arguments(tool, parsed.value, details)
        log.info("toolmend: arguments of %r fail its schema, call not run: %s", tool, details)
        return CallCheck(parsed.value, failure, parsed.repair)
    return CallCheck(parsed.value, None, parsed.repair)
