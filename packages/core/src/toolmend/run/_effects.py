"""What a tool does to the world, which decides whether repeating it is safe.

Effects are declared, never guessed from a tool's name: a wrong guess either
duplicates a payment or withholds a harmless retry, and only the first is
unrecoverable.  An undeclared effect is treated as a write.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

__all__ = ["Effect", "declare_effect", "effect_from_mcp", "effect_of"]

F = TypeVar("F", bound=Callable[..., Any])
_ATTRIBUTE = "__toolmend_effect__"


class Effect(enum.StrEnum):
    """A tool's side effects, as declared by whoever registers it."""

    READ_ONLY = "read_only"
    IDEMPOTENT = "idempotent"
    WRITE = "write"
    UNKNOWN = "unknown"

    @property
    def repeatable(self) -> bool:
        """Whether running the call twice has the same effect as running it once."""
        return self in (Effect.READ_ONLY, Effect.IDEMPOTENT)

    @classmethod
    def parse(cls, value: Effect | str | None) -> Effect:
        """Accept the enum, its value in any case, ``readonly``/``read-only``, or ``None``.

        Anything unrecognised is ``UNKNOWN`` (handled as a write) rather than an
        error: a typo in a declaration must not crash the agent, and treating it
        as a write is the side that cannot duplicate an effect.
        """
        if isinstance(value, Effect):
            return value
        if value is None:
            return cls.UNKNOWN
        text = str(value).strip().lower().replace("-", "_")
        if text == "readonly":
            text = "read_only"
        try:
            return cls(text)
        except ValueError:
            return cls.UNKNOWN


def declare_effect(effect: Effect | str) -> Callable[[F], F]:
    """Decorator that records a tool function's effect on it, for adapters to read.

    Args:
        effect: ``read_only``, ``idempotent``, ``write`` or ``unknown`` (an
            unrecognised value is ``unknown``: handled as a write).

    Returns:
        A decorator that returns the function itself, marked.
    """
    parsed = Effect.parse(effect)

    def mark(fn: F) -> F:
        setattr(fn, _ATTRIBUTE, parsed)
        return fn

    return mark


def effect_of(
    tool: Any, declared: Mapping[str, Effect | str] | None = None, name: str | None = None
) -> Effect:
    """A tool's declared effect: from ``declared[name]``, else from :func:`declare_effect`.

    ``tool`` may be a function or a framework tool object wrapping one (its
    ``func`` or ``coroutine``); ``name`` defaults to its ``name`` or ``__name__``.
    Undeclared tools are ``UNKNOWN``.

    Args:
        tool: A function or a framework tool object wrapping one.
        declared: Effects declared by tool name; they win over the decorator.
        name: The tool's name (default: its ``name`` or ``__name__``).
    """
    key = name or getattr(tool, "name", None) or getattr(tool, "__name__", None)
    if declared and isinstance(key, str) and key in declared:
        return Effect.parse(declared[key])
    for candidate in (tool, getattr(tool, "func", None), getattr(tool, "coroutine", None)):
        marked = getattr(candidate, _ATTRIBUTE, None)
        if isinstance(marked, Effect):
            return marked
    return Effect.UNKNOWN


def _hint(annotations: Any, *names: str) -> Any:
    for name in names:
        value = (
            annotations.get(name)
            if isinstance(annotations, Mapping)
            else getattr(annotations, name, None)
        )
        if value is not None:
            return value
    return None


def effect_from_mcp(annotations: Any) -> Effect:
    """The effect an MCP tool's annotations claim; the one mapping every adapter uses.

    ``readOnlyHint`` true is a read, else ``idempotentHint`` true is an
    idempotent write; ``readOnlyHint`` false, or any ``destructiveHint`` (the spec
    gives it meaning only for tools that write), claims a write.  Annotations
    that claim nothing, or none at all, give ``UNKNOWN``, which is handled as a
    write too but tells a report that nobody said so.  Hints are claims by the
    server (the spec calls them untrusted): use this only for servers the
    caller trusts.

    Args:
        annotations: The tool's ``annotations``: an SDK ``ToolAnnotations`` of
            either SDK line (snake_case or camelCase attributes), a mapping of
            the wire's names, or ``None``.

    Returns:
        The claimed effect, ``Effect.UNKNOWN`` when nothing is claimed.
    """
    if annotations is None:
        return Effect.UNKNOWN
    if _hint(annotations, "readOnlyHint", "read_only_hint") is True:
        return Effect.READ_ONLY
    if _hint(annotations, "idempotentHint", "idempotent_hint") is True:
        return Effect.IDEMPOTENT
    if _hint(annotations, "readOnlyHint", "read_only_hint") is False or (
        _hint(annotations, "destructiveHint", "destructive_hint") is not None
    ):
        return Effect.WRITE
    return Effect.UNKNOWN
