"""``ToolMendMiddleware``: tool-failure recovery for ``langchain.agents.create_agent``.

Tool side: each call runs under the core's retry policy (safe calls only) and
loop guard, and a failure comes back as an error ``ToolMessage`` with the
core's record.  Model side: at the decision step the request, and only the
request, gets the delivery form (C3 by default).  Both sides exist sync and
async, since a sync-only middleware fails under ``ainvoke``.

Put it after ``ToolRetryMiddleware`` in ``middleware=[...]`` (the list runs
outermost first): toolmend then sees the tool's exception first and never
re-raises it, so the stock retry has nothing to repeat, and a call toolmend
judged unsafe to repeat is repeated by neither.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from langchain.agents.middleware.types import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
    ModelResponse,
)
from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from toolmend import ContextPolicy, Effect, Form, RetryPolicy
from toolmend.contracts import Contracts

from .malformed import mend_response
from .model_side import Rewritten, attach_report, rewrite_messages
from .tool_side import LoopGuardSpec, Verify, configure

__all__ = ["ToolMendMiddleware"]

ToolResult = ToolMessage | Command[Any]
ModelHandler = Callable[[ModelRequest[Any]], ModelResponse[Any]]
AsyncModelHandler = Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]


class ToolMendMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Recover from failed tool calls: safe retries in the tool step, form C3 for the model.

    ``effects`` declares each tool's side effects (``read_only``,
    ``idempotent``, ``write``); an undeclared tool is treated as a write and
    is never repeated automatically.  ``loop_guard`` is a ``LoopGuard`` used
    as a template (each call gets a fresh one rebuilt from the run's messages),
    a factory, ``True`` for the defaults, or ``None`` to turn it off.
    ``verify`` maps a tool to a hook that tells whether a failed write landed;
    ``idempotency_keys`` maps a tool to the parameter that receives the key.
    ``contracts`` (``toolmend.contracts.Contracts``) checks successful results.
    ``malformed_calls`` (on by default) answers a call to a tool that does not
    exist, or with arguments that are not a JSON object or break the tool's
    schema, with a fixable error instead of the framework's own handling (which
    ends the run for unparseable arguments); arguments with exactly one repair
    (a trailing comma, brackets left open) run repaired, and the repair is
    recorded on the AI message.  ``False`` leaves all of that to LangChain.
    ``context`` (:class:`toolmend.ContextPolicy`) says what the model's request
    does with errors in context: collapse them once resolved, the pile-up note,
    the developer-step filter (default ``ContextPolicy()``).
    """

    def __init__(
        self,
        form: Form | str = Form.C3,
        *,
        effects: Mapping[str, Effect | str] | None = None,
        retry: RetryPolicy | None = None,
        loop_guard: LoopGuardSpec = True,
        contracts: Contracts | None = None,
        client: str | None = None,
        verify: Mapping[str, Verify] | None = None,
        idempotency_keys: Mapping[str, str] | None = None,
        malformed_calls: bool = True,
        context: ContextPolicy | None = None,
    ) -> None:
        super().__init__()
        self.context = context
        self.tools = []
        self.form = Form.parse(form)
        self.client = client
        self.malformed_calls = malformed_calls
        self._tool_side = configure(
            form=self.form,
            effects=effects,
            retry=retry,
            loop_guard=loop_guard,
            contracts=contracts,
            client=client,
            verify=verify,
            idempotency_keys=idempotency_keys,
            malformed_calls=malformed_calls,
        )
        factory = self._tool_side.loop_guard
        self._stub_superseded = bool(factory is not None and factory().stub_superseded)

    def _rewritten(self, request: ModelRequest[Any]) -> Rewritten:
        return rewrite_messages(
            request.messages,
            self.form,
            client=self.client,
            stub_superseded=self._stub_superseded,
            context=self.context,
        )

    def _request_for(self, request: ModelRequest[Any], rewritten: Rewritten) -> ModelRequest[Any]:
        """The request itself unless the model must see other messages."""
        if rewritten.changed:
            return request.override(messages=rewritten.messages)
        return request

    def _answered(
        self, request: ModelRequest[Any], response: ModelResponse[Any], rewritten: Rewritten
    ) -> ModelResponse[Any]:
        """The response with its malformed calls mended and the rewrite's report attached."""
        if self.malformed_calls:
            response = mend_response(response, request, self.form)
        result: ModelResponse[Any] = attach_report(response, rewritten.report)
        return result

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: ModelHandler
    ) -> ModelResponse[Any]:
        rewritten = self._rewritten(request)
        response = handler(self._request_for(request, rewritten))
        return self._answered(request, response, rewritten)

    async def awrap_model_call(
        self, request: ModelRequest[Any], handler: AsyncModelHandler
    ) -> ModelResponse[Any]:
        rewritten = self._rewritten(request)
        response = await handler(self._request_for(request, rewritten))
        return self._answered(request, response, rewritten)

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolResult],
    ) -> ToolResult:
        return self._tool_side.call(request, handler)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolResult]],
    ) -> ToolResult:
        return await self._tool_side.acall(request, handler)
