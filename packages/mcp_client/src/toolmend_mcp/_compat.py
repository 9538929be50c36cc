"""The two lines of the MCP Python SDK (1.x and 2.x) behind one set of names.

Everything else in this package is written once, against these names; only here
does the installed line matter.  What differs between the lines:

- Field names: 2.x types use snake_case attributes (``is_error``,
  ``structured_content``, ``output_schema``, ``next_cursor``, ``mime_type``); 1.x
  uses the wire's camelCase as attribute names.  Both accept
  the camelCase alias when validating, which is how ``error_result`` builds a
  result on either line.  A snake_case keyword on 1.x would be kept as an unknown
  extra field and silently ignored, so nothing here passes one.
- The client: 2.x has ``mcp.Client`` over a ``ClientSession``; 1.x only the
  session.  On 1.x ``Client`` is a stand-in class nothing is an instance of.
- Errors: 2.x raises ``MCPError``, 1.x ``McpError``; both keep the JSON-RPC
  ``ErrorData`` under ``.error``, which is what is read here.
- ``call_tool``: 2.x takes the read timeout as float seconds and also
  ``input_responses`` / ``request_state``; 1.x takes a ``timedelta`` and has
  neither.
- Output-schema validation: 2.x ``ClientSession.validate_tool_result``, 1.x the
  private ``_validate_tool_result`` (same arguments, same ``RuntimeError``).
- Notifications: 1.x hands the message handler a ``ServerNotification`` whose
  ``root`` is the notification; 2.x the notification itself.

mypy runs against 2.x only: ``if TYPE_CHECKING or MCP2`` makes the 1.x branches
unreachable to it, so they are not type-checked (they are tested instead).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Final

from mcp import ClientSession
from mcp.types import (
    CallToolResult,
    ImageContent,
    ListToolsResult,
    PaginatedRequestParams,
    Tool,
)

__all__ = [
    "MCP2",
    "VALIDATOR",
    "Client",
    "MCPError",
    "call_tool",
    "error_code",
    "error_message",
    "error_result",
    "input_schema",
    "is_error",
    "list_page",
    "mime_type",
    "next_cursor",
    "notification",
    "output_schema",
    "session_of",
    "structured_content",
]

MCP2: Final = "is_error" in CallToolResult.model_fields
"""Whether the installed SDK is the 2.x line (told by the field names the rest depends on)."""

if TYPE_CHECKING or MCP2:
    from mcp import Client
    from mcp.shared.exceptions import MCPError
else:
    from mcp.shared.exceptions import McpError as MCPError

    class Client:
        """1.x has no ``mcp.Client``; nothing is an instance of this."""


if TYPE_CHECKING:
    from mcp.shared.dispatcher import ProgressFnT
    from mcp.types import InputResponses, RequestParamsMeta

VALIDATOR: Final = "validate_tool_result" if MCP2 else "_validate_tool_result"
"""The ``ClientSession`` method that checks structured content against ``outputSchema``."""


def error_code(error: MCPError) -> int:
    """The JSON-RPC code of an SDK error."""
    return error.error.code


def error_message(error: MCPError) -> str:
    """The JSON-RPC message of an SDK error."""
    return error.error.message


def error_result(text: str) -> CallToolResult:
    """An error result with one text block, built by the wire names both lines accept."""
    return CallToolResult.model_validate(
        {"content": [{"type": "text", "text": text}], "isError": True}
    )


if TYPE_CHECKING or MCP2:

    def is_error(result: CallToolResult) -> bool:
        return result.is_error

    def structured_content(result: CallToolResult) -> Any:
        return result.structured_content

    def output_schema(tool: Tool) -> Mapping[str, Any] | None:
        return tool.output_schema

    def input_schema(tool: Tool) -> Mapping[str, Any] | None:
        return tool.input_schema

    def next_cursor(page: ListToolsResult) -> str | None:
        return page.next_cursor

    def mime_type(image: ImageContent) -> str:
        return image.mime_type

    def notification(message: Any) -> Any:
        """The notification a message handler was given (2.x: the message itself)."""
        return message

else:

    def is_error(result: CallToolResult) -> bool:
        return bool(result.isError)

    def structured_content(result: CallToolResult) -> Any:
        return result.structuredContent

    def output_schema(tool: Tool) -> Mapping[str, Any] | None:
        return tool.outputSchema

    def input_schema(tool: Tool) -> Mapping[str, Any] | None:
        return tool.inputSchema

    def next_cursor(page: ListToolsResult) -> str | None:
        return page.nextCursor

    def mime_type(image: ImageContent) -> str:
        return image.mimeType

    def notification(message: Any) -> Any:
        """The notification a message handler was given (1.x wraps it in ``ServerNotification``)."""
        return getattr(message, "root", message)


def session_of(wrapped: ClientSession | Client) -> ClientSession:
    """The ``ClientSession`` under a 2.x ``Client``, or the session itself."""
    return wrapped.session if isinstance(wrapped, Client) else wrapped


async def list_page(wrapped: ClientSession | Client, cursor: str | None) -> ListToolsResult:
    """One page of ``tools/list``, asked the way the wrapped object takes a cursor."""
    if isinstance(wrapped, Client):
        return await wrapped.list_tools(cursor=cursor)
    params = PaginatedRequestParams(cursor=cursor) if cursor else None
    return await wrapped.list_tools(params=params)


async def call_tool(
    wrapped: ClientSession | Client,
    name: str,
    arguments: dict[str, Any] | None,
    read_timeout: float | timedelta | None,
    progress_callback: ProgressFnT | None,
    *,
    input_responses: InputResponses | None,
    request_state: str | None,
    meta: RequestParamsMeta | None,
) -> CallToolResult:
    """``call_tool`` of the wrapped object, with the timeout in the type its line takes.

    A ``timedelta`` (what 1.x callers pass) and float seconds (2.x) are both
    accepted.  ``input_responses`` and ``request_state`` exist on 2.x only; on
    1.x they raise ``TypeError`` rather than being dropped without a word.
    """
    seconds = read_timeout.total_seconds() if isinstance(read_timeout, timedelta) else read_timeout
    if MCP2:
        return await wrapped.call_tool(
            name,
            arguments,
            seconds,
            progress_callback,
            input_responses=input_responses,
            request_state=request_state,
            meta=meta,
        )
    if input_responses is not None or request_state is not None:
        raise TypeError("input_responses and request_state need the MCP SDK 2.x")
    delta = None if seconds is None else timedelta(seconds=seconds)
    call: Any = wrapped.call_tool
    result: CallToolResult = await call(name, arguments, delta, progress_callback, meta=meta)
    return result
