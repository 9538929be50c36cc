"""MCP servers of the SDK: failures and error results handled like function tools'.

An MCP tool fails in two ways.  The call raises (transport, protocol or
server error): the server's ``failure_error_function`` decides the text, and
ours tells the truth and records the verdict.  Or the server answers with
``isError``: the SDK passes the result on as ordinary output, with no flag the
model or the input filter could see, so the custom-data extractor, which
does see the flag, records the verdict for the filter.  Neither retries: for
that, wrap the server in :class:`~toolmend_openai_agents.RecoveringServer`.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from agents.mcp import MCPToolCustomDataContext
from agents.tool_context import ToolContext

from toolmend import Effect, Form, ToolFailure, classify_result
from toolmend.integrations import Source

from . import _pending as pending
from . import _report as report
from ._failure import FailureFunction
from ._runs import RUNS, output_text

__all__ = ["MCPErrorResults", "mcp_error_results", "mcp_server_options"]

log = logging.getLogger("toolmend.openai_agents")

UserExtractor = Callable[
    [MCPToolCustomDataContext], "Mapping[str, Any] | Awaitable[Mapping[str, Any] | None] | None"
]


def _record(context: MCPToolCustomDataContext, effect: Effect | str) -> None:
    if context.is_error is not True:
        return
    run_context = context.run_context
    if not isinstance(run_context, ToolContext):
        return
    text = output_text(context.tool_output)
    found = pending.returned(run_context)
    if found is not None:
        # Decided by a RecoveringServer's call_tool: its attempts and next step.
        failure, verdict = found
    else:
        verdict = classify_result(text, is_error=True)
        arguments = dict(context.arguments)
        made = ToolFailure.from_verdict(
            verdict, tool=context.tool_display_name, arguments=arguments, text=text, effect=effect
        )
        if made is None:
            return
        failure = made
        verdict = dataclasses.replace(verdict, guidance=made.guidance)
    RUNS.record(run_context.tool_call_id, context.tool_output, verdict)
    report.failed(run_context.tool_call_id, text, failure, source=verdict.source or Source.FLAG)


class MCPErrorResults:
    """An MCP ``custom_data_extractor`` that records ``isError`` results; see the factory."""

    def __init__(
        self, then: UserExtractor | None = None, effect: Effect | str = Effect.UNKNOWN
    ) -> None:
        self.then = then
        self.effect = Effect.parse(effect)

    def __call__(
        self, context: MCPToolCustomDataContext
    ) -> Mapping[str, Any] | Awaitable[Mapping[str, Any] | None] | None:
        """Record an ``isError`` result, then run the user's extractor."""
        try:
            _record(context, self.effect)
        except Exception:
            log.exception("toolmend: could not record an MCP error result")
        return None if self.then is None else self.then(context)


def mcp_error_results(
    then: UserExtractor | None = None, *, effect: Effect | str = Effect.UNKNOWN
) -> MCPErrorResults:
    """A ``custom_data_extractor`` for the SDK's MCP servers that classifies error results.

    Results the server flagged with ``isError`` are classified and recorded,
    so the input filter delivers their next step like a function tool's.
    ``then`` is your own extractor; what it returns is the custom data.

    Args:
        then: Your own extractor.
        effect: The effect assumed for the server's tools (undeclared: a write, so a
            temporary failure is told to check before repeating).

    Returns:
        The extractor.
    """
    return MCPErrorResults(then, effect)


def mcp_server_options(
    form: Form | str = Form.C3,
    *,
    effect: Effect | str = Effect.UNKNOWN,
    then: UserExtractor | None = None,
) -> dict[str, Any]:
    """Keyword arguments for ``MCPServerStdio`` / ``MCPServerSse`` / ``MCPServerStreamableHttp``.

    ``MCPServerStdio(params, **mcp_server_options())``: the failure function
    for calls that raise, and the extractor for ``isError`` results.

    Args:
        form: The delivery form.
        effect: The effect assumed for the server's tools.
        then: Your own custom-data extractor.

    Returns:
        The keyword arguments.
    """
    return {
        "failure_error_function": FailureFunction(form, effect=effect),
        "custom_data_extractor": mcp_error_results(then, effect=effect),
    }
