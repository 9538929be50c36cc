"""Errors in context on the model side of LangChain: collapse, identical runs, pile-up, filter.

The agent's state keeps the tool messages as the tools produced them; only the
model's request changes."""

from __future__ import annotations

from langchain.agents import create_agent
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from lc_support import ai, call

from toolmend import ContextPolicy, Kind
from toolmend.integrations import GUIDANCE, PILE_UP, runtime_note
from toolmend_langchain import ToolMendMiddleware, rewrite_messages
from toolmend_langchain.testing import ScriptedChatModel, replies

ERROR = "PermissionError: access denied\nWhere: orders.py:12 in lookup"
RESOLVED = (
    "[Earlier failure of a, resolved by a later successful call: PermissionError: access denied]"
)
REPEATED = (
    "[a failed again with the same error as its earlier call above: PermissionError: access denied]"
)
DEV = (
    "Error: 401 Unauthorized: the access token has expired. "
    "Run `gcloud auth login` to obtain new credentials."
)
MARKER = "[a step for the developer was omitted]"


def _turns(*outcomes: tuple[str, str]) -> list[BaseMessage]:
    messages: list[BaseMessage] = [HumanMessage("go")]
    for n, (content, status) in enumerate(outcomes, 1):
        messages += [
            ai(call("a", {"x": n}, f"c{n}")),
            ToolMessage(content, tool_call_id=f"c{n}", name="a", status=status),
        ]
    return messages


def test_a_resolved_failure_collapses_in_the_request_only() -> None:
    messages = _turns((ERROR, "error"), ("fine", "success"))
    out = rewrite_messages(messages, "c3", context=ContextPolicy(collapse_resolved=True))
    assert [m.content for m in out.messages] == ["go", "", RESOLVED, "", "fine"]
    assert [m is o for m, o in zip(out.messages, messages, strict=True)] == [
        True, True, False, True, True
    ]  # fmt: skip
    assert messages[2].content == ERROR
    assert out.messages[2].tool_call_id == "c1"  # type: ignore[attr-defined]
    assert out.report.collapsed == ("2: a resolved",)
    default = rewrite_messages(messages, "c3")
    assert default.messages[2] is messages[2]


def test_a_run_of_identical_errors_keeps_the_first_in_full() -> None:
    messages = _turns((ERROR, "error"), (ERROR, "error"), (ERROR, "error"))
    out = rewrite_messages(messages, "c3", context=ContextPolicy(collapse_resolved=True))
    assert [m.content for m in out.messages[:7]] == ["go", "", ERROR, "", REPEATED, "", ERROR]
    assert [m.content for m in messages[:7]] == ["go", "", ERROR, "", ERROR, "", ERROR]
    # The third failure with the same error: the note recommends stopping.
    piled = PILE_UP.format(count=3, tool="a", error_class="PermissionError")
    assert out.messages[7].content == runtime_note("a", {"x": 3}, ERROR, piled)
    assert len(out.messages) == 8


def test_the_note_omits_developer_steps() -> None:
    messages = _turns((DEV, "error"))
    out = rewrite_messages(messages, "c3")
    shown = "Error: 401 Unauthorized: the access token has expired. " + MARKER
    assert out.messages[-1].content == runtime_note(
        "a", {"x": 1}, shown, GUIDANCE[Kind.UNRECOVERABLE]
    )
    assert out.report.detections[0].omitted == (
        "Run `gcloud auth login` to obtain new credentials.",
    )
    waived = rewrite_messages(messages, "c3", context=ContextPolicy(agent_steps={"a"}))
    assert waived.messages[-1].content == runtime_note(
        "a", {"x": 1}, DEV, GUIDANCE[Kind.UNRECOVERABLE]
    )


def test_the_middleware_collapses_for_the_model_and_keeps_the_state_true() -> None:
    @tool
    def a(x: int) -> str:
        """Works for 2."""
        if x != 2:
            raise PermissionError("access denied")
        return "fine"

    model = ScriptedChatModel(
        script=replies([ai(call("a", {"x": 1}, "c1")), ai(call("a", {"x": 2}, "c2")), "ok"])
    )
    middleware = ToolMendMiddleware(context=ContextPolicy(collapse_resolved=True))
    out = create_agent(model, [a], middleware=[middleware]).invoke(
        {"messages": [HumanMessage("go")]}
    )
    failed = out["messages"][2].content
    assert failed.startswith("Tool 'a' failed after 1 attempt with PermissionError: access denied")
    assert model.seen[1][2].content == failed
    assert model.seen[2][2].content == (
        "[Earlier failure of a, resolved by a later successful call: "
        "Tool 'a' failed after 1 attempt with PermissionError: access denied]"
    )
