"""MCP failures that arrive as results, as the exceptions the core's retry loop reads.

``toolmend.integrations.aexecute`` retries what an attempt raises and classifies it with
``classify_exception``, which knows the SDK's ``MCPError`` by its JSON-RPC code.
A failed result is no exception, so one attempt raises one of these instead.
Their texts carry the evidence: the server's error without the SDK's wrapper,
whose tool name could hold any word.
"""

from __future__ import annotations

from mcp.types import CallToolResult

from toolmend import Verdict
from toolmend.integrations import ResultFailed

from ._results import result_text

__all__ = ["FailedResult", "MalformedResult", "failed_result", "server_text"]


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


class MalformedResult(Exception):
    """The server's reply is not a result this client can read (not the model's fault)."""

    def __init__(self) -> None:
        self.text = "MCP error: the server's reply to tools/call is not a valid result"
        super().__init__(self.text)


class _ReadFromTheCall(FailedResult, ResultFailed):
    """A failed result whose kind came from the call or the run, not from its text.

    The retry loop reads a raised failure's text again (``classify_exception``),
    which knows nothing of the arguments, the schema or the run's history; as a
    :class:`~toolmend.integrations.ResultFailed` it takes the verdict's kind instead.
    """

    def __init__(self, name: str, result: CallToolResult, verdict: Verdict) -> None:
        text = result_text(result)
        ResultFailed.__init__(self, server_text(name, text), verdict.kind, verdict.reason, result)
        self.verdict = verdict
        self.text = text


_CONTEXT = ("call:", "history:")


def failed_result(name: str, result: CallToolResult, verdict: Verdict) -> FailedResult:
    """The exception for a failed result: its kind read from the call when the verdict was."""
    if (verdict.basis or "").startswith(_CONTEXT):
        return _ReadFromTheCall(name, result, verdict)
    return FailedResult(name, result, verdict)
