"""The failure function: the true cause for the model, the verdict for the filter.

The SDK's default failure text hides the cause and tells the model to try
again whatever happened.  Here the exception is classified by the core, the
model reads the capped cause (and, in form C1, the next step), and the
verdict is recorded by run and call id so the input filter can deliver the
guidance without reading it back out of the text.
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from agents import ModelBehaviorError, RunContextWrapper, ToolErrorFormatterArgs
from agents.tool_context import ToolContext

from toolmend import Effect, Form, ToolFailed, ToolFailure
from toolmend.integrations import (
    argument_errors,
    cap_error,
    check_call,
    describe_exception,
    pending_verdict,
)

from . import _pending as pending
from . import _report as report
from ._malformed import tool_schema, unknown_tool_text
from ._runs import RUNS

__all__ = [
    "UNSET",
    "FailureFunction",
    "ToolFailed",
    "failure_error_function",
    "own_failure_function",
    "tool_error_formatter",
]

log = logging.getLogger("toolmend.openai_agents")

UserFailureFunction = Callable[[RunContextWrapper[Any], Exception], "str | Awaitable[str]"]
Validator = Callable[[str], "str | None"]
"""Raw arguments JSON -> what is wrong with them (``None``: nothing found)."""
UNSET: Any = object()
"""No failure function given: toolmend's own."""


def model_arguments(ctx: Any) -> Mapping[str, Any]:
    """The arguments the model sent for this call, as a mapping (``{}`` when unknown)."""
    raw = ctx.tool_arguments if isinstance(ctx, ToolContext) else None
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes
        return {"arguments": raw}
    return value if isinstance(value, dict) else {"arguments": value}


def failure_of(
    ctx: RunContextWrapper[Any],
    error: BaseException,
    effect: Effect | str = Effect.UNKNOWN,
    validator: Validator | None = None,
) -> ToolFailure:
    """The failure behind ``error``: carried whole, or classified as one attempt.

    The SDK rejects bad arguments with a message that names no field (it keeps
    tool data out of its logs); ``validator`` recovers what the model must change.
    """
    carried = pending.raised(ctx, error)
    if carried is not None:
        return carried
    tool = ctx.tool_name if isinstance(ctx, ToolContext) else "tool"
    if isinstance(error, ModelBehaviorError):
        raw = ctx.tool_arguments if isinstance(ctx, ToolContext) else ""
        check = check_call(tool, raw, None, repair=False)
        if check.failure is not None:
            return check.failure
        if validator is not None:
            details = validator(raw)
        else:
            details = argument_errors(tool_schema(tool), check.arguments)
        if details is not None:
            return ToolFailure.invalid_arguments(tool, model_arguments(ctx), details)
    return ToolFailure.from_exception(
        error, tool=tool, arguments=model_arguments(ctx), effect=effect
    )


def deliver(ctx: RunContextWrapper[Any], failure: ToolFailure, shown: str, form: Form) -> None:
    """Record the verdict for the input filter and report the failure."""
    call_id = ctx.tool_call_id if isinstance(ctx, ToolContext) else None
    if call_id is not None:
        RUNS.record(call_id, shown, pending_verdict(failure.verdict(), form, shown))
    report.failed(call_id, shown, failure, form=form)


def _fallback(error: BaseException) -> str:
    try:
        return cap_error(describe_exception(error))
    except Exception:
        return "The tool failed."


class FailureFunction:
    """A ``failure_error_function`` for ``function_tool`` and MCP servers; see the factory.

    Args:
        form: The delivery form.
        effect: The effect assumed for tools that raised without toolmend's guard.
        then: Your own failure function, whose text is shown instead of the cause.
        validator: Finds what is wrong with arguments the SDK rejected.
    """

    def __init__(
        self,
        form: Form | str = Form.C3,
        *,
        effect: Effect | str = Effect.UNKNOWN,
        then: UserFailureFunction | None = None,
        validator: Validator | None = None,
    ) -> None:
        self.form = Form.parse(form)
        self.effect = Effect.parse(effect)
        self.then = then
        self.validator = validator

    def __call__(self, ctx: RunContextWrapper[Any], error: Exception) -> str | Awaitable[str]:
        """The text the model reads for ``error``; the verdict is recorded for the filter."""
        try:
            failure = failure_of(ctx, error, self.effect, self.validator)
            shown = failure.result_text(self.form)
        except Exception:
            log.exception("toolmend: could not classify a tool failure; showing the exception")
            return _fallback(error)
        if self.then is None:
            self._deliver(ctx, failure, shown)
            return shown
        try:
            custom = self.then(ctx, error)
        except Exception:
            log.exception("toolmend: the user's failure function raised; using toolmend's text")
            self._deliver(ctx, failure, shown)
            return shown
        if inspect.isawaitable(custom):
            return self._finish(ctx, failure, shown, custom)
        return self._custom(ctx, failure, shown, custom)

    async def _finish(
        self, ctx: RunContextWrapper[Any], failure: ToolFailure, shown: str, pending: Awaitable[str]
    ) -> str:
        try:
            custom = await pending
        except Exception:
            log.exception("toolmend: the user's failure function raised; using toolmend's text")
            self._deliver(ctx, failure, shown)
            return shown
        return self._custom(ctx, failure, shown, custom)

    def _custom(
        self, ctx: RunContextWrapper[Any], failure: ToolFailure, shown: str, custom: Any
    ) -> str:
        text = shown
        if isinstance(custom, str):
            text = failure.result_text(self.form, custom)
        else:
            log.warning("toolmend: the user's failure function returned a non-string; ignored")
        self._deliver(ctx, failure, text)
        return text

    def _deliver(self, ctx: RunContextWrapper[Any], failure: ToolFailure, shown: str) -> None:
        try:
            deliver(ctx, failure, shown, self.form)
        except Exception:
            log.exception("toolmend: could not record a tool failure")


def failure_error_function(
    form: Form | str = Form.C3,
    *,
    effect: Effect | str = Effect.UNKNOWN,
    then: UserFailureFunction | None = None,
) -> FailureFunction:
    """A failure function that tells the model what actually failed.

    The model reads the capped cause of the failure (exception type and
    message, where in your code, how many attempts); in form ``c1`` the true
    next step follows it.  In the other forms the next step is delivered by
    :func:`input_filter`, which finds the verdict recorded here.  ``effect``
    is what to assume about tools that raised without toolmend's guard (an
    undeclared effect is a write: a timeout then asks to verify before
    repeating).  ``then`` is your own failure function: its text is shown
    instead of the cause (e.g. to redact it), and if it is async, so is this.

    Args:
        form: The delivery form.
        effect: The effect assumed for tools that raised without toolmend's guard.
        then: Your own failure function, whose text is shown instead of the cause.

    Returns:
        The failure function.
    """
    return FailureFunction(form, effect=effect, then=then)


def own_failure_function(
    given: Any,
    *,
    form: Form | str = Form.C3,
    effect: Effect | str = Effect.UNKNOWN,
    validator: Validator | None = None,
) -> FailureFunction | None:
    """Toolmend's failure function in place of ``given``.

    Toolmend's failure function in place of ``given``, which supplies the text if it is
    the user's own; ``None`` stays ``None`` (the SDK raises) and :data:`UNSET` is ours.
    """
    if given is UNSET:
        return FailureFunction(form, effect=effect, validator=validator)
    if given is None:
        return None
    if isinstance(given, FailureFunction):
        if given.validator is not None or validator is None:
            return given
        return FailureFunction(
            given.form, effect=given.effect, then=given.then, validator=validator
        )
    return FailureFunction(form, effect=effect, then=given, validator=validator)


def tool_error_formatter(
    form: Form | str = Form.C3,
    *,
    effect: Effect | str = Effect.UNKNOWN,
    malformed_calls: bool = True,
) -> Callable[[ToolErrorFormatterArgs[Any]], str | Awaitable[str] | None]:
    """A ``RunConfig.tool_error_formatter`` that tells the model what failed.

    A ``RunConfig.tool_error_formatter`` that does for plain ``agents.function_tool``
    tools (those left on the SDK's default failure function) what
    :func:`failure_error_function` does; other errors keep the SDK's message.

    With ``malformed_calls``, a call to a tool the agent does not have (when the
    run returns that error to the model) reads the core's fixable error, which
    lists the agent's tools, closest name first.

    Args:
        form: The delivery form.
        effect: The effect assumed for the tools it answers for.
        malformed_calls: Answer calls to unknown tools with the core's fixable error.

    Returns:
        The formatter.
    """
    chosen = FailureFunction(form, effect=effect)

    def format_error(args: ToolErrorFormatterArgs[Any]) -> str | Awaitable[str] | None:
        if args.kind == "tool_not_found" and malformed_calls:
            return unknown_tool_text(args, chosen.form)
        if args.kind != "tool_exception" or args.tool_type != "function" or args.error is None:
            return None
        shown = chosen(args.run_context, args.error)
        return shown if isinstance(shown, str) else None

    return format_error
