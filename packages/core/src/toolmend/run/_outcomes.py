"""What followed each failure, observed as runs happen: the evidence ``toolmend learn`` reads.

:func:`~toolmend.integrations.follow_ups` reads a finished run's records after the
fact; a deployment wants the same evidence without keeping whole runs.  An
:class:`Outcomes` is fed each finished call of each run as an adapter makes its
:class:`~toolmend.integrations.CallRecord`, keeps the run's failures that are
still waiting for evidence, and settles each one as soon as the evidence is in:

- a later call of the same tool succeeds: ``retry_succeeded`` with the same
  arguments, ``changed_arguments_succeeded`` with others;
- a call whose automatic retries succeeded carries its own evidence: each failed
  attempt is a ``retry_succeeded`` at once;
- the run ends (:meth:`Outcomes.end`, or its run is evicted): ``failed_again`` when
  later calls of the tool failed with the same error signature, else ``stopped``.

A call refused before it ran (``attempts == 0``: the loop guard, a spent budget)
is no evidence at all: its text is toolmend's, not the tool's.

The rules are :func:`follow_ups`'s, so the two never disagree on one run.  A
settled failure becomes a row (the minimal line ``toolmend learn`` reads, plus its
signature, run and time) for the sink, is logged at INFO on ``toolmend.outcomes``
and becomes a short ``toolmend.follow_up`` span with ``toolmend.followed_by``.

Bounded and never in the agent's way: at most ``runs`` runs and ``pending``
failures per run are kept (the oldest run is settled first), the texts are cut to
:data:`CONTENT_LIMIT`, and a sink that raises is logged and skipped.  One
process-wide recorder, installed with :func:`record_outcomes`, is what every
adapter feeds: one line turns recording on for all of them.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from .. import telemetry
from .._bounds import jsonable
from ..classify._signatures import error_signature
from ._records import CallRecord, same_arguments

__all__ = [
    "CONTENT_LIMIT",
    "OutcomeSink",
    "Outcomes",
    "end_run",
    "observe_call",
    "outcome_row",
    "record_outcomes",
    "recording_outcomes",
]

log = logging.getLogger("toolmend.outcomes")

CONTENT_LIMIT = 4096
"""Characters of an error text kept in a row: enough for its signature and a reader."""


class OutcomeSink(Protocol):
    """Where settled failures go: a store (``toolmend.durable.SqlOutcomeStore``), a file, a list."""

    def add(self, row: Mapping[str, Any]) -> None:
        """Keep one row (``tool``, ``content``, ``arguments``, ``outcome``, ``signature``...).

        Args:
            row: The settled failure, as ``toolmend learn`` reads it.
        """


@dataclass(slots=True)
class _Waiting:
    """A failure of a run still waiting for evidence."""

    record: CallRecord
    signature: str | None
    repeated: bool = False


class Outcomes:
    """Follows each run's failures to what came next, and hands each settled one to ``sink``.

    Thread-safe: adapters feed it from worker threads and event loops alike.

    Args:
        sink: Receives each settled failure's row; ``None`` keeps only the log and span.
        runs: Runs followed at once; past it the oldest run ends (its failures settle).
        pending: Failures kept per run; past it the oldest settles as it stands.
        clock: Seconds since the epoch, for each row's ``at``.
    """

    def __init__(
        self,
        sink: OutcomeSink | None = None,
        *,
        runs: int = 1024,
        pending: int = 64,
        clock: Any = time.time,
    ) -> None:
        if runs < 1 or pending < 1:
            raise ValueError("runs and pending must be at least 1")
        self.sink = sink
        self.runs = runs
        self.pending = pending
        self._clock = clock
        self._lock = threading.Lock()
        self._waiting: OrderedDict[Hashable, list[_Waiting]] = OrderedDict()

    def observe(self, record: CallRecord, run: Hashable = None) -> tuple[CallRecord, ...]:
        """One finished call of ``run``: settle what it is evidence for; wait on it if it failed.

        Args:
            record: The call's record, as the adapter made it.
            run: The run it belongs to (any hashable id; ``None`` is one shared run).

        Returns:
            The failures this call settled, each with its ``outcome``.
        """
        if record.failed and record.attempts == 0:
            return ()  # refused before it ran (a loop guard, a budget): not the tool's answer
        settled: list[CallRecord] = []
        evicted: list[tuple[Hashable, list[CallRecord]]] = []
        with self._lock:
            waiting = self._waiting.get(run)
            if waiting is None:
                waiting = self._waiting[run] = []
                while len(self._waiting) > self.runs:
                    gone, oldest = self._waiting.popitem(last=False)
                    evicted.append((gone, _ended(oldest)))
            else:
                self._waiting.move_to_end(run)
            signature = record.signature if record.failed else None
            kept: list[_Waiting] = []
            for item in waiting:
                if item.record.tool != record.tool:
                    kept.append(item)
                elif not record.failed:
                    same = same_arguments(record.arguments, item.record.arguments)
                    outcome = "retry_succeeded" if same else "changed_arguments_succeeded"
                    settled.append(replace(item.record, outcome=outcome))
                else:
                    item.repeated = item.repeated or item.signature == signature
                    kept.append(item)
            if record.failed:
                kept.append(_Waiting(record, signature))
                while len(kept) > self.pending:
                    settled.extend(_ended([kept.pop(0)]))
            elif record.history:
                settled.extend(_retried(record))
            waiting[:] = kept
        for gone, records in evicted:
            self._emit(records, gone)
        self._emit(settled, run)
        return tuple(settled)

    def end(self, run: Hashable = None) -> tuple[CallRecord, ...]:
        """The run ended: its waiting failures settle (``failed_again`` or ``stopped``).

        Args:
            run: The run that ended.

        Returns:
            The failures it settled.
        """
        with self._lock:
            waiting = self._waiting.pop(run, [])
        settled = tuple(_ended(waiting))
        self._emit(settled, run)
        return settled

    def close(self) -> tuple[CallRecord, ...]:
        """Every run ends now (a worker shutting down).

        Returns:
            The failures this settled.
        """
        with self._lock:
            runs = list(self._waiting)
        return tuple(record for run in runs for record in self.end(run))

    def _emit(self, settled: Sequence[CallRecord], run: Hashable) -> None:
        """Each settled failure to the log, the span and the sink; a sink that raises is skipped."""
        if not settled:
            return
        for record in settled:
            row = outcome_row(record, run=run, at=self._clock())
            log.info(
                "toolmend: %s failed with %r; what followed: %s",
                record.tool,
                row["signature"],
                record.outcome,
            )
            telemetry.followed_up(row)
            if self.sink is None:
                continue
            try:
                self.sink.add(row)
            except Exception as exc:  # a store error never reaches the agent
                log.warning("toolmend: outcome of %s not stored: %r", record.tool, exc)


def _ended(waiting: Sequence[_Waiting]) -> list[CallRecord]:
    """Failures whose run ended: ``failed_again`` if their signature came back, else ``stopped``."""
    return [
        replace(item.record, outcome="failed_again" if item.repeated else "stopped")
        for item in waiting
    ]


def _retried(record: CallRecord) -> list[CallRecord]:
    """The failed attempts before an automatic retry succeeded: each one a ``retry_succeeded``."""
    out = []
    for attempt in record.history:
        error = attempt.get("error") or attempt.get("cause") or attempt.get("reason")
        if not isinstance(error, str) or not error:
            continue
        out.append(
            replace(
                record,
                failed=True,
                cause=error,
                kind=attempt.get("kind") if isinstance(attempt.get("kind"), str) else None,
                history=(),
                outcome="retry_succeeded",
            )
        )
    return out


def outcome_row(record: CallRecord, *, run: Hashable = None, at: float = 0.0) -> dict[str, Any]:
    """A settled failure as the line ``toolmend learn`` reads, plus ``signature``, ``run``, ``at``.

    Args:
        record: A failed call's record with its ``outcome``.
        run: The run it belonged to (kept as text).
        at: When it settled, in seconds since the epoch.

    Returns:
        The row: JSON-ready, its text cut to :data:`CONTENT_LIMIT`.
    """
    content = (record.cause or record.reason or "")[:CONTENT_LIMIT]
    return {
        "tool": record.tool,
        "content": content,
        "is_error": True,
        "arguments": None if record.arguments is None else jsonable(record.arguments),
        "outcome": record.outcome or "stopped",
        "signature": error_signature(content),
        "run": None if run is None else str(run)[:200],
        "at": at,
    }


_recorder: Outcomes | None = None


def record_outcomes(sink: OutcomeSink | Outcomes | None, **options: Any) -> Outcomes | None:
    """Record what follows every failure, in every adapter of this process; ``None`` stops.

    The one line a deployment adds (``record_outcomes(SqlOutcomeStore.sqlite("outcomes.db"))``);
    ``toolmend learn --store`` then reads the rows.  The recorder it replaces ends
    its runs first, so no waiting failure is lost.

    Args:
        sink: Where rows go, or a ready :class:`Outcomes`; ``None`` turns recording off.
        **options: :class:`Outcomes`'s ``runs``, ``pending`` and ``clock``.

    Returns:
        The recorder now installed (``None`` when off).
    """
    global _recorder
    old = _recorder
    if sink is None:
        _recorder = None
    else:
        _recorder = sink if isinstance(sink, Outcomes) else Outcomes(sink, **options)
    if old is not None and old is not _recorder:
        old.close()
    return _recorder


def recording_outcomes() -> Outcomes | None:
    """The recorder every adapter feeds, or ``None`` when outcomes are not recorded."""
    return _recorder


def observe_call(record: CallRecord, run: Hashable = None) -> tuple[CallRecord, ...]:
    """For adapters: one finished call of ``run``, to the installed recorder (none: nothing).

    Args:
        record: The call's record.
        run: The framework's id of the run (a thread, a session, a workflow).

    Returns:
        The failures the call settled.
    """
    recorder = _recorder
    if recorder is None:
        return ()
    try:
        return recorder.observe(record, run)
    except Exception as exc:  # recording never breaks a call
        log.warning("toolmend: outcome recording failed for %s: %r", record.tool, exc)
        return ()


def end_run(run: Hashable = None) -> tuple[CallRecord, ...]:
    """For adapters: ``run`` ended, its waiting failures settle (none installed: nothing).

    Args:
        run: The framework's id of the run.

    Returns:
        The failures it settled.
    """
    recorder = _recorder
    if recorder is None:
        return ()
    try:
        return recorder.end(run)
    except Exception as exc:
        log.warning("toolmend: outcome recording failed at the end of a run: %r", exc)
        return ()
