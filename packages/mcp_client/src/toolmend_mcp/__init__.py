"""toolmend for MCP client sessions.

Wrap a connected ``mcp.Client`` (or ``ClientSession``) once, and every tool call
comes back classified, retried when that is safe, guarded against loops and
checked against its outcome contract:

    async with mcp.Client(server) as client:
        session = RecoveringSession(client, effects={"search": "read_only"})
        result = await session.call_tool("search", {"query": "mcp"})
        result.meta["toolmend"]      # kind, attempts, guidance, receipt, ...
"""

from ._messages import model_messages, tool_message
from ._results import META_KEY, findings_of, verdict_of
from ._session import RecoveringSession

__all__ = [
    "META_KEY",
    "RecoveringSession",
    "findings_of",
    "model_messages",
    "tool_message",
    "verdict_of",
]
