"""How much of a call's values and texts toolmend walks and reads: bounded, whatever comes.

A tool's arguments come from a model and its result from whoever controls the
tool's data, so either can be anything: JSON nested 600 levels deep, a
structure that holds itself, a 10 MB error, a result of a million text parts.
Toolmend must not raise on them (the agent's run goes on, as it would without
toolmend) nor spend more on them than on a page of text (the rewrite runs on
every model request, under ``ainvoke`` on the event loop).  So:

- every walk of a value (a record's arguments, the note's, a span's, the loop
  guard's key) goes through :func:`prune`: at most :data:`DEPTH` levels and
  :data:`NODES` values, a deeper or further value replaced by :data:`MORE` and
  a value that holds itself by :data:`CYCLE`;
- every scan of a text (detection, classification, the pile-up count, the
  developer-step filter) reads :func:`glance` of it: the text itself up to
  :data:`TEXT_LIMIT` characters, else its head and its tail (the cause is at an
  error's start, a trace's last exception at its end);
- a result's content parts are read up to :data:`PARTS` of them
  (:func:`parts_read`).

Values and texts within the bounds come back as the very same objects, so
nothing ordinary changes: a verdict, a note or a record differs only for what
is beyond a bound.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "CYCLE",
    "DEPTH",
    "MORE",
    "NODES",
    "PARTS",
    "TEXT_HEAD",
    "TEXT_LIMIT",
    "TEXT_TAIL",
    "glance",
    "jsonable",
    "parts_read",
    "prune",
    "safe_repr",
]

DEPTH = 32
"""Levels of nesting walked; real arguments rarely pass ten."""
NODES = 10_000
"""Values walked in one value, containers and leaves together."""
MORE = "…"
"""What stands for a value beyond :data:`DEPTH` or :data:`NODES`."""
CYCLE = "<cycle>"
"""What stands for a container met again inside itself."""
TEXT_LIMIT = 256 * 1024
"""Texts up to this many characters are read whole (the JSON readers' own limit)."""
TEXT_HEAD = 128 * 1024
"""Characters read from the start of a longer text."""
TEXT_TAIL = 64 * 1024
"""Characters read from the end of a longer text."""
PARTS = 1_000
"""Content parts read of one result: the first three quarters and the last quarter of them."""


class _Budget:
    """The values a walk may still visit, shared by every level of one walk."""

    __slots__ = ("left",)

    def __init__(self, nodes: int) -> None:
        self.left = nodes


def _walk(value: Any, depth: int, budget: _Budget, path: set[int]) -> Any:
    """``value`` within the bounds: the same object when nothing had to go."""
    budget.left -= 1
    if not isinstance(value, Mapping | list | tuple):
        return value
    if depth <= 0 or budget.left < 0:
        return MORE
    if id(value) in path:
        return CYCLE
    is_mapping = isinstance(value, Mapping)
    items: Iterable[Any] = value.items() if isinstance(value, Mapping) else value
    out: list[Any] = []
    changed = False
    path.add(id(value))
    try:
        for item in items:
            if budget.left <= 0:
                changed = True
                out.append((MORE, MORE) if is_mapping else MORE)
                break
            inner = item[1] if is_mapping else item
            new = _walk(inner, depth - 1, budget, path)
            out.append((item[0], new) if is_mapping else new)
            changed = changed or new is not inner
    except Exception:
        return MORE  # a container that cannot be read (a broken mapping) is not walked
    finally:
        path.discard(id(value))
    if not changed:
        return value
    if is_mapping:
        return dict(out)
    return tuple(out) if isinstance(value, tuple) else out


def prune(value: Any, *, depth: int = DEPTH, nodes: int = NODES) -> Any:
    """``value`` with what lies beyond the bounds replaced by a marker.

    Mappings, lists and tuples are walked; a container deeper than ``depth``,
    or met after ``nodes`` values, becomes :data:`MORE`, and one met again
    inside itself becomes :data:`CYCLE`.  A container with something replaced
    is copied (a mapping as a ``dict``); everything else, and ``value`` itself
    when nothing was replaced, is the same object, so ``prune(value) is value``
    says whether it was within the bounds.

    Args:
        value: Any value, e.g. a call's arguments.
        depth: The levels of nesting kept.
        nodes: The values visited at most.
    """
    return _walk(value, depth, _Budget(nodes), set())


def safe_repr(value: Any) -> str:
    """``repr(value)``, or ``<type>`` when the object's own ``repr`` raises (too deep, broken).

    Args:
        value: Any value.
    """
    try:
        return repr(value)
    except Exception:
        return f"<{type(value).__name__}>"


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return safe_repr(value)


def jsonable(value: Any) -> Any:
    """``value`` as JSON-ready data, within the bounds: mappings, lists and scalars.

    Keys become strings, tuples lists, and any other object its ``repr``.

    Args:
        value: Any value, e.g. a call's arguments.
    """
    return _plain(prune(value))


def glance(text: str) -> str:
    """The part of ``text`` that is read: all of it, or its head and tail when too long.

    A text of at most :data:`TEXT_LIMIT` characters comes back as it is.  A
    longer one gives its first :data:`TEXT_HEAD` and last :data:`TEXT_TAIL`
    characters joined by a line break, so the work on it no longer grows with
    its size.

    Args:
        text: Any text, e.g. a tool's error.
    """
    if len(text) <= TEXT_LIMIT:
        return text
    return f"{text[:TEXT_HEAD]}\n{text[-TEXT_TAIL:]}"


def parts_read(parts: Sequence[Any]) -> Sequence[Any]:
    """The parts of a result that are read: all of them, or the first and last when too many.

    Args:
        parts: A result's content parts.
    """
    if len(parts) <= PARTS:
        return parts
    tail = PARTS // 4
    return [*parts[: PARTS - tail], *parts[-tail:]]
