"""A tiny MCP server over stdio whose tools fail the two ways MCP tools fail.

``read_secret`` raises a tool error: the server answers with an ``isError``
result.  ``lookup`` rejects the call at the protocol level: the client raises.
"""

from __future__ import annotations

import logging

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS


def build_server() -> MCPServer:
    server = MCPServer("toolmend-oa-test")

    @server.tool()
    def read_secret(path: str) -> str:
        """Read a secret file."""
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
    build_server().run()
