"""``ToolMendPlugin``: ADK's tool callbacks, decided by the core.

ADK runs each function call as: the plugins' ``before_tool_callback`` (a dict
answers the call and the tool does not run), the tool, ``on_tool_error_callback``
if it raised (a dict becomes the response; ``None`` re-raises, which ends the
run), then ``after_tool_callback`` (a dict replaces the result).  The plugin
uses the three:

- before: a malformed call (arguments that break the tool's schema) and a call
  the run's loop guard refuses are answered without running;
- on error: the exception is the first attempt of a logical call that the core
  finishes (:func:`toolmend.integrations.aexecute`): later attempts run the tool
  again, as ADK does, only while the retry policy allows for the tool's effect;
  a call to a tool the agent lacks gets the core's fixable error;
- after: a result the core reads as a failure (``{"error": "503 ..."}``, an MCP
  ``isError`` result) is handled the same way; a clean one resets the loop
  guard's count and is checked against its outcome contract.

What the plugin answers itself is marked in the run's state by call id, so the
after-callback that ADK runs on it lets it through untouched.

Each logical call, once finished (answered by the plugin, recovered, or clean),
goes once to the outcome recorder (:func:`toolmend.integrations.observe_call`,
a no-op unless one is installed) with the invocation id as the run, and
``after_run_callback`` ends the run.
"""

from __future__ import annotations

import collections
import copy
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Unpack

from google.adk.agents.invocation_context import InvocationContext
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext

from toolmend import Effect, Form, LoopGuard, ToolFailure, Verdict, telemetry
from toolmend.contracts import review
from toolmend.integrations import (
    AttemptRecord,
    CallContext,
    CallRecord,
    Recovery,
    RecoveryOptions,
    ResultFailed,
    RunRegistry,
    RunState,
    Source,
    aexecute,
    argument_errors,
    effect_of,
    end_run,
    observe_call,
    unknown_tool,
)

from ._results import (
    Returned,
    failure_response,
    judged,
    returned_failure,
    success_response,
    verdict_of,
)
from ._tools import annotations_of, input_schema, is_placeholder, tool_names

__all__ = ["ToolMendPlugin", "Verify"]

log = logging.getLogger("toolmend.adk")

Verify = Callable[[CallContext, BaseException], "bool | Awaitable[bool | None] | None"]
"""``(call, exc) -> True`` (it landed), ``False`` (it did not: safe to repeat) or ``None``."""

_ANSWERED = Verdict(False, rule="toolmend-adk")
"""The run-state mark of a response the plugin gave itself: the after-callback passes it."""
RECORDS_KEPT = 1024
"""Call records a plugin keeps at most (the oldest are dropped first)."""


class ToolMendPlugin(BasePlugin):
    """Recover from failed tool calls in an ADK runner; replaces ``ReflectAndRetryToolPlugin``.

    ``InMemoryRunner(agent=agent, plugins=[ToolMendPlugin(effects={...})])``.  Where
    ADK's reflect-and-retry plugin restates every failure with one checklist and
    counts failures, this one asks the core what each failure is:

    - a transient failure of a ``read_only`` or ``idempotent`` tool is retried
      inside the call under ``retry`` (backoff, Retry-After, the deadline and the
      per-tool budget of the :class:`toolmend.RetryPolicy`); a write, or a tool
      whose effect is not declared, is never repeated blindly: when it may have
      landed the model is told to check first, unless its ``verify`` hook says
      it did not land;
    - the model reads the true cause and the kind's next step in the function
      response: ``{"error": "...", "guidance": "..."}`` (no ``guidance`` for an
      ambiguous failure, nor in form ``off``);
    - a failure a tool *returned* (``{"error": "503 ..."}``, an MCP ``isError``
      result) is found by the core's detector and handled like a raised one;
    - the run's loop guard refuses exact repeats of calls that cannot succeed,
      and after repeated failures of one kind says to stop (the pile-up note);
    - calls to a tool the agent lacks, or with arguments that break the
      tool's schema, get a fixable error (``malformed_calls``);
    - successful results are checked against ``contracts``.

    Args:
        name: The plugin's name in the runner.
        verify: Tool name to a hook asked before repeating a call that may have
            landed: ``(call, exc) -> True`` (it landed), ``False`` (it did not:
            repeating is safe) or ``None`` (cannot tell).
        loop: The loop guard's settings; each invocation gets a fresh guard made
            with them (default ``LoopGuard()``).
        malformed_calls: Answer malformed calls with the core's fixable error
            (``False``: ADK's own handling).
        **options: ``effects``, ``trust_annotations``, ``retry``, ``contracts`` and
            ``form`` (:class:`toolmend.integrations.RecoveryOptions`).  Effects are
            declared by tool name, or on a function with
            :func:`toolmend.declare_effect`; MCP annotations count only with
            ``trust_annotations=True``.  ADK has one way back to the model, the
            function response: every form but ``off`` puts the guidance there.
    """

    def __init__(
        self,
        *,
        name: str = "toolmend",
        verify: Mapping[str, Verify] | None = None,
        loop: LoopGuard | None = None,
        malformed_calls: bool = True,
        **options: Unpack[RecoveryOptions],
    ) -> None:
        super().__init__(name)
        options.setdefault("form", Form.C1)
        self.recovery = Recovery.of(**options)
        self.verify: Mapping[str, Verify] = dict(verify or {})
        self.malformed_calls = malformed_calls
        settings = (loop or LoopGuard()).settings()
        self._runs = RunRegistry(loop_factory=lambda: LoopGuard(**settings))
        self._records: collections.deque[CallRecord] = collections.deque(maxlen=RECORDS_KEPT)

    # -- what happened ----------------------------------------------------------

    @property
    def records(self) -> tuple[CallRecord, ...]:
        """The last calls the plugin acted on, oldest first.

        Failed calls (with what the model was shown), calls that succeeded only
        after retrying, and results that broke their contract.
        """
        return tuple(self._records)

    def effect(self, tool: BaseTool) -> tuple[Effect, str]:
        """A tool's effect and where it came from (``declared``, ``annotations``, ``default``).

        Args:
            tool: The ADK tool.
        """
        effect, source = self.recovery.effect(tool.name, annotations=annotations_of(tool))
        if source == "default":
            marked = effect_of(tool)
            if marked is not Effect.UNKNOWN:
                return marked, "declared"
        return effect, source

    def _state(self, tool_context: ToolContext) -> RunState:
        return self._runs.get(tool_context.invocation_id)

    # -- ADK's callbacks --------------------------------------------------------

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        """Answer a call with invalid arguments, or one the loop guard refuses, unrun.

        Args:
            tool: The tool about to run.
            tool_args: The call's arguments.
            tool_context: The call's context.
        """
        if is_placeholder(tool):
            return None  # an unknown name: answered in on_tool_error_callback
        try:
            if self.malformed_calls:
                details = argument_errors(input_schema(tool), tool_args)
                if details is not None:
                    failure = ToolFailure.invalid_arguments(tool.name, tool_args, details)
                    return self._answer(tool_context, failure)
            refused = self._state(tool_context).loop.before(tool.name, tool_args)
        except Exception:
            log.exception("toolmend: could not check a call of %s; it runs", tool.name)
            return None
        return None if refused is None else self._answer(tool_context, refused)

    async def on_tool_error_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        error: Exception,
    ) -> dict[str, Any] | None:
        """Finish the call under the core: retried when safe, else the true cause and next step.

        Args:
            tool: The tool that raised.
            tool_args: The call's arguments.
            tool_context: The call's context.
            error: What it raised.
        """
        if not isinstance(error, Exception):  # a cancellation is never recovered
            return None
        if is_placeholder(tool):
            if not self.malformed_calls:
                return None
            failure = unknown_tool(tool.name, await tool_names(tool_context), tool_args)
            return self._answer(tool_context, failure)
        return await self._recover(tool, tool_args, tool_context, error)

    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        result: dict[str, Any],
    ) -> dict[str, Any] | None:
        """Recover from a failure the tool returned; check a clean result's contract.

        Args:
            tool: The tool that ran.
            tool_args: The call's arguments.
            tool_context: The call's context.
            result: What it returned (any value, despite ADK's annotation).
        """
        state = self._state(tool_context)
        call_id = tool_context.function_call_id
        if call_id is not None and state.verdicts.pop(call_id, None) is _ANSWERED:
            return None
        verdict = verdict_of(result, tool.name)
        if verdict.failed:
            return await self._recover(
                tool, tool_args, tool_context, returned_failure(result, verdict)
            )
        state.loop.after(tool.name, tool_args, None)
        record = CallRecord.of_success(tool.name, call_id=call_id, arguments=dict(tool_args))
        observe_call(record, tool_context.invocation_id)
        checked = await self._checked(tool, tool_args, tool_context, result)
        return None if checked is result else checked

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        """Forget the invocation's loop guard and marks; end its run for the outcome recorder.

        Args:
            invocation_context: The invocation that ended.
        """
        self._runs.drop(invocation_context.invocation_id)
        end_run(invocation_context.invocation_id)

    # -- the call under the core ------------------------------------------------

    async def _recover(
        self,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        first: BaseException,
    ) -> dict[str, Any]:
        """The logical call whose first attempt failed with ``first``, finished by the core."""
        effect, source = self.effect(tool)
        history: list[AttemptRecord] = []

        async def attempt(call: CallContext) -> Any:
            if call.attempt == 1:
                raise first
            again = await tool.run_async(args=copy.deepcopy(tool_args), tool_context=tool_context)
            return judged(again, tool.name)

        call_id = tool_context.function_call_id
        with telemetry.tool_call(tool.name, call_id=call_id, framework="adk"):
            outcome = await aexecute(
                attempt,
                tool=tool.name,
                arguments=tool_args,
                effect=effect,
                policy=self.recovery.policy,
                loop=self._state(tool_context).loop,
                verify=self.verify.get(tool.name),
                history=history,
            )
            if isinstance(outcome, ToolFailure):
                return self._answer(tool_context, outcome, effect=(effect, source))
        retried = self._log_retried(tool.name, tool_args, call_id, history)
        observe_call(retried, tool_context.invocation_id)
        checked = await self._checked(tool, tool_args, tool_context, outcome)
        return self._mark(tool_context, success_response(checked))

    async def _checked(
        self, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext, result: Any
    ) -> Any:
        """``result``, or the core's receipt (``{"result": ...}``) when it breaks its contract."""
        contracts = self.recovery.contracts
        if contracts is None or tool.name not in contracts.tools:
            return result
        try:
            available = await tool_names(tool_context)
            outcome = review(contracts, tool.name, tool_args, result, available_tools=available)
        except Exception:
            log.exception("toolmend: could not check the result of %s; returned as is", tool.name)
            return result
        if not outcome.violations:
            return result
        log.info(
            "toolmend: %s result violates its contract (call %s): %s",
            tool.name,
            tool_context.function_call_id,
            ", ".join(v.code.value for v in outcome.violations),
        )
        self._records.append(
            CallRecord.of_success(
                tool.name,
                review=outcome,
                call_id=tool_context.function_call_id,
                arguments=tool_args,
            )
        )
        return {"result": outcome.text} if outcome.changed else result

    # -- answering the model ----------------------------------------------------

    def _answer(
        self,
        tool_context: ToolContext,
        failure: ToolFailure,
        *,
        effect: tuple[Effect, str] | None = None,
    ) -> dict[str, Any]:
        """The function response for ``failure``, recorded, reported and marked as ours."""
        form = self.recovery.form
        shown = failure
        source = Source.EXCEPTION
        exc = failure.exception
        if isinstance(exc, ResultFailed) and isinstance(exc.result, Returned):
            shown, _ = failure.as_returned(exc.result.verdict)
            source = exc.result.verdict.source or Source.FLAG
        response = failure_response(shown, form)
        call_id = tool_context.function_call_id
        log.info(
            "toolmend: tool %s failed (call %s): kind=%s rule=%s reason=%s attempts=%d "
            "outcome_unknown=%s",
            shown.tool, call_id, shown.kind.value, shown.rule, shown.reason,
            shown.attempts, shown.outcome_unknown,
        )  # fmt: skip
        telemetry.record(
            shown,
            effect=effect[0] if effect else None,
            effect_source=effect[1] if effect else None,
            form=form.value,
        )
        record = CallRecord.of_failure(
            shown,
            source=source.value,
            effect=effect[0].value if effect else None,
            effect_source=effect[1] if effect else None,
            form=form.value,
            call_id=call_id,
            shown=_text(response),
            guidance_in_content=form is not Form.OFF and "guidance" in response,
        )
        self._records.append(record)
        observe_call(record, tool_context.invocation_id)
        return self._mark(tool_context, response)

    def _mark(self, tool_context: ToolContext, response: dict[str, Any]) -> dict[str, Any]:
        call_id = tool_context.function_call_id
        if call_id is not None:
            self._state(tool_context).verdicts[call_id] = _ANSWERED
        return response

    def _log_retried(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        call_id: str | None,
        history: list[AttemptRecord],
    ) -> CallRecord:
        """Log and keep the record of a call that succeeded after retries; return it."""
        log.info(
            "toolmend: tool %s succeeded after %d attempts (call %s)",
            tool,
            len(history) + 1,
            call_id,
        )
        record = CallRecord.of_success(
            tool, history=tuple(history), call_id=call_id, arguments=arguments
        )
        self._records.append(record)
        return record


def _text(response: Mapping[str, Any]) -> str:
    """What the model reads in a failure response, as one text (for the record)."""
    guidance = response.get("guidance")
    return str(response["error"]) if guidance is None else f"{response['error']}\n{guidance}"
