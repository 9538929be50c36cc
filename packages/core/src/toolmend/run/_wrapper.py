"""Make a plain tool function fail soft: validated, retried when safe, never raising.

``@fail_soft`` keeps a sync function sync and an async one async.  The wrapped
function returns the original value on success and a :class:`ToolFailure`
otherwise; only cancellation and framework control flow propagate.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ParamSpec, Protocol, TypeVar, cast, overload

from pydantic import TypeAdapter, ValidationError

from ._effects import Effect
from ._failure import INVALID_ARGUMENTS, ToolFailure, validation_details
from ._loop import LoopGuard
from ._retry import CallContext, RetryPolicy
from ._runner import Verify, aexecute, execute
from ._signature import ToolSignature, is_async

__all__ = ["INVALID_ARGUMENTS", "fail_soft"]

P = ParamSpec("P")
T = TypeVar("T")

logger = logging.getLogger("toolmend.guard")

_DEFAULT_POLICY = RetryPolicy()
_NO_RETRY = RetryPolicy.none()
_SKIPPED = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


class _Arguments:
    """Binds and validates a call against the function's signature with pydantic."""

    def __init__(self, fn: Callable[..., Any], key_param: str | None, name: str) -> None:
        self.shape = ToolSignature.of(fn, key_param, name=name)
        self.signature = self.shape.signature
        self.key_param = key_param
        hints = self.shape.hints
        self.adapters: dict[str, TypeAdapter[Any]] = {}
        for name, parameter in self.signature.parameters.items():
            if name == key_param or parameter.kind in _SKIPPED or name not in hints:
                continue
            try:
                self.adapters[name] = TypeAdapter(hints[name])
            except Exception:
                logger.debug("no validator for parameter %s of %r", name, fn)

    def shown(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """The call's arguments by name, for reports and the loop guard."""
        try:
            bound = self.signature.bind_partial(*args, **kwargs)
        except TypeError:
            shown = dict(kwargs)
            if args:
                shown["args"] = list(args)
            return shown
        shown = {}
        for name, value in bound.arguments.items():
            if name in (self.key_param, "self", "cls"):
                continue
            parameter = self.signature.parameters[name]
            if parameter.kind is inspect.Parameter.VAR_KEYWORD:
                shown.update(value)
            else:
                shown[name] = value
        return shown

    def bind(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[inspect.BoundArguments, None] | tuple[None, str]:
        """Validated arguments (pydantic-coerced values), or the text naming what is wrong."""
        if self.key_param is not None:
            kwargs = {**kwargs, self.key_param: ""}
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as exc:
            return None, str(exc)
        errors: list[str] = []
        for name, adapter in self.adapters.items():
            if name not in bound.arguments:
                continue
            try:
                bound.arguments[name] = adapter.validate_python(bound.arguments[name])
            except ValidationError as exc:
                errors.append(validation_details(exc, prefix=name))
            except Exception:
                logger.debug("validator for %s raised; value passed unchanged", name)
        if errors:
            return None, "; ".join(errors)
        return bound, None

    def call_args(
        self, bound: inspect.BoundArguments, ctx: CallContext
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        if self.key_param is not None:
            bound.arguments[self.key_param] = ctx.idempotency_key
        return bound.args, bound.kwargs


def _invalid(tool: str, shown: dict[str, Any], details: str, loop: LoopGuard | None) -> ToolFailure:
    if loop is not None:
        blocked = loop.before(tool, shown)
        if blocked is not None:
            return blocked
    failure = ToolFailure.invalid_arguments(tool, shown, details)
    logger.info("tool %s not run: invalid arguments: %s", tool, details)
    if loop is not None:
        loop.after(tool, shown, failure)
    return failure


class _Decorator(Protocol):
    @overload
    def __call__(
        self, fn: Callable[P, Awaitable[T]]
    ) -> Callable[P, Awaitable[T | ToolFailure]]: ...
    @overload
    def __call__(self, fn: Callable[P, T]) -> Callable[P, T | ToolFailure]: ...


@overload
def fail_soft(
    fn: Callable[P, Awaitable[T]],
    *,
    effect: Effect | str = ...,
    retry: RetryPolicy | None = ...,
    loop: LoopGuard | None = ...,
    verify: Verify | None = ...,
    idempotency_key: str | None = ...,
    passthrough: tuple[type[BaseException], ...] = ...,
    name: str | None = ...,
) -> Callable[P, Awaitable[T | ToolFailure]]: ...
@overload
def fail_soft(
    fn: Callable[P, T],
    *,
    effect: Effect | str = ...,
    retry: RetryPolicy | None = ...,
    loop: LoopGuard | None = ...,
    verify: Verify | None = ...,
    idempotency_key: str | None = ...,
    passthrough: tuple[type[BaseException], ...] = ...,
    name: str | None = ...,
) -> Callable[P, T | ToolFailure]: ...
@overload
def fail_soft(
    fn: None = None,
    *,
    effect: Effect | str = ...,
    retry: RetryPolicy | None = ...,
    loop: LoopGuard | None = ...,
    verify: Verify | None = ...,
    idempotency_key: str | None = ...,
    passthrough: tuple[type[BaseException], ...] = ...,
    name: str | None = ...,
) -> _Decorator: ...
def fail_soft(
    fn: Callable[..., Any] | None = None,
    *,
    effect: Effect | str = Effect.UNKNOWN,
    retry: RetryPolicy | None = _DEFAULT_POLICY,
    loop: LoopGuard | None = None,
    verify: Verify | None = None,
    idempotency_key: str | None = None,
    passthrough: tuple[type[BaseException], ...] = (),
    name: str | None = None,
) -> Any:
    """Wrap a sync or async tool function so that it fails soft.

    ``effect`` is the tool's declared effect (undeclared = write).  ``retry=None``
    disables automatic retries.  ``idempotency_key`` names the function's
    parameter that receives the per-call key (the same on every attempt); the
    tool is then taken to honour it, and the parameter is hidden from the
    public signature.  Use bare (``@fail_soft``) or with arguments.

    Args:
        fn: The tool function (sync or async); omitted when used with arguments.
        effect: The tool's declared effect (``read_only``, ``idempotent``,
            ``write``; undeclared is ``unknown``, handled as a write).
        retry: The :class:`RetryPolicy` (``None``: no automatic retry).
        loop: A :class:`LoopGuard` that refuses calls that cannot succeed.
        verify: ``(call, exc) -> True/False/None``, asked before repeating a call
            that may have landed.
        idempotency_key: The parameter that receives the per-call key.
        passthrough: Exception types that propagate untouched.
        name: The tool's name in failures and reports (default: the function's).

    Returns:
        The wrapped function, or a decorator when ``fn`` is omitted.

    Raises:
        TypeError: ``idempotency_key`` names no keyword parameter of ``fn``.
    """
    if fn is None:
        return functools.partial(
            fail_soft,
            effect=effect,
            retry=retry,
            loop=loop,
            verify=verify,
            idempotency_key=idempotency_key,
            passthrough=passthrough,
            name=name,
        )
    tool = name or getattr(fn, "__name__", None) or "tool"
    policy = retry if retry is not None else _NO_RETRY
    arguments = _Arguments(fn, idempotency_key, tool)
    options: dict[str, Any] = {
        "tool": tool,
        "effect": effect,
        "policy": policy,
        "loop": loop,
        "verify": verify,
        "honours_key": idempotency_key is not None,
        "passthrough": tuple(passthrough),
    }

    if is_async(fn):

        @functools.wraps(fn)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            shown = arguments.shown(args, kwargs)
            bound, problem = arguments.bind(args, kwargs)
            if bound is None:
                return _invalid(tool, shown, problem or "", loop)

            async def attempt(ctx: CallContext) -> Any:
                call_args, call_kwargs = arguments.call_args(bound, ctx)
                return await fn(*call_args, **call_kwargs)

            return await aexecute(attempt, arguments=shown, **options)

        wrapper: Callable[..., Any] = async_wrapper
    else:

        @functools.wraps(fn)
        def sync_wrapper(*args: Any, **kwargs: Any) -> Any:
            shown = arguments.shown(args, kwargs)
            bound, problem = arguments.bind(args, kwargs)
            if bound is None:
                return _invalid(tool, shown, problem or "", loop)

            def attempt(ctx: CallContext) -> Any:
                call_args, call_kwargs = arguments.call_args(bound, ctx)
                return fn(*call_args, **call_kwargs)

            return execute(attempt, arguments=shown, **options)

        wrapper = sync_wrapper
    if idempotency_key is not None:
        wrapper.__signature__ = arguments.shape.public_signature()  # type: ignore[attr-defined]
        annotations = dict(getattr(fn, "__annotations__", {}))
        annotations.pop(idempotency_key, None)
        wrapper.__annotations__ = annotations
    return cast(Any, wrapper)
