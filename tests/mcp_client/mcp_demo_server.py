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
from mcp.shared.exceptions import UrlElicitationRequiredError
from mcp.types import INVALID_PARAMS, ElicitRequestURLParams, ToolAnnotations
from mcp_sdk import Context, Server, ToolError, new_server, notify_tools_changed, protocol_error

QUOTE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"symbol": {"type": "string"}, "price": {"type": "number"}},
    "required": ["symbol", "price"],
}

READ_ONLY = ToolAnnotations(readOnlyHint=True)
DESTRUCTIVE = ToolAnnotations(readOnlyHint=False, destructiveHint=True)


def advertise_quote_schema(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The listing promises a numeric price the tool does not keep.

    Schema drift between what a server advertises and what it returns is the
    failure the client's output-schema check exists for.  Only the advertised
    listing changes: the server itself does not check its tool against it.
    """
    return [{**t, "outputSchema": QUOTE_SCHEMA} if t.get("name") == "quote" else t for t in tools]


def build_server() -> Server:
    """A fresh server with its own call counters (``MCPServer`` on SDK 2.x, ``FastMCP`` on 1.x)."""
    server = new_server("toolmend-demo", listing=advertise_quote_schema)
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
        raise protocol_error(INVALID_PARAMS, f"key must be lowercase: {key}")

    @server.tool(annotations=READ_ONLY)
    def connect_drive() -> str:
        """Needs the user to authorise in a browser first: not a failure to recover from."""
        calls["connect_drive"] += 1
        login = ElicitRequestURLParams(
            mode="url", message="Sign in", url="https://drive.example/login", elicitationId="login"
        )
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
        await notify_tools_changed(ctx)
        return "enabled"

    @server.tool(annotations=READ_ONLY)
    def read_secret(name: str) -> str:
        """Refused for want of permission: neither a retry nor other arguments help."""
        calls["read_secret"] += 1
        raise ToolError(f"Permission denied: {name}")

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
    def list_drive(folder: str) -> str:
        """Expired credentials, with a step only the developer can take."""
        calls["list_drive"] += 1
        raise ToolError(
            "401 Unauthorized: the access token has expired. "
            "Run `gcloud auth login` to obtain new credentials."
        )

    @server.tool(annotations=READ_ONLY)
    def counts() -> dict[str, int]:
        """How often each tool body ran (not counting this one)."""
        return dict(calls)

    return server


if __name__ == "__main__":
    logging.disable(logging.CRITICAL)
    build_server().run()
