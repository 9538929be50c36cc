"""Read the run, not only the text: what earlier calls of the same tool already showed.

A run is evidence about its own failures before any outcome is recorded:

- ``history:succeeded-before``: the same tool with the same arguments succeeded
  earlier in this run, and has not failed with this error since.  An unclear
  failure of a call that just worked is likely temporary, so an ambiguous
  verdict becomes transient.  Only an ambiguous one: wording, codes and statuses
  that say anything keep their say.

Not read: "the same error followed several different arguments, so the
arguments are not the cause".  Measured on the replay benchmark it only ever
turned right fixable readings into silence (84.5% correct became 78.2%, wrong
unchanged): a model that tries several wrong values gets the same error each
time, and each value was still the cause.

Pure and bounded: the last :data:`LOOKBACK` calls are read, arguments are
compared as JSON-ready values.  The caller passes the run's earlier calls as any
objects with ``tool``, ``failed``, ``arguments`` and ``signature`` (a
:class:`~toolmend.integrations.CallRecord` has them) or their ``to_dict`` form;
an entry that has neither is skipped, never an error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from .._bounds import jsonable
from .._types import Kind
from ._signatures import error_signature
from ._text import Classification

__all__ = ["LOOKBACK", "Earlier", "read_history"]

LOOKBACK = 256
"""Earlier calls read, newest first."""


class Earlier(Protocol):
    """An earlier call of the run, as the history reader needs it."""

    @property
    def tool(self) -> str: ...

    @property
    def failed(self) -> bool: ...

    @property
    def arguments(self) -> Mapping[str, Any] | None: ...

    @property
    def signature(self) -> str | None: ...


def _key(arguments: Any) -> str:
    return repr(jsonable(arguments if isinstance(arguments, Mapping) else {}))


def _get(earlier: Earlier | Mapping[str, Any], name: str) -> Any:
    """A field of a record or of its ``to_dict`` form; missing is None, never an error."""
    if isinstance(earlier, Mapping):
        return earlier.get(name)
    return getattr(earlier, name, None)


def _signature(earlier: Earlier | Mapping[str, Any]) -> str | None:
    if isinstance(earlier, Mapping):
        cause = earlier.get("cause")
        return error_signature(cause) if isinstance(cause, str) else None
    found = getattr(earlier, "signature", None)
    return found if isinstance(found, str) else None


def read_history(
    kind: Kind | None,
    *,
    tool: str | None,
    arguments: Mapping[str, Any] | None,
    signature: str | None,
    history: Sequence[Earlier | Mapping[str, Any]],
) -> Classification | None:
    """What the run's earlier calls say about this failure, or None.

    Args:
        kind: The kind read so far (only an ambiguous one can change).
        tool: The failed call's tool.
        arguments: Its arguments.
        signature: Its error signature.
        history: The run's earlier calls, oldest first.

    Returns:
        A transient classification (``history:succeeded-before``), or None.
    """
    if tool is None or kind is not Kind.AMBIGUOUS or not history:
        return None
    mine = _key(arguments)
    for earlier in reversed(history[-LOOKBACK:]):
        if _get(earlier, "tool") != tool or _key(_get(earlier, "arguments")) != mine:
            continue
        if _get(earlier, "failed") is False:
            return Classification(
                Kind.TRANSIENT,
                "the same call succeeded earlier in this run",
                "history:succeeded-before",
            )
        if signature is not None and _signature(earlier) == signature:
            return None  # it has failed like this since it last worked
    return None
