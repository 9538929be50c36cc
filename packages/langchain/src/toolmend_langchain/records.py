"""The toolmend record carried in a message's ``response_metadata``.

The tool side writes what it learned about a call (kind, rule, attempts,
retry history) onto the ``ToolMessage`` itself, so the record travels with the
graph state and any checkpointer: the model side reads it back instead of
re-reading text, and nothing about a run lives on the middleware instance.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from toolmend import Form, ToolFailure, Verdict
from toolmend.integrations import Source
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
    failure: ToolFailure, *, guidance_in_content: bool, source: Source | None = Source.EXCEPTION
) -> dict[str, Any]:
    """The core's failure record plus what the model side needs to rebuild the verdict.

    ``source`` says where the failure was seen: a raised exception, or for a
    failure the tool returned, its status or text (the verdict's source).
    """
    return {
        **failure.to_dict(),
        "failed": True,
        "source": (source or Source.FLAG).value,
        "guidance_in_content": guidance_in_content,
    }


def failure_message(failure: ToolFailure, *, call_id: str, name: str, form: Form) -> ToolMessage:
    """The error ``ToolMessage`` that answers a failed call, with its record."""
    content = failure.result_text(form)
    return ToolMessage(
        content=content,
        tool_call_id=call_id,
        name=name,
        status="error",
        response_metadata={
            KEY: failure_record(failure, guidance_in_content=content != failure.cause)
        },
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
