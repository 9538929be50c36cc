"""The toolmend record carried in a message's ``response_metadata``.

The tool side writes the core's :class:`~toolmend.integrations.CallRecord` of a
call (kind, rule, attempts, retry history), as its ``to_dict()``, onto the
``ToolMessage`` itself, so the record travels with the graph state and any
checkpointer: the model side reads it back instead of re-reading text, and
nothing about a run lives on the middleware instance.  An ``AIMessage`` carries
the model side's own entries instead (``rewrite``, ``repaired``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from toolmend import Effect, Form, ToolFailure, Verdict
from toolmend.integrations import CallRecord, Source
from toolmend.integrations import verdict_from_record as _core_verdict_from_record

__all__ = [
    "KEY",
    "failure_message",
    "failure_record",
    "record_of",
    "reports",
    "verdict_from_record",
    "with_record",
]

KEY = "toolmend"
"""The ``response_metadata`` key of every toolmend record."""


def failure_record(
    failure: ToolFailure,
    *,
    form: Form,
    guidance_in_content: bool,
    source: Source | None = Source.EXCEPTION,
    effect: tuple[Effect, str] | None = None,
) -> dict[str, Any]:
    """The core's record of a failed call, as the message carries it.

    Args:
        failure: The core's failure of the call.
        form: The delivery form.
        guidance_in_content: Whether the message's content already holds the
            guidance (C1), so the model side does not deliver it twice.
        source: Where the failure was seen: a raised exception, or for a
            failure the tool returned, its status or text (the verdict's source).
        effect: The effect the call ran under and where it came from, when the
            call ran (a malformed call never did).

    Returns:
        The record as JSON-ready data.
    """
    return CallRecord.of_failure(
        failure,
        effect=effect[0].value if effect is not None else None,
        effect_source=effect[1] if effect is not None else None,
        form=form.value,
        source=(source or Source.FLAG).value,
        guidance_in_content=guidance_in_content,
    ).to_dict()


def failure_message(
    failure: ToolFailure,
    *,
    call_id: str,
    name: str,
    form: Form,
    effect: tuple[Effect, str] | None = None,
) -> ToolMessage:
    """The error ``ToolMessage`` that answers a failed call, with its record.

    Args:
        failure: The core's failure of the call.
        call_id: The id of the call the message answers.
        name: The tool's name.
        form: The delivery form that shapes the content.
        effect: The effect the call ran under and where it came from, if it ran.

    Returns:
        The message.
    """
    content = failure.result_text(form)
    record = failure_record(
        failure, form=form, guidance_in_content=content != failure.cause, effect=effect
    )
    return ToolMessage(
        content=content,
        tool_call_id=call_id,
        name=name,
        status="error",
        response_metadata={KEY: record},
    )


def record_of(message: Any) -> Mapping[str, Any] | None:
    """The toolmend record on a message, if it carries a readable one."""
    metadata = getattr(message, "response_metadata", None)
    if not isinstance(metadata, Mapping):
        return None
    record = metadata.get(KEY)
    return record if isinstance(record, Mapping) else None


def verdict_from_record(record: Mapping[str, Any]) -> Verdict | None:
    """The verdict a record stands for; ``None`` when it is not readable."""
    return _core_verdict_from_record(record)


def with_record(message: ToolMessage | AIMessage, record: Mapping[str, Any]) -> Any:
    """A copy of ``message`` carrying ``record``; the original is left as it is."""
    metadata = {**message.response_metadata, KEY: dict(record)}
    return message.model_copy(update={"response_metadata": metadata})


def reports(messages: Iterable[BaseMessage]) -> list[dict[str, Any]]:
    """Every toolmend record in a run's messages, oldest first, for inspection and tests.

    Each entry names the message it came from: ``{"message_id", "tool_call_id",
    "type", **record}`` (the model side's entries hold ``"rewrite"``).

    Args:
        messages: A run's messages (``state["messages"]``).

    Returns:
        The records, oldest first.
    """
    found = []
    for message in messages:
        record = record_of(message)
        if record is None:
            continue
        found.append(
            {
                "message_id": getattr(message, "id", None),
                "tool_call_id": getattr(message, "tool_call_id", None),
                "type": getattr(message, "type", None),
                **record,
            }
        )
    return found
