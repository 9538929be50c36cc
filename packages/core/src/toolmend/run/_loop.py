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

import dataclasses
import hashlib
import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from .. import telemetry
from .._bounds import prune, safe_repr
from .._types import Kind
from ..classify._detect import Verdict
from ..deliver._codecs import CODECS
from ..deliver._context import STUB, collapse_plan, read_history
from ..deliver._guidance import GUIDANCE, cap_error
from ..deliver._pileup import Streaks, error_class, pile_up_advice
from ..deliver._quote import literal

if TYPE_CHECKING:
    from ._failure import ToolFailure

__all__ = [
    "ADVICE",
    "LOOP_RULES",
    "REMEMBERED",
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
_BLOCKING = (Kind.FIXABLE, Kind.UNRECOVERABLE)
LOOP_RULES = frozenset({"loop-repeat", "loop-budget"})
"""The rules of the failures the guard itself returns for a call it refused."""
REMEMBERED = 1024
"""A guard's default bound: failed calls, tools and refusals it remembers at most each."""


def canonical(arguments: Any) -> str:
    """Arguments as sorted compact JSON, so that key order and spacing don't matter.

    A JSON string is parsed first; values JSON cannot encode compare by ``repr``.
    What lies beyond :mod:`toolmend._bounds` (too deep, too many values, a cycle)
    is its marker.
    """
    return _canonical(arguments)[0]


def _canonical(arguments: Any) -> tuple[str, bool]:
    """The canonical text, and whether it is exact: nothing was beyond the bounds.

    Two calls that differ only beyond the bounds have the same text, so an
    inexact text must not refuse a call as a repeat.
    """
    value = arguments
    if isinstance(value, str | bytes | bytearray):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):  # not JSON, or deeper than the parser goes
            return (value if isinstance(value, str) else repr(value)), True
    if value is None:
        value = {}
    shown = prune(value)
    try:
        text = json.dumps(shown, sort_keys=True, separators=(",", ":"), default=safe_repr)
    except (TypeError, ValueError):
        text = safe_repr(shown)
    return text, shown is value


def _key(tool: str, arguments: Any) -> tuple[str, bytes] | None:
    """What identifies a call for exact repeats; ``None`` for arguments beyond the bounds.

    The canonical text's digest, not the text: a remembered call costs the same
    whatever the size of its arguments.
    """
    text, exact = _canonical(arguments)
    if not exact:
        return None
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    return tool, digest


@dataclass(frozen=True, slots=True)
class _Failed:
    """A remembered failed call: what to say if it comes again, and when it failed."""

    kind: Kind
    cause: str
    guidance: str | None
    at: float


@dataclass(frozen=True, slots=True)
class Observation:
    """A finished call as an adapter sees it afterwards, e.g. in the conversation.

    ``verdict`` is what was recorded or detected for its result; ``error`` the
    text to quote if the exact call comes again (default: a short stand-in).

    Attributes:
        tool: The tool's name.
        arguments: The call's arguments.
        verdict: What was recorded or detected for its result.
        error: The text to quote if the exact call comes again.
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
    adapters: ``True`` turns collapsing on in the adapter's rewrite whatever
    its :class:`toolmend.ContextPolicy` says.  ``pile_up_after`` (default 3)
    consecutive failures of a tool with the same error class replace the advice
    with :data:`toolmend.deliver._pileup.PILE_UP` (stop, or ask the user); ``None`` or 0
    turns that off.

    Memory is bounded whatever the run: at most ``remember`` failed calls
    (for exact repeats), ``remember`` tools (for runs of failures) and the last
    ``remember`` refusals in :attr:`blocked`; past the bound the oldest is
    forgotten first (a failure recorded again counts as new).  Each call costs
    a few dictionary look-ups, however much is remembered.

    Args:
        max_consecutive_failures: Failures in a row of one tool that call for the advice.
        block_exact_repeats: Refuse a repeat of a call that failed as fixable or unrecoverable.
        stub_superseded: Turn collapsing on in the adapter's rewrite.
        hard_stop: Refuse further calls of a failing tool (a circuit) instead of only advising.
        cool_down: Seconds after its last failure before a stopped tool gets a trial call.
        cool_down_calls: Refused calls after which a stopped tool gets a trial call.
        forget_after: Seconds after which remembered failures are forgotten (``None``: never).
        clock: The clock the cool-down and forgetting read (for tests).
        pile_up_after: Failures of a tool with one error class that call for the pile-up note.
        remember: Failed calls, tools and refusals remembered at most, each.
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
        pile_up_after: int | None = 3,
        remember: int = REMEMBERED,
    ) -> None:
        if max_consecutive_failures < 1:
            raise ValueError("max_consecutive_failures must be >= 1")
        if remember < 1:
            raise ValueError("remember must be >= 1")
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
        self.pile_up_after = pile_up_after
        self.remember = remember
        self._streaks = Streaks()
        self._clock = clock
        self._lock = threading.Lock()
        # Both ordered oldest first (by the time of the last failure), so forgetting
        # and evicting read only the oldest entries.  Every tool in _consecutive,
        # _refused or _streaks is in _last: evicting a tool from _last forgets it.
        self._failed: OrderedDict[tuple[str, bytes], _Failed] = OrderedDict()
        self._last: OrderedDict[str, tuple[float, Kind]] = OrderedDict()
        self._consecutive: dict[str, int] = {}
        self._refused: dict[str, int] = {}
        self.blocked: list[ToolFailure] = []
        """The last ``remember`` calls the guard refused, oldest first, for reports."""

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
            "pile_up_after": self.pile_up_after,
            "remember": self.remember,
        }

    def copy(self) -> LoopGuard:
        """A guard with these settings and this state that goes on on its own.

        For adapters that keep a run's guard between calls, replaying only the
        calls added since (the LangChain tool step), and hand each call a copy:
        what the call then records must not reach the kept guard twice.
        Costs a copy of the remembered tables (``remember`` entries at most each).
        """
        twin = LoopGuard(**self.settings())
        with self._lock:
            if not (self._last or self._failed or self.blocked):
                return twin  # nothing remembered (every tool in a table is in _last)
            twin._failed = OrderedDict(self._failed)
            twin._last = OrderedDict(self._last)
            twin._consecutive = dict(self._consecutive)
            twin._refused = dict(self._refused)
            twin._streaks = self._streaks.copy()
            twin.blocked = list(self.blocked)
        return twin

    def _forget_old(self, now: float) -> None:
        """Forget what failed before ``forget_after``: the oldest entries only are read.

        The tables are in the order of their times, which holds for a clock that
        never goes back (the default is monotonic).
        """
        if self.forget_after is None:
            return
        horizon = now - self.forget_after
        while self._failed and next(iter(self._failed.values())).at < horizon:
            self._failed.popitem(last=False)
        while self._last and next(iter(self._last.values()))[0] < horizon:
            self._forget_tool(next(iter(self._last)))

    def _forget_tool(self, tool: str) -> None:
        self._last.pop(tool, None)
        self._consecutive.pop(tool, None)
        self._refused.pop(tool, None)
        self._streaks.forget(tool)

    def consecutive_failures(self, tool: str) -> int:
        """Failures in a row of ``tool`` that this guard still remembers.

        Args:
            tool: The tool's name.
        """
        with self._lock:
            self._forget_old(self._clock())
            return self._consecutive.get(tool, 0)

    def piled_up(self, tool: str) -> str | None:
        """The pile-up sentence when ``tool``'s last failures share one error class, if due.

        Args:
            tool: The tool's name.
        """
        count = self.consecutive_failures(tool)
        with self._lock:
            streak = self._streaks.current(tool)
        if streak is None or count < streak[1]:
            return None
        return pile_up_advice(tool, streak[1], streak[0], self.pile_up_after)

    def advice(self, tool: str) -> str | None:
        """The advice a run of failures of ``tool`` calls for, if any.

        Failures that pile up (the same error class, ``pile_up_after`` times)
        get the pile-up sentence; any other run of ``max_consecutive_failures``
        gets :data:`ADVICE`.

        Args:
            tool: The tool's name.
        """
        piled = self.piled_up(tool)
        if piled is not None:
            return piled
        count = self.consecutive_failures(tool)
        if count < self.max_consecutive_failures:
            return None
        return ADVICE.format(tool=literal(tool), count=count)

    def advised(self, failure: ToolFailure) -> ToolFailure:
        """``failure`` with the run-of-failures advice appended to its guidance, when due.

        The pile-up sentence replaces the guidance instead: a kind's sentence
        ("retrying is expected to succeed") no longer holds after it.

        Args:
            failure: The failure of a call that ran.
        """
        if failure.rule in LOOP_RULES:
            return failure
        piled = self.piled_up(failure.tool)
        if piled is not None:
            return dataclasses.replace(failure, guidance=piled)
        advice = self.advice(failure.tool)
        if advice is None:
            return failure
        guidance = f"{failure.guidance} {advice}" if failure.guidance else advice
        return dataclasses.replace(failure, guidance=guidance)

    def before(self, tool: str, arguments: Mapping[str, Any]) -> ToolFailure | None:
        """A failure to return instead of running the call, or ``None`` to run it.

        Args:
            tool: The tool's name.
            arguments: The call's arguments.
        """
        from ._failure import LOOP_BUDGET, ToolFailure

        # The digest of the arguments is needed only to find a remembered failure:
        # on the success path of a run with none there is nothing to look up.
        key = _key(tool, arguments) if self.block_exact_repeats and self._failed else None
        with self._lock:
            now = self._clock()
            self._forget_old(now)
            count = self._consecutive.get(tool, 0)
            entry = self._failed.get(key) if key is not None else None
            open_circuit = (
                self.hard_stop
                and count >= self.max_consecutive_failures
                and now - self._last.get(tool, (now, Kind.AMBIGUOUS))[0] < self.cool_down
                and self._refused.get(tool, 0) < self.cool_down_calls
            )
            if entry is not None:
                failure = ToolFailure(
                    tool=tool,
                    arguments=dict(arguments) if isinstance(arguments, Mapping) else {},
                    kind=entry.kind,
                    attempts=0,
                    cause=entry.cause,
                    guidance=entry.guidance,
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
                    guidance=LOOP_BUDGET.format(tool=literal(tool), count=count),
                    rule="loop-budget",
                    reason=f"{count} consecutive failures",
                )
            else:
                return None
            self.blocked.append(failure)
            if len(self.blocked) > self.remember:
                del self.blocked[0]
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

        Args:
            tool: The tool's name.
            arguments: The call's arguments.
            failure: How it failed; ``None`` for a success.
            error: The text the model was shown, when it is not the failure's cause.
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

        Args:
            tool: The tool's name.
            arguments: The call's arguments.
            kind: The failure's kind; ``None`` for a success.
            error: The text to repeat if the exact call comes again.
            guidance: The next step (default: the kind's sentence).
            refused: Whether a guard refused the call.
        """
        key = _key(tool, arguments) if kind in _BLOCKING and not refused else None
        cls = error_class(kind, error or "") if kind is not None and not refused else ""
        with self._lock:
            now = self._clock()
            if refused:
                # Only a tool with failures can be refused for them; for any other
                # the count would be reset by its next failure before it is read.
                if tool in self._last:
                    self._refused[tool] = self._refused.get(tool, 0) + 1
                return
            if kind is None:
                self._forget_tool(tool)
                return
            self._consecutive[tool] = self._consecutive.get(tool, 0) + 1
            self._streaks.failed(tool, cls)
            self._refused.pop(tool, None)
            self._last.pop(tool, None)
            self._last[tool] = (now, kind)
            while len(self._last) > self.remember:
                self._forget_tool(next(iter(self._last)))
            if key is not None:
                text = error if error is not None else f"{tool} failed ({kind.value})"
                self._failed.pop(key, None)
                self._failed[key] = _Failed(
                    kind,
                    cap_error(REPEATED.format(tool=tool, error=text)),
                    guidance if guidance is not None else GUIDANCE[kind],
                    now,
                )
                while len(self._failed) > self.remember:
                    self._failed.popitem(last=False)

    def replay(self, observations: Iterable[Observation]) -> None:
        """Rebuild the state of a run from its finished calls, oldest first.

        For adapters that keep no guard between calls and rebuild one from the
        conversation: a call the guard refused then (rule ``loop-repeat`` or
        ``loop-budget``) is a refusal again, not a failure.

        Args:
            observations: The run's finished calls, oldest first.
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
        """Forget failures of one tool, or of all (e.g. after the user fixed a permission).

        Args:
            tool: The tool's name; ``None`` for every tool.
        """
        with self._lock:
            if tool is None:
                self._failed.clear()
                self._consecutive.clear()
                self._last.clear()
                self._refused.clear()
                self._streaks.forget()
                return
            self._consecutive.pop(tool, None)
            self._last.pop(tool, None)
            self._refused.pop(tool, None)
            self._streaks.forget(tool)
            for key in [k for k in self._failed if k[0] == tool]:
                del self._failed[key]


# -- stubbing superseded failures --------------------------------------------------

Format = Literal["openai", "responses", "anthropic"]


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
    :func:`toolmend.classify_result`.  The last result of each tool is never
    stubbed.  The same collapse (with runs of identical errors) is part of
    :func:`toolmend.rewrite` through its ``context`` (:class:`toolmend.ContextPolicy`);
    this function is the resolved-failures half alone, on the whole list.

    Args:
        messages: The conversation.
        format: Its format (``openai``, ``responses`` or ``anthropic``).
        recorded: Call id -> verdict, where the adapter recorded one.
    """
    codec = CODECS.get(format)
    if codec is None or not isinstance(messages, Sequence) or isinstance(messages, str):
        return list(messages) if isinstance(messages, Sequence) else []
    try:
        seen = read_history(codec, messages, recorded=recorded)
        resolved = STUB.split("{", 1)[0]
        plan = {loc: text for loc, text in collapse_plan(seen).items() if text.startswith(resolved)}
        return codec.replace(messages, plan) if plan else list(messages)
    except Exception:
        return list(messages)
