"""One tool call run under the core, the same way for ``function_tool`` and MCP servers.

Both kinds of tool hand the core the same things: the tool's declared effect,
its retry policy, the run's loop guard, and a list that receives the failed
attempts, so that a call that succeeded only after retrying is reported too
(a failed one is reported by the failure function, which reads its attempts
from the failure).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, TypeVar

from toolmend import Effect, RetryPolicy, ToolFailure, telemetry
from toolmend.integrations import AttemptRecord, CallContext, aexecute, execute

from . import _report as report
from ._runs import RUNS

__all__ = ["Guarded", "Verify"]

T = TypeVar("T")
Verify = Callable[[CallContext, BaseException], "bool | Awaitable[bool | None] | None"]


@dataclass(frozen=True, slots=True)
class Guarded:
    """How a tool's calls run under the core: its effect, policy and hooks."""

    effect: Effect | str
    policy: RetryPolicy
    verify: Verify | None = None
    honours_key: bool = False
    passthrough: tuple[type[BaseException], ...] = ()

    def _options(
        self, tool: str, arguments: Mapping[str, Any], history: list[AttemptRecord]
    ) -> dict[str, Any]:
        return {
            "tool": tool,
            "arguments": arguments,
            "effect": self.effect,
            "policy": self.policy,
            "loop": RUNS.state().loop,
            "verify": self.verify,
            "honours_key": self.honours_key,
            "passthrough": self.passthrough,
            "history": history,
        }

    async def arun(
        self,
        attempt: Callable[[CallContext], Awaitable[T]],
        *,
        tool: str,
        arguments: Mapping[str, Any],
        call_id: str | None,
    ) -> T | ToolFailure:
        """``integrations.aexecute`` with the run's loop guard; a retried success is reported."""
        history: list[AttemptRecord] = []
        with _span(tool, call_id):
            outcome = await aexecute(attempt, **self._options(tool, arguments, history))
        _report(outcome, call_id, tool, arguments, history)
        return outcome

    def run(
        self,
        attempt: Callable[[CallContext], T],
        *,
        tool: str,
        arguments: Mapping[str, Any],
        call_id: str | None,
    ) -> T | ToolFailure:
        """The sync twin of :meth:`arun`."""
        history: list[AttemptRecord] = []
        with _span(tool, call_id):
            outcome = execute(attempt, **self._options(tool, arguments, history))
        _report(outcome, call_id, tool, arguments, history)
        return outcome


def _span(tool: str, call_id: str | None) -> AbstractContextManager[telemetry.ToolCall]:
    return telemetry.tool_call(tool, call_id=call_id, framework="openai_agents")


def _report(
    outcome: Any,
    call_id: str | None,
    tool: str,
    arguments: Mapping[str, Any],
    history: list[AttemptRecord],
) -> None:
    if not isinstance(outcome, ToolFailure):
        report.succeeded(call_id, tool, arguments, tuple(history))
