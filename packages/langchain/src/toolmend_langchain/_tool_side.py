"""The tool step: run one LangChain tool call under the core's retry policy and loop guard.

``handler(request)`` raises the tool's exception; the core turns it into a
:class:`toolmend.ToolFailure` (retrying only what is safe to repeat) and this
module turns that into an error ``ToolMessage`` that carries the core's record.
A failure the tool returns instead (an error ``ToolMessage``, as
``handle_tool_errors`` and langchain-mcp-adapters make, or a success whose text
is an error) goes to the core the same way, as :class:`toolmend.integrations.ResultFailed`;
the model then reads the message the tool returned, with the core's record.

The graph state is the only truth about a run: each call's loop guard is the
one the tool results in the state make, so concurrent runs of one agent, and
runs resumed from a checkpointer, each see exactly their own history.  What is
kept between calls (:class:`_Guards`) only saves replaying the messages already
replayed: a call replays the ones added since, and the whole run again whenever
the state is not an extension of what was replayed.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from typing import Any, TypedDict, Unpack

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.errors import GraphBubbleUp, is_invalid_resume
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

import toolmend
from toolmend import Effect, Form, LoopGuard, RetryPolicy, ToolFailure, Verdict, telemetry
from toolmend.contracts import Contracts
from toolmend.durable import Recorded, StepStore, arun_durably, run_durably
from toolmend.integrations import (
    AttemptRecord,
    CallContext,
    CallRecord,
    Observation,
    ResultFailed,
    aexecute,
    execute,
    observe_call,
    recording_outcomes,
    text_of,
)

from ._contracts import ContractCheck
from ._durable import key_of
from ._malformed import schema_errors
from ._records import failure_message, failure_record, record_of, verdict_from_record, with_record

__all__ = [
    "LoopGuardSpec",
    "ToolSide",
    "ToolSideOptions",
    "configure",
    "loop_factory",
    "loop_from_messages",
    "run_of",
]

log = logging.getLogger("toolmend.langchain")

ToolResult = ToolMessage | Command[Any]
Handler = Callable[[ToolCallRequest], ToolResult]
AsyncHandler = Callable[[ToolCallRequest], Awaitable[ToolResult]]
Verify = Callable[[CallContext, BaseException], Any]
LoopGuardSpec = LoopGuard | Callable[[], LoopGuard] | bool | None


class ToolSideOptions(TypedDict, total=False):
    """The tool step's settings, the same for ``ToolMendMiddleware`` and ``tool_node``.

    One typed definition, so that a setting is added, documented and checked in one
    place (``**options: Unpack[ToolSideOptions]``).

    Attributes:
        effects: Each tool's side effects (``read_only``, ``idempotent``, ``write``);
            an undeclared tool is treated as a write and is never repeated
            automatically.
        retry: The :class:`toolmend.RetryPolicy` of the tool step (``None``: the
            default policy, which retries only calls that are safe to repeat).
        loop_guard: A :class:`toolmend.LoopGuard` used as a template (each call gets
            a fresh one rebuilt from the run's messages), a factory, ``True`` for the
            defaults, or ``None``/``False`` to turn it off.
        contracts: Outcome contracts (``toolmend.contracts.Contracts``) that
            successful results are checked against; a violation reaches the model
            as the core's receipt.
        client: The name of the client the model runs in, for the detector's
            client-specific rules (``None``: none).
        verify: Tool name to a hook ``(call, exc) -> True/False/None`` that tells
            whether a failed write landed, asked before repeating it.
        idempotency_keys: Tool name to the parameter that receives the call's
            idempotency key (the same on every attempt); the tool is then taken to
            honour it, so its repeats are safe.
        malformed_calls: On by default: a call to a tool that does not exist, or
            with arguments that are not a JSON object or break the tool's schema,
            is answered with a fixable error instead of the framework's own
            handling (which ends the run for unparseable arguments); arguments with
            exactly one repair (a trailing comma, brackets left open) run repaired,
            and the repair is recorded on the AI message.  ``False`` leaves all of
            that to LangChain.
    """

    effects: Mapping[str, Effect | str] | None
    retry: RetryPolicy | None
    loop_guard: LoopGuardSpec
    contracts: Contracts | None
    client: str | None
    verify: Mapping[str, Verify] | None
    idempotency_keys: Mapping[str, str] | None
    malformed_calls: bool


def loop_factory(spec: LoopGuardSpec) -> Callable[[], LoopGuard] | None:
    """A fresh-guard factory from what the user passed.

    An instance is a template: each call gets a new guard with its settings,
    since one shared instance would mix the counters of every run.
    """
    if spec is None or spec is False:
        return None
    if spec is True:
        return LoopGuard
    if isinstance(spec, LoopGuard):
        return functools.partial(LoopGuard, **spec.settings())
    if callable(spec):
        return spec
    raise TypeError(f"loop_guard must be a LoopGuard, a factory, True or None, not {spec!r}")


def _messages_of(state: Any) -> Sequence[Any]:
    if isinstance(state, Mapping):
        messages = state.get("messages")
    elif isinstance(state, list):
        messages = state
    else:
        messages = getattr(state, "messages", None)
    return messages if isinstance(messages, list) else []


def _current_run(messages: Sequence[Any]) -> Sequence[Any]:
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], HumanMessage):
            return messages[i + 1 :]
    return messages


def _graph_run(runtime: Any) -> str | None:
    """The thread (``configurable.thread_id``), else LangGraph's run id, if the runtime has one."""
    info = getattr(runtime, "execution_info", None)
    for name in ("thread_id", "run_id"):
        value = getattr(info, name, None)
        if value is not None:
            return str(value)
    return None


def run_of(runtime: Any, state: Any) -> Hashable:
    """The id of the run a tool call or an agent hook belongs to, for the outcome recorder.

    The thread (``configurable.thread_id``) when there is one, else LangGraph's run
    id, else the id of the user message that started the turn: the tool step and
    the model step both see it, so a run's failures settle when the model answers
    without a tool call.

    Args:
        runtime: The tool call's ``ToolRuntime`` or the model request's ``Runtime``.
        state: The agent's state (its messages).

    Returns:
        The run's id (``None``: no id found, one shared run).
    """
    run = _graph_run(runtime)
    if run is not None:
        return run
    messages = _messages_of(state)
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return f"turn:{message.id}" if message.id is not None else None
    return None


Calls = dict[str, tuple[str, Mapping[str, Any]]]
"""Call id -> (tool, arguments) of the AI messages read so far."""


def _observations(
    messages: Sequence[Any], client: str | None, calls: Calls | None = None
) -> Iterator[Observation]:
    """Each tool result in ``messages``, with its recorded or detected verdict.

    ``calls`` carries the AI messages' calls from earlier messages of the run into
    this read, and receives this read's (a run replayed in pieces).
    """
    calls = {} if calls is None else calls
    for message in messages:
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                call_id = call.get("id")
                if isinstance(call_id, str):
                    calls[call_id] = (call["name"], call.get("args") or {})
        elif isinstance(message, ToolMessage):
            name, arguments = calls.get(message.tool_call_id, (message.name or "", {}))
            record = record_of(message)
            verdict = verdict_from_record(record) if record is not None else None
            if verdict is None:
                verdict = toolmend.classify_result(
                    message.content, status=message.status, client=client
                )
            cause = record.get("cause") if record is not None else None
            error = cause if isinstance(cause, str) else text_of(message.content)
            yield Observation(name, arguments, verdict, error)


def loop_from_messages(
    messages: Sequence[Any], factory: Callable[[], LoopGuard], *, client: str | None = None
) -> LoopGuard:
    """A new guard that has seen the tool results since the last user message."""
    guard = factory()
    guard.replay(_observations(_current_run(messages), client))
    return guard


def _replayable(factory: Callable[[], LoopGuard]) -> bool:
    """Whether a guard from ``factory`` may be kept between calls of a run.

    Only guards made fresh by toolmend's own factories, and blind to the clock:
    ``hard_stop`` and ``forget_after`` read the time of each recorded failure,
    which a rebuild sets to the time of the call, so a kept guard would decide
    otherwise.  A factory of the user's may return a shared guard.
    """
    ours = factory is LoopGuard or (
        isinstance(factory, functools.partial) and factory.func is LoopGuard
    )
    if not ours:
        return False
    probe = factory()
    return not probe.hard_stop and probe.forget_after is None


@dataclass(eq=False, slots=True)
class _Replayed:
    """One run's guard as replayed so far: the messages read, and the last of them."""

    guard: LoopGuard
    calls: Calls = field(default_factory=dict)
    seen: int = 0
    last: Any = None

    def extended_by(self, messages: Sequence[Any]) -> bool:
        """Whether ``messages`` starts with what was replayed: the last one read still in place."""
        n = self.seen
        return len(messages) >= n and (n == 0 or messages[n - 1] is self.last)

    def catch_up(
        self, messages: Sequence[Any], factory: Callable[[], LoopGuard], client: str | None
    ) -> None:
        """Replay the messages after those read; a user message among them restarts the run."""
        new = messages[self.seen :]
        for i in range(len(new) - 1, -1, -1):
            if isinstance(new[i], HumanMessage):
                self.guard, self.calls, new = factory(), {}, new[i + 1 :]
                break
        self.guard.replay(_observations(new, client, self.calls))
        self.seen = len(messages)
        self.last = messages[-1] if messages else None


class _Guards:
    """Each run's loop guard, kept so that a call replays only the messages added since.

    Found by :func:`run_of`'s key, but used only when the state extends what was
    replayed (as many messages at least, the last one read the same object in the
    same place); anything else (another run under the same key, history edited or
    cut, a checkpoint resumed) replays the run from its user message, as a fresh
    rebuild would.  Each call gets a copy: what it records reaches the kept guard
    when its result is replayed, once.  ``limit`` runs at most, least recently used
    forgotten first.
    """

    def __init__(
        self, factory: Callable[[], LoopGuard], client: str | None, limit: int = 256
    ) -> None:
        self._factory = factory
        self._client = client
        self._limit = limit
        self._runs: OrderedDict[Hashable, _Replayed] = OrderedDict()
        self._lock = threading.Lock()

    def guard(self, run: Hashable, messages: Sequence[Any]) -> LoopGuard:
        """The guard of the call whose run is ``run`` and whose state holds ``messages``."""
        with self._lock:
            entry = self._runs.pop(run, None)
            if entry is None or not entry.extended_by(messages):
                entry = _Replayed(self._factory())
            if entry.seen < len(messages):
                entry.catch_up(messages, self._factory, self._client)
            self._runs[run] = entry
            while len(self._runs) > self._limit:
                self._runs.popitem(last=False)
            return entry.guard.copy()


_STOCK_RETRY = re.compile(r"Tool '(?P<tool>[^'\n]*)' failed after (?P<n>\d+) attempts with ")


def _warn_if_repeated(call: _Call, message: ToolMessage) -> None:
    """Say so when a retry middleware inside this one repeated a call unsafe to repeat."""
    if call.effect.repeatable or not isinstance(message.content, str):
        return
    found = _STOCK_RETRY.match(message.content)
    if found and found["tool"] == call.name and int(found["n"]) > 1:
        log.warning(
            "toolmend.langchain: %s (effect %s) was repeated by a retry middleware "
            "listed after ToolMendMiddleware; list ToolMendMiddleware last",
            call.name,
            call.effect.value,
        )


@dataclass(frozen=True, slots=True)
class _Returned:
    """A failure the tool returned, as the failure of the attempt that returned it."""

    message: ToolMessage
    verdict: Verdict


class _PassThrough(Exception):
    """Carries an exception the core must not catch (an invalid interrupt resume)."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(original)
        self.original = original


def _reraise_control(exc: Exception) -> None:
    """A resume value that fails its interrupt's schema must fail the run, as without us."""
    if is_invalid_resume(exc):
        raise _PassThrough(exc) from exc


@dataclass(frozen=True, slots=True)
class _Call:
    request: ToolCallRequest
    name: str
    arguments: Mapping[str, Any]
    call_id: str | None
    effect: Effect
    loop: LoopGuard | None
    verify: Verify | None
    key_parameter: str | None
    key: str | None
    """The durable key (thread, namespace, call id); ``None`` outside a checkpointed thread."""

    def request_for(self, ctx: CallContext) -> ToolCallRequest:
        if self.key_parameter is None:
            return self.request
        arguments = {**self.arguments, self.key_parameter: ctx.idempotency_key}
        return self.request.override(tool_call={**self.request.tool_call, "args": arguments})


def _span(call: _Call) -> AbstractContextManager[telemetry.ToolCall]:
    return telemetry.tool_call(call.name, call_id=call.call_id, framework="langchain")


@dataclass(frozen=True)
class ToolSide:
    """The tool-side settings of one middleware or tool node.

    Its only state is :attr:`guards`, what the runs' messages replayed so far made
    of their loop guards; the messages decide, the cache only saves work.
    """

    form: Form = Form.C3
    effects: Mapping[str, Effect] = field(default_factory=dict)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    loop_guard: Callable[[], LoopGuard] | None = LoopGuard
    contracts: ContractCheck | None = None
    client: str | None = None
    verify: Mapping[str, Verify] = field(default_factory=dict)
    keys: Mapping[str, str] = field(default_factory=dict)
    malformed_calls: bool = True
    durable: StepStore | None = None
    guards: _Guards | None = field(default=None, init=False, repr=False, compare=False)
    """Each run's replayed loop guard (``None``: rebuilt for every call)."""

    def __post_init__(self) -> None:
        if self.loop_guard is not None and _replayable(self.loop_guard):
            object.__setattr__(self, "guards", _Guards(self.loop_guard, self.client))

    def _loop(self, request: ToolCallRequest) -> LoopGuard | None:
        """The call's loop guard: it has seen the tool results of the run in the state."""
        if self.loop_guard is None:
            return None
        messages = _messages_of(request.state)
        if self.guards is None:
            return loop_from_messages(messages, self.loop_guard, client=self.client)
        run = _graph_run(request.runtime)
        # Without a thread or run id, the first message's identity finds the run
        # (run_of's user message is a scan of the run); a key only finds an entry,
        # the entry is used only if the messages extend what it replayed.
        key = run if run is not None else (id(messages[0]) if messages else None)
        return self.guards.guard(key, messages)

    def _plan(self, request: ToolCallRequest) -> _Call:
        call = request.tool_call
        name = request.tool.name if request.tool is not None else str(call.get("name"))
        arguments = call.get("args")
        arguments = arguments if isinstance(arguments, Mapping) else {}
        loop = None
        if self.loop_guard is not None:
            try:
                loop = self._loop(request)
            except Exception as exc:
                log.warning(
                    "toolmend.langchain: run history not understood (%r); no loop guard", exc
                )
        call_id = call.get("id")
        return _Call(
            request=request,
            name=name,
            arguments=arguments,
            call_id=call_id if isinstance(call_id, str) else None,
            effect=self.effects.get(name, Effect.UNKNOWN),
            loop=loop,
            verify=self.verify.get(name),
            key_parameter=self.keys.get(name),
            key=key_of(request),
        )

    def _options(self, call: _Call, history: list[AttemptRecord]) -> dict[str, Any]:
        return {
            "tool": call.name,
            "arguments": call.arguments,
            "effect": call.effect,
            "policy": self.retry,
            "loop": call.loop,
            "verify": call.verify,
            "honours_key": call.key_parameter is not None,
            "passthrough": (GraphBubbleUp, _PassThrough),
            "history": history,
            **({"key": call.key} if call.key is not None else {}),
        }

    def _durable(self, call: _Call, history: list[AttemptRecord]) -> dict[str, Any] | None:
        """The options of a durable run, or ``None`` when the call is not durable."""
        if self.durable is None or call.key is None:
            return None
        options = self._options(call, history)
        return {**options, "store": self.durable, "text": _text}

    def _refused(self, call: _Call) -> ToolFailure | None:
        """Arguments the tool's own schema rejects: a fixable failure, and the tool never runs.

        The loop guard still has its say, as for a call that ran.
        """
        if not self.malformed_calls:
            return None
        ignore = () if call.key_parameter is None else (call.key_parameter,)
        details = schema_errors(call.request.tool, call.arguments, ignore=ignore)
        if details is None:
            return None
        blocked = call.loop.before(call.name, call.arguments) if call.loop is not None else None
        return blocked or ToolFailure.invalid_arguments(call.name, call.arguments, details)

    def call(self, request: ToolCallRequest, handler: Handler) -> ToolResult:
        """Run one tool call (sync); never raises the tool's exception."""
        try:
            call = self._plan(request)
        except Exception as exc:
            log.warning("toolmend.langchain: tool call not understood (%r); run as is", exc)
            return handler(request)
        with _span(call):
            return self._call(call, handler)

    def _call(self, call: _Call, handler: Handler) -> ToolResult:
        refused = self._refused(call)
        if refused is not None:
            return self._failed(call, refused)

        history: list[AttemptRecord] = []

        def attempt(ctx: CallContext) -> ToolResult:
            try:
                result = handler(call.request_for(ctx))
            except Exception as exc:
                _reraise_control(exc)
                raise
            return self._raise_if_failed(result)

        durable = self._durable(call, history)
        try:
            if durable is not None:
                outcome = run_durably(attempt, **durable)
            else:
                outcome = execute(attempt, **self._options(call, history))
        except _PassThrough as passed:
            raise passed.original from None
        return self._finish(call, outcome, history)

    async def acall(self, request: ToolCallRequest, handler: AsyncHandler) -> ToolResult:
        """Run one tool call (async); never raises the tool's exception."""
        try:
            call = self._plan(request)
        except Exception as exc:
            log.warning("toolmend.langchain: tool call not understood (%r); run as is", exc)
            return await handler(request)
        with _span(call):
            return await self._acall(call, handler)

    async def _acall(self, call: _Call, handler: AsyncHandler) -> ToolResult:
        refused = self._refused(call)
        if refused is not None:
            return self._failed(call, refused)

        history: list[AttemptRecord] = []

        async def attempt(ctx: CallContext) -> ToolResult:
            try:
                result = await handler(call.request_for(ctx))
            except Exception as exc:
                _reraise_control(exc)
                raise
            return self._raise_if_failed(result)

        durable = self._durable(call, history)
        try:
            if durable is not None:
                outcome = await arun_durably(attempt, **durable)
            else:
                outcome = await aexecute(attempt, **self._options(call, history))
        except _PassThrough as passed:
            raise passed.original from None
        return self._finish(call, outcome, history)

    def _raise_if_failed(self, result: ToolResult) -> ToolResult:
        """A failure the tool returned goes to the core like an exception.

        An error ``ToolMessage``, or a success whose text is an error: the core
        decides about it as about a raised exception (retry only what is safe
        to repeat, verify-first for a write that may have landed), which the
        text alone cannot tell.
        """
        if not isinstance(result, ToolMessage) or record_of(result) is not None:
            return result
        verdict = toolmend.classify_result(result.content, status=result.status, client=self.client)
        if not verdict.failed:
            return result
        text = text_of(result.content) or ""
        raise ResultFailed(text, verdict.kind, verdict.reason, _Returned(result, verdict))

    def _finish(
        self,
        call: _Call,
        outcome: ToolResult | ToolFailure | Recorded,
        history: list[AttemptRecord],
    ) -> ToolResult:
        if isinstance(outcome, Recorded):
            return _replayed(call, outcome, self._effect_source(call), self.form)
        if isinstance(outcome, ToolFailure):
            returned = outcome.exception
            if isinstance(returned, ResultFailed) and isinstance(returned.result, _Returned):
                return self._returned_failure(call, outcome, returned.result)
            return self._failed(call, outcome)
        if isinstance(outcome, ToolMessage) and record_of(outcome) is not None:
            return outcome  # recorded, and observed, by the toolmend step that made it
        self._observe(call, lambda: CallRecord.of_success(call.name, history=history))
        if not isinstance(outcome, ToolMessage):
            return outcome
        try:
            return self._succeeded(call, outcome, history)
        except Exception as exc:
            log.warning("toolmend.langchain: result of %s not understood (%r)", call.name, exc)
            return outcome

    def _failed(self, call: _Call, failure: ToolFailure) -> ToolMessage:
        log.info(
            "toolmend.langchain: %s call %s failed: kind=%s rule=%s attempts=%d",
            call.name, call.call_id, failure.kind.value, failure.rule, failure.attempts,
        )  # fmt: skip
        self._record(call, failure)
        self._observe(call, lambda: CallRecord.of_failure(failure))
        return failure_message(
            failure,
            call_id=call.call_id or "",
            name=call.name,
            form=self.form,
            effect=(call.effect, self._effect_source(call)),
        )

    def _observe(self, call: _Call, record: Callable[[], CallRecord]) -> None:
        """The finished call to the outcome recorder; nothing is built when none is installed."""
        if recording_outcomes() is None:
            return
        try:
            run = run_of(call.request.runtime, call.request.state)
            observe_call(replace(record(), arguments=call.arguments), run)
        except Exception as exc:
            log.warning("toolmend.langchain: outcome of %s not recorded (%r)", call.name, exc)

    def _effect_source(self, call: _Call) -> str:
        return "declared" if call.name in self.effects else "default"

    def _record(self, call: _Call, failure: ToolFailure) -> None:
        source = self._effect_source(call)
        telemetry.record(failure, effect=call.effect, effect_source=source, form=self.form.value)

    def _returned_failure(
        self, call: _Call, failure: ToolFailure, returned: _Returned
    ) -> ToolMessage:
        """The message the tool returned, as it is, with the core's record of the call."""
        _warn_if_repeated(call, returned.message)
        shown, verdict = failure.as_returned(returned.verdict)
        log.info(
            "toolmend.langchain: %s call %s returned a failure: kind=%s rule=%s attempts=%d",
            call.name, call.call_id, shown.kind.value, shown.rule, shown.attempts,
        )  # fmt: skip
        self._record(call, shown)
        self._observe(call, lambda: CallRecord.of_failure(shown))
        record = failure_record(
            shown,
            form=self.form,
            guidance_in_content=False,
            source=verdict.source,
            effect=(call.effect, self._effect_source(call)),
        )
        failed: ToolMessage = with_record(returned.message, record)
        return failed

    def _succeeded(
        self, call: _Call, message: ToolMessage, history: list[AttemptRecord]
    ) -> ToolMessage:
        """Record a success that took retries or broke its contract."""
        found = None
        if self.contracts is not None:
            message, found = self.contracts.apply(message, call.name, call.arguments, call.request)
        if not history and found is None:
            return message
        if history:
            log.info(
                "toolmend.langchain: %s call %s succeeded after %d attempts",
                call.name, call.call_id, len(history) + 1,
            )  # fmt: skip
        record = CallRecord.of_success(
            call.name,
            history=history,
            review=found,
            effect=call.effect.value,
            effect_source=self._effect_source(call),
            form=self.form.value,
        )
        succeeded: ToolMessage = with_record(message, record.to_dict())
        return succeeded


def _text(result: ToolResult) -> str:
    """The text recorded for a finished call: what the model reads."""
    if isinstance(result, ToolMessage):
        return text_of(result.content) or ""
    return ""


def _replayed(call: _Call, outcome: Recorded, effect_source: str, form: Form) -> ToolMessage:
    """A resumed call answered from its record: the tool did not run again."""
    log.info(
        "toolmend.langchain: %s call %s answered from its record (landed=%s)",
        call.name, call.call_id, outcome.landed,
    )  # fmt: skip
    record = CallRecord(
        tool=call.name,
        effect=call.effect.value,
        effect_source=effect_source,
        form=form.value,
        failed=False,
        attempts=0,
        replayed=True,
        landed=outcome.landed,
    )
    message = ToolMessage(
        content=outcome.text, tool_call_id=call.call_id or "", name=call.name, status="success"
    )
    replayed: ToolMessage = with_record(message, record.to_dict())
    return replayed


def configure(
    *,
    form: Form | str = Form.C3,
    durable: StepStore | None = None,
    **options: Unpack[ToolSideOptions],
) -> ToolSide:
    """Validate the user's settings once, when the middleware or node is built.

    Raises:
        TypeError: An option that :class:`ToolSideOptions` does not name.
    """
    unknown = sorted(set(options) - set(ToolSideOptions.__annotations__))
    if unknown:
        raise TypeError(f"unexpected option(s) for toolmend's tool step: {', '.join(unknown)}")
    retry = options.get("retry")
    contracts = options.get("contracts")
    return ToolSide(
        form=Form.parse(form),
        effects={
            name: Effect.parse(effect) for name, effect in (options.get("effects") or {}).items()
        },
        retry=retry if retry is not None else RetryPolicy(),
        loop_guard=loop_factory(options.get("loop_guard", True)),
        contracts=ContractCheck(contracts) if contracts is not None else None,
        client=options.get("client"),
        verify=dict(options.get("verify") or {}),
        keys=dict(options.get("idempotency_keys") or {}),
        malformed_calls=options.get("malformed_calls", True),
        durable=durable,
    )
