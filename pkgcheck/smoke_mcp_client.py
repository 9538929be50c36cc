"""Smoke test of the installed ``toolmend-mcp`` wheel: over an in-memory MCP server, a
read-only tool that times out once is retried by ``RecoveringSession`` and succeeds; a
write that fails is not repeated."""

from __future__ import annotations

import anyio
import mcp
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from toolmend_mcp import RecoveringSession

runs: list[str] = []
server = MCPServer("smoke")


@server.tool()
def stock(sku: str) -> int:
    """Units in stock."""
    runs.append("stock")
    if runs.count("stock") == 1:
        raise ToolError("503 Service Unavailable")
    return 12


@server.tool()
def reserve(sku: str) -> str:
    """Reserve one unit."""
    runs.append("reserve")
    raise ToolError("503 Service Unavailable")


async def main() -> None:
    async with mcp.Client(server) as client:
        session = RecoveringSession(client, effects={"stock": "read_only", "reserve": "write"})
        read = await session.call_tool("stock", {"sku": "A-1"})
        write = await session.call_tool("reserve", {"sku": "A-1"})
    assert not read.is_error, read
    assert [c.text for c in read.content if c.type == "text"] == ["12"], read.content
    assert read.meta is not None
    assert read.meta["toolmend"]["attempts"] == 2, read.meta
    assert write.is_error, write
    assert write.meta is not None
    assert write.meta["toolmend"]["attempts"] == 1, write.meta
    assert runs == ["stock", "stock", "reserve"], runs
    print("toolmend-mcp:", {k: write.meta["toolmend"][k] for k in ("kind", "attempts", "stop")})


if __name__ == "__main__":
    anyio.run(main)
