"""Keep an agent from looping on a failing tool.

Agents left to themselves repeat a call that cannot succeed (the same bad
argument, the same missing permission) and keep calling a tool that keeps
failing.  The guard refuses an exact repeat of a fixable or unrecoverable
failure, stops a tool after a run of consecutive failures, and, when enabled,
shrinks failures that a later success superseded to a one-line stub.
"""

from __future__ import annotations

import copy
import json
import logging
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from .detect import Verdict, inspect, text_of
from .guidance import GUIDANCE, cap_error
from .model import Kind

if TYPE_CHECKING:
    from .failure import ToolFailure

__all__ = [
    "LOOP_RULES",
    "REPEATED",
    "STUB",
    "LoopGuard",
    "Observation",
    "canonical",
    "stub_superseded",
]

logger = logging.getLogger("toolmend.loop")

REPEATED = (
    "Tool '{tool}' was not run: this exact call already failed in this task. "
    "The earlier error: {error}"
)
STOPPED = "Tool '{tool}' was not run: its last {count} calls failed."
STUB = "[Earlier failure of {tool}, resolved by a later successful call: {error}]"
_STUB_ERROR = 160
_BLOCKING = (Kind.FIXABLE, Kind.UNRECOVERABLE)
LOOP_RULES = frozenset({"loop-repeat", "loop-budget"})
"""The rules of the failures the guard itself returns for a call it refused."""


def canonical(arguments: Any) -> str:
    """Arguments as sorted compact JSON, so that key order and spacing don't matter.

    A JSON string is parsed first; values JSON cannot encode compare by ``repr``.
    """
    value = arguments
    if isinstance(value, str | bytes | bytearray):
        try:
            value = json.loads(value)
        except ValueError:
            return value if isinstance(value, str) else repr(value)
    if value is None:
        value = {}
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), default=repr)
    except (TypeError, ValueError):
        return repr(value)


@dataclass(frozen=True, slots=True)
class Observation:
    """A finished call as an adapter sees it afterwards, e.g. in the conversation.

    ``verdict`` is what was recorded or detected for its result; ``error`` the
    text to quote if the exact call comes again (default: a short stand-in).
    """

    tool: str
    arguments: Mapping[str, Any]
    verdict: Verdict
    error: str | None = None


class LoopGuard:
    """Per-run loop state; thread-safe.

    ``max_consecutive_failures`` failures in a row of one tool (default 3)
    spend its budget: later calls of it are not run and tell the model to stop
    using it.  A success resets the count.  ``block_exact_repeats`` refuses a
    call identical to one that failed as fixable or unrecoverable.
    ``stub_superseded`` only records the choice for adapters, which apply
    :func:`stub_superseded` to the messages (it changes the prompt prefix,
    hence off by default).
    """

    def __init__(
        self,
        max_consecutive_failures: int = 3,
        block_exact_repeats: bool = True,
        stub_superseded: bool = False,
    ) -> None:
        if max_consecutive_failures < 1:
            raise ValueError("max_consecutive_failures must be >= 1")
        self.max_consecutive_failures = max_consecutive_failures
        self.block_exact_repeats = block_exact_repeats
        self.stub_superseded = stub_superseded
        self._lock = threading.Lock()
        self._failed: dict[tuple[str, str], tuple[Kind, str, str | None]] = {}
        self._consecutive: dict[str, int] = {}
        self.blocked: list[ToolFailure] = []
        """Every call the guard refused, for reports."""

    def consecutive_failures(self, tool: str) -> int:
        with self._lock:
            return self._consecutive.get(tool, 0)

    def before(self, tool: str, arguments: Mapping[str, Any]) -> ToolFailure | None:
        """A failure to return instead of running the call, or ``None`` to run it."""
        from .failure import LOOP_BUDGET, ToolFailure

        key = (tool, canonical(arguments))
        with self._lock:
            count = self._consecutive.get(tool, 0)
            earlier = self._failed.get(key) if self.block_exact_repeats else None
            if count >= self.max_consecutive_failures:
                self._consecutive[tool] = count + 1
                kind = earlier[0] if earlier else Kind.UNRECOVERABLE
                failure = ToolFailure(
                    tool=tool,
                    arguments=dict(arguments) if isinstance(arguments, Mapping) else {},
                    kind=kind,
                    attempts=0,
                    cause=STOPPED.format(tool=tool, count=count),
                    guidance=LOOP_BUDGET.format(tool=tool, count=count),
                    rule="loop-budget",
                    reason=f"{count} consecutive failures",
                )
            elif earlier is not None:
                self._consecutive[tool] = count + 1
                kind, error, guidance = earlier
                failure = ToolFailure(
                    tool=tool,
                    arguments=dict(arguments) if isinstance(arguments, Mapping) else {},
                    kind=kind,
                    attempts=0,
                    cause=cap_error(REPEATED.format(tool=tool, error=error)),
                    guidance=guidance,
                    rule="loop-repeat",
                    reason="exact repeat of a failed call",
                )
            else:
                return None
            self.blocked.append(failure)
        logger.info("loop guard refused %s (%s): %s", tool, failure.rule, failure.reason)
        return failure

    def after(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        failure: ToolFailure | None,
        *,
        error: str | None = None,
    ) -> None:
        """Record the outcome of a call that ran (``None`` = success).

        A failure this guard returned from :meth:`before` was counted there and
        is ignored.  ``error`` is the text the model was shown, when that is not
        the failure's ``cause``.
        """
        if failure is None:
            self.record(tool, arguments, None)
        elif failure.rule not in LOOP_RULES:
            cause = error if error is not None else failure.cause
            self.record(tool, arguments, failure.kind, cause, failure.guidance)

    def record(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        kind: Kind | None,
        error: str | None = None,
        guidance: str | None = None,
        *,
        refused: bool = False,
    ) -> None:
        """Record an outcome an adapter only saw as text (``kind=None`` = success).

        ``error`` is repeated to the model if the exact call comes again;
        ``guidance`` defaults to the kind's sentence.  ``refused`` marks a call
        that a guard refused: it counts toward the tool's run of failures but
        is no failure of its own to refuse a repeat of.
        """
        with self._lock:
            if kind is None:
                self._consecutive[tool] = 0
                return
            self._consecutive[tool] = self._consecutive.get(tool, 0) + 1
            if kind in _BLOCKING and not refused:
                text = error if error is not None else f"{tool} failed ({kind.value})"
                self._failed[(tool, canonical(arguments))] = (
                    kind,
                    text,
                    guidance if guidance is not None else GUIDANCE[kind],
                )

    def replay(self, observations: Iterable[Observation]) -> None:
        """Rebuild the state of a run from its finished calls, oldest first.

        For adapters that keep no guard between calls and rebuild one from the
        conversation: a call the guard refused then (rule ``loop-repeat`` or
        ``loop-budget``) counts toward the tool's run of failures again, as it
        did when it happened.
        """
        for seen in observations:
            verdict = seen.verdict
            if not verdict.failed or verdict.kind is None:
                self.record(seen.tool, seen.arguments, None)
            else:
                self.record(
                    seen.tool,
                    seen.arguments,
                    verdict.kind,
                    seen.error,
                    verdict.guidance,
                    refused=verdict.rule in LOOP_RULES,
                )

    def reset(self, tool: str | None = None) -> None:
        """Forget failures of one tool, or of all (e.g. after the user fixed a permission)."""
        with self._lock:
            if tool is None:
                self._failed.clear()
                self._consecutive.clear()
                return
            self._consecutive.pop(tool, None)
            for key in [k for k in self._failed if k[0] == tool]:
                del self._failed[key]


# -- stubbing superseded failures --------------------------------------------------

Format = Literal["openai", "responses", "anthropic"]


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= _STUB_ERROR else line[: _STUB_ERROR - 3] + "..."


def _get(obj: Any, key: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


_LANGCHAIN_ROLES = {"ai": "assistant", "tool": "tool"}


def _openai_results(messages: Sequence[Any]) -> list[tuple[int, Any, str | None, Any, Any]]:
    """(index, None, tool name, content, flags) for each tool result."""
    names: dict[str, str] = {}
    found: list[tuple[int, Any, str | None, Any, Any]] = []
    for i, message in enumerate(messages):
        role = _get(message, "role") or _LANGCHAIN_ROLES.get(str(_get(message, "type")))
        if role == "assistant":
            for call in _get(message, "tool_calls") or ():
                function = _get(call, "function")
                call_id = _get(call, "id")
                name = _get(function, "name") if function is not None else _get(call, "name")
                if isinstance(call_id, str) and isinstance(name, str):
                    names[call_id] = name
        elif role == "tool":
            call_id = _get(message, "tool_call_id")
            name = _get(message, "name") or names.get(str(call_id))
            found.append((i, None, name, _get(message, "content"), call_id))
    return found


def _responses_results(items: Sequence[Any]) -> list[tuple[int, Any, str | None, Any, Any]]:
    names: dict[str, str] = {}
    found: list[tuple[int, Any, str | None, Any, Any]] = []
    for i, item in enumerate(items):
        kind = _get(item, "type")
        if kind == "function_call":
            call_id, name = _get(item, "call_id"), _get(item, "name")
            if isinstance(call_id, str) and isinstance(name, str):
                names[call_id] = name
        elif kind == "function_call_output":
            call_id = _get(item, "call_id")
            found.append((i, None, names.get(str(call_id)), _get(item, "output"), call_id))
    return found


def _anthropic_results(messages: Sequence[Any]) -> list[tuple[int, Any, str | None, Any, Any]]:
    names: dict[str, str] = {}
    found: list[tuple[int, Any, str | None, Any, Any]] = []
    for i, message in enumerate(messages):
        content = _get(message, "content")
        if not isinstance(content, list):
            continue
        for j, block in enumerate(content):
            kind = _get(block, "type")
            if kind == "tool_use":
                call_id, name = _get(block, "id"), _get(block, "name")
                if isinstance(call_id, str) and isinstance(name, str):
                    names[call_id] = name
            elif kind == "tool_result":
                call_id = _get(block, "tool_use_id")
                found.append((i, j, names.get(str(call_id)), _get(block, "content"), call_id))
    return found


_READERS = {
    "openai": _openai_results,
    "responses": _responses_results,
    "anthropic": _anthropic_results,
}


def _is_error(messages: Sequence[Any], index: int, block: Any, fmt: str) -> bool | None:
    if fmt == "anthropic":
        return _get(_get(messages[index], "content")[block], "is_error") is True
    status = _get(messages[index], "status")
    return True if status == "error" else None


def stub_superseded(
    messages: Sequence[Any],
    *,
    format: Format = "openai",
    recorded: Mapping[str, Verdict] | None = None,
) -> list[Any]:
    """Messages with each failed tool result that a later success of the same tool
    superseded replaced by a one-line stub.  Pure: edited messages are copies,
    the rest are the same objects; anything unreadable is left as it is.

    Failures are those ``recorded`` (call id -> verdict) or detected by
    :func:`toolmend.inspect`.  The last result of each tool is never stubbed.
    """
    reader = _READERS.get(format)
    if reader is None or not isinstance(messages, Sequence) or isinstance(messages, str):
        return list(messages) if isinstance(messages, Sequence) else []
    out = list(messages)
    try:
        results = reader(messages)
    except Exception:
        return out
    succeeded_later: set[str] = set()
    stubs: list[tuple[int, Any, str]] = []
    for index, block, name, content, call_id in reversed(results):
        if not isinstance(name, str):
            continue
        verdict = recorded.get(call_id) if recorded and isinstance(call_id, str) else None
        if verdict is None:
            verdict = inspect(content, is_error=_is_error(messages, index, block, format))
        if not verdict.failed:
            succeeded_later.add(name)
        elif name in succeeded_later:
            text = text_of(content) or ""
            stubs.append((index, block, STUB.format(tool=name, error=_first_line(text))))
    for index, block, stub in stubs:
        out[index] = _replaced(out[index], block, stub, format)
    return out


def _replaced(message: Any, block: Any, stub: str, fmt: str) -> Any:
    field = "output" if fmt == "responses" else "content"
    if block is None:
        if isinstance(message, Mapping):
            return {**message, field: stub}
        return _copy_with(message, field, stub)
    content = list(_get(message, "content"))
    original = content[block]
    content[block] = {**original, "content": stub} if isinstance(original, Mapping) else original
    if isinstance(message, Mapping):
        return {**message, "content": content}
    return _copy_with(message, "content", content)


def _copy_with(message: Any, field: str, value: Any) -> Any:
    """A copy of a message object (a pydantic model, e.g. LangChain's) with one field set."""
    model_copy = getattr(message, "model_copy", None)
    if callable(model_copy):
        return model_copy(update={field: value})
    new = copy.copy(message)
    setattr(new, field, value)
    return new
