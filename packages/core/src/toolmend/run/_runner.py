"""Run one logical tool call under a retry policy and return its value or a failure.

The loop mechanics (attempt numbering, waiting, sleeping) are tenacity's from the
first retry on (a first attempt that settles the call runs without it); every
decision is :func:`toolmend.run._retry.decide`.  Cancellation and framework
control-flow exceptions pass through untouched; everything else becomes a
:class:`ToolFailure` value, so a failed tool never raises into the agent.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

import tenacity

from .. import telemetry
from ..classify._raised import (
    CONTROL_FLOW,
    ExceptionInfo,
    classify_exception,
    describe_exception,
    passes_through,
)
from ._effects import Effect
from ._failure import ToolFailure, failure_from_exception
from ._loop import LoopGuard
from ._retry import (
    AttemptRecord,
    CallContext,
    Decision,
    RetryBudget,
    RetryPolicy,
    Stop,
    asleep,
    backoff,
    budget_for,
    call_clock,
    decide,
    now,
    outcome_unknown,
    sleep,
)

__all__ = [
    "CONTROL_FLOW",
    "aexecute",
    "execute",
    "passes_through",
    "verify_async",
    "verify_sync",
]

T = TypeVar("T")
Verify = Callable[[CallContext, BaseException], "Awaitable[bool | None] | bool | None"]

logger = logging.getLogger("toolmend.retry")


class _Retry(Exception):
    """Tells tenacity to run another attempt after ``delay`` seconds."""

    def __init__(self, delay: float) -> None:
        super().__init__(delay)
        self.delay = delay


def _wait(state: tenacity.RetryCallState) -> float:
    outcome = state.outcome
    exc = outcome.exception() if outcome is not None else None
    return exc.delay if isinstance(exc, _Retry) else 0.0


_UUID4 = (0x4000 << 64) | (0x8000 << 48)
_UUID4_CLEAR = ~((0xF000 << 64) | (0xC000 << 48))


def new_key() -> str:
    """A call's idempotency key: ``uuid.uuid4().hex``, without building a ``UUID``.

    The same 122 random bits from ``os.urandom`` with the version and variant bits
    set, in half the time: every call that is given no key makes one.
    """
    bits = int.from_bytes(os.urandom(16), "big")
    return f"{bits & _UUID4_CLEAR | _UUID4:032x}"


class _Call:
    """The state of one logical call across its attempts."""

    def __init__(
        self,
        *,
        tool: str,
        arguments: Mapping[str, Any] | None,
        effect: Effect | str | None,
        policy: RetryPolicy | None,
        honours_key: bool,
        passthrough: tuple[type[BaseException], ...],
        key: str | None,
        history: list[AttemptRecord] | None,
    ) -> None:
        self.sink = history
        self.tool = str(tool)
        self.arguments: Mapping[str, Any] = (
            dict(arguments) if isinstance(arguments, Mapping) else {}
        )
        self.effect = Effect.parse(effect)
        self.policy = policy if policy is not None else RetryPolicy()
        self.budget: RetryBudget = self.policy.budget or budget_for(
            self.tool, self.policy.budget_scope
        )
        self.honours_key = honours_key
        self.passthrough = tuple(passthrough)
        self.key = key or new_key()
        self.started = now()
        self.history: list[AttemptRecord] = []
        self.taken = 0
        self.settled = False
        self.span: telemetry.ToolCall | None = None
        self.waited = 0.0
        """Seconds slept before the current attempt, for its telemetry event."""

    def context(self, attempt: int) -> CallContext:
        ctx = CallContext(self.tool, self.arguments, attempt, self.key)
        self._hook(self.policy.on_attempt, ctx)
        return ctx

    def time_left(self) -> float | None:
        """How long the next attempt of an async call may run (attempt timeout, deadline)."""
        limits = []
        if self.policy.attempt_timeout is not None:
            limits.append(self.policy.attempt_timeout)
        if self.policy.deadline is not None:
            limits.append(max(0.0, self.policy.deadline - (now() - self.started)))
        return min(limits) if limits else None

    def needs_verify(self, info: ExceptionInfo) -> bool:
        return outcome_unknown(info, self.effect, trust_dispatch=self.policy.retry_before_dispatch)

    def step(
        self, ctx: CallContext, exc: BaseException, info: ExceptionInfo, verified: bool | None
    ) -> Decision:
        """Decide after a failed attempt; takes a budget token when it retries."""
        unknown = self.needs_verify(info) and verified is None
        decision = decide(
            info,
            effect=self.effect,
            attempt=ctx.attempt,
            policy=self.policy,
            honours_key=self.honours_key,
            verified=verified,
            elapsed=now() - self.started,
            jitter=backoff(self.policy, ctx.attempt),
        )
        if decision.retry:
            if _bookkeeping(self.budget.acquire, default=False):
                self.taken += 1
            else:
                decision = Decision(False, stop=Stop.BUDGET)
        record = AttemptRecord(
            attempt=ctx.attempt,
            error=cap_line(describe_exception(exc)),
            kind=info.kind,
            reason=info.reason,
            retry_after=info.retry_after,
            before_dispatch=info.before_dispatch,
            outcome_unknown=unknown,
            delay=decision.delay,
            stop=decision.stop,
            exception=exc,
        )
        self.history.append(record)
        if self.span is not None:
            self.span.attempt(record, wait=self.waited)
        self.waited = decision.delay if decision.retry and decision.delay is not None else 0.0
        logger.info(
            "tool %s attempt %d failed: %s (kind=%s, reason=%s)%s",
            self.tool,
            ctx.attempt,
            cap_line(describe_exception(exc)),
            info.kind.value,
            info.reason,
            f"; retrying in {decision.delay:.3f}s" if decision.retry else f"; stop={decision.stop}",
        )
        if decision.retry and decision.delay is not None:
            self._hook(self.policy.on_sleep, ctx, decision.delay)
        return decision

    def succeeded(self, value: Any, loop: LoopGuard | None) -> None:
        """Account for a returned value; a returned ToolFailure (a guarded tool) is a failure."""
        returned = value if isinstance(value, ToolFailure) else None
        self.settled = True
        _bookkeeping(self.budget.settle, succeeded=returned is None, retries=len(self.history))
        self._report()
        if self.span is not None:
            self.span.succeeded_attempt(len(self.history) + 1, wait=self.waited)
            self.span.record(returned, attempts=len(self.history) + 1, effect=self.effect)
        if loop is not None:
            _guarded(loop.after, self.tool, self.arguments, returned)

    def _report(self) -> None:
        if self.sink is not None:
            self.sink.extend(self.history)

    def failed(
        self,
        exc: BaseException,
        info: ExceptionInfo,
        decision: Decision,
        verified: bool | None,
        loop: LoopGuard | None,
    ) -> ToolFailure:
        attempts = len(self.history)
        self.settled = True
        _bookkeeping(self.budget.settle, succeeded=False, retries=attempts - 1)
        failure = failure_from_exception(
            exc,
            info,
            tool=self.tool,
            arguments=self.arguments,
            attempts=attempts,
            stop=decision.stop,
            unknown=self.needs_verify(info) and verified is None,
            history=tuple(self.history),
        )
        self._report()
        if loop is not None:
            _guarded(loop.after, self.tool, self.arguments, failure)
            advised = _guarded(loop.advised, failure)
            failure = advised if isinstance(advised, ToolFailure) else failure
        if self.span is not None and self.span.recording:
            self.span.outcome(self._outcome(info, verified))
            self.span.record(failure, effect=self.effect)
        self._hook(self.policy.on_give_up, failure)
        return failure

    def _outcome(self, info: ExceptionInfo, verified: bool | None) -> str:
        """Whether the failed call took effect, whatever the tool's declared effect."""
        if verified is not None:
            return "landed" if verified else "not_landed"
        trust = self.policy.retry_before_dispatch
        return (
            "unknown" if outcome_unknown(info, Effect.WRITE, trust_dispatch=trust) else "not_landed"
        )

    def interrupted(self) -> None:
        """The call was cancelled or interrupted: its retry tokens go back to the budget."""
        if not self.settled and self.taken:
            self.settled = True
            _bookkeeping(self.budget.refund, self.taken)

    @staticmethod
    def _hook(hook: Callable[..., Any] | None, *args: Any) -> None:
        if hook is not None:
            _guarded(hook, *args)


def cap_line(text: str, limit: int = 300) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _bookkeeping(fn: Callable[..., Any], *args: Any, default: Any = None, **kwargs: Any) -> Any:
    """Run a budget operation that must not decide the call's fate: log what it raises.

    A budget may live in a database (``SharedRetryBudget``).  When that database
    fails after the tool returned, the call has still happened: raising would make
    a durable runner read the effect as interrupted.  A failed ``acquire`` counts as
    no token (no retry), the side that cannot duplicate an effect; a failed settle
    or refund only leaves the bucket a little off.
    """
    try:
        return fn(*args, **kwargs)
    except Exception as exc:
        logger.warning(
            "retry budget %s failed (%s); %s",
            getattr(fn, "__name__", fn),
            cap_line(describe_exception(exc)),
            "no retry" if default is False else "ignored",
        )
        return default


def _guarded(fn: Callable[..., Any], *args: Any) -> Any:
    """Call user or guard code that must not break the tool call; log what it raises."""
    try:
        return fn(*args)
    except Exception:
        logger.exception("toolmend hook %r raised; ignored", getattr(fn, "__name__", fn))
        return None


def verify_sync(verify: Verify | None, ctx: CallContext, exc: BaseException) -> bool | None:
    """Ask a verify hook whether a failed write landed; ``None`` when it cannot tell.

    A hook that raises, or returns anything but a bool, cannot tell: the call is then
    treated as possibly landed, the side that cannot duplicate an effect.  An awaitable
    in a sync call is closed unawaited, for the same reason.

    Args:
        verify: The hook, if any.
        ctx: The call's context.
        exc: What the attempt raised (``WorkerStopped`` for a replayed step).
    """
    if verify is None:
        return None
    answer = _guarded(verify, ctx, exc)
    if inspect.isawaitable(answer):
        logger.warning("verify hook returned an awaitable in a sync call; treated as unknown")
        close = getattr(answer, "close", None)
        if callable(close):
            close()
        return None
    return answer if isinstance(answer, bool) else None


async def verify_async(verify: Verify | None, ctx: CallContext, exc: BaseException) -> bool | None:
    """The async twin of :func:`verify_sync`: the hook may be sync or async.

    Args:
        verify: The hook, if any.
        ctx: The call's context.
        exc: What the attempt raised.
    """
    if verify is None:
        return None
    answer = _guarded(verify, ctx, exc)
    if inspect.isawaitable(answer):
        try:
            answer = await answer
        except Exception:
            logger.exception("verify hook raised; outcome treated as unknown")
            return None
    return answer if isinstance(answer, bool) else None


def _before(loop: LoopGuard | None, call: _Call) -> ToolFailure | None:
    """The loop guard's refusal of this call, if any, recorded on the call's span."""
    if loop is None:
        return None
    blocked = _guarded(loop.before, call.tool, call.arguments)
    if not isinstance(blocked, ToolFailure):
        return None
    if call.span is not None:
        call.span.record(blocked, effect=call.effect)
    return blocked


def execute(
    thunk: Callable[[CallContext], T],
    *,
    tool: str,
    arguments: Mapping[str, Any] | None = None,
    effect: Effect | str = "unknown",
    policy: RetryPolicy | None = None,
    loop: LoopGuard | None = None,
    verify: Verify | None = None,
    honours_key: bool = False,
    passthrough: tuple[type[BaseException], ...] = (),
    key: str | None = None,
    history: list[AttemptRecord] | None = None,
) -> T | ToolFailure:
    """Run ``thunk`` (one attempt per call) until it succeeds or retrying stops.

    Returns the thunk's value unchanged, or a :class:`ToolFailure`.  ``key``
    fixes the idempotency key (e.g. derived from the framework's call id);
    otherwise one is generated for this logical call.  ``history``, when given,
    receives a record of every failed attempt (with what it raised), also when
    a retry then succeeded, for the caller's report: a call that succeeded took
    ``len(history) + 1`` attempts.

    Args:
        thunk: One attempt; receives the call context.
        tool: The tool's name.
        arguments: The call's arguments, for reports, the loop guard and verify.
        effect: The tool's declared effect: what decides whether a repeat is safe.
        policy: The retry policy (default: ``RetryPolicy()``).
        loop: The run's loop guard, if any.
        verify: The hook that tells whether a failed write landed.
        honours_key: Whether the tool forwards the idempotency key to a deduplicating server.
        passthrough: Exceptions that propagate untouched (a framework's control flow).
        key: The idempotency key (default: one generated for this call).
        history: Receives a record of every failed attempt.
    """
    call = _Call(
        tool=tool,
        arguments=arguments,
        effect=effect,
        policy=policy,
        honours_key=honours_key,
        passthrough=passthrough,
        key=key,
        history=history,
    )
    with telemetry.runner_call(call.tool, call.arguments) as span:
        call.span = span
        blocked = _before(loop, call)
        if blocked is not None:
            return blocked
        with call_clock():
            call.started = now()
            return _run_sync(thunk, call, loop, verify)


def _after_failure(
    call: _Call,
    ctx: CallContext,
    exc: BaseException,
    info: ExceptionInfo,
    verified: bool | None,
    loop: LoopGuard | None,
) -> ToolFailure | _Retry:
    """After a failed attempt: the wait before the next one, or the call's failure."""
    decision = call.step(ctx, exc, info, verified)
    if decision.retry and decision.delay is not None:
        return _Retry(decision.delay)
    return call.failed(exc, info, decision, verified, loop)


def _retrying(pause: Callable[[float], Any]) -> dict[str, Any]:
    """Tenacity's settings from the first retry on: every decision is the runner's."""
    return {
        "retry": tenacity.retry_if_exception_type(_Retry),
        "wait": _wait,
        "stop": tenacity.stop_never,
        "sleep": pause,
        "reraise": True,
    }


def _once_sync(
    thunk: Callable[[CallContext], T],
    call: _Call,
    loop: LoopGuard | None,
    verify: Verify | None,
    number: int,
) -> T | ToolFailure | _Retry:
    """Attempt number ``number``: its value or failure, or the wait before the next."""
    ctx = call.context(number)
    try:
        value = thunk(ctx)
    except BaseException as exc:
        if passes_through(exc, call.passthrough):
            raise
        info = classify_exception(exc)
        verified = verify_sync(verify, ctx, exc) if call.needs_verify(info) else None
        return _after_failure(call, ctx, exc, info, verified, loop)
    call.succeeded(value, loop)
    return value


def _run_sync(
    thunk: Callable[[CallContext], T], call: _Call, loop: LoopGuard | None, verify: Verify | None
) -> T | ToolFailure:
    """The first attempt runs bare; tenacity's loop starts only when it asks for a retry.

    Most calls succeed at once, and building and stepping a ``Retrying`` costs
    more than the rest of the runner on that path.
    """
    try:
        outcome = _once_sync(thunk, call, loop, verify, 1)
        if not isinstance(outcome, _Retry):
            return outcome
        sleep(outcome.delay)
        retrying = tenacity.Retrying(**_retrying(sleep))
        for attempt in retrying:
            with attempt:
                number = attempt.retry_state.attempt_number + 1
                outcome = _once_sync(thunk, call, loop, verify, number)
                if isinstance(outcome, _Retry):
                    raise outcome
                return outcome
    finally:
        call.interrupted()
    raise AssertionError("unreachable: tenacity stops only by returning")  # pragma: no cover


async def aexecute(
    thunk: Callable[[CallContext], Awaitable[T]],
    *,
    tool: str,
    arguments: Mapping[str, Any] | None = None,
    effect: Effect | str = "unknown",
    policy: RetryPolicy | None = None,
    loop: LoopGuard | None = None,
    verify: Verify | None = None,
    honours_key: bool = False,
    passthrough: tuple[type[BaseException], ...] = (),
    key: str | None = None,
    history: list[AttemptRecord] | None = None,
) -> T | ToolFailure:
    """The async twin of :func:`execute`; ``verify`` may be sync or async.

    Args:
        thunk: One attempt; receives the call context.
        tool: The tool's name.
        arguments: The call's arguments, for reports, the loop guard and verify.
        effect: The tool's declared effect: what decides whether a repeat is safe.
        policy: The retry policy (default: ``RetryPolicy()``).
        loop: The run's loop guard, if any.
        verify: The hook that tells whether a failed write landed.
        honours_key: Whether the tool forwards the idempotency key to a deduplicating server.
        passthrough: Exceptions that propagate untouched (a framework's control flow).
        key: The idempotency key (default: one generated for this call).
        history: Receives a record of every failed attempt.
    """
    call = _Call(
        tool=tool,
        arguments=arguments,
        effect=effect,
        policy=policy,
        honours_key=honours_key,
        passthrough=passthrough,
        key=key,
        history=history,
    )
    with telemetry.runner_call(call.tool, call.arguments) as span:
        call.span = span
        blocked = _before(loop, call)
        if blocked is not None:
            return blocked
        with call_clock():
            call.started = now()
            return await _run_async(thunk, call, loop, verify)


async def _bounded(work: Awaitable[T], limit: float | None) -> T:
    """Await ``work``, cut after ``limit`` seconds (asyncio): a timeout after the send."""
    if limit is None:
        return await work
    timeout = asyncio.timeout(limit)
    try:
        async with timeout:
            return await work
    except TimeoutError:
        if timeout.expired():
            raise TimeoutError(f"attempt timed out after {limit:.1f} s") from None
        raise


async def _once_async(
    thunk: Callable[[CallContext], Awaitable[T]],
    call: _Call,
    loop: LoopGuard | None,
    verify: Verify | None,
    number: int,
) -> T | ToolFailure | _Retry:
    """The async twin of :func:`_once_sync`."""
    ctx = call.context(number)
    try:
        value = await _bounded(thunk(ctx), call.time_left())
    except BaseException as exc:
        if passes_through(exc, call.passthrough):
            raise
        info = classify_exception(exc)
        verified = await verify_async(verify, ctx, exc) if call.needs_verify(info) else None
        return _after_failure(call, ctx, exc, info, verified, loop)
    call.succeeded(value, loop)
    return value


async def _run_async(
    thunk: Callable[[CallContext], Awaitable[T]],
    call: _Call,
    loop: LoopGuard | None,
    verify: Verify | None,
) -> T | ToolFailure:
    """The async twin of :func:`_run_sync`: tenacity only from the first retry on."""
    try:
        outcome = await _once_async(thunk, call, loop, verify, 1)
        if not isinstance(outcome, _Retry):
            return outcome
        await asleep(outcome.delay)
        retrying = tenacity.AsyncRetrying(**_retrying(asleep))
        async for attempt in retrying:
            with attempt:
                number = attempt.retry_state.attempt_number + 1
                outcome = await _once_async(thunk, call, loop, verify, number)
                if isinstance(outcome, _Retry):
                    raise outcome
                return outcome
    finally:
        call.interrupted()
    raise AssertionError("unreachable: tenacity stops only by returning")  # pragma: no cover
