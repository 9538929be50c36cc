"""A stdio MCP server that answers tools/call wrongly: a reply with another id, or
``"result": null``.  Everything else is answered as the protocol asks, so a client
connects, lists the tool and sends the call; then it waits for an answer that never
comes.  Started as ``python mcp_broken_server.py wrong-id|null-result``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

TOOL = {"name": "status", "inputSchema": {"type": "object", "properties": {}}}


def _send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main(mode: str) -> None:
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            continue
        method, ident = request.get("method"), request.get("id")
        if ident is None:
            continue
        if method == "initialize":
            version = request.get("params", {}).get("protocolVersion", "2025-06-18")
            _send({"jsonrpc": "2.0", "id": ident, "result": {
                "protocolVersion": version, "capabilities": {"tools": {}},
                "serverInfo": {"name": "broken", "version": "1"}}})  # fmt: skip
        elif method == "tools/list":
            _send({"jsonrpc": "2.0", "id": ident, "result": {"tools": [TOOL]}})
        elif method == "tools/call":
            if mode == "wrong-id":
                _send({"jsonrpc": "2.0", "id": f"{ident}-other", "result": {"content": []}})
            else:
                _send({"jsonrpc": "2.0", "id": ident, "result": None})
        else:
            _send({"jsonrpc": "2.0", "id": ident, "result": {}})


if __name__ == "__main__":
    main(sys.argv[1])
