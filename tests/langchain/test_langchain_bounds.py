"""Deep and cyclic tool arguments through a real LangChain agent: the run goes on.

Without toolmend such a call ends the run with the tool's own error; with it,
the failure is delivered to the model like any other, its arguments restated
within the core's bounds (``…`` past the depth, ``<cycle>`` for a container
met inside itself).  The depth is one LangChain's own callbacks still print but
a recursive walk of the arguments cannot (two Python frames a level).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from lc_support import ai, call, notes, tool_messages, where

import notes as expected
from hostile import CYCLIC_SHOWN, DEEP_SHOWN, cyclic, nest
from toolmend import Kind
from toolmend.integrations import GUIDANCE
from toolmend_langchain import ToolMendMiddleware, reports
from toolmend_langchain.testing import ScriptedChatModel, replies

MODES = ["invoke", "stream", "ainvoke", "astream"]
ERROR = "Invalid arguments: the document is malformed"


CASES = {
    "deep": ({"doc": nest(250, {"x": 1})}, {"doc": DEEP_SHOWN}),
    "cyclic": ({"doc": cyclic()}, {"doc": CYCLIC_SHOWN}),
}


@tool
def save(doc: dict[str, Any]) -> str:
    """Save a document."""
    raise ValueError(ERROR)


async def run(agent: Any, mode: str) -> Any:
    state = {"messages": [HumanMessage("save it")]}
    if mode == "invoke":
        return agent.invoke(state)
    if mode == "ainvoke":
        return await agent.ainvoke(state)
    if mode == "stream":
        return list(agent.stream(state, stream_mode="values"))[-1]
    return [chunk async for chunk in agent.astream(state, stream_mode="values")][-1]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("arguments", "shown"), CASES.values(), ids=CASES.keys())
async def test_a_failing_call_with_deep_or_cyclic_arguments_is_delivered(
    arguments: dict[str, Any], shown: dict[str, Any], mode: str
) -> None:
    model = ScriptedChatModel(script=replies([ai(call("save", arguments, "c1")), "done"]))
    agent = create_agent(model, [save], middleware=[ToolMendMiddleware()])

    out = await asyncio.wait_for(run(agent, mode), 60)

    first = f"Tool 'save' failed after 1 attempt with ValueError: {ERROR}"
    cause = "\n".join([first, *where((save.func, "raise"))])
    (result,) = tool_messages(out["messages"])
    assert (result.status, result.content) == ("error", cause)
    assert [m.type for m in out["messages"]] == ["human", "ai", "tool", "ai"]
    assert out["messages"][-1].content == "done"
    (note,) = notes(model.seen[1])
    restated = compose(shown)
    assert note == expected.note("save", restated, cause, GUIDANCE[Kind.FIXABLE])
    (record, rewrite) = reports(out["messages"])
    assert (record["failed"], record["kind"], record["arguments"]) == (True, "fixable", shown)
    (detection,) = rewrite["rewrite"]["detections"]
    assert detection["arguments"] == shown


def compose(shown: dict[str, Any]) -> str:
    """The arguments as the note restates them: ``key=`` and compact JSON."""
    return ", ".join(
        f"{key}={json.dumps(value, ensure_ascii=False, separators=(',', ':'))}"
        for key, value in shown.items()
    )
