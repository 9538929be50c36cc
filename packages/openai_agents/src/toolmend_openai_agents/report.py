"""What toolmend saw and did in a run: logged, and collected per run on request.

Everything goes to the ``toolmend.openai_agents`` logger.  To get it as data,
start the run inside :func:`capture`; the collector travels with the run
through the context, so concurrent runs each started in their own
``capture()`` block never mix.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from toolmend import Report, ToolFailure

__all__ = ["Captured", "FailureRecord", "capture", "failed", "rewritten"]

log = logging.getLogger("toolmend.openai_agents")


@dataclass(frozen=True, slots=True)
class FailureRecord:
    """One failed tool call: what the model was shown and the failure behind it."""

    call_id: str | None
    shown: str
    failure: ToolFailure

    def to_dict(self) -> dict[str, Any]:
        return {"call_id": self.call_id, "shown": self.shown, "failure": self.failure.to_dict()}


class Captured:
    """The failures and rewrites of the runs started inside one :func:`capture` block."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._failures: list[FailureRecord] = []
        self._rewrites: list[Report] = []

    @property
    def failures(self) -> tuple[FailureRecord, ...]:
        with self._lock:
            return tuple(self._failures)

    @property
    def rewrites(self) -> tuple[Report, ...]:
        """One report per model call whose input held a failure at the decision step."""
        with self._lock:
            return tuple(self._rewrites)

    def to_dict(self) -> dict[str, Any]:
        return {
            "failures": [f.to_dict() for f in self.failures],
            "rewrites": [r.to_dict() for r in self.rewrites],
        }

    def _add_failure(self, record: FailureRecord) -> None:
        with self._lock:
            self._failures.append(record)

    def _add_rewrite(self, report: Report) -> None:
        with self._lock:
            self._rewrites.append(report)


_CAPTURE: ContextVar[Captured | None] = ContextVar("toolmend_openai_agents_capture", default=None)


@contextmanager
def capture() -> Iterator[Captured]:
    """Collect what toolmend does in the runs started inside the block.

    ``Runner.run_streamed`` must be called inside the block (its background
    task copies the context when it starts); consuming the stream may happen
    anywhere.
    """
    captured = Captured()
    token = _CAPTURE.set(captured)
    try:
        yield captured
    finally:
        _CAPTURE.reset(token)


def failed(call_id: str | None, shown: str, failure: ToolFailure) -> None:
    """Report a failed tool call and the text the model will read for it."""
    log.info(
        "toolmend: tool %s failed (call %s): kind=%s rule=%s reason=%s attempts=%d "
        "outcome_unknown=%s",
        failure.tool,
        call_id,
        failure.kind.value,
        failure.rule,
        failure.reason,
        failure.attempts,
        failure.outcome_unknown,
    )
    captured = _CAPTURE.get()
    if captured is not None:
        captured._add_failure(FailureRecord(call_id, shown, failure))


def rewritten(report: Report) -> None:
    """Report what the input filter found at the decision step and what it did."""
    if not report.detections:
        return
    log.info("toolmend: model input: %s", report.header())
    captured = _CAPTURE.get()
    if captured is not None:
        captured._add_rewrite(report)
