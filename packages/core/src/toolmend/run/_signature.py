"""A tool function's signature as toolmend reads it: resolved hints, the key hidden.

Every way of wrapping a plain function (``fail_soft`` here, an adapter's own
tool decorator) needs the same three things from its signature: the resolved
type hints (for validation and for the framework's schema), the parameter that
receives the idempotency key, checked once, and the public signature without
that parameter, since the runtime fills it and the model must never see it.
They are read here once, so that every wrapper hides and checks the same way.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["ToolSignature", "is_async"]

_NOT_BY_KEYWORD = (
    inspect.Parameter.POSITIONAL_ONLY,
    inspect.Parameter.VAR_POSITIONAL,
    inspect.Parameter.VAR_KEYWORD,
)


def _annotated(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Where ``fn`` keeps its annotations: a callable instance keeps them on ``__call__``."""
    if inspect.isroutine(fn) or inspect.isclass(fn):
        return fn
    call: Callable[..., Any] = type(fn).__call__
    return call


def is_async(fn: Callable[..., Any]) -> bool:
    """Whether calling ``fn`` gives a coroutine (a callable instance: its ``__call__``).

    Args:
        fn: A tool function, or an instance of a class with ``__call__``.

    Returns:
        ``True`` for an ``async def`` function or ``__call__``.
    """
    return inspect.iscoroutinefunction(_annotated(fn))


def _hints(fn: Callable[..., Any], signature: inspect.Signature) -> dict[str, Any]:
    """Resolved parameter annotations; one that cannot be resolved is skipped, not fatal."""
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except Exception:
        pass
    namespace = dict(getattr(fn, "__globals__", {}))
    code = getattr(fn, "__code__", None)
    closure = getattr(fn, "__closure__", None) or ()
    for name, cell in zip(getattr(code, "co_freevars", ()), closure, strict=False):
        try:
            namespace[name] = cell.cell_contents
        except ValueError:
            continue
    hints: dict[str, Any] = {}
    for name, parameter in signature.parameters.items():
        annotation = parameter.annotation
        if annotation is inspect.Parameter.empty:
            continue
        if isinstance(annotation, str):
            try:
                annotation = eval(annotation, namespace)
            except Exception:
                continue
        hints[name] = annotation
    if signature.return_annotation is not inspect.Signature.empty:
        returned = signature.return_annotation
        if not isinstance(returned, str):
            hints["return"] = returned
    return hints


@dataclass(frozen=True, slots=True)
class ToolSignature:
    """A tool function's signature, its resolved hints and its idempotency-key parameter.

    Attributes:
        signature: The function's own signature (for a callable instance, that
            of the instance, without ``self``).
        hints: Resolved annotations by parameter name (and ``return``); one that
            cannot be resolved is left out rather than failing the tool.
        key_param: The parameter that receives the idempotency key, or ``None``.
    """

    signature: inspect.Signature
    hints: Mapping[str, Any]
    key_param: str | None = None

    @classmethod
    def of(
        cls, fn: Callable[..., Any], key_param: str | None = None, *, name: str | None = None
    ) -> ToolSignature:
        """Read ``fn``'s signature and check its idempotency-key parameter once.

        Args:
            fn: The tool function (a plain or async function, or a callable instance).
            key_param: The name of the parameter that receives the key, if any.
            name: The tool's name for the error (default: the function's).

        Returns:
            The signature, with the hints resolved.

        Raises:
            TypeError: ``key_param`` is not a parameter that can be passed by
                keyword, which is how every attempt passes the key.
        """
        signature = inspect.signature(fn)
        if key_param is not None:
            found = signature.parameters.get(key_param)
            if found is None or found.kind in _NOT_BY_KEYWORD:
                name = name or getattr(fn, "__name__", None) or type(fn).__name__
                raise TypeError(
                    f"{name} has no parameter {key_param!r} for the idempotency key"
                    + ("" if found is None else " (it must be passable by keyword)")
                )
        return cls(signature, _hints(_annotated(fn), signature), key_param)

    @property
    def public_parameters(self) -> list[inspect.Parameter]:
        """The parameters a caller passes: all but the idempotency key."""
        return [p for n, p in self.signature.parameters.items() if n != self.key_param]

    def public_signature(self) -> inspect.Signature:
        """The signature without the idempotency-key parameter, which the runtime fills."""
        return self.signature.replace(parameters=self.public_parameters)

    def public_annotations(self) -> dict[str, Any]:
        """The resolved annotations of the public parameters, and the return annotation."""
        names = [p.name for p in self.public_parameters] + ["return"]
        return {name: self.hints[name] for name in names if name in self.hints}
