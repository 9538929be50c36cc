"""One record of one tool call: what toolmend found and did, the same for every adapter.

An adapter keeps it where its framework lets a record travel (a result's
``_meta``, a message's metadata, a run's report); the core fills what it
decided (kind, attempts, stop, guidance) from the :class:`ToolFailure` or the
attempts of a retried success, so that no adapter chooses its own fields or
words for them.  :func:`toolmend.integrations.verdict_from_record` reads any
of them back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .failure import ToolFailure

__all__ = ["CallRecord"]


@dataclass(frozen=True, slots=True)
class CallRecord:
    """What toolmend found about one tool call, as it goes into a JSON-ready record.

    Attributes:
        tool: The tool's name.
        effect: The effect the call ran under (``read_only``, ``write``, ...).
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
    """

    tool: str
    effect: str
    effect_source: str
    form: str
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

    @classmethod
    def of_failure(
        cls,
        failure: ToolFailure,
        *,
        effect: str,
        effect_source: str,
        form: str,
        rule: str,
        source: str,
        note: str | None = None,
        neutralised: tuple[str, ...] = (),
        omitted: tuple[str, ...] = (),
        history: tuple[Mapping[str, Any], ...] | None = None,
    ) -> CallRecord:
        """The record of a failed call, with every decision taken from the core's failure.

        Args:
            failure: The core's failure of the call (after the loop guard's advice).
            effect: The effect the call ran under.
            effect_source: Where that effect came from.
            form: The delivery form.
            rule: The rule that judged it (a returned result's own rule wins over
                the failure's).
            source: Where the failure was seen.
            note: The runtime note for the host, if one was composed.
            neutralised: What composing the note neutralised.
            omitted: What the note left out as steps for the developer.
            history: The attempts as the adapter shows them (default: the core's).

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
            rule=rule,
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
        )

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready data, in a fixed key order.

        ``neutralised`` and ``omitted`` appear only when not empty.
        """
        extra: dict[str, Any] = {"neutralised": list(self.neutralised)} if self.neutralised else {}
        if self.omitted:
            extra["omitted"] = list(self.omitted)
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
            **extra,
        }
