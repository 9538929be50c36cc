"""Hand-built LangGraph graphs: the ToolNode factory and the model-input hook."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import tools_condition
from lc_support import ai, call, http_error, notes, shape, tool_messages

from toolmend import Kind
from toolmend.integrations import GUIDANCE, runtime_note
from toolmend_langchain import pre_model_hook, tool_node
from toolmend_langchain.testing import ScriptedChatModel, replies


def build(model: ScriptedChatModel, tools: list[Any], **options: Any) -> Any:
    hook = pre_model_hook("c3")

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(hook(state)["llm_input_messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", tool_node(tools, **options))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    graph.add_edge("tools", "agent")
    return graph.compile(checkpointer=InMemorySaver())


@pytest.mark.parametrize("asynchronous", [False, True])
async def test_hand_built_graph_retries_and_delivers_c3(asynchronous: bool) -> None:
    fetched: list[str] = []

    @tool
    def fetch(url: str) -> str:
        """Fetch a page."""
        fetched.append(url)
        if len(fetched) == 1:
            raise http_error(502)
        return "page"

    @tool
    def delete(path: str) -> str:
        """Delete a file."""
        raise PermissionError("read-only file system")

    model = ScriptedChatModel(
        script=replies(
            [ai(call("fetch", {"url": "u"}, "f1"), call("delete", {"path": "/p"}, "d1")), "done"]
        )
    )
    graph = build(model, [fetch, delete], effects={"fetch": "read_only"})
    config = {"configurable": {"thread_id": "g"}}
    state = {"messages": [HumanMessage("go")]}
    out = await graph.ainvoke(state, config) if asynchronous else graph.invoke(state, config)

    assert fetched == ["u", "u"]
    fetched_result, deleted = tool_messages(out["messages"])
    assert (fetched_result.content, deleted.status) == ("page", "error")
    assert model.seen[1][-1].content == runtime_note(
        "delete", {"path": "/p"}, deleted.content, GUIDANCE[Kind.UNRECOVERABLE]
    )
    assert notes(out["messages"]) == []
    assert shape(out["messages"])[-1] == ("ai", "done", ())


def test_tool_node_refuses_its_own_wrappers() -> None:
    with pytest.raises(TypeError, match="wrap_tool_call"):
        tool_node([], node_options={"wrap_tool_call": lambda r, h: h(r)})


def test_hook_without_messages() -> None:
    assert pre_model_hook()({}) == {"llm_input_messages": []}


@pytest.mark.parametrize("malformed_calls", [True, False])
def test_tool_node_checks_arguments_against_the_schema_before_the_tool_runs(
    malformed_calls: bool,
) -> None:
    ran: list[int] = []

    @tool
    def square(n: int) -> int:
        """Square a number."""
        ran.append(n)
        return n * n

    model = ScriptedChatModel(script=replies([ai(call("square", {"n": "two"}, "s1")), "ok"]))
    graph = build(model, [square], malformed_calls=malformed_calls)
    out = graph.invoke({"messages": [HumanMessage("go")]}, {"configurable": {"thread_id": "m"}})

    if malformed_calls:
        text = (
            "Tool 'square' was not run: invalid arguments. n: Input should be a valid integer, "
            "unable to parse string as an integer (got 'two')"
        )
    else:
        text = (
            "Error invoking tool 'square' with kwargs {'n': 'two'} with error:\n"
            " n: Input should be a valid integer, unable to parse string as an integer\n"
            " Please fix the error and try again."
        )
    assert shape(tool_messages(out["messages"])) == [("tool", "s1", "square", "error", text)]
    assert ran == []
