"""``RecoveringServer``: an SDK MCP server whose tool calls run under toolmend's retry policy.

The SDK turns each MCP tool into a function tool whose body calls
``server.call_tool(name, arguments, meta)``; a call that raises goes to the
server's failure function and an ``isError`` result becomes ordinary output.
This wrapper is that server: ``call_tool`` runs each attempt on the wrapped
server under the core (``toolmend.integrations.aexecute``, the run's loop guard), so that
transient failures of read-only and idempotent tools are retried inside the
call and nothing else is repeated.  An ``isError`` result counts as a failure
of its attempt (:class:`toolmend.integrations.ResultFailed`); when the core gives up, the
model reads the result the server sent, or the failure function's text for an
error that was raised, as without the wrapper.  Everything but ``call_tool``
is the wrapped server's own.

The run's tool context comes from the meta resolver, which the SDK calls just
before ``call_tool`` (see :mod:`.pending`); without it (a direct call) the call
is still guarded, without contracts from the run.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Unpack

from agents import AgentBase, RunContextWrapper
from agents.mcp import MCPServer, MCPToolMetaContext
from agents.tool import ToolErrorFunction, default_tool_error_function
from mcp.types import CallToolResult, GetPromptResult, ListPromptsResult, TextContent
from mcp.types import Tool as MCPTool

from toolmend import (
    Effect,
    ToolFailed,
    ToolFailure,
    Verdict,
    classify_result,
)
from toolmend.integrations import (
    CallContext,
    Delegating,
    Recovery,
    RecoveryOptions,
    ResultFailed,
    text_of,
)

from . import _pending as pending
from ._contracts import receipt_for
from ._failure import UNSET, FailureFunction, model_arguments, own_failure_function
from ._guarded import Guarded
from ._mcp import MCPErrorResults

__all__ = ["RecoveringServer"]


@dataclasses.dataclass(frozen=True, slots=True)
class _Failed:
    """A failed result, as the failure of the attempt that returned it."""

    result: CallToolResult
    verdict: Verdict


def _text(result: CallToolResult) -> str:
    """The text blocks of a result, as the model reads them."""
    return text_of([block.model_dump(mode="json") for block in result.content]) or ""


class RecoveringServer(Delegating, MCPServer):
    """Wrap an SDK MCP server (``MCPServerStdio``, ``MCPServerSse``, ...) so its tools recover.

    ``Agent(mcp_servers=[RecoveringServer(MCPServerStdio(params), effects={...})])``;
    ``async with`` it, or connect it, as the wrapped server.

    - ``effects`` maps tool names to ``read_only``, ``idempotent``, ``write`` or
      ``unknown`` (the default, handled as a write).  Only read-only and
      idempotent tools are retried automatically, under ``retry`` (a
      :class:`toolmend.RetryPolicy`; ``None``: never); a write whose outcome is
      unknown gets the verify-first step.  With ``trust_annotations=True`` a
      tool's MCP annotations (``readOnlyHint``, ``idempotentHint``) stand in for
      an undeclared effect; the spec calls them untrusted hints, so they are
      ignored by default.
    - ``contracts``: outcome contracts for the successful results (default: the
      run's, from ``run_config(contracts=...)``).  A violating result reaches the
      model as the receipt, as a ``function_tool``'s does.
    - ``form`` and the failure function: the wrapped server's failure function is
      used as ``failure_error_function`` is for ``function_tool`` (yours supplies
      the text, ``None`` raises, the SDK default becomes toolmend's in ``form``),
      and its ``custom_data_extractor`` runs after toolmend's, which records
      ``isError`` results, so :func:`mcp_server_options` is not needed.

    Leave the wrapped server's own ``max_retry_attempts`` at 0: it repeats any
    call that raised, writes included.

    Args:
        server: The SDK MCP server to wrap.
        **options: ``effects``, ``trust_annotations``, ``retry``, ``contracts`` and
            ``form``, as above (:class:`toolmend.integrations.RecoveryOptions`).
    """

    wrapped: MCPServer

    def __init__(self, server: MCPServer, **options: Unpack[RecoveryOptions]) -> None:
        # MCPServer.__init__ is not called: every setting is the wrapped server's.
        self.recovery = Recovery.of(**options)
        self.wrapped = server
        self._annotations: dict[str, Any] = {}
        self.tool_meta_resolver = self._resolve_meta
        self.custom_data_extractor = self._extractor()

    # -- the hooks the SDK reads from the server --------------------------------

    def _extractor(self) -> MCPErrorResults:
        theirs = getattr(self.wrapped, "custom_data_extractor", None)
        return theirs if isinstance(theirs, MCPErrorResults) else MCPErrorResults(theirs)

    def _resolve_meta(self, context: MCPToolMetaContext) -> Any:
        pending.begin(context.run_context, context.tool_name, context.arguments)
        theirs = getattr(self.wrapped, "tool_meta_resolver", None)
        return None if theirs is None else theirs(context)

    def _get_failure_error_function(
        self, agent_failure_error_function: ToolErrorFunction | None
    ) -> ToolErrorFunction | None:
        chosen = self.wrapped._get_failure_error_function(agent_failure_error_function)
        given = UNSET if chosen is default_tool_error_function else chosen
        own: FailureFunction | None = own_failure_function(given, form=self.recovery.form)
        return own

    def _get_needs_approval_for_tool(self, tool: MCPTool, agent: AgentBase | None) -> Any:
        return self.wrapped._get_needs_approval_for_tool(tool, agent)

    # -- the server -------------------------------------------------------------

    @property
    def name(self) -> str:
        """The wrapped server's name."""
        return self.wrapped.name

    @property
    def cached_tools(self) -> list[MCPTool] | None:
        """The wrapped server's cached tool listing."""
        return self.wrapped.cached_tools

    async def connect(self) -> None:
        """Connect the wrapped server."""
        await self.wrapped.connect()  # type: ignore[no-untyped-call]  # untyped in the SDK

    async def cleanup(self) -> None:
        """Close the wrapped server."""
        await self.wrapped.cleanup()  # type: ignore[no-untyped-call]  # untyped in the SDK

    async def __aenter__(self) -> RecoveringServer:
        await self.connect()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.cleanup()

    async def list_tools(
        self, run_context: RunContextWrapper[Any] | None = None, agent: AgentBase | None = None
    ) -> list[MCPTool]:
        """The wrapped server's tools; their annotations are kept when they are trusted.

        Args:
            run_context: As the SDK passes it.
            agent: As the SDK passes it.
        """
        tools = await self.wrapped.list_tools(run_context, agent)
        if self.recovery.trust_annotations:
            self._annotations.update({tool.name: tool.annotations for tool in tools})
        return tools

    async def list_prompts(self) -> ListPromptsResult:
        """The wrapped server's prompts."""
        return await self.wrapped.list_prompts()

    async def get_prompt(
        self, name: str, arguments: dict[str, Any] | None = None
    ) -> GetPromptResult:
        """A prompt of the wrapped server.

        Args:
            name: The prompt's name.
            arguments: Its arguments.
        """
        return await self.wrapped.get_prompt(name, arguments)

    async def list_resources(self, cursor: str | None = None) -> Any:
        """The wrapped server's resources.

        Args:
            cursor: Where the previous page ended.
        """
        return await self.wrapped.list_resources(cursor)

    async def list_resource_templates(self, cursor: str | None = None) -> Any:
        """The wrapped server's resource templates.

        Args:
            cursor: Where the previous page ended.
        """
        return await self.wrapped.list_resource_templates(cursor)

    async def read_resource(self, uri: str) -> Any:
        """A resource of the wrapped server.

        Args:
            uri: The resource's URI.
        """
        return await self.wrapped.read_resource(uri)

    # -- calls ------------------------------------------------------------------

    def effect(self, tool: str, shown_as: str | None = None) -> Effect:
        """The effect of ``tool``; a declaration wins over a trusted annotation.

        The effect of ``tool``: declared (by its name or the name the model sees), else
        its annotations' claim when trusted, else ``unknown``.

        Args:
            tool: The tool's name on the server.
            shown_as: The name the model sees, if another.
        """
        effect, _ = self.recovery.effect(tool, shown_as, annotations=self._annotations.get(tool))
        return effect

    async def call_tool(
        self, tool_name: str, arguments: dict[str, Any] | None, meta: dict[str, Any] | None = None
    ) -> CallToolResult:
        """The wrapped server's ``call_tool``, each attempt under the core's retry policy.

        Args:
            tool_name: The tool's name on the server.
            arguments: The call's arguments.
            meta: The request's ``_meta``.
        """
        call = pending.current(tool_name, arguments)
        context = call.context if call is not None else None
        shown_as = getattr(context, "tool_name", None)
        tool = shown_as if isinstance(shown_as, str) else tool_name

        async def attempt(_: CallContext) -> CallToolResult:
            if meta is None:
                result = await self.wrapped.call_tool(tool_name, arguments)
            else:
                result = await self.wrapped.call_tool(tool_name, arguments, meta=meta)
            if result.is_error is True:
                text = _text(result)
                verdict = classify_result(text, is_error=True)
                if verdict.failed:
                    failed = _Failed(result, verdict)
                    raise ResultFailed(text, verdict.kind, verdict.reason, failed)
            return result

        guarded = Guarded(self.effect(tool_name, shown_as), self.recovery.policy)
        outcome = await guarded.arun(
            attempt,
            tool=tool,
            arguments=model_arguments(context) if context is not None else dict(arguments or {}),
            call_id=getattr(context, "tool_call_id", None),
        )
        if isinstance(outcome, ToolFailure):
            return self._failed(call, outcome)
        return self._checked(context, tool, outcome)

    def _failed(self, call: pending.PendingCall | None, failure: ToolFailure) -> CallToolResult:
        """Give the failure to the SDK as it would have come without retrying."""
        exc = failure.exception
        if isinstance(exc, ResultFailed) and isinstance(exc.result, _Failed):
            if call is not None:
                call.returned(*failure.as_returned(exc.result.verdict))
            return exc.result.result
        if call is not None:
            call.raised(failure)
        if isinstance(exc, Exception):
            raise exc
        raise ToolFailed(failure)

    def _checked(self, context: Any, tool: str, result: CallToolResult) -> CallToolResult:
        """``result``, or the receipt in its place when it violates its outcome contract.

        The contract reads what the model reads: the structured content when the
        server is set to send it (``use_structured_content``), else the text.
        """
        structured = result.structured_content
        use_structured = getattr(self.wrapped, "use_structured_content", False) is True
        value = structured if use_structured and structured else _text(result)
        receipt = receipt_for(context, tool, value, self.recovery.contracts)
        if receipt is None:
            return result
        block = TextContent(type="text", text=receipt)
        return result.model_copy(update={"content": [block], "structured_content": None})
