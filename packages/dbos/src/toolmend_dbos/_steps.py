"""Tool calls as DBOS steps: translation between DBOS's step identity and the core.

Inside a workflow a call runs as ``DBOS.run_step`` with DBOS's own retries off
(:func:`step_options`): toolmend retries inside the step, so transient failures
are retried with its backoff and Retry-After, permanent ones are not, and a
write is repeated only when the core allows it.  The step's key is
:func:`toolmend.durable.dbos_key` of the workflow id and step id, and its
"started" record goes to DBOS's system database (the same URL), so a step DBOS
re-runs after a crash is decided by :func:`toolmend.durable.on_replay`.

Each step that runs reports its call to the outcome recorder
(:func:`toolmend.integrations.observe_call`, a no-op unless
:func:`~toolmend.integrations.record_outcomes` installed one) with the workflow
id as the run: inside the step, so a step DBOS replays from its record is not
reported twice.  The adapter does not see a workflow end; the recorder's bound
on runs settles an ended workflow's failures, or the workflow calls
``end_run(DBOS.workflow_id)`` as its last line.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Literal, TypeVar, overload

from dbos import DBOS, StepOptions

from toolmend import Effect, RetryPolicy, ToolFailure
from toolmend.durable import Recorded, SqlStepStore, StepStore, dbos_key, run_durably
from toolmend.integrations import AttemptRecord, CallContext, CallRecord, execute, observe_call

__all__ = ["DurableTools", "step_options", "store_for_url"]

Verify = Callable[[CallContext, BaseException], Any]
T = TypeVar("T")


def _driver(url: str) -> str:
    """SQLAlchemy's URL for DBOS's: Postgres through psycopg 3, as DBOS itself connects."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def store_for_url(url: str, *, capacity: float = 10.0, per_call: float = 0.1) -> SqlStepStore:
    """The step store in the database at ``url`` (DBOS's ``system_database_url``).

    Args:
        url: ``sqlite:///path`` or ``postgresql://...``.
        capacity: Tokens of each tool's shared retry budget.
        per_call: Tokens each finished call adds back.
    """
    import sqlalchemy as sa

    engine = sa.create_engine(_driver(url))
    dialect: Literal["sqlite", "postgres"] = (
        "sqlite" if engine.dialect.name == "sqlite" else "postgres"
    )

    @contextmanager
    def connect() -> Iterator[Any]:
        conn = engine.raw_connection()
        try:
            yield conn
        finally:
            conn.close()

    return SqlStepStore(connect, dialect, capacity=capacity, per_call=per_call)


def step_options(tool: str) -> StepOptions:
    """DBOS step settings for a toolmend tool: DBOS does not retry, toolmend does.

    DBOS's retries would repeat every failure, writes and permanent errors
    included, and reset nothing; toolmend's policy inside the step repeats only
    what is transient and safe.

    Args:
        tool: The step's name.
    """
    return {"name": tool, "retries_allowed": False}


def _portable(failure: ToolFailure) -> ToolFailure:
    """The failure without exception objects, so DBOS can record it as the step's output."""
    history = tuple(dataclasses.replace(r, exception=None) for r in failure.history)
    return dataclasses.replace(failure, exception=None, history=history)


def _record(
    tool: str,
    outcome: Any,
    arguments: Mapping[str, Any],
    history: list[AttemptRecord],
    effect: Effect,
) -> CallRecord:
    """The finished step as the core's call record: its failure, or a success after ``history``."""
    if isinstance(outcome, ToolFailure):
        return CallRecord.of_failure(outcome, effect=effect.value)
    record = CallRecord.of_success(tool, history=history, effect=effect.value, arguments=arguments)
    return dataclasses.replace(record, replayed=True) if isinstance(outcome, Recorded) else record


def _text(value: Any) -> str:
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


class DurableTools:
    """Makes functions into toolmend tools that run as DBOS steps.

    Args:
        system_database_url: DBOS's system database (``sqlite:///...`` or
            ``postgresql://...``); the step records and budgets live there.
        store: A step store to use instead (then ``system_database_url`` is not needed).
        retry: The retry policy inside each step (default: ``RetryPolicy()``).
        capacity: Tokens of each tool's shared retry budget.
        per_call: Tokens each finished call adds back.
    """

    def __init__(
        self,
        system_database_url: str | None = None,
        *,
        store: StepStore | None = None,
        retry: RetryPolicy | None = None,
        capacity: float = 10.0,
        per_call: float = 0.1,
    ) -> None:
        if store is None and system_database_url is None:
            raise TypeError("DurableTools needs system_database_url or store")
        self._url = system_database_url
        self._store = store
        self.retry = retry if retry is not None else RetryPolicy()
        self.capacity = capacity
        self.per_call = per_call

    @property
    def store(self) -> StepStore:
        """The step store, opened on first use."""
        if self._store is None:
            assert self._url is not None
            self._store = store_for_url(self._url, capacity=self.capacity, per_call=self.per_call)
        return self._store

    @overload
    def tool(
        self,
        fn: Callable[..., T],
        *,
        effect: Effect | str = ...,
        verify: Verify | None = ...,
        idempotency_key: str | None = ...,
        name: str | None = ...,
    ) -> Callable[..., T | ToolFailure | Recorded]: ...
    @overload
    def tool(
        self,
        fn: None = None,
        *,
        effect: Effect | str = ...,
        verify: Verify | None = ...,
        idempotency_key: str | None = ...,
        name: str | None = ...,
    ) -> Callable[[Callable[..., T]], Callable[..., T | ToolFailure | Recorded]]: ...
    def tool(
        self,
        fn: Callable[..., Any] | None = None,
        *,
        effect: Effect | str = Effect.UNKNOWN,
        verify: Verify | None = None,
        idempotency_key: str | None = None,
        name: str | None = None,
    ) -> Any:
        """Decorate a sync tool function: inside a DBOS workflow each call is a step.

        Args:
            fn: The tool function (omit to use as ``@tools.tool(...)``).
            effect: Its declared effect (undeclared is a write).
            verify: Tells whether a write landed; asked before a recovered step repeats it.
            idempotency_key: The parameter that receives the step's key; the tool is then
                taken to forward it to a server that deduplicates on it.
            name: The tool's name (default: the function's).
        """
        if fn is None:
            return functools.partial(
                self.tool, effect=effect, verify=verify, idempotency_key=idempotency_key, name=name
            )
        tool = name or fn.__name__
        signature = inspect.signature(fn)
        if idempotency_key is not None and idempotency_key not in signature.parameters:
            raise TypeError(f"{tool} has no parameter {idempotency_key!r} for the idempotency key")
        options: dict[str, Any] = {
            "tool": tool,
            "effect": Effect.parse(effect),
            "verify": verify,
            "honours_key": idempotency_key is not None,
        }

        def shown(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
            bound = signature.bind_partial(*args, **kwargs)
            return {k: v for k, v in bound.arguments.items() if k != idempotency_key}

        def thunk(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Callable[[CallContext], Any]:
            def attempt(ctx: CallContext) -> Any:
                extra = {} if idempotency_key is None else {idempotency_key: ctx.idempotency_key}
                return fn(*args, **kwargs, **extra)

            return attempt

        def step(*args: Any, **kwargs: Any) -> Any:
            workflow = str(DBOS.workflow_id)
            key = dbos_key(workflow, str(DBOS.step_id))
            arguments = shown(args, kwargs)
            history: list[AttemptRecord] = []
            outcome = run_durably(
                thunk(args, kwargs),
                store=self.store,
                key=key,
                text=_text,
                arguments=arguments,
                policy=self.retry,
                history=history,
                **options,
            )
            observe_call(_record(tool, outcome, arguments, history, options["effect"]), workflow)
            return _portable(outcome) if isinstance(outcome, ToolFailure) else outcome

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any | ToolFailure | Recorded:
            if DBOS.workflow_id is None:  # not in a workflow: a plain fail-soft call
                return execute(
                    thunk(args, kwargs),
                    arguments=shown(args, kwargs),
                    policy=self.retry,
                    **options,
                )
            return DBOS.run_step(step_options(tool), step, *args, **kwargs)

        return call
