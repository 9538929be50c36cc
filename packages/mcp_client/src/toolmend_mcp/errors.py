"""MCP failures as the exceptions the core's retry loop reads.

``toolmend.aexecute`` retries what an attempt raises and classifies it with
``classify_exception``; a failed MCP call arrives as an ``isError`` result or
as an ``MCPError``, so one attempt raises one of these instead.  Their texts
carry the evidence (the server's error without the SDK's wrapper, whose tool
name could hold any word; the JSON-RPC code) and their types the rest (a read
timeout is a ``TimeoutError``, so a write that timed out counts as possibly
landed).
"""

from __future__ import annotations

from mcp.shared.exceptions import MCPError
from mcp.types import REQUEST_TIMEOUT, CallToolResult

from toolmend import Verdict

from .results import protocol_error_text, result_text

__all__ = [
    "FailedResult",
    "MalformedResult",
    "ProtocolFailure",
    "ReadTimeout",
    "from_protocol_error",
    "server_text",
]


def server_text(name: str, text: str) -> str:
    """The server's error with the Python SDK's ``Error executing tool <name>`` wrapper removed."""
    wrapper = f"Error executing tool {name}"
    stripped = text.lstrip()
    if stripped.startswith(wrapper):
        return stripped[len(wrapper) :].lstrip(":").strip()
    return text


class FailedResult(Exception):
    """The server returned a failed result (``isError``, or an error text); the result is kept."""

    def __init__(self, name: str, result: CallToolResult, verdict: Verdict) -> None:
        self.result = result
        self.verdict = verdict
        self.text = result_text(result)
        super().__init__(server_text(name, self.text))


class ProtocolFailure(Exception):
    """The server answered with a JSON-RPC error instead of a result."""

    def __init__(self, error: MCPError) -> None:
        self.error = error
        self.text = protocol_error_text(error)
        super().__init__(self.text)


class ReadTimeout(TimeoutError):
    """No reply within the read timeout: the call may still run on the server."""

    def __init__(self, error: MCPError) -> None:
        self.error = error
        self.text = protocol_error_text(error)
        super().__init__(self.text)


class MalformedResult(Exception):
    """The server's reply is not a result this client can read."""

    def __init__(self) -> None:
        self.text = "MCP error: the server's reply to tools/call is not a valid result"
        super().__init__(self.text)


def from_protocol_error(error: MCPError) -> ProtocolFailure | ReadTimeout:
    if error.code == REQUEST_TIMEOUT:
        return ReadTimeout(error)
    return ProtocolFailure(error)
