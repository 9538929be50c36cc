"""The model side on LangChain messages: lossless conversion and every form."""

from __future__ import annotations

import pytest
from langchain.agents import create_agent
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.tools import tool
from lc_support import ai, call

from toolmend import Kind, LoopGuard
from toolmend.integrations import GUIDANCE, runtime_note
from toolmend_langchain import KEY, ToolMendMiddleware, rewrite_messages
from toolmend_langchain._convert import from_openai, to_openai
from toolmend_langchain.testing import ScriptedChatModel, replies

DENIED = "PermissionError: access denied"


def conversation(*, error_status: str = "error") -> list[BaseMessage]:
    return [
        SystemMessage("sys"),
        HumanMessage("earlier"),
        AIMessage("earlier answer"),
        ChatMessage(role="critic", content="aside"),
        HumanMessage("do both"),
        ai(call("a", {"x": 1}, "c1"), call("b", {"y": 2}, "c2"), content="working"),
        ToolMessage("fine", tool_call_id="c1", name="a"),
        ToolMessage(DENIED, tool_call_id="c2", name="b", status=error_status),
    ]


def test_round_trip_without_edits_returns_the_same_objects() -> None:
    messages = conversation()
    converted = to_openai(messages)
    back = from_openai(converted, converted, messages)
    assert all(x is y for x, y in zip(back, messages, strict=True))


def test_c3_inserts_one_note_and_keeps_every_other_object() -> None:
    messages = conversation()
    out = rewrite_messages(messages, "c3")

    assert out.changed
    assert len(out.messages) == len(messages) + 1
    assert all(x is y for x, y in zip(out.messages, messages, strict=False))
    note = out.messages[-1]
    assert isinstance(note, HumanMessage)
    assert note.content == runtime_note("b", {"y": 2}, DENIED, GUIDANCE[Kind.UNRECOVERABLE])
    assert [d.call_id for d in out.report.detections] == ["c2"]


def test_c3_appends_to_a_user_message_after_the_results() -> None:
    messages = [*conversation(), HumanMessage("and hurry")]
    out = rewrite_messages(messages, "c3")

    assert len(out.messages) == len(messages)
    assert all(x is y for x, y in zip(out.messages[:-1], messages[:-1], strict=True))
    edited = out.messages[-1]
    assert edited is not messages[-1]
    assert edited.id == messages[-1].id
    assert edited.content == "and hurry\n\n" + runtime_note(
        "b", {"y": 2}, DENIED, GUIDANCE[Kind.UNRECOVERABLE]
    )
    assert messages[-1].content == "and hurry"


def test_c1_edits_only_the_failed_result() -> None:
    messages = conversation()
    out = rewrite_messages(messages, "c1")

    changed = [i for i, (x, y) in enumerate(zip(out.messages, messages, strict=True)) if x is not y]
    assert changed == [7]
    edited = out.messages[7]
    assert isinstance(edited, ToolMessage)
    assert (edited.content, edited.tool_call_id, edited.status) == (
        DENIED + "\n" + GUIDANCE[Kind.UNRECOVERABLE],
        "c2",
        "error",
    )


@pytest.mark.parametrize("form", ["c2", "c4"])
def test_c2_and_c4_drop_the_failed_call_and_result(form: str) -> None:
    messages = conversation()
    out = rewrite_messages(messages, form)

    assert all(x is y for x, y in zip(out.messages[:5], messages[:5], strict=True))
    assistant = out.messages[5]
    assert isinstance(assistant, AIMessage)
    assert assistant.content == "working"
    assert [c["id"] for c in assistant.tool_calls] == ["c1"]
    assert [c["id"] for c in messages[5].tool_calls] == ["c1", "c2"]  # type: ignore[attr-defined]
    assert out.messages[6] is messages[6]
    note = runtime_note("b", {"y": 2}, DENIED, GUIDANCE[Kind.UNRECOVERABLE])
    assert [type(m).__name__ for m in out.messages[7:]] == ["HumanMessage"]
    assert out.messages[7].content == note


def test_recorded_verdict_beats_the_text() -> None:
    messages = conversation(error_status="success")
    messages[-1] = ToolMessage(
        "all good",
        tool_call_id="c2",
        name="b",
        response_metadata={
            KEY: {
                "failed": True,
                "kind": "transient",
                "rule": "exception",
                "source": "exception",
                "reason": "HTTP 503",
                "guidance": "custom next step",
            }
        },
    )
    out = rewrite_messages(messages, "c3")
    assert out.messages[-1].content == runtime_note("b", {"y": 2}, "all good", "custom next step")


def test_clean_record_silences_text_detection() -> None:
    messages = conversation(error_status="success")
    messages[-1] = ToolMessage(
        DENIED, tool_call_id="c2", name="b", response_metadata={KEY: {"failed": False}}
    )
    out = rewrite_messages(messages, "c3")
    assert out.messages == messages
    assert not out.changed


def test_list_content_keeps_its_blocks() -> None:
    messages = [
        HumanMessage("go"),
        ai(call("a", {}, "c1")),
        ToolMessage([{"type": "text", "text": DENIED}], tool_call_id="c1", name="a"),
        HumanMessage([{"type": "text", "text": "more"}, {"type": "image_url", "image_url": "u"}]),
    ]
    out = rewrite_messages(messages, "c3")
    note = runtime_note("a", {}, DENIED, GUIDANCE[Kind.UNRECOVERABLE])
    assert out.messages[-1].content == [
        {"type": "text", "text": "more"},
        {"type": "image_url", "image_url": "u"},
        {"type": "text", "text": "\n\n" + note},
    ]


def test_nothing_to_do_and_bad_input() -> None:
    plain = [HumanMessage("hi")]
    out = rewrite_messages(plain)
    assert out.messages == plain
    assert out.report.skipped == ("no assistant turn: no decision step",)

    odd = rewrite_messages([ai(call("a", {}, "c1")), "not a message"])  # type: ignore[list-item]
    assert odd.messages == [odd.messages[0], "not a message"]
    assert not odd.changed

    unknown = rewrite_messages(conversation(), "c9")
    assert not unknown.changed
    assert unknown.report.skipped == ("unknown form 'c9'; left unchanged",)


def test_superseded_failures_become_stubs_when_asked() -> None:
    messages = [
        HumanMessage("go"),
        ai(call("a", {"x": 1}, "c1")),
        ToolMessage(DENIED, tool_call_id="c1", name="a", status="error"),
        ai(call("a", {"x": 2}, "c2")),
        ToolMessage("fine", tool_call_id="c2", name="a"),
    ]
    out = rewrite_messages(messages, "c3", stub_superseded=True)
    stub = "[Earlier failure of a, resolved by a later successful call: " + DENIED + "]"
    assert [m.content for m in out.messages] == ["go", "", stub, "", "fine"]
    assert out.messages[2].tool_call_id == "c1"  # type: ignore[attr-defined]
    assert messages[2].content == DENIED
    assert [m is o for m, o in zip(out.messages, messages, strict=True)] == [
        True, True, False, True, True
    ]  # fmt: skip
    assert rewrite_messages(messages, "c3").messages[2] is messages[2]


def test_stub_superseded_through_the_middleware() -> None:
    @tool
    def a(x: int) -> str:
        """Works for 2."""
        if x != 2:
            raise PermissionError("access denied")
        return "fine"

    model = ScriptedChatModel(
        script=replies([ai(call("a", {"x": 1}, "c1")), ai(call("a", {"x": 2}, "c2")), "ok"])
    )
    middleware = ToolMendMiddleware(loop_guard=LoopGuard(stub_superseded=True))
    out = create_agent(model, [a], middleware=[middleware]).invoke(
        {"messages": [HumanMessage("go")]}
    )
    assert model.seen[2][2].content.startswith("[Earlier failure of a, resolved by a later")
    assert out["messages"][2].content.startswith("Tool 'a' failed after 1 attempt")
