"""Failures that pile up: the same tool failing with the same error, attempt after attempt.

Models make more mistakes as their own uncorrected errors accumulate in context,
and on HumanEval restarting from the task after 2-3 failed fixes beat
continuing (72.56% to 82.82% for one model; Adnan, Jun 2025).  So when a tool
has failed ``after`` times in a row with the same class of error, the next
note says so and recommends stopping, or asking the user, instead of one more
attempt.  This is the one rule; the loop guard (tool side) and the rewrite
(model side, from the conversation) both count with :class:`Streaks`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .._bounds import glance
from .._types import Kind
from ._quote import literal

__all__ = ["PILE_UP", "Streaks", "error_class", "pile_up_advice"]

PILE_UP = (
    "The last {count} calls of {tool} failed with the same error ({error_class}), so "
    "another attempt is unlikely to help. Stop retrying it: tell the user what failed "
    "and what you tried, or ask the user how to proceed."
)

_EXCEPTION = re.compile(r"\b([A-Z][A-Za-z0-9_]*(?:Error|Exception|Fault))\b")
_STATUS = re.compile(
    r"\b(?:HTTP(?:/\d(?:\.\d)?)?|status(?:\s+code)?|error\s+code)\s*[:=]?\s*([1-5]\d\d)\b",
    re.IGNORECASE,
)
_CODE = re.compile(r"[\"']?\b(?:code|error_code|errorCode)\b[\"']?\s*[:=]\s*[\"']?([\w.-]{2,40})")
_LEADING_STATUS = re.compile(r"^\W*([1-5]\d\d)\b|\b([1-5]\d\d)\s+[A-Z][a-z]+")


def error_class(kind: Kind | None, text: str) -> str:
    """What makes two errors "the same".

    The exception type, else the status, else the error code, else the kind.
    Deterministic, and blind to the values in the message.  A huge text is
    read by its head and tail (:func:`toolmend._bounds.glance`).

    Args:
        kind: the failure's kind, the fallback class.
        text: the error text as the model was shown it.
    """
    text = glance(text)
    for pattern in (_EXCEPTION, _STATUS, _LEADING_STATUS, _CODE):
        found = pattern.search(text)
        if found is not None:
            return next(g for g in found.groups() if g)
    return kind.value if kind is not None else "failure"


def pile_up_advice(tool: str, count: int, cls: str, after: int | None) -> str | None:
    """The pile-up sentence when ``count`` same-class failures reached ``after``, else None.

    Args:
        tool: the tool's name; like the error class it is tool-controlled text, so the
            sentence shows it bare only when it is a plain identifier
            (:func:`toolmend.deliver._quote.literal`).
        count: consecutive failures of the tool with the error class ``cls``.
        cls: the error class (see :func:`error_class`).
        after: the threshold; ``None`` or 0 turns the rule off.
    """
    if not after or count < after:
        return None
    return PILE_UP.format(count=count, tool=literal(tool), error_class=literal(cls))


@dataclass(slots=True)
class Streaks:
    """Per tool: the error class of its last failures and how many in a row share it.

    A success of the tool ends its streak; a failure of another class starts a
    new one.  Other tools' calls do not interrupt it.
    """

    _last: dict[str, tuple[str, int]] = field(default_factory=dict)

    def failed(self, tool: str, cls: str) -> int:
        """Record a failure; the length of the tool's streak after it."""
        last = self._last.get(tool)
        count = last[1] + 1 if last is not None and last[0] == cls else 1
        self._last[tool] = (cls, count)
        return count

    def succeeded(self, tool: str) -> None:
        """Record a success: the tool's streak ends."""
        self._last.pop(tool, None)

    def forget(self, tool: str | None = None) -> None:
        """Drop one tool's streak, or every streak."""
        if tool is None:
            self._last.clear()
        else:
            self._last.pop(tool, None)

    def copy(self) -> Streaks:
        """The same streaks, to go on apart (a loop guard's copy)."""
        return Streaks(dict(self._last))

    def current(self, tool: str) -> tuple[str, int] | None:
        """The tool's (error class, count), or None when its last call succeeded."""
        return self._last.get(tool)
