"""Tool calls under a durable engine: one key per step, and what a replayed step may do.

A durable engine (a LangGraph checkpointer, a DBOS workflow) runs a step at
least once: a worker that dies after the effect but before the engine recorded
the step runs it again on resume.  Two things make that safe.  A key derived
from the engine's own identity of the step is the same on every replay, so a
tool that forwards it lets its server deduplicate.  And a "started" record,
written in the engine's database before dispatch, tells a replay that the step
may already have run, so the pure :func:`on_replay` can decide: run again with
the same key, verify first, or report instead of repeating a write.

The records live behind the :class:`StepStore` protocol; ``toolmend.durable._sql``
implements it on SQLite and Postgres.  Once a step's "started" record exists, only
proof that the tool did not run takes it back: a failure recorded as ``failed``
(a replay runs the step again) is one known not to have taken effect, and a store
that fails after the effect leaves the record "started", so that the resume
verifies or reports instead of repeating.  A failure is never handed back as the
tool's result.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from .._types import Kind
from ..deliver._guidance import GUIDANCE, VERIFY_FIRST
from ..run._attempts import AttemptRecord, Stop
from ..run._effects import Effect
from ..run._failure import ToolFailure
from ..run._loop import LoopGuard
from ..run._retry import BudgetScope, CallContext, RetryBudget, RetryPolicy, budget_for
from ..run._runner import Verify, aexecute, execute, passes_through, verify_async, verify_sync

__all__ = [
    "LANDED_TEXT",
    "STOPPED_CAUSE",
    "Mark",
    "Recorded",
    "Replay",
    "StepRecord",
    "StepStore",
    "WorkerStopped",
    "arun_durably",
    "dbos_key",
    "langgraph_key",
    "on_replay",
    "run_durably",
    "step_key",
    "stopped_failure",
]

T = TypeVar("T")

logger = logging.getLogger("toolmend.durable")

LANDED_TEXT = (
    "This call already took effect before the worker running it stopped "
    "(a check confirmed it); it was not repeated. Its original result was not recorded."
)
"""The result of a replayed step whose verify hook found the effect in place."""

UNRECORDED_CAUSE = (
    "Tool '{tool}' was not run: its step could not be recorded in the durable store "
    "({error}), and a durable call never runs unrecorded."
)

STOPPED_CAUSE = (
    "Tool '{tool}' was interrupted: the worker running it stopped before the call "
    "finished, and whether it took effect is unknown. It was not repeated."
)


def step_key(*parts: str) -> str:
    """A stable idempotency key from the parts that identify one step of a durable run.

    The same parts always give the same key (no randomness, no clock), and
    different parts give different keys: each part is length-prefixed before
    hashing, so ``("ab", "c")`` and ``("a", "bc")`` differ.  40 hex characters
    after ``tm-``, short enough for any ``Idempotency-Key`` header.

    Args:
        *parts: The engine's identifiers of the step, outermost first.
    """
    digest = hashlib.sha256()
    for part in parts:
        data = str(part).encode("utf-8")
        digest.update(f"{len(data)}:".encode())
        digest.update(data)
    return "tm-" + digest.hexdigest()[:40]


def langgraph_key(thread_id: str, checkpoint_ns: str, tool_call_id: str) -> str:
    """The key of one tool call of a LangGraph run: the same on every resume of the thread.

    Args:
        thread_id: ``config["configurable"]["thread_id"]``.
        checkpoint_ns: ``config["configurable"]["checkpoint_ns"]`` of the tool's task.
        tool_call_id: The id of the tool call in the model's message (checkpointed).
    """
    return step_key("langgraph", thread_id, checkpoint_ns, tool_call_id)


def dbos_key(workflow_id: str, step_id: int | str) -> str:
    """The key of one DBOS step: its workflow id and the step's number in that workflow.

    Args:
        workflow_id: The DBOS workflow id (the same on every recovery of the workflow).
        step_id: The step's function id, its position in the workflow (deterministic).
    """
    return step_key("dbos", workflow_id, str(step_id))


class Mark(enum.StrEnum):
    """Where a recorded step got to."""

    STARTED = "started"
    """Dispatched, or about to be: its effect may or may not have landed."""
    FINISHED = "finished"
    """Returned a result, recorded with it."""
    FAILED = "failed"
    """Failed in a way known not to have taken effect: a replay runs it again.

    Known only when the tool is repeatable, was refused before it ran, or opted in
    to be read from its exception (``RetryPolicy.retry_before_dispatch``).
    """


@dataclass(frozen=True, slots=True)
class StepRecord:
    """What the store knows about one step, found by its key.

    Attributes:
        key: The step's key.
        tool: The tool's name.
        mark: Where the step got to.
        result: The text of a finished step.
    """

    key: str
    tool: str
    mark: Mark
    result: str | None = None


class StepStore(Protocol):
    """Records of steps and per-tool retry budgets, kept in the engine's own database.

    Every method commits before it returns: a record that a crash can lose
    protects nothing.
    """

    def begin(self, key: str, tool: str) -> StepRecord | None:
        """Record ``key`` as started unless it has a record; return that earlier record.

        ``None`` means this is the step's first run.  Atomic: of two workers
        that begin the same key, exactly one gets ``None``.

        Args:
            key: The step's key.
            tool: The tool's name.
        """
        ...

    def finish(self, key: str, result: str) -> None:
        """Record the step's result (its text, as the agent reads it).

        Args:
            key: The step's key.
            result: The text the agent reads.
        """
        ...

    def fail(self, key: str) -> None:
        """Record a failure known not to have taken effect.

        Args:
            key: The step's key.
        """
        ...

    def clear(self, key: str) -> None:
        """Forget the step: it was interrupted on purpose (the engine's control flow).

        Args:
            key: The step's key.
        """
        ...

    def budget(self, tool: str) -> RetryBudget:
        """The retry budget of ``tool``, shared by every worker on this store.

        Args:
            tool: The tool's name.
        """
        ...


class Replay(enum.StrEnum):
    """What to do with a step, given its record."""

    RUN = "run"
    """Run it: a first run, a failure known not to have landed, or safe to repeat."""
    REUSE = "reuse"
    """It finished: hand back the recorded result, do not run it again."""
    VERIFY = "verify"
    """It may have landed: ask the verify hook, run only if it did not."""
    REPORT = "report"
    """It may have landed and nothing can tell: report that, do not repeat it."""


def on_replay(
    record: StepRecord | None, *, effect: Effect, honours_key: bool, can_verify: bool
) -> Replay:
    """The decision for a step about to run, from its record; pure.

    Args:
        record: The step's earlier record (``None``: its first run).
        effect: The tool's declared effect.
        honours_key: Whether the tool forwards the idempotency key to a server that
            deduplicates on it.
        can_verify: Whether the tool has a verify hook.
    """
    if record is None or record.mark is Mark.FAILED:
        return Replay.RUN
    if record.mark is Mark.FINISHED:
        return Replay.REUSE
    if effect.repeatable or honours_key:
        return Replay.RUN
    return Replay.VERIFY if can_verify else Replay.REPORT


class WorkerStopped(Exception):
    """What the verify hook of a replayed step is told: its first run was cut off."""


@dataclass(frozen=True, slots=True)
class Recorded:
    """A replayed step's outcome taken from its record: the tool did not run again.

    Attributes:
        text: The text the agent reads.
    """

    text: str
    landed: bool = False
    """Set when the verify hook confirmed the effect (the text is :data:`LANDED_TEXT`)."""


def stopped_failure(tool: str, arguments: Mapping[str, Any]) -> ToolFailure:
    """The failure of a step that may have run before a crash and cannot be checked.

    Args:
        tool: The tool's name.
        arguments: The step's arguments.
    """
    return ToolFailure(
        tool=tool,
        arguments=arguments,
        kind=Kind.AMBIGUOUS,
        attempts=1,
        cause=STOPPED_CAUSE.format(tool=tool),
        guidance=VERIFY_FIRST,
        rule="worker-stopped",
        reason="the worker stopped during the call",
        outcome_unknown=True,
    )


def _unrecorded_failure(tool: str, arguments: Mapping[str, Any], error: Exception) -> ToolFailure:
    """The failure of a step whose "started" record could not be written: it did not run.

    Raising instead would end the agent's run (pydantic-ai, a DBOS workflow) for a
    store that may be back a second later; a call that never ran is safe to make
    again, so the model is told so.

    Args:
        tool: The tool's name.
        arguments: The step's arguments.
        error: What the store raised.
    """
    return ToolFailure(
        tool=tool,
        arguments=arguments,
        kind=Kind.TRANSIENT,
        attempts=0,
        cause=UNRECORDED_CAUSE.format(tool=tool, error=f"{type(error).__name__}: {error}"[:200]),
        guidance=GUIDANCE[Kind.TRANSIENT],
        rule="store-unavailable",
        reason="the durable store failed before the call",
    )


@dataclass(frozen=True)
class _Step:
    store: StepStore
    key: str
    tool: str
    arguments: Mapping[str, Any]
    effect: Effect
    policy: RetryPolicy
    loop: LoopGuard | None
    verify: Verify | None
    honours_key: bool
    passthrough: tuple[type[BaseException], ...]
    history: list[AttemptRecord] | None

    def plan(self) -> tuple[Replay, StepRecord | None] | ToolFailure:
        try:
            record = self.store.begin(self.key, self.tool)
        except Exception as exc:
            logger.warning(
                "could not record step %s of tool %s as started (%s: %s); not run",
                self.key,
                self.tool,
                type(exc).__name__,
                exc,
            )
            return _unrecorded_failure(self.tool, self.arguments, exc)
        replay = on_replay(
            record,
            effect=self.effect,
            honours_key=self.honours_key,
            can_verify=self.verify is not None,
        )
        return replay, record

    def context(self) -> CallContext:
        return CallContext(self.tool, self.arguments, 1, self.key)

    def after_verify(self, landed: bool | None) -> Recorded | ToolFailure | None:
        """``None``: the effect did not land, run the call."""
        if landed is True:
            self._record(lambda: self.store.finish(self.key, LANDED_TEXT))
            return Recorded(LANDED_TEXT, landed=True)
        if landed is None:
            return stopped_failure(self.tool, self.arguments)
        return None

    def options(self) -> dict[str, Any]:
        policy = self.policy
        if policy.budget is None and policy.budget_scope is BudgetScope.PROCESS:
            policy = dataclasses.replace(policy, budget=self._shared_budget())
        return {
            "tool": self.tool,
            "arguments": self.arguments,
            "effect": self.effect,
            "policy": policy,
            "loop": self.loop,
            "verify": self.verify,
            "honours_key": self.honours_key,
            "passthrough": self.passthrough,
            "key": self.key,
            "history": self.history,
        }

    def _shared_budget(self) -> RetryBudget:
        """The store's budget of the tool; the process's when the store cannot give it.

        A budget only paces retries: a store that fails here must not stop a step
        whose "started" record it has just written.
        """
        try:
            return self.store.budget(self.tool)
        except Exception as exc:
            logger.warning(
                "the step store has no retry budget for %s (%s: %s); this process's is used",
                self.tool,
                type(exc).__name__,
                exc,
            )
            return budget_for(self.tool)

    def settle(self, outcome: Any, text: Callable[[Any], str]) -> None:
        """Record how the run ended; an unknown outcome stays "started" for a replay to check."""
        if isinstance(outcome, ToolFailure):
            if outcome.stop is Stop.LANDED:  # the verify hook found the effect in place
                self._record(lambda: self.store.finish(self.key, LANDED_TEXT))
            elif not outcome.outcome_unknown:
                self._record(lambda: self.store.fail(self.key))
            return
        self._record(lambda: self.store.finish(self.key, text(outcome)))

    def _record(self, write: Callable[[], None]) -> None:
        """Write the step's end; a store that fails leaves it "started" and the call stands.

        The tool has run: raising now would hand the agent an error for a call that
        happened, and any handler that then forgot the record would let a resume run
        it again.  "Started" is the safe record: a replay verifies or reports.
        """
        try:
            write()
        except Exception as exc:
            logger.warning(
                "could not record the end of step %s of tool %s (%s: %s); it stays "
                "'started', so a replay verifies or reports instead of repeating it",
                self.key,
                self.tool,
                type(exc).__name__,
                exc,
            )

    def interrupted(self, exc: BaseException) -> None:
        """Forget the step only for the engine's own control flow raised by the call.

        An interrupt (LangGraph's ``interrupt()``, a listed passthrough) means the
        engine reruns the step from its start by design.  Anything else that
        escapes (a store error, cancellation, a bug) is no proof that the tool did
        not run, so the "started" record stays.
        """
        if not (isinstance(exc, Exception) and passes_through(exc, self.passthrough)):
            return
        try:
            self.store.clear(self.key)
        except Exception as error:
            logger.warning(
                "could not clear step %s after %s (%s); it stays 'started'",
                self.key,
                type(exc).__name__,
                error,
            )


def _step(
    store: StepStore,
    key: str,
    tool: str,
    arguments: Mapping[str, Any] | None,
    effect: Effect | str,
    policy: RetryPolicy | None,
    loop: LoopGuard | None,
    verify: Verify | None,
    honours_key: bool,
    passthrough: tuple[type[BaseException], ...],
    history: list[AttemptRecord] | None,
) -> _Step:
    return _Step(
        store=store,
        key=key,
        tool=str(tool),
        arguments=dict(arguments) if isinstance(arguments, Mapping) else {},
        effect=Effect.parse(effect),
        policy=policy if policy is not None else RetryPolicy(),
        loop=loop,
        verify=verify,
        honours_key=honours_key,
        passthrough=tuple(passthrough),
        history=history,
    )


def run_durably(
    thunk: Callable[[CallContext], T],
    *,
    store: StepStore,
    key: str,
    tool: str,
    text: Callable[[T], str],
    arguments: Mapping[str, Any] | None = None,
    effect: Effect | str = Effect.UNKNOWN,
    policy: RetryPolicy | None = None,
    loop: LoopGuard | None = None,
    verify: Verify | None = None,
    honours_key: bool = False,
    passthrough: tuple[type[BaseException], ...] = (),
    history: list[AttemptRecord] | None = None,
) -> T | ToolFailure | Recorded:
    """Run one step of a durable run as ``execute`` would, unless its record says it ran.

    The started record is committed before the first attempt; the call then
    runs under ``policy`` with the store's shared budget for ``tool`` and the
    fixed ``key``.  A success is recorded with ``text(value)``; a failure known
    not to have landed is recorded as failed; an unknown outcome stays started,
    and so does every step whose record the store fails to update.  A step whose
    "started" record cannot be written is not run: it returns a transient failure.  An exception
    in ``passthrough`` or the frameworks' control flow (an interrupt) clears the
    record, since the engine reruns the step; any other exception leaves it.

    Args:
        thunk: One attempt; receives the call context with the stable key.
        store: Where the step's record and the tool's budget live.
        key: The step's key (:func:`langgraph_key`, :func:`dbos_key`).
        tool: The tool's name.
        text: The text to record for a successful result.
        arguments: The call's arguments, for reports, the loop guard and verify.
        effect: The tool's declared effect.
        policy: The retry policy; its budget is replaced by the shared one.
        loop: The run's loop guard, if any.
        verify: The hook that tells whether a write landed.
        honours_key: Whether the tool forwards ``key`` to a deduplicating server.
        passthrough: Exceptions that propagate untouched.
        history: Filled with the failed attempts, as ``execute`` fills it, so
            that an adapter can report a success that took retries.
    """
    step = _step(
        store, key, tool, arguments, effect, policy, loop, verify, honours_key, passthrough, history
    )
    planned = step.plan()
    if isinstance(planned, ToolFailure):
        return planned
    replay, record = planned
    if replay is Replay.REUSE and record is not None:
        return Recorded(record.result or "")
    if replay is Replay.REPORT:
        return stopped_failure(step.tool, step.arguments)
    if replay is Replay.VERIFY:
        early = step.after_verify(verify_sync(verify, step.context(), WorkerStopped()))
        if early is not None:
            return early
    try:
        outcome = execute(thunk, **step.options())
    except BaseException as exc:
        step.interrupted(exc)
        raise
    step.settle(outcome, text)
    return outcome


async def arun_durably(
    thunk: Callable[[CallContext], Awaitable[T]],
    *,
    store: StepStore,
    key: str,
    tool: str,
    text: Callable[[T], str],
    arguments: Mapping[str, Any] | None = None,
    effect: Effect | str = Effect.UNKNOWN,
    policy: RetryPolicy | None = None,
    loop: LoopGuard | None = None,
    verify: Verify | None = None,
    honours_key: bool = False,
    passthrough: tuple[type[BaseException], ...] = (),
    history: list[AttemptRecord] | None = None,
) -> T | ToolFailure | Recorded:
    """The async twin of :func:`run_durably` (the store's calls are short and blocking).

    Args:
        thunk: One attempt; receives the call context with the stable key.
        store: Where the step's record and the tool's budget live.
        key: The step's key (:func:`langgraph_key`, :func:`dbos_key`).
        tool: The tool's name.
        text: The text to record for a successful result.
        arguments: The call's arguments, for reports, the loop guard and verify.
        effect: The tool's declared effect.
        policy: The retry policy; its budget is replaced by the shared one.
        loop: The run's loop guard, if any.
        verify: The hook (sync or async) that tells whether a write landed.
        honours_key: Whether the tool forwards ``key`` to a deduplicating server.
        passthrough: Exceptions that propagate untouched.
        history: Filled with the failed attempts, as ``execute`` fills it, so
            that an adapter can report a success that took retries.
    """
    step = _step(
        store, key, tool, arguments, effect, policy, loop, verify, honours_key, passthrough, history
    )
    planned = step.plan()
    if isinstance(planned, ToolFailure):
        return planned
    replay, record = planned
    if replay is Replay.REUSE and record is not None:
        return Recorded(record.result or "")
    if replay is Replay.REPORT:
        return stopped_failure(step.tool, step.arguments)
    if replay is Replay.VERIFY:
        early = step.after_verify(await verify_async(verify, step.context(), WorkerStopped()))
        if early is not None:
            return early
    try:
        outcome = await aexecute(thunk, **step.options())
    except BaseException as exc:
        step.interrupted(exc)
        raise
    step.settle(outcome, text)
    return outcome
