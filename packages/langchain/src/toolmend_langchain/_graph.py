"""The same recovery for hand-built LangGraph graphs.

``tool_node`` is a ``ToolNode`` whose tool calls run through the same tool
side as the middleware; ``pre_model_hook`` (or :func:`rewrite_messages` in a
custom model node) gives the model the delivery form through
``llm_input_messages``, which leaves the graph state as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Unpack

from langchain_core.tools import BaseTool
from langgraph.prebuilt import ToolNode

from toolmend import ContextPolicy, Form

from ._model_side import rewrite_messages
from ._tool_side import ToolSideOptions, configure

__all__ = ["pre_model_hook", "tool_node"]


def tool_node(
    tools: Sequence[BaseTool | Callable[..., Any]],
    *,
    form: Form | str = Form.C3,
    node_options: Mapping[str, Any] | None = None,
    **options: Unpack[ToolSideOptions],
) -> ToolNode:
    """A ``ToolNode`` with toolmend's tool side; ``node_options`` go to ``ToolNode``.

    Passing ``wrap_tool_call`` or ``awrap_tool_call`` is refused: they are
    what this node is made of.  ``malformed_calls`` here checks arguments
    against each tool's schema before it runs; unknown tools and unparseable
    arguments are caught by ``ToolMendMiddleware`` at the model step, which a
    hand-built graph does not have.

    Args:
        tools: The tools, as for ``ToolNode``.
        form: See :class:`~toolmend_langchain.ToolMendMiddleware`.
        node_options: Keyword arguments for ``ToolNode`` itself.
        **options: The tool step's settings, as for
            :class:`~toolmend_langchain.ToolMendMiddleware` (``ToolSideOptions``).

    Returns:
        The node.

    Raises:
        TypeError: ``wrap_tool_call`` or ``awrap_tool_call`` was passed, or an
            unknown option.
    """
    passed = dict(node_options or {})
    for taken in ("wrap_tool_call", "awrap_tool_call"):
        if taken in passed:
            raise TypeError(f"tool_node() sets {taken} itself")
    side = configure(form=form, **options)
    return ToolNode(tools, wrap_tool_call=side.call, awrap_tool_call=side.acall, **passed)


def pre_model_hook(
    form: Form | str = Form.C3,
    *,
    client: str | None = None,
    messages_key: str = "messages",
    context: ContextPolicy | None = None,
) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """A hook that returns ``{"llm_input_messages": ...}`` with the form applied.

    Args:
        form: The delivery form.
        client: The User-Agent that selects agent rules.
        messages_key: The state key that holds the messages.
        context: The core's :class:`toolmend.ContextPolicy` for errors in context.

    Returns:
        The hook.
    """
    Form.parse(form)

    def hook(state: Mapping[str, Any]) -> dict[str, Any]:
        messages = state.get(messages_key) if isinstance(state, Mapping) else None
        if not isinstance(messages, list):
            messages = getattr(state, messages_key, None)
        if not isinstance(messages, list):
            return {"llm_input_messages": []}
        rewritten = rewrite_messages(messages, form, client=client, context=context)
        return {"llm_input_messages": rewritten.messages}

    return hook
