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
from typing import Any

from toolmend import Form, ToolFailure
from toolmend.contracts import Review
from toolmend.integrations import (
    AttemptRecord,
    CallRecord,
    Report,
    Source,
    recording_outcomes,
    scoped,
)

from ._runs import RUNS

__all__ = [
    "Captured",
    "capture",
    "contract_fired",
    "failed",
    "rewritten",
    "succeeded",
]

log = logging.getLogger("toolmend.openai_agents")


class Captured:
    """What toolmend did in the runs started inside one :func:`capture`.

    Each tool call is the core's :class:`~toolmend.integrations.CallRecord`,
    the record every adapter keeps, with the call's id and what the model was
    shown; each rewrite of the model's input is the core's report.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._failures: list[CallRecord] = []
        self._retries: list[CallRecord] = []
        self._contracts: list[CallRecord] = []
        self._rewrites: list[Report] = []

    @property
    def failures(self) -> tuple[CallRecord, ...]:
        """One record per failed call, with what the model was shown."""
        with self._lock:
            return tuple(self._failures)

    @property
    def retries(self) -> tuple[CallRecord, ...]:
        """One record per call that succeeded only after retrying.

        Failed calls are in :attr:`failures`, with their attempts.
        """
        with self._lock:
            return tuple(self._retries)

    @property
    def contracts(self) -> tuple[CallRecord, ...]:
        """One record per result that violated its contract, with the violations."""
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

    def _add(self, records: list[CallRecord], record: CallRecord) -> None:
        with self._lock:
            records.append(record)

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


def failed(
    call_id: str | None,
    shown: str,
    failure: ToolFailure,
    *,
    form: Form | None = None,
    source: Source = Source.EXCEPTION,
    observed: bool = True,
) -> None:
    """Report a failed tool call and the text the model will read for it.

    Args:
        call_id: The SDK's id of the call.
        shown: What the model reads for the call.
        failure: The core's failure of the call.
        form: The delivery form, where the caller knows it.
        source: Where the failure was seen (a raised exception, or a flagged result).
        observed: Whether the outcome recorder follows it (not for a tool that does not exist).
    """
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
        record = CallRecord.of_failure(
            failure,
            form=form.value if form is not None else None,
            source=source.value,
            call_id=call_id,
            shown=shown,
        )
        captured._add(captured._failures, record)
    if observed and recording_outcomes() is not None:
        RUNS.observe(CallRecord.of_failure(failure, call_id=call_id))


def succeeded(
    call_id: str | None,
    tool: str,
    arguments: Mapping[str, Any],
    history: tuple[AttemptRecord, ...],
) -> None:
    """Report a call that succeeded, after ``len(history)`` failed attempts (maybe none).

    A retried success is logged and captured; every success goes to the outcome
    recorder, as the evidence that settles the run's earlier failures.

    Args:
        call_id: The SDK's id of the call.
        tool: The tool's name.
        arguments: The call's arguments.
        history: The failed attempts, oldest first.
    """
    recording = recording_outcomes() is not None
    if not history and not recording:
        return
    record = CallRecord.of_success(tool, history=history, call_id=call_id, arguments=arguments)
    if history:
        log.info(
            "toolmend: tool %s succeeded after %d attempts (call %s)",
            tool, len(history) + 1, call_id,
        )  # fmt: skip
        captured = _CAPTURE.get()
        if captured is not None:
            captured._add(captured._retries, record)
    if recording:
        RUNS.observe(record)


def contract_fired(
    call_id: str | None, tool: str, arguments: Mapping[str, Any], review: Review
) -> None:
    """Report a successful result that violated its contract.

    Args:
        call_id: The SDK's id of the call.
        tool: The tool's name.
        arguments: The call's arguments.
        review: The core's review of the result.
    """
    log.info(
        "toolmend: %s result violates its contract (call %s): %s",
        tool, call_id, ", ".join(v.code.value for v in review.violations),
    )  # fmt: skip
    captured = _CAPTURE.get()
    if captured is not None:
        record = CallRecord.of_success(tool, review=review, call_id=call_id, arguments=arguments)
        captured._add(captured._contracts, record)


def rewritten(report: Report) -> None:
    """Report what the input filter found at the decision step and what it did.

    Args:
        report: The core's report of the rewrite.
    """
    if not report.detections:
        return
    log.info("toolmend: model input: %s", report.header())
    captured = _CAPTURE.get()
    if captured is not None:
        captured._add_rewrite(report)
