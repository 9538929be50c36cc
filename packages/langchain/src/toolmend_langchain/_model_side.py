"""What the model sees at the decision step: the core's delivery form on LangChain messages.

The rewrite is applied to the request only; the graph state keeps the messages
as the tools produced them, so a note exists only in the one request that needs
it and never reaches the state or a checkpointer.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from langchain.agents.middleware.types import ModelResponse
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, ToolMessage

import toolmend
from toolmend import ContextPolicy, Form, Verdict
from toolmend.integrations import Report, pending_verdict

from ._convert import from_openai, to_openai
from ._records import record_of, verdict_from_record, with_record

__all__ = ["Rewritten", "attach_report", "recorded_verdicts", "rewrite_messages"]

log = logging.getLogger("toolmend.langchain")


@dataclass(frozen=True, slots=True)
class Rewritten:
    """The messages to send to the model, and the core's report of what was done.

    Attributes:
        messages: The messages to send.
        report: The core's report of the rewrite.
    """

    messages: list[AnyMessage]
    report: Report

    @property
    def changed(self) -> bool:
        """Whether any message differs from what was given."""
        return self.report.changed


def _parsed(form: Form | str) -> Form | None:
    try:
        return Form.parse(form)
    except ValueError:
        return None


def _start_of_tail(messages: Sequence[Any]) -> int:
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], AIMessage):
            return i
    return len(messages)


def recorded_verdicts(
    messages: Sequence[Any], *, form: Form | str = Form.C3, whole: bool = False
) -> dict[str, Verdict]:
    """Call id -> verdict from the records on the tool results (after the last AI turn).

    Under C1 a failure whose guidance the tool side already put in the content
    counts as clean here (the core's :func:`~toolmend.integrations.pending_verdict`),
    so the guidance is not delivered twice.
    """
    start = 0 if whole else _start_of_tail(messages)
    found: dict[str, Verdict] = {}
    for message in messages[start:]:
        if not isinstance(message, ToolMessage):
            continue
        record = record_of(message)
        if record is None:
            continue
        verdict = verdict_from_record(record)
        if verdict is None:
            continue
        in_content = record.get("guidance_in_content") is True
        found[message.tool_call_id] = pending_verdict(verdict, form, in_content)
    return found


def _detected(verdict: Verdict) -> bool:
    """Whether the core's rewrite counts ``verdict`` as a failure at the decision step."""
    return verdict.failed and verdict.kind is not None and verdict.rule is not None


def _quiet_step(
    messages: list[Any], form: Form | str, client: str | None, policy: ContextPolicy
) -> Report | None:
    """The report of a decision step where no tool result failed, read from the tail alone.

    Most model requests follow tool calls that succeeded, and converting the whole
    history for the core's rewrite made every request cost as much as the
    conversation is long.  Without collapsing, a rewrite with no failed result
    after the last AI turn changes nothing and reports nothing, so the tail
    decides: each tool result's verdict as the core's rewrite reads it (the record
    it carries, else its text).  ``None`` when the whole conversation has to be
    read: a failed result, a form that does not parse, or a call id an earlier
    result carries too (its record would stand for the later one).  Before the
    first AI turn there is no decision step: the core says so on an empty list,
    as it would on the whole one.
    """
    try:
        chosen = Form.parse(form)
    except ValueError:
        return None
    start = _start_of_tail(messages)
    if start == len(messages):
        return toolmend.rewrite([], chosen, client=client, context=policy).report
    tail = messages[start:]
    recorded = recorded_verdicts(tail, form=form, whole=True)
    unread: list[ToolMessage] = []
    for message in tail:
        if isinstance(message, ToolMessage):
            verdict = recorded.get(message.tool_call_id)
            if verdict is None:
                unread.append(message)
            elif _detected(verdict):
                return None
    if unread:
        ids = {message.tool_call_id for message in unread}
        for message in messages[:start]:
            if isinstance(message, ToolMessage) and message.tool_call_id in ids:
                return None
        names = {call.get("id"): call.get("name") for call in messages[start].tool_calls}
        for message in unread:
            status = message.status if isinstance(message.status, str) else None
            verdict = toolmend.classify_result(
                message.content,
                status=status,
                client=client,
                tool=message.name or names.get(message.tool_call_id),
            )
            if _detected(verdict):
                return None
    return Report((), chosen, False, ())


def rewrite_messages(
    messages: Sequence[BaseMessage],
    form: Form | str = Form.C3,
    *,
    client: str | None = None,
    stub_superseded: bool = False,
    context: ContextPolicy | None = None,
) -> Rewritten:
    """Apply ``form`` to LangChain ``messages``, for a custom model node or ``pre_model_hook``.

    Recorded kinds on the tool results come first, text detection otherwise.
    ``context`` is the core's :class:`toolmend.ContextPolicy` (collapse once
    resolved, the pile-up note, the developer-step filter); ``stub_superseded``
    turns collapsing on whatever it says.  Untouched messages come back as the
    same objects, edited ones as copies; never raises.

    Args:
        messages: The messages of the request.
        form: The delivery form.
        client: The User-Agent that selects agent rules.
        stub_superseded: Collapse failed results that a later success of the same
            tool superseded, whatever ``context`` says.
        context: What happens to errors in context beyond the decision step.

    Returns:
        The messages to send and the core's report.
    """
    originals = list(messages)
    policy = context if context is not None else ContextPolicy()
    if stub_superseded and not policy.collapse_resolved:
        policy = dataclasses.replace(policy, collapse_resolved=True)
    try:
        quiet = None if policy.collapse_resolved else _quiet_step(originals, form, client, policy)
        if quiet is not None:
            return Rewritten(cast("list[AnyMessage]", originals), quiet)
        converted = to_openai(originals)
        recorded = {
            **recorded_verdicts(originals, form=Form.C3, whole=True),
            **recorded_verdicts(originals, form=form),
        }
        result = toolmend.rewrite(
            converted, form, format="openai", client=client, recorded=recorded, context=policy
        )
        new = (
            originals
            if result.messages is converted
            else from_openai(converted, result.messages, originals)
        )
    except Exception as exc:
        log.warning("toolmend.langchain: messages not understood (%r); left unchanged", exc)
        chosen = _parsed(form) or Form.OFF
        unchanged = cast("list[AnyMessage]", list(messages))
        return Rewritten(unchanged, Report((), chosen, False, (f"not understood: {exc!r}",)))
    if result.report.changed:
        log.info("toolmend.langchain: model request rewritten: %s", result.report.header())
    return Rewritten(cast("list[AnyMessage]", new), result.report)


def attach_report(response: Any, report: Report) -> Any:
    """The model's response with the rewrite's report on its AI message.

    Only when a failure was detected, so clean turns stay as the model
    produced them.  Anything not understood comes back unchanged.
    """
    if not report.detections:
        return response
    record = {"rewrite": report.to_dict()}
    try:
        if isinstance(response, AIMessage):
            return with_record(response, _merged(response, record))
        result = getattr(response, "result", None)
        if isinstance(response, ModelResponse) and isinstance(result, list):
            for i, message in enumerate(result):
                if isinstance(message, AIMessage):
                    updated = list(result)
                    updated[i] = with_record(message, _merged(message, record))
                    return dataclasses.replace(response, result=updated)
    except Exception as exc:
        log.warning("toolmend.langchain: could not attach the report (%r)", exc)
    return response


def _merged(message: AIMessage, record: dict[str, Any]) -> dict[str, Any]:
    existing = record_of(message)
    return {**existing, **record} if existing is not None else record
