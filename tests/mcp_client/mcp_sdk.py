"""The MCP Python SDK's two lines (1.x and 2.x), as the tests need them.

The tests run on both lines (the main environment has 2.x, the ``mcp1``
environment of ``./dev test`` the newest 1.x).  This helper reads results and
builds servers and connections without going through ``toolmend_mcp._compat``,
so that the package's own compatibility layer is what the tests check, not what
they rely on.

- Reading: 2.x types have snake_case attributes, 1.x camelCase ones.  Building
  goes by the camelCase wire names, which both lines accept (a snake_case
  keyword on 1.x is kept as an unknown extra and ignored).
- Servers: 2.x ``MCPServer`` with middleware; 1.x ``FastMCP``, whose low-level
  server's request handlers are wrapped for the two things FastMCP cannot do:
  change the advertised tool listing, and answer a tool call with a JSON-RPC
  error (1.x FastMCP turns every exception of a tool, except a URL elicitation,
  into an ``isError`` result).
- Connections: 2.x ``mcp.Client`` (in memory or over stdio); 1.x a
  ``ClientSession`` from the SDK's in-memory pair or from ``stdio_client``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from contextvars import ContextVar
from typing import Any

import mcp.types as types
from mcp.client.stdio import StdioServerParameters

MCP2 = "is_error" in types.CallToolResult.model_fields
"""Whether the installed SDK is the 2.x line."""

if MCP2:
    from mcp import Client
    from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.shared.exceptions import MCPError

    Server = MCPServer
else:
    from mcp import ClientSession, stdio_client
    from mcp.server.fastmcp import Context, FastMCP
    from mcp.server.fastmcp.exceptions import ToolError
    from mcp.shared.exceptions import McpError as MCPError
    from mcp.shared.memory import create_connected_server_and_client_session

    Server = FastMCP

__all__ = [
    "MCP2",
    "Connect",
    "Context",
    "MCPError",
    "Server",
    "ToolError",
    "is_error",
    "listening",
    "new_server",
    "notification",
    "notify_tools_changed",
    "open_connection",
    "protocol_error",
    "session_of",
    "structured",
]

Connect = Callable[..., AbstractAsyncContextManager[Any]]
"""The ``connect`` fixture: a factory of unentered connections to the demo server."""

Listing = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]
"""Rewrites the tools of a ``tools/list`` answer, as wire dicts."""


# -- reading -------------------------------------------------------------------------


def is_error(result: types.CallToolResult) -> bool:
    return bool(getattr(result, "is_error" if MCP2 else "isError"))


def structured(result: types.CallToolResult) -> Any:
    return getattr(result, "structured_content" if MCP2 else "structuredContent")


def notification(message: Any) -> Any:
    """The notification a message handler got (1.x wraps it in ``ServerNotification``)."""
    return message if MCP2 else getattr(message, "root", message)


def session_of(client: Any) -> Any:
    """The ``ClientSession`` of a connection (on 1.x the connection is the session)."""
    return client.session if MCP2 else client


def listening(client: Any) -> AbstractAsyncContextManager[Any]:
    """Where change notifications flow: 2.x opens a listen stream, 1.x always delivers."""
    return client.listen(tools_list_changed=True) if MCP2 else nullcontext()


# -- servers -------------------------------------------------------------------------

_pending: ContextVar[list[Exception] | None] = ContextVar("mcp_sdk_pending", default=None)


def protocol_error(code: int, message: str) -> Exception:
    """An error a tool raises to answer its call with a JSON-RPC error, on either line."""
    if MCP2:
        return MCPError(code, message)
    error = MCPError(types.ErrorData(code=code, message=message))
    pending = _pending.get()
    if pending is not None:
        pending.append(error)
    return error


async def notify_tools_changed(ctx: Any) -> None:
    """Send ``notifications/tools/list_changed`` from inside a tool."""
    if MCP2:
        await ctx.notify_tools_changed()
    else:
        await ctx.session.send_tool_list_changed()


def new_server(name: str, *, listing: Listing | None = None) -> Any:
    """A server whose ``tools/list`` answers pass through ``listing`` (if given)."""
    if MCP2:
        return MCPServer(name, middleware=[] if listing is None else [_ListingMiddleware(listing)])
    server = FastMCP(name)
    low = server._mcp_server
    handlers = low.request_handlers
    list_tools, call_tool = handlers[types.ListToolsRequest], handlers[types.CallToolRequest]

    async def listed(request: Any) -> types.ServerResult:
        result = await list_tools(request)
        if listing is None:
            return result
        wire = result.root.model_dump(by_alias=True, mode="json", exclude_none=True)
        wire["tools"] = listing(wire["tools"])
        return types.ServerResult(types.ListToolsResult.model_validate(wire))

    async def called(request: Any) -> types.ServerResult:
        pending: list[Exception] = []
        token = _pending.set(pending)
        try:
            result = await call_tool(request)
        finally:
            _pending.reset(token)
        if pending:
            raise pending[0]
        return result

    handlers[types.ListToolsRequest] = listed
    handlers[types.CallToolRequest] = called
    return server


if MCP2:

    class _ListingMiddleware:
        """Server middleware that rewrites the tools of each ``tools/list`` answer."""

        def __init__(self, listing: Listing) -> None:
            self.listing = listing

        async def __call__(
            self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
        ) -> HandlerResult:
            result = await call_next(ctx)
            if ctx.method != "tools/list":
                return result
            if isinstance(result, types.ListToolsResult):
                result = result.model_dump(by_alias=True, mode="json", exclude_none=True)
            if isinstance(result, dict):
                result["tools"] = self.listing(result.get("tools", []))
            return result


# -- connections ---------------------------------------------------------------------


def open_connection(server: Any, **kwargs: Any) -> AbstractAsyncContextManager[Any]:
    """An unentered connection to a server object (in memory) or ``StdioServerParameters``."""
    if MCP2:
        return Client(server, **kwargs)
    if isinstance(server, StdioServerParameters):
        return _stdio(server, **kwargs)
    return create_connected_server_and_client_session(server, **kwargs)


if not MCP2:

    @asynccontextmanager
    async def _stdio(params: StdioServerParameters, **kwargs: Any) -> AsyncIterator[Any]:
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, **kwargs) as session,
        ):
            await session.initialize()
            yield session
