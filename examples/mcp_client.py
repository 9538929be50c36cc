"""An MCP client session that recovers: a local stdio server, four tool calls, offline.

    pip install 'toolmend-mcp[examples]'
    python examples/mcp_client.py

The script starts itself as a small MCP server (``--serve``) over stdio, wraps
the connected ``mcp.Client`` in ``toolmend_mcp.RecoveringSession`` and calls:

1. a read-only tool that hits a rate limit once ("retry in 1s"): retried after
   the hint, the second attempt succeeds;
2. a write that meets a 503: not retried (it may have landed), and the model is
   told to check before calling again;
3. a call with a wrong argument type: fixable, the guidance says to correct it;
4. a read whose result breaks its declared contract (a negative price): the raw
   result is kept and an advisory receipt is appended.

With ``form="c1"`` the guidance is appended to the result's text, for hosts that
forward content as is; the findings are always under ``result.meta["toolmend"]``.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from typing import Any

import anyio


def serve() -> None:
    import logging

    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import ToolAnnotations

    server = MCPServer("inventory")
    calls: Counter[str] = Counter()

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def stock(sku: str) -> int:
        """Units in stock."""
        calls["stock"] += 1
        if calls["stock"] == 1:
            raise ToolError("rate limit exceeded, retry in 1s")
        return 12

    @server.tool(annotations=ToolAnnotations(destructive_hint=True))
    def reserve(sku: str, quantity: int) -> str:
        """Reserve units for an order."""
        raise ToolError("503 Service Unavailable: warehouse busy")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def price(sku: str) -> dict[str, Any]:
        """Unit price."""
        return {"sku": sku, "amount": -1, "currency": "EUR"}

    logging.disable(logging.CRITICAL)
    server.run()


PRICE_SCHEMA = {
    "type": "object",
    "properties": {"amount": {"type": "number", "exclusiveMinimum": 0}},
    "required": ["amount"],
}


async def main() -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    from toolmend.contracts import declared
    from toolmend_mcp import RecoveringSession, tool_message

    server = StdioServerParameters(command=sys.executable, args=[__file__, "--serve"])
    async with Client(server) as client:
        session = RecoveringSession(
            client,
            trust_annotations=True,
            contracts=declared({"price": PRICE_SCHEMA}),
            form="c1",
        )
        calls: list[tuple[str, dict[str, Any]]] = [
            ("stock", {"sku": "A-1"}),
            ("reserve", {"sku": "A-1", "quantity": 2}),
            ("reserve", {"sku": "A-1", "quantity": "two"}),
            ("price", {"sku": "A-1"}),
        ]
        for name, arguments in calls:
            result = await session.call_tool(name, arguments)
            findings = result.meta["toolmend"] if result.meta else {}
            print(f"== {name}({json.dumps(arguments)})")
            print(
                f"   is_error={result.is_error} kind={findings['kind']} "
                f"attempts={findings['attempts']} effect={findings['effect']} "
                f"stop={findings['stop']}"
            )
            print("   the model reads:")
            message = tool_message(result, f"call_{name}", name=name)
            for line in str(message["content"]).splitlines():
                print(f"   | {line}")


if __name__ == "__main__":
    if "--serve" in sys.argv:
        serve()
    else:
        anyio.run(main)
