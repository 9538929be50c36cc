"""When to repeat a failed call, how long to wait, and when to stop.

The decision is a pure function of the failure, the tool's declared effect and
the time and attempts used; the loop that applies it lives in ``execute``.  A
retry must be both useful (the failure is transient) and safe (repeating cannot
duplicate a side effect); a shared per-tool budget keeps a sustained outage
from turning every call into several.
"""

from __future__ import annotations

import contextvars
import enum
import math
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from .._types import Kind
from ..classify._raised import ExceptionInfo
from ._attempts import STOP_SENTENCES, AttemptRecord, Stop, outcome_unknown
from ._effects import Effect
from ._failure import ToolFailure

__all__ = [
    "STOP_SENTENCES",
    "AttemptRecord",
    "BudgetScope",
    "CallContext",
    "Decision",
    "RetryBudget",
    "RetryPolicy",
    "SleepLog",
    "Stop",
    "backoff",
    "budget_for",
    "decide",
    "outcome_unknown",
    "reset_budgets",
    "run_budgets",
    "testing",
]


@dataclass(frozen=True, slots=True)
class CallContext:
    """One attempt of one logical call, as the tool's thunk sees it.

    ``idempotency_key`` is generated once per logical call and is the same on
    every attempt, so a tool that forwards it lets the server deduplicate.

    Attributes:
        tool: The tool's name.
        arguments: The call's arguments.
        attempt: Which attempt this is (1 for the first).
        idempotency_key: The same on every attempt of one logical call.
    """

    tool: str
    arguments: Mapping[str, Any]
    attempt: int
    idempotency_key: str


class RetryBudget:
    """A per-tool token bucket shared by every call of that tool.

    Each retry takes a token; each logical call adds ``per_call`` tokens, and a
    call that succeeded after retrying gives its tokens back, since those
    retries paid off.  So retries are free while they work, and during a
    sustained outage they stop after ``capacity`` plus ``per_call`` per call.

    Args:
        capacity: Tokens the bucket holds at most (and starts with).
        per_call: Tokens each logical call adds.
    """

    def __init__(self, capacity: float = 10.0, per_call: float = 0.1) -> None:
        if capacity < 0 or per_call < 0:
            raise ValueError("capacity and per_call must be >= 0")
        self.capacity = float(capacity)
        self.per_call = float(per_call)
        self._tokens = float(capacity)
        self._lock = threading.Lock()

    @property
    def available(self) -> float:
        """Tokens left in the budget now."""
        with self._lock:
            return self._tokens

    def acquire(self) -> bool:
        """Take one token for a retry; ``False`` when the budget is spent."""
        with self._lock:
            if self._tokens < 1.0:
                return False
            self._tokens -= 1.0
            return True

    def refund(self, tokens: int) -> None:
        """Give back tokens taken for retries that never ran (the call was cancelled).

        Args:
            tokens: How many tokens to give back.
        """
        with self._lock:
            self._tokens = min(self.capacity, self._tokens + float(tokens))

    def settle(self, *, succeeded: bool, retries: int) -> None:
        """Account for one finished logical call that used ``retries`` retries.

        Args:
            succeeded: Whether the call succeeded in the end.
            retries: How many retries it took.
        """
        with self._lock:
            refund = float(retries) if succeeded else 0.0
            self._tokens = min(self.capacity, self._tokens + self.per_call + refund)

    def __repr__(self) -> str:
        return f"RetryBudget(capacity={self.capacity}, per_call={self.per_call})"


class BudgetScope(enum.StrEnum):
    """Which calls share one retry budget.

    A budget exists to stop a retry storm against a failing dependency: during an
    outage every call fails, and unbounded retries multiply the load that keeps it
    down.  The default, :attr:`PROCESS`, is the scope of gRPC's retry throttling and
    Finagle's retry budget (one bucket per client process and destination): it
    protects the dependency, at the price that a burst of concurrent calls that all
    fail once at the same instant looks like the start of an outage, and some of
    their retries are refused (50 concurrent runs that each hit one timeout get 13
    of 50 retries with the default bucket of 10 tokens).  Deployments that run many
    independent agents against a healthy backend can choose :attr:`RUN`; under a
    durable store the process scope is the store's, shared by every worker.
    """

    PROCESS = "process"
    """One budget per tool name in this process (under a durable store: in its database)."""
    RUN = "run"
    """One budget per tool name inside the innermost :func:`run_budgets` block (a run).

    Outside such a block it is the process's.
    """
    CALL = "call"
    """No shared budget: each logical call is bounded by its policy's attempts alone."""

    @classmethod
    def parse(cls, value: BudgetScope | str) -> BudgetScope:
        """The scope from the enum or its value; an unknown value is an error at configuration."""
        return value if isinstance(value, BudgetScope) else cls(str(value).strip().lower())


_budgets_lock = threading.Lock()
_run_budgets: contextvars.ContextVar[dict[str, RetryBudget] | None] = contextvars.ContextVar(
    "toolmend_run_budgets", default=None
)


def budget_for(tool: str, scope: BudgetScope = BudgetScope.PROCESS) -> RetryBudget:
    """The budget of a tool in ``scope``, used when a policy names none.

    Inside :func:`testing` the process registry is a fresh one, so tests that share
    tool names cannot drain each other's budgets.

    Args:
        tool: The tool's name.
        scope: Which calls share the budget.
    """
    if scope is BudgetScope.CALL:
        return RetryBudget()
    with _budgets_lock:
        run = _run_budgets.get() if scope is BudgetScope.RUN else None
        budgets = run if run is not None else _state.budgets
        budget = budgets.get(tool)
        if budget is None:
            budget = budgets[tool] = RetryBudget()
        return budget


@contextmanager
def run_budgets() -> Iterator[None]:
    """Give the calls inside the block budgets of their own (``BudgetScope.RUN``).

    Wrap one agent run in it (its async tasks inherit the context); policies with
    ``budget_scope="run"`` then share a budget per tool within the run only.
    """
    token = _run_budgets.set({})
    try:
        yield
    finally:
        _run_budgets.reset(token)


def reset_budgets() -> None:
    """Forget every budget of the current registry (tests, or after an outage is over)."""
    with _budgets_lock:
        _state.budgets.clear()


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How many attempts, how long to wait between them, and for how long at most.

    The wait before retry *n* is full-jitter exponential backoff,
    ``uniform(0, min(cap, base * 2**(n-1)))``, unless the failure named a
    Retry-After, which is honoured exactly.  A wait that would not fit in
    what is left of ``deadline`` (or exceed ``max_wait`` when there is no
    deadline) is not slept: the call stops and reports the hint instead.

    Attributes:
        attempts: Attempts at most, the first included.
        base: Seconds of the first backoff step.
        cap: Seconds a backoff step may reach at most.
        deadline: Seconds the whole call may take (``None``: no deadline).
        budget: The tool's retry budget (default: one shared per tool name).
        on_attempt: Called before each attempt.
        on_sleep: Called before each wait, with its seconds.
        on_give_up: Called with the failure when retrying stops.
        max_wait: Seconds one wait may take when there is no deadline.
        budget_scope: Which calls share the default budget (see :class:`BudgetScope`);
            ignored when ``budget`` is given.
    """

    attempts: int = 3
    base: float = 0.5
    cap: float = 8.0
    deadline: float | None = 30.0
    budget: RetryBudget | None = None
    on_attempt: Callable[[CallContext], None] | None = None
    on_sleep: Callable[[CallContext, float], None] | None = None
    on_give_up: Callable[[ToolFailure], None] | None = None
    retry_before_dispatch: bool = False
    """Trust the exception: a failure that never left the client (a refused connection,
    a failed DNS lookup) or a refusal (a 4xx or 503 status, a rejected input or
    permission) means nothing happened, so a write may be repeated after the first and
    a durable step is recorded as not run.

    Off by default, because a Python tool may have done anything before the exception
    it raises or the error it returns (written a row, then failed to notify): without
    it, every failure of a write may have taken effect.  Opt in only for a tool that
    is one request.
    """
    max_wait: float = 60.0
    budget_scope: BudgetScope = BudgetScope.PROCESS
    attempt_timeout: float | None = None
    """Seconds one attempt of an async call may run before it counts as timed out.

    Async calls are also cut at ``deadline``, attempt included.  A sync call cannot
    be interrupted: its deadline bounds the waits between attempts, not an attempt.
    """

    def __post_init__(self) -> None:
        object.__setattr__(self, "budget_scope", BudgetScope.parse(self.budget_scope))
        if self.attempts < 1:
            raise ValueError("attempts must be >= 1")
        if self.attempt_timeout is not None and self.attempt_timeout <= 0:
            raise ValueError("attempt_timeout must be > 0 or None")
        if self.base < 0 or self.cap < 0 or self.max_wait < 0:
            raise ValueError("base, cap and max_wait must be >= 0")
        if self.deadline is not None and self.deadline < 0:
            raise ValueError("deadline must be >= 0 or None")

    @classmethod
    def none(cls) -> RetryPolicy:
        """One attempt, no automatic retry."""
        return cls(attempts=1)


@dataclass(slots=True)
class SleepLog:
    """Sleeps requested while the testing switch was on, in seconds.

    Attributes:
        sleeps: Each wait, in the order asked.
    """

    sleeps: list[float] = field(default_factory=list)

    @property
    def total(self) -> float:
        """Seconds slept in all."""
        return sum(self.sleeps)


class _Testing:
    def __init__(self) -> None:
        self.log: SleepLog | None = None
        self.rng = random.Random()
        self.budgets: dict[str, RetryBudget] = {}
        self.lock = threading.Lock()


_state = _Testing()


@contextmanager
def testing(enabled: bool = True, *, seed: int | None = None) -> Iterator[SleepLog]:  # noqa: PT028
    """Record sleeps instead of sleeping, and make time virtual, for tests and benchmarks.

    While enabled, a retry's wait is appended to the yielded log and the clock
    that the deadline reads is the sum of the sleeps recorded by that call, so
    deadline behaviour is exact and instant, also for concurrent calls.  The
    per-tool budgets start fresh inside the block and are restored after it.
    ``seed`` makes the jitter reproducible.  Process-wide, like
    ``stamina.set_testing``.

    Args:
        enabled: Whether the switch is on inside the block.
        seed: Seeds the jitter.
    """
    log = SleepLog()
    with _state.lock, _budgets_lock:
        previous = (_state.log, _state.rng, _state.budgets)
        _state.log = log if enabled else None
        if seed is not None:
            _state.rng = random.Random(seed)
        if enabled:
            _state.budgets = {}
    try:
        yield log
    finally:
        with _state.lock, _budgets_lock:
            _state.log, _state.rng, _state.budgets = previous


testing.__test__ = False  # type: ignore[attr-defined]  # not a test for pytest to collect


# Under testing(), each call keeps its own virtual clock, so concurrent calls do not
# age each other; outside a call, the clock is the sum of every recorded sleep.
_call_clock: contextvars.ContextVar[list[float] | None] = contextvars.ContextVar(
    "toolmend_call_clock", default=None
)


@contextmanager
def call_clock() -> Iterator[None]:
    """Give the enclosed call its own virtual clock while :func:`testing` is on."""
    token = _call_clock.set([0.0])
    try:
        yield
    finally:
        _call_clock.reset(token)


def now() -> float:
    """Monotonic seconds; virtual (the call's recorded sleeps) under :func:`testing`."""
    log = _state.log
    if log is None:
        return time.monotonic()
    own = _call_clock.get()
    return own[0] if own is not None else log.total


def _record(log: SleepLog, seconds: float) -> None:
    log.sleeps.append(seconds)
    own = _call_clock.get()
    if own is not None:
        own[0] += seconds


def sleep(seconds: float) -> None:
    """Sleep, or record the sleep under :func:`testing`."""
    log = _state.log
    if log is not None:
        _record(log, seconds)
    elif seconds > 0:
        time.sleep(seconds)


async def asleep(seconds: float) -> None:
    """The async twin of :func:`sleep`; always yields to the event loop."""
    import asyncio

    log = _state.log
    if log is not None:
        _record(log, seconds)
        await asyncio.sleep(0)
    else:
        await asyncio.sleep(max(0.0, seconds))


def backoff(policy: RetryPolicy, retry: int) -> float:
    """Full-jitter exponential backoff before retry number ``retry`` (1-based)."""
    ceiling = min(policy.cap, policy.base * (2.0 ** max(0, retry - 1)))
    return _state.rng.uniform(0.0, ceiling) if ceiling > 0 else 0.0


@dataclass(frozen=True, slots=True)
class Decision:
    """Retry after ``delay`` seconds, or stop for ``stop``."""

    retry: bool
    delay: float | None = None
    stop: Stop | None = None


# A response with one of these statuses means the request was refused, not applied.
def decide(
    info: ExceptionInfo,
    *,
    effect: Effect,
    attempt: int,
    policy: RetryPolicy,
    honours_key: bool,
    verified: bool | None,
    elapsed: float,
    jitter: float,
) -> Decision:
    """Whether to retry after failed attempt number ``attempt``; pure.

    ``verified`` is the verify hook's answer (``True`` landed, ``False`` did not
    land, ``None`` unknown or not asked); ``jitter`` is the backoff drawn for
    this retry, used when the failure gave no Retry-After.
    """
    if verified is True:
        return Decision(False, stop=Stop.LANDED)
    if info.kind is not Kind.TRANSIENT:
        return Decision(False, stop=Stop.KIND)
    safe = (
        effect.repeatable
        or honours_key
        or verified is False
        or (info.before_dispatch and policy.retry_before_dispatch)
    )
    if not safe:
        return Decision(False, stop=Stop.UNSAFE)
    if attempt >= policy.attempts:
        return Decision(False, stop=Stop.ATTEMPTS)
    delay = info.retry_after if info.retry_after is not None else jitter
    if not math.isfinite(delay) or delay < 0:
        delay = jitter
    limit = policy.max_wait
    if policy.deadline is not None:
        limit = min(limit, policy.deadline - elapsed)
    if delay > limit or limit <= 0:
        return Decision(False, stop=Stop.DEADLINE)
    return Decision(True, delay=delay)
