"""Rewrite a conversation into a delivery form (C1-C4) at the decision step.

Only failures in the tool results after the last assistant turn are rewritten:
the studies measured the decision step, and because the next request shows the
failure as the client sent it, a rewrite affects exactly one turn.  Ambiguous
failures are recorded but never rewritten: wrong guidance is worse than none.
The input is never mutated, and nothing here raises on odd input: what is not
understood comes back unchanged, with the reason in the report.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .. import telemetry
from .._types import Detection, Form, Kind, Report, Source
from ..classify._detect import Verdict, text_of
from ..classify._rules import Rules
from ._codecs import CODECS, Edits, Entry, NotUnderstood, View
from ._context import (
    STUB,
    ContextPolicy,
    Reader,
    Seen,
    collapse_plan,
    read_history,
    streaks_at,
    tail_streaks,
)
from ._guidance import STEP_LIMIT, compose_note, guidance_for, join_notes, notes_left_out
from ._pileup import pile_up_advice

__all__ = ["Rewrite", "decision_step", "pending_verdict", "rewrite"]

log = logging.getLogger("toolmend")


@dataclass(frozen=True, slots=True)
class Rewrite:
    """The conversation the model should see, and what was done to get it.

    Attributes:
        messages: The conversation to send, in its own format.
        report: What was found and done.
    """

    messages: Any
    report: Report


@dataclass(frozen=True, slots=True)
class _Failure:
    entry: Entry
    detection: Detection
    note: str | None
    guidance: str | None
    left_out: int = 0


def _detect(
    view: View,
    client: str | None,
    recorded: Mapping[str, Verdict] | None,
    rules: Rules | None = None,
) -> list[tuple[Entry, Detection]]:
    assistant = view.tail[0]
    calls = {c.id: c for c in assistant.calls if c.id is not None}
    reader = Reader(recorded, client, rules)
    found = []
    for entry in view.tail[1:]:
        if entry.role != "tool":
            continue
        call = calls.get(entry.call_id) if entry.call_id is not None else None
        verdict = reader.verdict(
            entry.call_id,
            entry.content,
            (entry.is_error, entry.status),
            entry.name or (call.name if call else None),
        )
        if not verdict.failed or verdict.kind is None or verdict.rule is None:
            continue
        detection = Detection(
            index=entry.position,
            tool_name=entry.name or (call.name if call else None),
            call_id=entry.call_id,
            arguments=call.arguments if call else None,
            error=text_of(entry.content) or "",
            kind=verdict.kind,
            rule=verdict.rule,
            source=verdict.source or Source.FLAG,
            reason=verdict.reason,
            guidance=verdict.guidance or guidance_for(verdict.kind),
            basis=verdict.basis,
        )
        found.append((entry, detection))
    return found


def decision_step(
    messages: Any,
    *,
    format: str = "openai",
    client: str | None = None,
    recorded: Mapping[str, Verdict] | None = None,
    rules: Rules | None = None,
) -> tuple[Detection, ...]:
    """The failed tool results at the decision step, without rewriting anything."""
    try:
        view = CODECS[format].view(messages)
        if not view.tail:
            return ()
        return tuple(d for _, d in _detect(view, client, recorded, rules))
    except Exception:
        log.warning("toolmend: conversation not understood; nothing detected", exc_info=True)
        return ()


def rewrite(
    messages: Any,
    form: Form | str = Form.C3,
    *,
    format: str = "openai",
    client: str | None = None,
    recorded: Mapping[str, Verdict] | None = None,
    rules: Rules | None = None,
    context: ContextPolicy | None = None,
) -> Rewrite:
    """Apply ``form`` to the decision step of ``messages``.

    ``format`` is ``openai`` (Chat Completions), ``responses`` (Responses input
    items) or ``anthropic`` (Messages).  ``recorded`` maps call ids to verdicts an
    adapter already holds (from the exception itself), which take precedence
    over reading the text.  ``client`` is the User-Agent that selects agent rules.
    ``rules`` are user rules checked before the built-in ones (default: those
    installed with :func:`toolmend.set_rules`).  ``context`` says what happens to
    errors in context beyond the decision step (:class:`toolmend.ContextPolicy`:
    collapse once resolved, the pile-up note, the developer-step filter; default
    ``ContextPolicy()``); nothing of it applies under ``off``.

    Args:
        messages: The conversation, in ``format``; it is never modified.
        form: The delivery form (``off``, ``c1``-``c4``; default C3).
        format: ``openai``, ``responses`` or ``anthropic``.
        client: The User-Agent that selects agent rules.
        recorded: Call id to the verdict an adapter already holds.
        rules: User rules checked before the built-in ones.
        context: What happens to errors in context beyond the decision step.

    Returns:
        The messages to send (the same object when nothing changed) and the report.
    """
    try:
        chosen = Form.parse(form)
    except ValueError:
        report = Report((), Form.OFF, False, (f"unknown form {form!r}; left unchanged",))
        return Rewrite(messages, report)
    try:
        policy = context if context is not None else ContextPolicy()
        result = _rewrite(messages, chosen, format, client, recorded, rules, policy)
    except Exception as exc:
        reason = str(exc) if isinstance(exc, NotUnderstood | KeyError) else repr(exc)
        log.warning("toolmend: conversation not understood (%s); left unchanged", reason)
        result = Rewrite(messages, Report((), chosen, False, (f"not understood: {reason}",)))
    _log(result.report)
    telemetry.rewritten(result.report)
    return result


def _log(report: Report) -> None:
    for d in report.detections:
        log.info(
            "toolmend: failed tool result at %s (%s): kind=%s rule=%s reason=%s",
            d.index, d.tool_name, d.kind.value, d.rule, d.reason,
        )  # fmt: skip
        if d.neutralised:
            log.warning(
                "toolmend: tool text restated for %s (%s) was neutralised: %s",
                d.index, d.tool_name, ", ".join(d.neutralised),
            )  # fmt: skip
    # The header is built only when it is logged: a request with no assistant turn yet
    # has a skipped entry, and most runs do not log at INFO.
    if (report.detections or report.skipped) and log.isEnabledFor(logging.INFO):
        log.info("toolmend: %s; skipped=%s", report.header(), list(report.skipped))


def _rewrite(
    messages: Any,
    form: Form,
    format: str,
    client: str | None,
    recorded: Mapping[str, Verdict] | None,
    rules: Rules | None = None,
    policy: ContextPolicy | None = None,
) -> Rewrite:
    policy = policy if policy is not None else ContextPolicy()
    codec = CODECS.get(format)
    if codec is None:
        raise NotUnderstood(f"unknown format {format!r}")
    view = codec.view(messages)
    if not view.tail:
        return Rewrite(messages, Report((), form, False, ("no assistant turn: no decision step",)))
    found = _detect(view, client, recorded, rules)
    detections = tuple(d for _, d in found)
    skipped: list[str] = []
    if form is Form.OFF:
        return Rewrite(messages, Report(detections, form, False, ()))
    seen = (
        read_history(codec, messages, recorded=recorded, client=client, rules=rules)
        if policy.collapse_resolved
        else []
    )
    keep = {e.loc for e in view.tail if e.role == "tool"}
    plan = collapse_plan(seen, keep) if policy.collapse_resolved else {}
    streaks: dict[Any, tuple[str, int]] = {}
    if policy.pile_up_after and found:
        if seen:
            streaks = streaks_at(seen)
        else:
            tools = {d.tool_name for _, d in found if d.tool_name is not None}
            streaks = tail_streaks(
                codec, messages, view, tools, recorded=recorded, client=client, rules=rules
            )
    failures: list[_Failure] = []
    call_ids = {c.id for c in view.tail[0].calls}
    changes: dict[int, dict[str, Any]] = {}
    for n, (entry, d) in enumerate(found):
        if d.kind is Kind.AMBIGUOUS and d.guidance is None:
            skipped.append(f"{d.index}: ambiguous failure gets no guidance")
            continue
        if d.guidance is None:
            continue
        if form in (Form.C2, Form.C4) and (d.call_id is None or d.call_id not in call_ids):
            skipped.append(f"{d.index}: its call is not in the last assistant turn")
            continue
        guidance = d.guidance
        streak = streaks.get(entry.loc)
        if streak is not None and d.tool_name is not None:
            piled = pile_up_advice(d.tool_name, streak[1], streak[0], policy.pile_up_after)
            guidance = piled or guidance
        omit = form is not Form.C1 and policy.filters(d.tool_name)
        note = compose_note(d.tool_name, d.arguments, d.error, guidance, omit_steps=omit)
        change: dict[str, Any] = {}
        if note.neutralised and form is not Form.C1:
            change["neutralised"] = note.neutralised
        if note.omitted:
            change["omitted"] = note.omitted
        if guidance != d.guidance:
            change["guidance"] = guidance
        if change:
            changes[n] = change
        failures.append(_Failure(entry, d, note.text, guidance))
    if changes:
        detections = tuple(
            dataclasses.replace(d, **changes[n]) if n in changes else d
            for n, d in enumerate(detections)
        )
    collapsed = tuple(_collapsed(seen, plan))
    stubbed = codec.replace(messages, plan) if plan else messages
    if form is not Form.C1:
        left_out = notes_left_out([f.note or "" for f in failures])
        for f in failures[:left_out]:
            skipped.append(
                f"{f.detection.index}: not restated: one step's notes are capped at "
                f"{STEP_LIMIT} characters"
            )
        failures = failures[left_out:]
        if left_out:
            failures[0] = dataclasses.replace(failures[0], left_out=left_out)
    if not failures:
        return Rewrite(stubbed, Report(detections, form, bool(plan), tuple(skipped), collapsed))
    edits = _plan(view, form, failures)
    new = codec.apply(stubbed, view, edits)
    return Rewrite(
        new, Report(detections, form, bool(edits) or bool(plan), tuple(skipped), collapsed)
    )


def _collapsed(seen: list[Seen], plan: Mapping[Any, str]) -> list[str]:
    out = []
    for item in seen:
        stub = plan.get(item.result.loc)
        if stub is not None:
            how = "resolved" if stub.startswith(STUB.split("{", 1)[0]) else "repeated"
            out.append(f"{item.result.position}: {item.result.name} {how}")
    return out


def _plan(view: View, form: Form, failures: list[_Failure]) -> Edits:
    edits = Edits()
    notes = join_notes([f.note for f in failures if f.note], failures[0].left_out)
    if form is Form.C1:
        for f in failures:
            edits.appends[f.entry.loc] = "\n" + (f.guidance or "")
        return edits
    if form is Form.C3:
        results = [e for e in view.tail if e.role == "tool"]
        last_result = results[-1]
        after = view.tail[view.tail.index(last_result) + 1 :]
        user = next((e for e in after if e.role == "user"), None)
        if user is not None:
            edits.appends[user.loc] = "\n\n" + notes
        else:
            edits.inserts.append((last_result, notes))
        return edits
    assistant = view.tail[0]
    gone_ids = {f.entry.call_id for f in failures if f.entry.call_id is not None}
    edits.removed_calls[assistant.loc] = gone_ids
    edits.removed.update(f.entry.loc for f in failures)
    assistant_stays = assistant.has_content or any(c.id not in gone_ids for c in assistant.calls)
    remaining = [e for e in view.tail[1:] if e.loc not in edits.removed]
    if remaining:
        last: Entry | None = remaining[-1]
    elif assistant_stays:
        last = assistant
    else:
        last = view.before
    if form is Form.C2 and last is not None and last.role == "user":
        edits.appends[last.loc] = "\n\n" + notes
    else:
        edits.inserts.append((last, notes))
    return edits


def pending_verdict(verdict: Verdict, form: Form | str | None, shown: str | bool) -> Verdict:
    """The verdict the decision-step rewrite still has to deliver for one tool result.

    Form C1 puts a failure's guidance in the tool result itself.  Once the
    result holds it, the rewrite must not deliver it again (the model would
    read the next step twice), so the verdict to record is a clean one.  Every
    adapter records what this returns rather than deciding it itself.

    Args:
        verdict: The failure's verdict (a clean one comes back unchanged).
        form: The delivery form; ``None`` or a name that does not parse counts
            as not C1.
        shown: The text the model reads for the result, which is searched for
            the guidance, or ``True``/``False`` when the adapter already knows
            whether it put the guidance there.

    Returns:
        ``Verdict(False)`` when the guidance is already delivered, else ``verdict``.
    """
    if not verdict.failed:
        return verdict
    try:
        c1 = form is not None and Form.parse(form) is Form.C1
    except ValueError:
        c1 = False
    if isinstance(shown, str):
        delivered = verdict.guidance is not None and verdict.guidance in shown
    else:
        delivered = shown
    return Verdict(False) if c1 and delivered else verdict
