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

from collections.abc import Awaitable, Callable
from typing import Any, Unpack

from langchain.agents.middleware.types import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
    ModelResponse,
)
from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from toolmend import ContextPolicy, Form
from toolmend.integrations import end_run, recording_outcomes

from ._durable import store_for
from ._malformed import mend_response
from ._model_side import Rewritten, attach_report, rewrite_messages
from ._tool_side import ToolSideOptions, configure, run_of

__all__ = ["ToolMendMiddleware"]


def _calls_tools(response: ModelResponse[Any]) -> bool:
    """Whether the model's answer asks for a tool call (the run goes on)."""
    return any(getattr(message, "tool_calls", None) for message in response.result)


ToolResult = ToolMessage | Command[Any]
ModelHandler = Callable[[ModelRequest[Any]], ModelResponse[Any]]
AsyncModelHandler = Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]


class ToolMendMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Recover from failed tool calls: safe retries in the tool step, form C3 for the model.

    List it after ``ToolRetryMiddleware`` in ``middleware=[...]`` (the list runs
    outermost first), so that a call toolmend judged unsafe to repeat is
    repeated by neither.  No run state lives on the instance: one middleware
    serves concurrent runs and runs resumed from a checkpointer.

    Args:
        form: How a failure reaches the model at its next decision: ``c3`` (the
            default) leaves the tool result as it is and adds a runtime note
            after the results; ``c1`` appends the next step to the result;
            ``c2``/``c4`` replace the failed call with the note; ``off`` only
            records.  The request is rewritten, never the graph state.
        **options: The tool step's settings, :class:`ToolSideOptions`: ``effects``,
            ``retry``, ``loop_guard``, ``contracts``, ``client``, ``verify``,
            ``idempotency_keys``, ``malformed_calls``.
        durable: A ``SqliteSaver``, a ``PostgresSaver`` or a
            ``toolmend.durable.StepStore`` that makes calls survive crashes and
            replays: a "started" record in that database before each call, a key
            stable across resumes, verify-on-resume, and retry budgets shared by
            every worker on it (see "Running on many workers" in the README).
            ``None``: calls live in this process only.
        context: A :class:`toolmend.ContextPolicy` that says what the model's
            request does with errors in context: collapse them once resolved, the
            pile-up note, the developer-step filter (default ``ContextPolicy()``).

    Raises:
        ValueError: ``form`` names no delivery form.
        TypeError: ``loop_guard`` is none of the accepted kinds.
    """

    def __init__(
        self,
        form: Form | str = Form.C3,
        *,
        durable: Any = None,
        context: ContextPolicy | None = None,
        **options: Unpack[ToolSideOptions],
    ) -> None:
        super().__init__()
        self.context = context
        self.tools = []
        self.form = Form.parse(form)
        self.client = options.get("client")
        self.malformed_calls = options.get("malformed_calls", True)
        self._tool_side = configure(
            form=self.form,
            durable=store_for(durable) if durable is not None else None,
            **options,
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
        if recording_outcomes() is not None and not _calls_tools(result):
            # The model answered without a tool call: the run ends here, and its failures
            # settle.  A hook on the agent's end would add a graph node to every run.
            end_run(run_of(request.runtime, request.state))
        return result

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: ModelHandler
    ) -> ModelResponse[Any]:
        """Give the model the request in the delivery form; mend its malformed calls.

        Args:
            request: The agent's model request.
            handler: Calls the model (and the middleware after this one).
        """
        rewritten = self._rewritten(request)
        response = handler(self._request_for(request, rewritten))
        return self._answered(request, response, rewritten)

    async def awrap_model_call(
        self, request: ModelRequest[Any], handler: AsyncModelHandler
    ) -> ModelResponse[Any]:
        """The async twin of :meth:`wrap_model_call`.

        Args:
            request: The agent's model request.
            handler: Calls the model (and the middleware after this one).
        """
        rewritten = self._rewritten(request)
        response = await handler(self._request_for(request, rewritten))
        return self._answered(request, response, rewritten)

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolResult],
    ) -> ToolResult:
        """Run one tool call under the retry policy and loop guard; never raises its failure.

        Args:
            request: The agent's tool call request.
            handler: Runs the tool (and the middleware after this one).
        """
        return self._tool_side.call(request, handler)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolResult]],
    ) -> ToolResult:
        """The async twin of :meth:`wrap_tool_call`.

        Args:
            request: The agent's tool call request.
            handler: Runs the tool (and the middleware after this one).
        """
        return await self._tool_side.acall(request, handler)
