"""Translate between MCP tool results and the core's texts, verdicts and findings.

Everything here is a pure function of a ``CallToolResult`` (or of an error the
SDK raised): what text the model reads, what the core makes of it, and a copy
of the result carrying toolmend's findings.  Results are never mutated: the
SDK's object stays what the server sent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mcp.types import CallToolResult, EmbeddedResource, ResourceLink, TextContent

from toolmend import Verdict
from toolmend.integrations import CallRecord, verdict_from_record

from . import _compat
from ._compat import MCPError, error_code, error_message, structured_content

__all__ = [
    "META_KEY",
    "error_result",
    "findings_of",
    "protocol_error_text",
    "result_text",
    "verdict_of",
    "with_findings",
]

META_KEY = "toolmend"
"""The key under the result's ``_meta`` that holds toolmend's findings."""


def result_text(result: CallToolResult) -> str:
    """The text a model reads from a result: its text blocks, else its structured content.

    Resource blocks count by their text or URI; images and audio are not text
    and are left out, as the core's detector leaves out non-text parts.
    """
    texts: list[str] = []
    for block in result.content:
        if isinstance(block, TextContent):
            texts.append(block.text)
        elif isinstance(block, EmbeddedResource):
            text = getattr(block.resource, "text", None)
            texts.append(text if isinstance(text, str) else block.resource.uri)
        elif isinstance(block, ResourceLink):
            texts.append(block.uri)
    if texts:
        return "\n".join(texts)
    structured = structured_content(result)
    if structured is not None:
        try:
            return json.dumps(structured, ensure_ascii=False)
        except (TypeError, ValueError):
            return str(structured)
    return ""


def protocol_error_text(error: MCPError) -> str:
    """``MCP error <code>: <message>``: the text the model reads for a JSON-RPC error.

    The code stays in the text so that the model, and a host that re-reads the
    text, see the same evidence the core classified the error by.
    """
    return f"MCP error {error_code(error)}: {error_message(error)}"


def error_result(text: str) -> CallToolResult:
    """An error result standing in for an error the SDK raised instead of returning."""
    return _compat.error_result(text)


def with_findings(
    result: CallToolResult,
    findings: CallRecord,
    *,
    append: str | None = None,
    extra_block: str | None = None,
) -> CallToolResult:
    """A copy of ``result`` with the core's record of the call under ``_meta["toolmend"]``.

    The server's blocks stay byte-for-byte what it sent, except for the one
    text that form C1 extends; the structured content is never touched.

    Args:
        result: The result as the server sent it (not modified).
        findings: The core's record of the call.
        append: Text added to the last text block (form C1: a newline and the
            guidance, as the core's C1 does), or a new block when there is none.
        extra_block: Text that becomes a text block of its own (a receipt).

    Returns:
        The copy.
    """
    meta = dict(result.meta or {})
    meta[META_KEY] = findings.to_dict()
    content = list(result.content)
    if append:
        texts = [i for i, block in enumerate(content) if isinstance(block, TextContent)]
        if texts:
            last = texts[-1]
            content[last] = content[last].model_copy(
                update={"text": getattr(content[last], "text", "") + append}
            )
        else:
            content.append(TextContent(type="text", text=append.lstrip("\n")))
    if extra_block:
        content.append(TextContent(type="text", text=extra_block))
    return result.model_copy(update={"meta": meta, "content": content})


def findings_of(result: CallToolResult) -> Mapping[str, Any] | None:
    """The findings a recovering session attached, if any.

    Args:
        result: A result a :class:`RecoveringSession` returned.

    Returns:
        The record under ``_meta["toolmend"]``, or ``None``.
    """
    meta = result.meta
    if not isinstance(meta, Mapping):
        return None
    found = meta.get(META_KEY)
    return found if isinstance(found, Mapping) else None


def verdict_of(result: CallToolResult) -> Verdict | None:
    """The session's verdict on a result, for ``toolmend.rewrite(recorded={call_id: ...})``.

    It carries what the text alone cannot: a JSON-RPC code, a write whose
    outcome is unknown (the verify-first guidance), a blocked repeat.  ``None``
    when the session attached nothing or the findings are not readable.

    Args:
        result: A result a :class:`RecoveringSession` returned.

    Returns:
        The verdict, or ``None``.
    """
    found = findings_of(result)
    return None if found is None else verdict_from_record(found, rule="is_error")
