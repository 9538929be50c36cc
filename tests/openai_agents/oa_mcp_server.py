"""A tiny MCP server over stdio whose tools fail the two ways MCP tools fail.

``read_secret`` raises a tool error: the server answers with an ``isError``
result.  ``lookup`` rejects the call at the protocol level: the client raises.

The flaky tools fail transiently the first ``FAILS`` times each is run (an
``isError`` result, or for ``stock_raising`` a JSON-RPC request timeout), then
succeed.  Every run appends a line to ``<counts dir>/<tool>`` (the first
argument), so a test counts executions on the server's side exactly.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, ToolAnnotations

FAILS = 2
UNAVAILABLE = "503 Service Unavailable"


def _run(counts: Path | None, tool: str, arguments: dict[str, Any]) -> int:
    """Count this execution; return how many runs of ``tool`` there were before it."""
    if counts is None:
        raise ToolError("this server was started without a counts folder")
    log = counts / tool
    before = len(log.read_text().splitlines()) if log.exists() else 0
    with log.open("a") as handle:
        handle.write(json.dumps(arguments, sort_keys=True) + "\n")
    return before


def build_server(counts: Path | None = None) -> MCPServer:
    server = MCPServer("toolmend-oa-test")

    def flaky(tool: str, arguments: dict[str, Any], fails: int = FAILS) -> None:
        if _run(counts, tool, arguments) < fails:
            raise ToolError(UNAVAILABLE)

    @server.tool()
    def stock(sku: str) -> str:
        """How many units of a product are in stock (read-only)."""
        flaky("stock", {"sku": sku})
        return f"{sku}: 12 in stock"

    @server.tool()
    def stock_raising(sku: str) -> str:
        """How many units of a product are in stock; its timeouts are JSON-RPC errors."""
        if _run(counts, "stock_raising", {"sku": sku}) < 1:
            raise MCPError(-32001, "upstream request timed out")
        return f"{sku}: 12 in stock"

    @server.tool()
    def always_down(sku: str) -> str:
        """A read-only tool whose backend never comes back."""
        flaky("always_down", {"sku": sku}, fails=1000)
        return "unreachable"

    @server.tool()
    def set_price(sku: str, price: float) -> str:
        """Set a product's price (a write)."""
        flaky("set_price", {"sku": sku, "price": price})
        return f"{sku} now costs {price}"

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def shelf(sku: str) -> str:
        """Which shelf a product is on (annotated read-only)."""
        flaky("shelf", {"sku": sku})
        return f"{sku}: shelf 4"

    @server.tool()
    def quote(symbol: str) -> dict[str, Any]:
        """Quote a stock."""
        _run(counts, "quote", {"symbol": symbol})
        return {"symbol": symbol, "price": "n/a"}

    @server.tool()
    def read_secret(path: str) -> str:
        """Read a secret file."""
        if counts is not None:
            _run(counts, "read_secret", {"path": path})
        raise ToolError(f"Permission denied: {path}")

    @server.tool()
    def lookup(key: str) -> str:
        """Look up a key."""
        raise MCPError(INVALID_PARAMS, f"key must be lowercase: {key}")

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    return server


if __name__ == "__main__":
    logging.disable(logging.CRITICAL)
    build_server(Path(sys.argv[1]) if len(sys.argv) > 1 else None).run()
