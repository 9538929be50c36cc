"""A small MCP server whose tools fail the way real servers do.

The tests import ``build_server()`` to connect in memory, and start this file as a
subprocess (``python mcp_demo_server.py``) to talk to it over stdio; either way
the failures arrive through the SDK's own server code, so the texts and flags the
client sees are the real ones.  ``counts`` reports how often each tool body ran,
which is how the tests count side effects across the process boundary.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError, UrlElicitationRequiredError
from mcp.types import INVALID_PARAMS, ElicitRequestURLParams, ListToolsResult, ToolAnnotations

QUOTE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"symbol": {"type": "string"}, "price": {"type": "number"}},
    "required": ["symbol", "price"],
}

READ_ONLY = ToolAnnotations(read_only_hint=True)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True)


class AdvertiseQuoteSchema:
    """Server middleware: the listing promises a numeric price the tool does not keep.

    Schema drift between what a server advertises and what it returns is the
    failure the client's output-schema check exists for.
    """

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method != "tools/list":
            return result
        if isinstance(result, ListToolsResult):
            result = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        if isinstance(result, dict):
            result["tools"] = [
                {**t, "outputSchema": QUOTE_SCHEMA} if t.get("name") == "quote" else t
                for t in result.get("tools", [])
            ]
        return result


def build_server() -> MCPServer:
    """A fresh server with its own call counters."""
    server = MCPServer("toolmend-demo", middleware=[AdvertiseQuoteSchema()])
    calls: Counter[str] = Counter()

    @server.tool(annotations=READ_ONLY)
    def search(query: str) -> str:
        """Fails once with a rate limit and a retry hint, then answers."""
        calls["search"] += 1
        if calls["search"] == 1:
            raise ToolError("rate limit exceeded, retry in 2s")
        return f"3 results for {query}"

    @server.tool(annotations=DESTRUCTIVE)
    def transfer(amount: int, to: str) -> str:
        """A write that always meets a temporary outage."""
        calls["transfer"] += 1
        raise ToolError("503 Service Unavailable: ledger busy, retry in 1s")

    @server.tool()
    def crash(path: str) -> str:
        """An unexpected exception: the SDK withholds its text from the client."""
        calls["crash"] += 1
        raise KeyError(path)

    @server.tool(annotations=READ_ONLY)
    def add(a: int, b: int) -> int:
        calls["add"] += 1
        return a + b

    @server.tool(annotations=READ_ONLY)
    def lookup(key: str) -> str:
        """Rejects the call at the protocol level, as JSON-RPC invalid params."""
        calls["lookup"] += 1
        raise MCPError(INVALID_PARAMS, f"key must be lowercase: {key}")

    @server.tool(annotations=READ_ONLY)
    def connect_drive() -> str:
        """Needs the user to authorise in a browser first: not a failure to recover from."""
        calls["connect_drive"] += 1
        login = ElicitRequestURLParams(message="Sign in", url="https://drive.example/login")
        raise UrlElicitationRequiredError([login])

    @server.tool(annotations=READ_ONLY)
    def quote(symbol: str) -> dict[str, Any]:
        calls["quote"] += 1
        return {"symbol": symbol, "price": "n/a"}

    @server.tool(annotations=READ_ONLY)
    async def slow(seconds: float) -> str:
        calls["slow"] += 1
        await anyio.sleep(seconds)
        return "done"

    @server.tool(annotations=DESTRUCTIVE)
    async def enable_refund(ctx: Context) -> str:
        """Adds a read-only tool at run time and tells listeners the list changed."""
        calls["enable_refund"] += 1

        def refund_status(order: str) -> str:
            calls["refund_status"] += 1
            if calls["refund_status"] == 1:
                raise ToolError("Too Many Requests")
            return f"{order}: none"

        server.add_tool(refund_status, annotations=READ_ONLY)
        await ctx.notify_tools_changed()
        return "enabled"

    @server.tool()
    def status() -> str:
        """Down for its first 9 calls (an outage), then up."""
        calls["status"] += 1
        if calls["status"] <= 9:
            raise ToolError("503 Service Unavailable")
        return "up"

    @server.tool()
    def get_time(timezone: str) -> str:
        """Rejects what is not a zone it knows, as the reference time server does."""
        calls["get_time"] += 1
        if timezone not in ("Europe/Paris", "UTC"):
            raise ToolError(f"Invalid timezone: '{timezone}'")
        return f"12:00 in {timezone}"

    @server.tool(annotations=READ_ONLY)
    def counts() -> dict[str, int]:
        """How often each tool body ran (not counting this one)."""
        return dict(calls)

    return server


if __name__ == "__main__":
    logging.disable(logging.CRITICAL)
    build_server().run()
