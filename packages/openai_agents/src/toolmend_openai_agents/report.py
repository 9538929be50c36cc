"""What toolmend saw and did in a run: logged, and collected per run on request.

Everything goes to the ``toolmend.openai_agents`` logger.  To get it as data,
start the run inside :func:`capture`; the collector travels with the run
through the context, so concurrent runs each started in their own
``capture()`` block never mix.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from toolmend import ToolFailure
from toolmend.contracts import Review
from toolmend.integrations import AttemptRecord, Report, scoped

__all__ = [
    "Captured",
    "ContractRecord",
    "FailureRecord",
    "RetryRecord",
    "capture",
    "contract_fired",
    "failed",
    "retried",
    "rewritten",
]

log = logging.getLogger("toolmend.openai_agents")


@dataclass(frozen=True, slots=True)
class FailureRecord:
    """One failed tool call: what the model was shown and the failure behind it."""

    call_id: str | None
    shown: str
    failure: ToolFailure

    def to_dict(self) -> dict[str, Any]:
        """This record as JSON-ready data."""
        return {"call_id": self.call_id, "shown": self.shown, "failure": self.failure.to_dict()}


@dataclass(frozen=True, slots=True)
class ContractRecord:
    """One successful result that violated its outcome contract, and the core's review."""

    call_id: str | None
    tool: str
    arguments: Mapping[str, Any]
    review: Review

    @property
    def shown(self) -> str:
        """What the model reads in place of the result: the receipt."""
        return self.review.text

    def to_dict(self) -> dict[str, Any]:
        """This record as JSON-ready data."""
        return {
            "call_id": self.call_id,
            "tool": self.tool,
            "arguments": dict(self.arguments),
            "contract": self.review.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class RetryRecord:
    """One tool call that succeeded after failed attempts, retried inside the call."""

    call_id: str | None
    tool: str
    arguments: Mapping[str, Any]
    history: tuple[AttemptRecord, ...]
    """The failed attempts, in order, each with the core's decision after it."""

    @property
    def attempts(self) -> int:
        """Attempts in all, the successful one included."""
        return len(self.history) + 1

    def to_dict(self) -> dict[str, Any]:
        """This record as JSON-ready data."""
        return {
            "call_id": self.call_id,
            "tool": self.tool,
            "arguments": dict(self.arguments),
            "attempts": self.attempts,
            "history": [record.to_dict() for record in self.history],
        }


class Captured:
    """What toolmend did in the runs started inside one :func:`capture`.

    The failures, retries, receipts and rewrites of the runs started inside one
    :func:`capture`.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._failures: list[FailureRecord] = []
        self._retries: list[RetryRecord] = []
        self._contracts: list[ContractRecord] = []
        self._rewrites: list[Report] = []

    @property
    def failures(self) -> tuple[FailureRecord, ...]:
        """One record per failed call, with what the model was shown."""
        with self._lock:
            return tuple(self._failures)

    @property
    def retries(self) -> tuple[RetryRecord, ...]:
        """One record per call that succeeded only after retrying.

        One record per call that succeeded only after retrying (failed calls are in
        :attr:`failures`, with their attempts).
        """
        with self._lock:
            return tuple(self._retries)

    @property
    def contracts(self) -> tuple[ContractRecord, ...]:
        """One record per result that violated its contract (each got a receipt)."""
        with self._lock:
            return tuple(self._contracts)

    @property
    def rewrites(self) -> tuple[Report, ...]:
        """One report per model call whose input held a failure at the decision step."""
        with self._lock:
            return tuple(self._rewrites)

    def to_dict(self) -> dict[str, Any]:
        """Everything captured, as JSON-ready data."""
        return {
            "failures": [f.to_dict() for f in self.failures],
            "retries": [r.to_dict() for r in self.retries],
            "contracts": [c.to_dict() for c in self.contracts],
            "rewrites": [r.to_dict() for r in self.rewrites],
        }

    def _add_failure(self, record: FailureRecord) -> None:
        with self._lock:
            self._failures.append(record)

    def _add_retry(self, record: RetryRecord) -> None:
        with self._lock:
            self._retries.append(record)

    def _add_contract(self, record: ContractRecord) -> None:
        with self._lock:
            self._contracts.append(record)

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
    with scoped(_CAPTURE, Captured()) as captured:
        yield captured


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


def retried(
    call_id: str | None,
    tool: str,
    arguments: Mapping[str, Any],
    history: tuple[AttemptRecord, ...],
) -> None:
    """Report a call that succeeded after ``len(history)`` failed attempts."""
    log.info(
        "toolmend: tool %s succeeded after %d attempts (call %s)", tool, len(history) + 1, call_id
    )
    captured = _CAPTURE.get()
    if captured is not None:
        captured._add_retry(RetryRecord(call_id, tool, arguments, history))


def contract_fired(
    call_id: str | None, tool: str, arguments: Mapping[str, Any], review: Review
) -> None:
    """Report a successful result that violated its contract."""
    log.info(
        "toolmend: %s result violates its contract (call %s): %s",
        tool, call_id, ", ".join(v.code.value for v in review.violations),
    )  # fmt: skip
    captured = _CAPTURE.get()
    if captured is not None:
        captured._add_contract(ContractRecord(call_id, tool, arguments, review))


def rewritten(report: Report) -> None:
    """Report what the input filter found at the decision step and what it did."""
    if not report.detections:
        return
    log.info("toolmend: model input: %s", report.header())
    captured = _CAPTURE.get()
    if captured is not None:
        captured._add_rewrite(report)
