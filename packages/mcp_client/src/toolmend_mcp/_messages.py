"""Turn a tool result into the message a host sends its model.

Hosts that run their own loop put MCP results into provider messages; doing it
here keeps the error flag (which the core's detector trusts above any text) and
lets the host hand the conversation to ``toolmend.rewrite`` with the session's
verdicts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from mcp.types import (
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
)

import toolmend
from toolmend import ContextPolicy, Form, Verdict
from toolmend.integrations import Rewrite

from ._compat import is_error, mime_type, structured_content
from ._results import verdict_of

__all__ = ["model_messages", "tool_message"]

Format = Literal["openai", "anthropic", "responses"]


def _structured_text(result: CallToolResult) -> str:
    try:
        return json.dumps(structured_content(result), ensure_ascii=False)
    except (TypeError, ValueError):
        return str(structured_content(result))


def _block_text(block: ContentBlock) -> str:
    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, EmbeddedResource):
        text = getattr(block.resource, "text", None)
        return text if isinstance(text, str) else f"[resource {block.resource.uri}]"
    if isinstance(block, ResourceLink):
        return f"[resource {block.uri}]"
    if isinstance(block, ImageContent):
        return f"[image {mime_type(block)}]"
    return f"[{block.type}]"


def _text_parts(result: CallToolResult) -> list[str]:
    parts = [_block_text(block) for block in result.content]
    if not parts and structured_content(result) is not None:
        parts.append(_structured_text(result))
    return parts


def _anthropic_content(result: CallToolResult) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in result.content:
        if isinstance(block, ImageContent):
            source = {"type": "base64", "media_type": mime_type(block), "data": block.data}
            blocks.append({"type": "image", "source": source})
        else:
            blocks.append({"type": "text", "text": _block_text(block)})
    if not blocks and structured_content(result) is not None:
        blocks.append({"type": "text", "text": _structured_text(result)})
    return blocks


def tool_message(
    result: CallToolResult,
    call_id: str,
    *,
    format: Format = "openai",
    name: str | None = None,
) -> dict[str, Any]:
    """The provider message (or block) for one tool result.

    - ``openai``: a Chat Completions ``{"role": "tool", ...}`` message.  The API
      itself has no error flag; ``is_error`` is kept as an extra key, which the
      core reads and which a host strips before sending if its provider rejects it.
    - ``anthropic``: a ``tool_result`` block with ``is_error``; a host puts the
      blocks of one turn into a single user message.
    - ``responses``: a ``function_call_output`` item (no error flag exists there;
      pass the session's verdict to ``rewrite`` through ``recorded``).

    Text blocks are joined with newlines; images become image blocks for
    Anthropic and a ``[image ...]`` marker elsewhere; a result with no blocks
    shows its structured content as JSON.

    Args:
        result: The tool result.
        call_id: The id of the call it answers.
        format: ``openai``, ``anthropic`` or ``responses``.
        name: The tool's name, for an ``openai`` message that carries it.

    Returns:
        The message or block, as JSON-ready data.
    """
    if format == "anthropic":
        return {
            "type": "tool_result",
            "tool_use_id": call_id,
            "content": _anthropic_content(result),
            "is_error": is_error(result),
        }
    text = "\n".join(_text_parts(result))
    if format == "responses":
        return {"type": "function_call_output", "call_id": call_id, "output": text}
    message: dict[str, Any] = {"role": "tool", "tool_call_id": call_id, "content": text}
    if name is not None:
        message["name"] = name
    message["is_error"] = is_error(result)
    return message


def model_messages(
    messages: Any,
    results: Mapping[str, CallToolResult] | None = None,
    *,
    format: Format = "openai",
    form: Form | str = Form.C3,
    context: ContextPolicy | None = None,
    client: str | None = None,
) -> Rewrite:
    """The messages to send the model: the core's rewrite with the session's verdicts.

    For a host that runs its own loop: build the conversation with
    :func:`tool_message`, then send ``model_messages(...).messages``.  Keep your
    own list as it is: only the request changes (earlier failures collapsed
    once resolved, the pile-up note, the developer-step filter, per
    ``context``), and the report says what was done.

    Args:
        messages: the conversation in ``format``.
        results: call id -> the session's result, whose findings come first.
        format: ``openai``, ``anthropic`` or ``responses``.
        form: the delivery form at the decision step.
        context: the core's policy for errors in context.
        client: the User-Agent that selects agent rules.
    """
    recorded: dict[str, Verdict] = {}
    for call_id, result in (results or {}).items():
        verdict = verdict_of(result)
        if verdict is not None:
            recorded[call_id] = verdict
    return toolmend.rewrite(
        messages, form, format=format, client=client, recorded=recorded, context=context
    )
