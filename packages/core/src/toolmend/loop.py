"""Keep an agent from looping on a failing tool.

Agents left to themselves repeat a call that cannot succeed (the same bad
argument, the same missing permission) and keep calling a tool that keeps
failing.  The guard refuses an exact repeat of a fixable or unrecoverable
failure; after a run of consecutive failures of a tool it adds advice to the
failure's guidance and, only when asked to (``hard_stop``), works as a circuit
breaker that refuses the tool for a cool-down and then lets one trial call
through.  Refusals are not failures, a success resets the count, and a guard
that lives longer than one run (an MCP session) forgets after ``forget_after``.
When enabled, it also shrinks failures that a later success superseded to a
one-line stub.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from . import telemetry
from .detect import Verdict, classify_result, text_of
from .guidance import GUIDANCE, cap_error
from .model import Kind

if TYPE_CHECKING:
    from .failure import ToolFailure

__all__ = [
    "ADVICE",
    "LOOP_RULES",
    "REPEATED",
    "STUB",
    "LoopGuard",
    "Observation",
    "canonical",
    "stub_superseded_failures",
]

logger = logging.getLogger("toolmend.loop")

REPEATED = (
    "Tool '{tool}' was not run: this exact call already failed in this task. "
    "The earlier error: {error}"
)
STOPPED = "Tool '{tool}' was not run: its last {count} calls failed."
ADVICE = (
    "The last {count} calls of {tool} failed: if the next one fails too, "
    "try another way or tell the user what failed."
)
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

    ``block_exact_repeats`` refuses a call identical to one that failed as
    fixable or unrecoverable.  ``max_consecutive_failures`` failures in a row of
    one tool (default 3) add :data:`ADVICE` to the guidance of the failure; with
    ``hard_stop`` they also open a circuit: calls of the tool are refused until
    ``cool_down`` seconds have passed since its last failure or
    ``cool_down_calls`` calls were refused, then one trial call runs (a success
    closes the circuit, a failure opens it again).  Refusals never count as
    failures, and a success resets the count, so a short outage never blocks for
    longer than it lasts.  ``forget_after`` (seconds) bounds the memory of a
    guard that outlives a run.  ``stub_superseded`` only records the choice for
    adapters, which apply :func:`stub_superseded_failures` to the messages (it
    changes the prompt prefix, hence off by default).
    """

    def __init__(
        self,
        max_consecutive_failures: int = 3,
        block_exact_repeats: bool = True,
        stub_superseded: bool = False,
        *,
        hard_stop: bool = False,
        cool_down: float = 30.0,
        cool_down_calls: int = 3,
        forget_after: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_consecutive_failures < 1:
            raise ValueError("max_consecutive_failures must be >= 1")
        if cool_down < 0 or cool_down_calls < 1:
            raise ValueError("cool_down must be >= 0 and cool_down_calls >= 1")
        if forget_after is not None and forget_after <= 0:
            raise ValueError("forget_after must be > 0 or None")
        self.max_consecutive_failures = max_consecutive_failures
        self.block_exact_repeats = block_exact_repeats
        self.stub_superseded = stub_superseded
        self.hard_stop = hard_stop
        self.cool_down = cool_down
        self.cool_down_calls = cool_down_calls
        self.forget_after = forget_after
        self._clock = clock
        self._lock = threading.Lock()
        self._failed: dict[tuple[str, str], tuple[Kind, str, str | None, float]] = {}
        self._consecutive: dict[str, int] = {}
        self._last: dict[str, tuple[float, Kind]] = {}
        self._refused: dict[str, int] = {}
        self.blocked: list[ToolFailure] = []
        """Every call the guard refused, for reports."""

    def settings(self) -> dict[str, Any]:
        """The constructor arguments, for adapters that make a fresh guard per run."""
        return {
            "max_consecutive_failures": self.max_consecutive_failures,
            "block_exact_repeats": self.block_exact_repeats,
            "stub_superseded": self.stub_superseded,
            "hard_stop": self.hard_stop,
            "cool_down": self.cool_down,
            "cool_down_calls": self.cool_down_calls,
            "forget_after": self.forget_after,
            "clock": self._clock,
        }

    def _forget_old(self, now: float) -> None:
        if self.forget_after is None:
            return
        horizon = now - self.forget_after
        for key in [k for k, v in self._failed.items() if v[3] < horizon]:
            del self._failed[key]
        for tool in [t for t, (at, _) in self._last.items() if at < horizon]:
            self._last.pop(tool, None)
            self._consecutive.pop(tool, None)
            self._refused.pop(tool, None)

    def consecutive_failures(self, tool: str) -> int:
        """Failures in a row of ``tool`` that this guard still remembers."""
        with self._lock:
            self._forget_old(self._clock())
            return self._consecutive.get(tool, 0)

    def advice(self, tool: str) -> str | None:
        """The advice a run of failures of ``tool`` calls for, if any."""
        count = self.consecutive_failures(tool)
        if count < self.max_consecutive_failures:
            return None
        return ADVICE.format(tool=tool, count=count)

    def advised(self, failure: ToolFailure) -> ToolFailure:
        """``failure`` with the run-of-failures advice appended to its guidance, when due."""
        advice = self.advice(failure.tool)
        if advice is None or failure.rule in LOOP_RULES:
            return failure
        guidance = f"{failure.guidance} {advice}" if failure.guidance else advice
        return dataclasses.replace(failure, guidance=guidance)

    def before(self, tool: str, arguments: Mapping[str, Any]) -> ToolFailure | None:
        """A failure to return instead of running the call, or ``None`` to run it."""
        from .failure import LOOP_BUDGET, ToolFailure

        key = (tool, canonical(arguments))
        with self._lock:
            now = self._clock()
            self._forget_old(now)
            count = self._consecutive.get(tool, 0)
            entry = self._failed.get(key) if self.block_exact_repeats else None
            open_circuit = (
                self.hard_stop
                and count >= self.max_consecutive_failures
                and now - self._last.get(tool, (now, Kind.AMBIGUOUS))[0] < self.cool_down
                and self._refused.get(tool, 0) < self.cool_down_calls
            )
            if entry is not None:
                kind, error, guidance, _ = entry
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
            elif open_circuit:
                self._refused[tool] = self._refused.get(tool, 0) + 1
                failure = ToolFailure(
                    tool=tool,
                    arguments=dict(arguments) if isinstance(arguments, Mapping) else {},
                    kind=self._last.get(tool, (now, Kind.UNRECOVERABLE))[1],
                    attempts=0,
                    cause=STOPPED.format(tool=tool, count=count),
                    guidance=LOOP_BUDGET.format(tool=tool, count=count),
                    rule="loop-budget",
                    reason=f"{count} consecutive failures",
                )
            else:
                return None
            self.blocked.append(failure)
        logger.info("loop guard refused %s (%s): %s", tool, failure.rule, failure.reason)
        telemetry.loop_refused(failure)
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
        that a guard refused: it is no failure (it neither counts toward the
        tool's run of failures nor is a failure to refuse a repeat of), but it
        counts toward ``cool_down_calls``.
        """
        with self._lock:
            now = self._clock()
            if refused:
                self._refused[tool] = self._refused.get(tool, 0) + 1
                return
            if kind is None:
                self._consecutive[tool] = 0
                self._refused.pop(tool, None)
                self._last.pop(tool, None)
                return
            self._consecutive[tool] = self._consecutive.get(tool, 0) + 1
            self._refused.pop(tool, None)
            self._last[tool] = (now, kind)
            if kind in _BLOCKING:
                text = error if error is not None else f"{tool} failed ({kind.value})"
                self._failed[(tool, canonical(arguments))] = (
                    kind,
                    text,
                    guidance if guidance is not None else GUIDANCE[kind],
                    now,
                )

    def replay(self, observations: Iterable[Observation]) -> None:
        """Rebuild the state of a run from its finished calls, oldest first.

        For adapters that keep no guard between calls and rebuild one from the
        conversation: a call the guard refused then (rule ``loop-repeat`` or
        ``loop-budget``) is a refusal again, not a failure.
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
                self._last.clear()
                self._refused.clear()
                return
            self._consecutive.pop(tool, None)
            self._last.pop(tool, None)
            self._refused.pop(tool, None)
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


def stub_superseded_failures(
    messages: Sequence[Any],
    *,
    format: Format = "openai",
    recorded: Mapping[str, Verdict] | None = None,
) -> list[Any]:
    """Messages with superseded failed tool results replaced by stubs.

    Messages with each failed tool result that a later success of the same tool
    superseded replaced by a one-line stub.  Pure: edited messages are copies,
    the rest are the same objects; anything unreadable is left as it is.

    Failures are those ``recorded`` (call id -> verdict) or detected by
    :func:`toolmend.classify_result`.  The last result of each tool is never stubbed.
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
            verdict = classify_result(content, is_error=_is_error(messages, index, block, format))
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
