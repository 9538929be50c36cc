"""One failed attempt as a record, and why no further attempt followed.

Kept apart from ``retry`` so that :mod:`toolmend.run._failure` can use these records
while ``retry`` uses :class:`~toolmend.run._failure.ToolFailure` in its annotations,
without an import cycle (``typing.get_type_hints`` resolves both).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .._types import Kind
from ..classify._raised import ExceptionInfo
from ._effects import Effect

__all__ = ["STOP_SENTENCES", "AttemptRecord", "Stop", "outcome_unknown"]


class Stop(enum.StrEnum):
    """Why no further automatic attempt was made."""

    KIND = "kind"
    """Not a transient failure: repeating it cannot help."""
    UNSAFE = "unsafe"
    """Transient, but repeating could duplicate a side effect."""
    LANDED = "landed"
    """The verify hook found that the failed attempt took effect."""
    ATTEMPTS = "attempts"
    DEADLINE = "deadline"
    BUDGET = "budget"

    @property
    def sentence(self) -> str:
        """Why no further attempt was made, in one sentence for people (reports, logs)."""
        return STOP_SENTENCES[self]


STOP_SENTENCES: Mapping[Stop, str] = {
    Stop.KIND: "Not retried: the failure is not temporary, so the same call would fail again.",
    Stop.UNSAFE: (
        "Not retried: the call may have taken effect, and the tool is not declared safe to repeat."
    ),
    Stop.LANDED: "Not retried: a check found that the failed call did take effect.",
    Stop.ATTEMPTS: "Not retried again: every attempt the retry policy allows was used.",
    Stop.DEADLINE: (
        "Not retried: the wait before another attempt would not fit in the time allowed "
        "for this call."
    ),
    Stop.BUDGET: (
        "Not retried: automatic retries of this tool are paused because its recent calls "
        "keep failing."
    ),
}
"""One sentence per stop reason, for people: adapters show these rather than their own."""


@dataclass(frozen=True, slots=True)
class AttemptRecord:
    """One failed attempt and what was decided after it, for reports and hooks.

    Attributes:
        attempt: Which attempt failed (1 for the first).
        error: What it raised, in one line.
        kind: The failure's kind.
        reason: The evidence.
        retry_after: Seconds the failure asked to wait.
        before_dispatch: Whether the request never left the client.
        outcome_unknown: Whether a write may have taken effect.
        stop: Why no further attempt followed; ``None`` when one did.
    """

    attempt: int
    error: str
    kind: Kind
    reason: str
    retry_after: float | None
    before_dispatch: bool
    outcome_unknown: bool
    delay: float | None
    """Seconds slept before the next attempt; ``None`` when none followed."""
    stop: Stop | None
    exception: BaseException | None = field(default=None, repr=False, compare=False)
    """What the attempt raised, for adapters that show the error in their own words."""

    @property
    def why_stopped(self) -> str | None:
        """:attr:`Stop.sentence` of this attempt's stop; ``None`` when a retry followed."""
        return self.stop.sentence if self.stop is not None else None

    def to_dict(self) -> dict[str, Any]:
        """This record as JSON-ready data (the exception left out)."""
        return {
            "attempt": self.attempt,
            "error": self.error,
            "kind": self.kind.value,
            "reason": self.reason,
            "retry_after": self.retry_after,
            "before_dispatch": self.before_dispatch,
            "outcome_unknown": self.outcome_unknown,
            "delay": self.delay,
            "stop": self.stop.value if self.stop is not None else None,
            "why_stopped": self.why_stopped,
        }


def _rejected(status: int | None) -> bool:
    return status is not None and (400 <= status < 500 or status == 503)


def outcome_unknown(info: ExceptionInfo, effect: Effect, *, trust_dispatch: bool = False) -> bool:
    """Whether a failed call of a non-repeatable tool may nevertheless have taken effect.

    A Python tool may have done anything before it raised or returned an error
    (written a row, then failed to send the receipt), so by default every failure
    of a write may have landed, whatever its kind or status: inferring "nothing
    happened" from a 403 or a ``ValueError`` is how a resumed worker pays twice.
    Only a tool that opted in with ``trust_dispatch`` (it is one request, see
    ``RetryPolicy.retry_before_dispatch``) is read from its exception: refused
    with a 4xx or 503, a kind that says the input or the permissions were
    rejected, or a failure that never left the client means it did not land.
    """
    if effect.repeatable:
        return False
    refused = (
        info.before_dispatch
        or _rejected(info.status)
        or info.kind in (Kind.FIXABLE, Kind.UNRECOVERABLE)
    )
    return not (trust_dispatch and refused)
