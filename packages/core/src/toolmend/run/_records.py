"""One record of one tool call: what toolmend found and did, the same for every adapter.

An adapter keeps it where its framework lets a record travel (a result's
``_meta``, a message's metadata, a run's report); the core fills what it
decided (kind, attempts, stop, guidance) from the :class:`ToolFailure` or the
attempts of a retried success, so that no adapter chooses its own fields or
words for them.  :func:`toolmend.integrations.verdict_from_record` reads any
of them back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .._bounds import jsonable
from .._types import Source
from ..classify._raised import describe_exception
from ..classify._signatures import error_signature
from ..contracts._review import Review
from ._attempts import AttemptRecord
from ._failure import ToolFailure

__all__ = [
    "CallRecord",
    "follow_ups",
    "same_arguments",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class CallRecord:
    """What toolmend found about one tool call, as it goes into a JSON-ready record.

    The fields after ``omitted`` are what only some adapters know about a call
    (its id, what the model was shown, a replay); :meth:`to_dict` writes them
    only when they are set, so every adapter's record has the same keys plus
    those.

    Attributes:
        tool: The tool's name.
        effect: The effect the call ran under (``read_only``, ``write``, ...);
            ``None`` where the adapter does not know it.
        effect_source: Where the effect came from: ``declared``, ``annotations``
            or ``default``.
        form: The delivery form the adapter applies.
        failed: Whether the call failed in the end.
        attempts: Attempts made in all (0: refused before it ran).
        kind: The failure's kind; ``None`` for a success.
        rule: The rule that judged the failure.
        source: Where the failure was seen (``exception``, ``flag``, ``contract``, ...).
        reason: The classifier's reason.
        guidance: The next step the model is given.
        note: The runtime note of forms C2-C4, for a host that places it itself.
        retry_after: Seconds the failure asked to wait before another attempt.
        outcome_unknown: Whether a failed write may have taken effect.
        stop: Why no further attempt was made (:class:`~toolmend.integrations.Stop`).
        why_stopped: That reason in one sentence for people.
        history: The failed attempts, oldest first.
        violations: The outcome contract's violations of a successful result.
        receipt: The outcome-contract envelope body, when one was made.
        neutralised: Instruction-like phrases the note neutralised.
        omitted: Sentences of the error the note left out as steps for the developer.
        call_id: The framework's id of the call.
        arguments: The arguments the call ran with.
        cause: The error as the tool gave it, before any guidance (what a loop
            guard rebuilt from the record compares).
        exception: The exception that ended the call, described.
        shown: What the model reads for the call, where the adapter keeps it.
        guidance_in_content: Whether the guidance is already in the result the
            model reads (form C1), so the decision step does not add it again.
        replayed: Whether a durable run answered the call from its record
            instead of running the tool again.
        landed: For a replayed call: whether the verify hook confirmed the effect.
        outcome: What followed a failure in the run (``retry_succeeded``,
            ``changed_arguments_succeeded``, ``failed_again``, ``stopped``): the
            evidence ``toolmend learn`` reads; see :func:`follow_ups`.
    """

    tool: str
    effect: str | None = None
    effect_source: str | None = None
    form: str | None = None
    failed: bool
    attempts: int
    kind: str | None = None
    rule: str | None = None
    source: str | None = None
    reason: str | None = None
    guidance: str | None = None
    note: str | None = None
    retry_after: float | None = None
    outcome_unknown: bool = False
    stop: str | None = None
    why_stopped: str | None = None
    history: tuple[Mapping[str, Any], ...] = ()
    violations: tuple[Mapping[str, Any], ...] = ()
    receipt: Mapping[str, Any] | None = None
    neutralised: tuple[str, ...] = ()
    omitted: tuple[str, ...] = ()
    call_id: str | None = None
    arguments: Mapping[str, Any] | None = None
    cause: str | None = None
    exception: str | None = None
    shown: str | None = None
    guidance_in_content: bool = False
    replayed: bool = False
    landed: bool = False
    outcome: str | None = None

    @property
    def signature(self) -> str | None:
        """The failure's error signature (:func:`~toolmend.integrations.error_signature`)."""
        return error_signature(self.cause) if self.failed and self.cause is not None else None

    @classmethod
    def of_failure(
        cls,
        failure: ToolFailure,
        *,
        source: str = Source.EXCEPTION.value,
        rule: str | None = None,
        effect: str | None = None,
        effect_source: str | None = None,
        form: str | None = None,
        note: str | None = None,
        neutralised: tuple[str, ...] = (),
        omitted: tuple[str, ...] = (),
        history: tuple[Mapping[str, Any], ...] | None = None,
        call_id: str | None = None,
        shown: str | None = None,
        guidance_in_content: bool = False,
    ) -> CallRecord:
        """The record of a failed call, with every decision taken from the core's failure.

        The failure's arguments, cause and exception go into the record too, so
        that a record read back (a loop guard rebuilt from a checkpoint) sees
        what the failure saw.

        Args:
            failure: The core's failure of the call (after the loop guard's advice).
            source: Where the failure was seen.
            rule: The rule that judged it (default: the failure's; a returned
                result's own rule wins over it).
            effect: The effect the call ran under.
            effect_source: Where that effect came from.
            form: The delivery form.
            note: The runtime note for the host, if one was composed.
            neutralised: What composing the note neutralised.
            omitted: What the note left out as steps for the developer.
            history: The attempts as the adapter shows them (default: the core's).
            call_id: The framework's id of the call.
            shown: What the model reads for the call.
            guidance_in_content: Whether that text already holds the guidance.

        Returns:
            The record.
        """
        return cls(
            tool=failure.tool,
            effect=effect,
            effect_source=effect_source,
            form=form,
            failed=True,
            attempts=failure.attempts,
            kind=failure.kind.value,
            rule=rule if rule is not None else failure.rule,
            source=source,
            reason=failure.reason,
            guidance=failure.guidance,
            note=note,
            neutralised=neutralised,
            omitted=omitted,
            retry_after=failure.retry_after,
            outcome_unknown=failure.outcome_unknown,
            stop=failure.stop.value if failure.stop is not None else None,
            why_stopped=failure.why_stopped,
            history=(
                history if history is not None else tuple(r.to_dict() for r in failure.history)
            ),
            call_id=call_id,
            arguments=failure.arguments,
            cause=failure.cause,
            exception=describe_exception(failure.exception) if failure.exception else None,
            shown=shown,
            guidance_in_content=guidance_in_content,
        )

    @classmethod
    def of_success(
        cls,
        tool: str,
        *,
        history: Sequence[AttemptRecord] = (),
        review: Review | None = None,
        effect: str | None = None,
        effect_source: str | None = None,
        form: str | None = None,
        call_id: str | None = None,
        arguments: Mapping[str, Any] | None = None,
    ) -> CallRecord:
        """The record of a call that succeeded: after retries, or with a contract's review.

        Args:
            tool: The tool's name.
            history: The failed attempts before the success, oldest first.
            review: The outcome contract's review of the result, if it was checked.
            effect: The effect the call ran under.
            effect_source: Where that effect came from.
            form: The delivery form.
            call_id: The framework's id of the call.
            arguments: The arguments the call ran with.

        Returns:
            The record; its source is ``contract`` when the review made a receipt.
        """
        made = review.receipt if review is not None else None
        return cls(
            tool=tool,
            effect=effect,
            effect_source=effect_source,
            form=form,
            failed=False,
            attempts=len(history) + 1,
            source=Source.CONTRACT.value if made is not None else None,
            history=tuple(r.to_dict() for r in history),
            violations=tuple(v.to_dict() for v in review.violations) if review else (),
            receipt=made.outcome_contract() if made is not None else None,
            call_id=call_id,
            arguments=arguments,
            shown=review.text if review is not None and made is not None else None,
        )

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready data, in a fixed key order.

        ``neutralised``, ``omitted`` and the fields after them appear only when set.
        """
        return {
            "tool": self.tool,
            "effect": self.effect,
            "effect_source": self.effect_source,
            "form": self.form,
            "failed": self.failed,
            "kind": self.kind,
            "rule": self.rule,
            "source": self.source,
            "reason": self.reason,
            "guidance": self.guidance,
            "note": self.note,
            "attempts": self.attempts,
            "retry_after": self.retry_after,
            "outcome_unknown": self.outcome_unknown,
            "stop": self.stop,
            "why_stopped": self.why_stopped,
            "history": [dict(h) for h in self.history],
            "violations": [dict(v) for v in self.violations],
            "receipt": None if self.receipt is None else dict(self.receipt),
            **self._extra(),
        }

    def _extra(self) -> dict[str, Any]:
        """The keys of the fields only some adapters set, when they are set."""
        extra: dict[str, Any] = {}
        if self.neutralised:
            extra["neutralised"] = list(self.neutralised)
        if self.omitted:
            extra["omitted"] = list(self.omitted)
        for key in ("call_id", "cause", "exception", "shown"):
            value = getattr(self, key)
            if value is not None:
                extra[key] = value
        if self.arguments is not None:
            extra["arguments"] = jsonable(self.arguments)
        if self.guidance_in_content:
            extra["guidance_in_content"] = True
        if self.replayed:
            extra.update(replayed=True, landed=self.landed)
        if self.outcome is not None:
            extra["outcome"] = self.outcome
        return extra


def same_arguments(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> bool:
    """Whether two calls ran with the same arguments, compared as JSON-ready values."""
    same: bool = jsonable(a or {}) == jsonable(b or {})
    return same


def follow_ups(records: Sequence[CallRecord]) -> list[CallRecord]:
    """A run's records with ``outcome`` set on each failure: what followed it.

    Read from the calls of the same tool after the failure, in order: the same
    arguments succeeding is ``retry_succeeded`` (the failure was temporary);
    changed arguments succeeding is ``changed_arguments_succeeded`` (the call was
    wrong); later calls failing with the same error signature, repeated or changed,
    is ``failed_again``; nothing after it is ``stopped`` (no evidence).  A failure
    followed by a different error, and then nothing, is ``stopped`` too.  A call
    whose automatic retries succeeded carries its own evidence in ``history``.
    Pure: records in, records out, in the same order.

    Args:
        records: One run's call records, in the order the calls were made.

    Returns:
        The same records, each failure with its ``outcome``.
    """
    out = list(records)
    for index, record in enumerate(out):
        if not record.failed or record.outcome is not None:
            continue
        signature = record.signature
        outcome = "stopped"
        repeated = False
        for later in records[index + 1 :]:
            if later.tool != record.tool:
                continue
            same = same_arguments(later.arguments, record.arguments)
            if not later.failed:
                outcome = "retry_succeeded" if same else "changed_arguments_succeeded"
                break
            if later.signature == signature:
                repeated = True
        else:
            if repeated:
                outcome = "failed_again"
        out[index] = replace(record, outcome=outcome)
    return out
