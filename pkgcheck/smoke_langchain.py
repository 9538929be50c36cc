"""Smoke test of the installed ``toolmend-langchain`` wheel: a raising tool under
``create_agent`` becomes an error ToolMessage with the core's cause and guidance, and the
run goes on to the model's answer.  Prints the ToolMessage content (the workspace check
reads it)."""

from __future__ import annotations

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from toolmend_langchain import ToolMendMiddleware
from toolmend_langchain.testing import ScriptedChatModel, replies

CAUSE = (
    "Tool 'book_table' failed after 1 attempt with TimeoutError: the booking service did not answer"
)


@tool
def book_table(restaurant: str) -> str:
    """Book a restaurant table."""
    raise TimeoutError("the booking service did not answer")


def main() -> None:
    call = {"name": "book_table", "args": {"restaurant": "Fiskeriet"}, "id": "call_1"}
    model = ScriptedChatModel(
        script=replies([AIMessage(content="", tool_calls=[call]), "Not booked."])
    )
    agent = create_agent(
        model,
        [book_table],
        middleware=[ToolMendMiddleware(effects={"book_table": "write"}, form="c1")],
    )
    state = agent.invoke({"messages": [HumanMessage("Book Fiskeriet.")]})
    tool_messages = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert len(tool_messages) == 1, state["messages"]
    message = tool_messages[0]
    assert message.status == "error", message
    assert isinstance(message.content, str)
    assert message.content.startswith(CAUSE), message.content
    assert state["messages"][-1].content == "Not booked.", state["messages"][-1]
    print(message.content)


if __name__ == "__main__":
    main()
