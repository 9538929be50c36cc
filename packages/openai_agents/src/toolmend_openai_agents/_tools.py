"""``function_tool``: the SDK's decorator, with the body run under toolmend's retry policy.

The SDK validates the arguments and handles the failure; toolmend runs the
body between the two: transient failures are retried inside the call when
repeating is safe (declared read-only or idempotent, an idempotency key the
tool honours, a failure before dispatch, or a verify hook saying the first
attempt did not land), and a call that still fails reaches the failure
function as a :class:`~toolmend_openai_agents._failure.ToolFailed` carrying the
exact failure.  The run's loop guard refuses exact repeats of calls that
cannot succeed.  A successful result is checked against its outcome contract,
if it has one, and a violation reaches the model as the core's receipt.

To see the run and the call, the body needs the tool context, so the
function is wrapped in one that takes it first (the SDK then passes it) and
hides the idempotency-key parameter, which the runtime fills.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, overload

import agents
from agents import FunctionTool, RunContextWrapper
from agents.function_schema import DocstringStyle, function_schema
from agents.tool import (
    FunctionToolCustomDataExtractor,
    ToolCaller,
    ToolErrorFunction,
    ToolTimeoutBehavior,
)
from agents.tool_context import ToolContext
from agents.tool_guardrails import ToolInputGuardrail, ToolOutputGuardrail
from agents.util._types import MaybeAwaitable
from pydantic import BaseModel, ValidationError

from toolmend import Effect, RetryPolicy, ToolFailed, ToolFailure, Verdict, classify_result
from toolmend.contracts import Contracts
from toolmend.integrations import (
    CallContext,
    ResultFailed,
    Source,
    ToolSignature,
    is_async,
    parse_arguments,
    validation_details,
)

from . import _report as report
from ._contracts import apply_contracts
from ._failure import UNSET, Validator, model_arguments, own_failure_function
from ._guarded import Guarded, Verify
from ._runs import RUNS

__all__ = ["function_tool"]

_DEFAULT_POLICY = RetryPolicy()
_CONTEXT_TYPES = (RunContextWrapper, ToolContext)


def _is_context(annotation: Any) -> bool:
    origin = typing.get_origin(annotation) or annotation
    return isinstance(origin, type) and issubclass(origin, _CONTEXT_TYPES)


class _Shape:
    """The core's reading of the signature, with the tool context the SDK passes first."""

    def __init__(self, func: Callable[..., Any], key_param: str | None) -> None:
        tool = ToolSignature.of(func, key_param)
        params = tool.public_parameters
        first = params[0] if params else None
        self.takes_context = first is not None and _is_context(
            tool.hints.get(first.name, first.annotation)
        )
        public = params[1:] if self.takes_context else params
        context = (
            first
            if self.takes_context and first is not None
            else inspect.Parameter(
                "_toolmend_context",
                inspect.Parameter.POSITIONAL_ONLY,
                annotation=ToolContext[Any],
            )
        )
        self.signature = tool.signature.replace(parameters=[context, *public])
        annotations = tool.public_annotations()
        annotations[context.name] = tool.hints.get(context.name, ToolContext[Any])
        self.annotations = annotations


@dataclass(frozen=True, slots=True)
class _Returned:
    """A failure the tool returned as text, as the failure of the attempt that returned it."""

    text: str
    verdict: Verdict


def _judged(result: Any) -> Any:
    """``result``, or :class:`ResultFailed` when the text it returned reads as a failure.

    The core then decides about a returned ``502 Bad Gateway`` as about a raised one:
    with the tool's effect, so that a write that may have landed is never advised
    to be repeated, and with its retry policy.
    """
    if isinstance(result, str):
        verdict = classify_result(result)
        if verdict.failed:
            raise ResultFailed(result, verdict.kind, verdict.reason, _Returned(result, verdict))
    return result


def _returned(ctx: Any, failure: ToolFailure) -> str | None:
    """The text a tool returned, when ``failure`` is the core giving up on it; recorded.

    The model reads the text as the tool returned it; the verdict recorded for the
    input filter carries the core's kind and next step (verify first for a write).
    """
    exc = failure.exception
    if not (isinstance(exc, ResultFailed) and isinstance(exc.result, _Returned)):
        return None
    shown, verdict = failure.as_returned(exc.result.verdict)
    call_id = ctx.tool_call_id if isinstance(ctx, ToolContext) else None
    if call_id is not None:
        RUNS.record(call_id, exc.result.text, verdict)
    report.failed(call_id, exc.result.text, shown, source=verdict.source or Source.FLAG)
    return exc.result.text


def _guarded(
    func: Callable[..., Any],
    *,
    name: str,
    effect: Effect | str,
    policy: RetryPolicy,
    verify: Verify | None,
    key_param: str | None,
    passthrough: tuple[type[BaseException], ...],
    contracts: Contracts | None,
) -> Callable[..., Any]:
    shape = _Shape(func, key_param)
    honours_key = key_param is not None

    def call_args(ctx: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
        return (ctx, *args) if shape.takes_context else args

    def call_kwargs(kwargs: dict[str, Any], call: CallContext) -> dict[str, Any]:
        return kwargs if key_param is None else {**kwargs, key_param: call.idempotency_key}

    guarded = Guarded(effect, policy, verify, honours_key, passthrough)

    def run_options(ctx: Any) -> dict[str, Any]:
        return {
            "tool": getattr(ctx, "tool_name", None) or name,
            "arguments": model_arguments(ctx),
            "call_id": getattr(ctx, "tool_call_id", None),
        }

    def outcome(ctx: Any, result: Any) -> Any:
        if isinstance(result, ToolFailure):
            text = _returned(ctx, result)
            if text is not None:
                return text
            raise ToolFailed(result)
        return apply_contracts(ctx, getattr(ctx, "tool_name", None) or name, result, contracts)

    wrapper: Callable[..., Any]
    if is_async(func):

        @functools.wraps(func)
        async def async_wrapper(ctx: Any, /, *args: Any, **kwargs: Any) -> Any:
            async def attempt(call: CallContext) -> Any:
                return _judged(await func(*call_args(ctx, args), **call_kwargs(kwargs, call)))

            return outcome(ctx, await guarded.arun(attempt, **run_options(ctx)))

        wrapper = async_wrapper
    else:

        @functools.wraps(func)
        def sync_wrapper(ctx: Any, /, *args: Any, **kwargs: Any) -> Any:
            def attempt(call: CallContext) -> Any:
                return _judged(func(*call_args(ctx, args), **call_kwargs(kwargs, call)))

            return outcome(ctx, guarded.run(attempt, **run_options(ctx)))

        wrapper = sync_wrapper
    exposed: Any = wrapper
    exposed.__signature__ = shape.signature
    exposed.__annotations__ = shape.annotations
    if not (inspect.isroutine(func) or inspect.isclass(func)):
        exposed.__name__ = exposed.__qualname__ = type(func).__name__
        exposed.__doc__ = inspect.getdoc(type(func).__call__) or inspect.getdoc(type(func))
    return wrapper


def _validator(model: type[BaseModel]) -> Validator:
    """What is wrong with the arguments, in the words of the SDK's own model."""

    def validate(raw: str) -> str | None:
        data = parse_arguments(raw, repair=False).value
        if data is None:
            return None
        try:
            model(**data)
        except ValidationError as exc:
            return validation_details(exc)
        except Exception:
            return None
        return None

    return validate


@overload
def function_tool(
    func: Callable[..., Any],
    *,
    name_override: str | None = None,
    description_override: str | None = None,
    docstring_style: DocstringStyle | None = None,
    use_docstring_info: bool = True,
    failure_error_function: ToolErrorFunction | None = ...,
    strict_mode: bool = True,
    is_enabled: bool
    | Callable[[RunContextWrapper[Any], agents.AgentBase[Any]], MaybeAwaitable[bool]] = True,
    needs_approval: bool
    | Callable[[RunContextWrapper[Any], dict[str, Any], str], Awaitable[bool]] = False,
    tool_input_guardrails: list[ToolInputGuardrail[Any]] | None = None,
    tool_output_guardrails: list[ToolOutputGuardrail[Any]] | None = None,
    timeout: float | None = None,
    timeout_behavior: ToolTimeoutBehavior = "error_as_result",
    timeout_error_function: ToolErrorFunction | None = None,
    defer_loading: bool = False,
    custom_data_extractor: FunctionToolCustomDataExtractor | None = None,
    allowed_callers: list[ToolCaller] | None = None,
    output_type: Any | None = None,
    output_json_schema: dict[str, Any] | None = None,
    effect: Effect | str = Effect.UNKNOWN,
    retry: RetryPolicy | None = ...,
    verify: Verify | None = None,
    idempotency_key: str | None = None,
    passthrough: tuple[type[BaseException], ...] = (),
    contracts: Contracts | None = None,
) -> FunctionTool: ...
@overload
def function_tool(
    func: None = None,
    *,
    name_override: str | None = None,
    description_override: str | None = None,
    docstring_style: DocstringStyle | None = None,
    use_docstring_info: bool = True,
    failure_error_function: ToolErrorFunction | None = ...,
    strict_mode: bool = True,
    is_enabled: bool
    | Callable[[RunContextWrapper[Any], agents.AgentBase[Any]], MaybeAwaitable[bool]] = True,
    needs_approval: bool
    | Callable[[RunContextWrapper[Any], dict[str, Any], str], Awaitable[bool]] = False,
    tool_input_guardrails: list[ToolInputGuardrail[Any]] | None = None,
    tool_output_guardrails: list[ToolOutputGuardrail[Any]] | None = None,
    timeout: float | None = None,
    timeout_behavior: ToolTimeoutBehavior = "error_as_result",
    timeout_error_function: ToolErrorFunction | None = None,
    defer_loading: bool = False,
    custom_data_extractor: FunctionToolCustomDataExtractor | None = None,
    allowed_callers: list[ToolCaller] | None = None,
    output_type: Any | None = None,
    output_json_schema: dict[str, Any] | None = None,
    effect: Effect | str = Effect.UNKNOWN,
    retry: RetryPolicy | None = ...,
    verify: Verify | None = None,
    idempotency_key: str | None = None,
    passthrough: tuple[type[BaseException], ...] = (),
    contracts: Contracts | None = None,
) -> Callable[[Callable[..., Any]], FunctionTool]: ...
def function_tool(
    func: Callable[..., Any] | None = None,
    *,
    name_override: str | None = None,
    description_override: str | None = None,
    docstring_style: DocstringStyle | None = None,
    use_docstring_info: bool = True,
    failure_error_function: ToolErrorFunction | None = UNSET,
    strict_mode: bool = True,
    is_enabled: bool
    | Callable[[RunContextWrapper[Any], agents.AgentBase[Any]], MaybeAwaitable[bool]] = True,
    needs_approval: bool
    | Callable[[RunContextWrapper[Any], dict[str, Any], str], Awaitable[bool]] = False,
    tool_input_guardrails: list[ToolInputGuardrail[Any]] | None = None,
    tool_output_guardrails: list[ToolOutputGuardrail[Any]] | None = None,
    timeout: float | None = None,
    timeout_behavior: ToolTimeoutBehavior = "error_as_result",
    timeout_error_function: ToolErrorFunction | None = None,
    defer_loading: bool = False,
    custom_data_extractor: FunctionToolCustomDataExtractor | None = None,
    allowed_callers: list[ToolCaller] | None = None,
    output_type: Any | None = None,
    output_json_schema: dict[str, Any] | None = None,
    effect: Effect | str = Effect.UNKNOWN,
    retry: RetryPolicy | None = _DEFAULT_POLICY,
    verify: Verify | None = None,
    idempotency_key: str | None = None,
    passthrough: tuple[type[BaseException], ...] = (),
    contracts: Contracts | None = None,
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """``agents.function_tool`` with the body run under toolmend (bare or with arguments).

    The SDK's parameters mean what they mean there; the failure function
    defaults to :func:`failure_error_function` (your own, if given, supplies
    the text and toolmend still records the verdict; ``None`` raises as in the
    SDK), and so does the timeout message.  A result that violates its
    contract reaches the model as the receipt, naming the recovery tools the
    agent has; each firing is reported.

    Args:
        func: The function (omitted when used as ``@function_tool(...)``).
        name_override: As in the SDK's ``function_tool``.
        description_override: As in the SDK's ``function_tool``.
        docstring_style: As in the SDK's ``function_tool``.
        use_docstring_info: As in the SDK's ``function_tool``.
        failure_error_function: As in the SDK's ``function_tool``; default
            :func:`failure_error_function`.
        strict_mode: As in the SDK's ``function_tool``.
        is_enabled: As in the SDK's ``function_tool``.
        needs_approval: As in the SDK's ``function_tool``.
        tool_input_guardrails: As in the SDK's ``function_tool``.
        tool_output_guardrails: As in the SDK's ``function_tool``.
        timeout: As in the SDK's ``function_tool``.
        timeout_behavior: As in the SDK's ``function_tool``.
        timeout_error_function: As in the SDK's ``function_tool``; default
            toolmend's failure function.
        defer_loading: As in the SDK's ``function_tool``.
        custom_data_extractor: As in the SDK's ``function_tool``.
        allowed_callers: As in the SDK's ``function_tool``.
        output_type: As in the SDK's ``function_tool``.
        output_json_schema: As in the SDK's ``function_tool``.
        effect: ``read_only``, ``idempotent``, ``write`` or ``unknown`` (the
            default, treated as a write). Only repeatable calls are retried blindly.
        retry: The :class:`toolmend.RetryPolicy` (``None``: no automatic retry).
        verify: ``(call, exc) -> True`` (it landed) / ``False`` (it did not, safe
            to repeat) / ``None``, asked before repeating a call that may have landed.
        idempotency_key: The name of your function's parameter that receives a
            key that is the same on every attempt of one call; the tool is then
            taken to honour it (its repeats are safe), and the model never sees
            the parameter.
        passthrough: Exception types that propagate untouched.
        contracts: Outcome contracts (``toolmend.contracts``) for the successful
            results (default: the run's, from ``run_config(contracts=)``).

    Returns:
        The tool, or a decorator that makes it.
    """
    policy = retry if retry is not None else RetryPolicy.none()

    def create(the_func: Callable[..., Any]) -> FunctionTool:
        name = name_override or getattr(the_func, "__name__", None) or "tool"
        body = _guarded(
            the_func,
            name=name,
            effect=effect,
            policy=policy,
            verify=verify,
            key_param=idempotency_key,
            passthrough=tuple(passthrough),
            contracts=contracts,
        )
        schema = function_schema(
            body,
            docstring_style=docstring_style,
            name_override=name_override,
            description_override=description_override,
            use_docstring_info=use_docstring_info,
            strict_json_schema=strict_mode,
        )
        validator = _validator(schema.params_pydantic_model)
        failure_function = own_failure_function(
            failure_error_function, effect=effect, validator=validator
        )
        timeout_function = own_failure_function(
            UNSET if timeout_error_function is None else timeout_error_function, effect=effect
        )
        return agents.function_tool(
            body,
            name_override=name_override,
            description_override=description_override,
            docstring_style=docstring_style,
            use_docstring_info=use_docstring_info,
            failure_error_function=failure_function,
            strict_mode=strict_mode,
            is_enabled=is_enabled,
            needs_approval=needs_approval,
            tool_input_guardrails=tool_input_guardrails,
            tool_output_guardrails=tool_output_guardrails,
            timeout=timeout,
            timeout_behavior=timeout_behavior,
            timeout_error_function=timeout_function,
            defer_loading=defer_loading,
            custom_data_extractor=custom_data_extractor,
            allowed_callers=allowed_callers,
            output_type=output_type,
            output_json_schema=output_json_schema,
        )

    if func is not None:
        return create(func)
    return create
