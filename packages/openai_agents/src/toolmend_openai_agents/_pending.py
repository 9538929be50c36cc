"""One MCP tool call, shared between the SDK's hooks around it.

The SDK calls an MCP server's ``call_tool(name, arguments, meta)`` without the
run's tool context, which toolmend needs for the call id, the run config (its
contracts) and the agent (its recovery tools).  Just before, in the same task,
it asks the server's meta resolver for the request's ``_meta``, handing it
that context: :class:`~toolmend_openai_agents.RecoveringServer`'s resolver
opens a :class:`PendingCall` for it here, and ``call_tool`` (which the SDK runs
as a task, with a copy of the context) finds it.  What ``call_tool`` decided
goes back the same way, to the failure function (a call that raised) and to
the custom-data extractor (an ``isError`` result), which both receive the same
tool context object and run in the resolver's task.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from toolmend import ToolFailed, ToolFailure, Verdict

__all__ = ["PendingCall", "begin", "current", "raised", "returned"]


@dataclass(eq=False, slots=True)
class PendingCall:
    """The tool context of one MCP call and, once it has failed, the core's failure."""

    context: Any
    tool: str
    arguments: Mapping[str, Any] | None
    failure: ToolFailure | None = None
    verdict: Verdict | None = None
    """For a failed *result*: the verdict to record for the input filter."""

    def raised(self, failure: ToolFailure) -> None:
        """``call_tool`` gives up and raises; the failure function shows ``failure``."""
        self.failure, self.verdict = failure, None

    def returned(self, failure: ToolFailure, verdict: Verdict) -> None:
        """``call_tool`` gives up and returns the failed result; the extractor records it."""
        self.failure, self.verdict = failure, verdict


_CURRENT: ContextVar[PendingCall | None] = ContextVar("toolmend_oa_mcp_call", default=None)


def begin(context: Any, tool: str, arguments: Mapping[str, Any] | None) -> PendingCall:
    """Open the call the SDK is about to make (from the meta resolver)."""
    call = PendingCall(context, tool, arguments)
    _CURRENT.set(call)
    return call


def current(tool: str, arguments: Mapping[str, Any] | None) -> PendingCall | None:
    """The call opened for ``tool`` with these arguments, if it is the one being made."""
    call = _CURRENT.get()
    if call is None or call.tool != tool or dict(call.arguments or {}) != dict(arguments or {}):
        return None
    return call


def _mine(context: Any) -> PendingCall | None:
    call = _CURRENT.get()
    return call if call is not None and call.context is context else None


def _chain(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    found: BaseException | None = error
    while found is not None and id(found) not in seen:
        seen.add(id(found))
        yield found
        found = found.__cause__ or found.__context__


def raised(context: Any, error: BaseException) -> ToolFailure | None:
    """The failure ``call_tool`` gave up with, if ``error`` is what it raised for it."""
    call = _mine(context)
    failure = call.failure if call is not None and call.verdict is None else None
    if call is None or failure is None:
        return None
    for exc in _chain(error):
        if exc is failure.exception or (isinstance(exc, ToolFailed) and exc.failure is failure):
            call.failure = None
            return failure
    return None


def returned(context: Any) -> tuple[ToolFailure, Verdict] | None:
    """The failure and verdict of the failed result ``call_tool`` returned for this call."""
    call = _mine(context)
    if call is None or call.failure is None or call.verdict is None:
        return None
    found = (call.failure, call.verdict)
    call.failure = call.verdict = None
    return found
