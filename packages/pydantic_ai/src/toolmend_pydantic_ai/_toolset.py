"""``RecoveringToolset``: a Pydantic AI toolset whose tool calls run under the core.

Pydantic AI's extension point for changing how tools run is a
``WrapperToolset`` that overrides ``call_tool``; this is one.  Each call runs
through ``toolmend.integrations.aexecute`` with the tool's effect (declared,
or from trusted MCP annotations), the retry policy, the run's loop guard and,
for a write, a verify hook; a success is checked against its outcome contract;
a failure reaches the model in Pydantic AI's vocabulary (:mod:`._delivery`).
Inside a DBOS workflow, with a step store, each call is a DBOS step keyed by
it (:mod:`._durable`).

What the wrapped toolset raises on purpose is Pydantic AI's control flow and
passes untouched: ``ModelRetry`` and ``ToolFailed`` from a function tool (its
author chose them), deferrals and approvals.  An MCP toolset is different: it
raises ``ModelRetry`` for *every* error result and protocol error, so there
those are the failed results they stand for, classified like any other.

Each call the core finished goes to the outcome recorder
(:func:`toolmend.integrations.observe_call`, a no-op unless one is installed)
with the run's ``run_id`` as the run; the run's own copy of the toolset (from
:meth:`RecoveringToolset.for_run`) ends the run when the agent leaves it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Collection, Hashable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any, Unpack

from pydantic_ai import ModelRetry, RunContext, ToolFailed, WrapperToolset
from pydantic_ai.exceptions import ApprovalRequired, CallDeferred
from pydantic_ai.tools import AgentDepsT
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
from pydantic_core import to_jsonable_python

from toolmend import Effect, ToolFailure, classify_result, telemetry
from toolmend.contracts import review
from toolmend.durable import Recorded, StepStore, arun_durably
from toolmend.integrations import (
    AttemptRecord,
    CallContext,
    CallRecord,
    Recovery,
    RecoveryOptions,
    ResultFailed,
    RunRegistry,
    aexecute,
    end_run,
    observe_call,
    scoped,
)

from . import _durable
from ._arguments import CheckedArguments
from ._delivery import delivered

__all__ = ["RecoveringToolset", "Verify", "idempotency_key"]

log = logging.getLogger("toolmend.pydantic_ai")

Verify = Callable[[CallContext, BaseException], "bool | Awaitable[bool | None] | None"]
"""``(call, exc) -> True`` (it landed) / ``False`` (it did not: safe to repeat) / ``None``."""

_PASSTHROUGH: tuple[type[BaseException], ...] = (
    ModelRetry,
    ToolFailed,
    CallDeferred,
    ApprovalRequired,
)
_RUNS = RunRegistry()
_CALL: ContextVar[CallContext | None] = ContextVar("toolmend_pydantic_ai_call", default=None)


def idempotency_key() -> str | None:
    """The idempotency key of the tool call in progress (``None`` outside one).

    The same on every attempt of one call, and inside a DBOS workflow the same
    on every recovery of its step.  A tool listed in ``keyed=`` sends it to a
    server that deduplicates on it (an ``Idempotency-Key`` header), which makes
    its repeats safe.
    """
    call = _CALL.get()
    return call.idempotency_key if call is not None else None


@dataclass(frozen=True, slots=True)
class _Answer:
    """A failure as the model will read it; plain data, so a DBOS step can record it."""

    retry: bool
    text: str

    def exception(self) -> ModelRetry | ToolFailed:
        return ModelRetry(self.text) if self.retry else ToolFailed(self.text)


def _is_mcp(toolset: Any) -> bool:
    """Whether the tool comes from Pydantic AI's MCP toolset (or a durable wrapper of one)."""
    try:
        from pydantic_ai.mcp import MCPToolset
    except ImportError:  # the [mcp] extra is not installed
        return False
    seen = 0
    while toolset is not None and seen < 8:
        if isinstance(toolset, MCPToolset):
            return True
        toolset = getattr(toolset, "wrapped", None)
        seen += 1
    return False


def _text(value: Any) -> str:
    """A result as the text recorded for a durable step."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, default=repr)
    except (TypeError, ValueError):
        return repr(value)


def _run_of(ctx: RunContext[Any]) -> Hashable:
    """The run's id for the outcome recorder: its ``run_id``, else the identity of its messages."""
    return ctx.run_id or f"run-{id(ctx.messages)}"


def _value(result: Any) -> Any:
    """The result as the JSON value (or text) a contract reads, as Pydantic AI serializes it."""
    return result if isinstance(result, str) else to_jsonable_python(result)


class RecoveringToolset(WrapperToolset[AgentDepsT]):
    """Wrap a Pydantic AI toolset so that its tool calls recover.

    ``Agent(model, toolsets=[RecoveringToolset(toolset, effects={"pay": "write"})])``;
    any toolset: a ``FunctionToolset``, an ``MCPToolset``, a combined one.

    - A transient failure of a read-only or idempotent tool is retried inside the
      call under ``retry`` (backoff, Retry-After, the call's deadline, the tool's
      retry budget); a write is never repeated blindly.
    - A failure the model can fix by changing the call is a ``ModelRetry`` with the
      true cause and the next step; any other is a ``ToolFailed`` (a failed result
      the model reads, spending no retry): unrecoverable, transient once toolmend's
      retries are spent, or a write whose outcome is unknown (told to check first).
    - Arguments that fail the tool's schema are a ``ModelRetry`` naming what to change.
    - The run's loop guard refuses exact repeats of failed calls.
    - A result that violates its outcome contract reaches the model as the receipt.

    Args:
        wrapped: The toolset to wrap.
        verify: Tool name to ``(call, exc) -> bool | None`` (sync or async), asked
            before a write whose outcome is unknown would be repeated, and when a
            DBOS step is recovered after a crash.
        keyed: Names of the tools that send :func:`idempotency_key` to a server that
            deduplicates on it; their repeats count as safe.
        durable: A step store, or DBOS's ``system_database_url``: inside a DBOS
            workflow each call then runs as a DBOS step keyed by the workflow and
            step, so a recovered step never repeats an effect (needs the ``[dbos]``
            extra for a URL).
        **options: ``effects``, ``trust_annotations``, ``retry``, ``contracts`` and
            ``form`` (:class:`toolmend.integrations.RecoveryOptions`): tool name to
            effect (undeclared: a write), whether MCP annotations may stand in for
            an undeclared effect (default ``False``), the ``toolmend.RetryPolicy``
            (``None``: never retry), the outcome contracts, the delivery form.
    """

    def __init__(
        self,
        wrapped: AbstractToolset[AgentDepsT],
        *,
        verify: Mapping[str, Verify] | None = None,
        keyed: Collection[str] = (),
        durable: StepStore | str | None = None,
        **options: Unpack[RecoveryOptions],
    ) -> None:
        super().__init__(wrapped)
        self.recovery = Recovery.of(**options)
        self.verify = dict(verify or {})
        self.keyed = frozenset(keyed)
        self.durable = durable
        self._store: StepStore | None = None
        self._names: list[str] = []
        self._run: Hashable | None = None
        """Set on a run's own copy (:meth:`for_run`): the run it ends on exit."""

    # -- the wrapper's own copies: dataclasses.replace would drop the options ----

    def _rewrapped(
        self, wrapped: AbstractToolset[AgentDepsT], *, always: bool = False
    ) -> RecoveringToolset[AgentDepsT]:
        if wrapped is self.wrapped and not always:
            return self
        copy = RecoveringToolset.__new__(RecoveringToolset)
        copy.__dict__.update(self.__dict__)
        copy.wrapped = wrapped
        return copy

    async def for_run(self, ctx: RunContext[AgentDepsT]) -> AbstractToolset[AgentDepsT]:
        """The wrapped toolset's per-run instance, wrapped the same way, as the run's own copy.

        The copy knows its run, so leaving it (the agent does at the run's end) ends
        the run for the outcome recorder.

        Args:
            ctx: The run's context.
        """
        copy = self._rewrapped(await self.wrapped.for_run(ctx), always=True)
        copy._run = _run_of(ctx)
        return copy

    async def __aexit__(self, *args: Any) -> bool | None:
        """Leave the wrapped toolset; a run's own copy ends its run for the outcome recorder.

        Args:
            *args: The exception, if any, as ``__aexit__`` receives it.
        """
        try:
            return await super().__aexit__(*args)
        finally:
            if self._run is not None:
                end_run(self._run)

    async def for_run_step(self, ctx: RunContext[AgentDepsT]) -> AbstractToolset[AgentDepsT]:
        """The wrapped toolset's per-step instance, wrapped the same way.

        Args:
            ctx: The run's context.
        """
        return self._rewrapped(await self.wrapped.for_run_step(ctx))

    def visit_and_replace(
        self, visitor: Callable[[AbstractToolset[AgentDepsT]], AbstractToolset[AgentDepsT]]
    ) -> AbstractToolset[AgentDepsT]:
        """The wrapped toolset with ``visitor`` applied (how ``DBOSAgent`` swaps in its steps).

        Args:
            visitor: Pydantic AI's replacement function.
        """
        return self._rewrapped(self.wrapped.visit_and_replace(visitor))

    # -- tools and calls ---------------------------------------------------------

    async def get_tools(self, ctx: RunContext[AgentDepsT]) -> dict[str, ToolsetTool[AgentDepsT]]:
        """The wrapped toolset's tools, their argument failures read as the core's.

        An MCP tool's arguments are checked against its input schema before they are sent.

        Args:
            ctx: The run's context.
        """
        tools = await self.wrapped.get_tools(ctx)
        self._names = list(tools)
        return {
            name: replace(tool, args_validator=self._validator(name, tool))
            for name, tool in tools.items()
        }

    def _validator(self, name: str, tool: ToolsetTool[AgentDepsT]) -> CheckedArguments:
        """The tool's validator, and for an MCP tool (validated by its server) its schema."""
        schema = tool.tool_def.parameters_json_schema if _is_mcp(tool.toolset) else None
        return CheckedArguments(name, tool.args_validator, self.recovery.form, schema)

    def effect(self, name: str, tool: ToolsetTool[Any] | None = None) -> tuple[Effect, str]:
        """The effect of tool ``name`` and where it came from (``declared``, ``annotations``...).

        Args:
            name: The tool's name.
            tool: The tool, whose MCP annotations count when they are trusted.
        """
        metadata = tool.tool_def.metadata if tool is not None else None
        annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
        return self.recovery.effect(name, annotations=annotations)

    @property
    def store(self) -> StepStore | None:
        """The step store of durable runs, opened on first use (``None``: not durable)."""
        if self._store is None and self.durable is not None:
            self._store = _durable.resolve_store(self.durable)
        return self._store

    async def call_tool(
        self,
        name: str,
        tool_args: dict[str, Any],
        ctx: RunContext[AgentDepsT],
        tool: ToolsetTool[AgentDepsT],
    ) -> Any:
        """Run the call on the wrapped toolset under the core; see the class.

        Args:
            name: The tool's name.
            tool_args: The validated arguments.
            ctx: The run's context.
            tool: The tool, as :meth:`get_tools` listed it.
        """
        effect, source = self.effect(name, tool)
        failed_results = _is_mcp(tool.toolset) or _is_mcp(self.wrapped)

        async def attempt(call: CallContext) -> Any:
            with scoped(_CALL, call):
                try:
                    return await self.wrapped.call_tool(name, tool_args, ctx, tool)
                except (ModelRetry, ToolFailed) as exc:
                    if not failed_results:
                        raise
                    # The MCP toolset's every error result and protocol error.
                    verdict = classify_result(exc.message, is_error=True)
                    raise ResultFailed(exc.message, verdict.kind, verdict.reason, None) from exc

        options: dict[str, Any] = {
            "tool": name,
            "arguments": dict(tool_args),
            "effect": effect,
            "policy": self.recovery.policy,
            "loop": _RUNS.get(ctx.run_id or "").loop,
            "verify": self.verify.get(name),
            "honours_key": name in self.keyed,
            "passthrough": _PASSTHROUGH,
        }
        where = (_run_of(ctx), ctx.tool_call_id)
        with telemetry.tool_call(name, call_id=ctx.tool_call_id, framework="pydantic_ai"):
            store = self.store
            if store is not None and _durable.in_workflow():

                async def step() -> Any:
                    return await self._call(attempt, options, source, store, where)

                result = await _durable.run_as_step(name, step)
            else:
                result = await self._call(attempt, options, source, None, where)
        if isinstance(result, _Answer):
            raise result.exception()
        return result

    async def _call(
        self,
        attempt: Callable[[CallContext], Awaitable[Any]],
        options: dict[str, Any],
        source: str,
        store: StepStore | None,
        where: tuple[Hashable, str | None],
    ) -> Any:
        """The call under the core: the tool's result (contract-checked) or an :class:`_Answer`.

        The finished call goes to the outcome recorder with ``where`` (the run, the
        call's id); inside a DBOS step, so a replayed step is not reported again.
        """
        history: list[AttemptRecord] = []
        outcome: Any
        if store is None:
            outcome = await aexecute(attempt, history=history, **options)
        else:
            outcome = await arun_durably(
                attempt,
                store=store,
                key=_durable.step_key(),
                text=_text,
                history=history,
                **options,
            )
        form = self.recovery.form
        _observe(outcome, options, source, form.value, history, where)
        if isinstance(outcome, Recorded):
            return outcome.text
        if isinstance(outcome, ToolFailure):
            telemetry.record(
                outcome, effect=options["effect"], effect_source=source, form=form.value
            )
            log.info(
                "toolmend.pydantic_ai: %s failed: kind=%s rule=%s attempts=%d",
                outcome.tool, outcome.kind.value, outcome.rule, outcome.attempts,
            )  # fmt: skip
            answer = delivered(outcome, form)
            return _Answer(isinstance(answer, ModelRetry), answer.message)
        telemetry.record(None, effect=options["effect"], effect_source=source, form=form.value)
        return self._checked(options["tool"], options["arguments"], outcome)

    def _checked(self, name: str, arguments: Mapping[str, Any], result: Any) -> Any:
        """``result``, or the receipt the model should read in its place; never raises."""
        contracts = self.recovery.contracts
        if contracts is None:
            return result
        try:
            value = _value(result)
            found = review(contracts, name, arguments, value, available_tools=self._names)
        except Exception:
            log.exception("toolmend: could not check the result of %s; returned as is", name)
            return result
        return found.text if found.changed else result


def _observe(
    outcome: Any,
    options: Mapping[str, Any],
    source: str,
    form: str,
    history: list[AttemptRecord],
    where: tuple[Hashable, str | None],
) -> None:
    """The finished call, as the core's record, to the outcome recorder."""
    run, call_id = where
    effect = options["effect"].value
    if isinstance(outcome, ToolFailure):
        record = CallRecord.of_failure(
            outcome, effect=effect, effect_source=source, form=form, call_id=call_id
        )
    else:
        record = CallRecord.of_success(
            options["tool"],
            history=history,
            effect=effect,
            effect_source=source,
            form=form,
            call_id=call_id,
            arguments=options["arguments"],
        )
    observe_call(record, run)
