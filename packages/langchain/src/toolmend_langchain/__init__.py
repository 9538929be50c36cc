"""toolmend for LangChain ``create_agent`` and hand-built LangGraph graphs.

    agent = create_agent(model, tools, middleware=[ToolMendMiddleware(
        effects={"search": "read_only", "send_email": "write"})])

Failed tool calls are retried inside the tool step when that is safe, and the
model gets the failure in form C3 at its next decision; every record travels
on the messages themselves (``reports(state["messages"])``).
"""

from ._graph import pre_model_hook, tool_node
from ._middleware import ToolMendMiddleware
from ._model_side import Rewritten, rewrite_messages
from ._records import KEY, reports
from ._tool_side import ToolSideOptions

__all__ = [
    "KEY",
    "Rewritten",
    "ToolMendMiddleware",
    "ToolSideOptions",
    "pre_model_hook",
    "reports",
    "rewrite_messages",
    "tool_node",
]
