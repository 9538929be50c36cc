"""The model side stays flat in long runs: a request after succeeded calls converts nothing.

Counted, not timed: every message the model side converts to the core's format goes
through ``_convert._one``, so counting its calls over a growing conversation shows
whether each request re-reads the whole history.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from lc_support import ai, call

from toolmend import Form
from toolmend.integrations import Report
from toolmend_langchain import ToolMendMiddleware, _convert, rewrite_messages
from toolmend_langchain.testing import ScriptedChatModel

STEPS = 30


@pytest.fixture
def conversions(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every message converted to the core's format, in order."""
    seen: list[Any] = []
    original = _convert._one

    def counting(message: Any) -> dict[str, Any]:
        seen.append(message)
        return original(message)

    monkeypatch.setattr(_convert, "_one", counting)
    return seen


def run(fails_at: int | None) -> tuple[list[BaseMessage], list[int]]:
    """A run of STEPS tool calls, one per model request; the sizes of the requests."""
    sizes: list[int] = []

    def script(messages: list[BaseMessage]) -> AIMessage:
        sizes.append(len(messages))
        step = sum(isinstance(m, ToolMessage) for m in messages)
        if step == STEPS:
            return AIMessage(content="done")
        return ai(call("lookup", {"step": step}, f"call_{step}"))

    @tool
    def lookup(step: int) -> str:
        """Look a step up."""
        if step == fails_at:
            raise PermissionError("access denied")
        return f"row {step}"

    agent = create_agent(
        ScriptedChatModel(script=script), tools=[lookup], middleware=[ToolMendMiddleware()]
    )
    state = agent.invoke({"messages": [HumanMessage("go")]})
    return state["messages"], sizes


def test_requests_after_succeeded_calls_convert_no_message(conversions: list[Any]) -> None:
    messages, sizes = run(fails_at=None)
    assert len(sizes) == STEPS + 1
    assert sizes[-1] == 2 * STEPS + 1
    assert len(messages) == 2 * STEPS + 2
    assert conversions == []


def test_only_the_request_after_a_failure_reads_the_history(conversions: list[Any]) -> None:
    messages, sizes = run(fails_at=10)
    assert len(sizes) == STEPS + 1
    # The request right after the failed call (the 11th) converts its messages once;
    # every other request converts none.
    assert sizes[11] == 24  # its 23 messages and C3's note
    assert conversions == messages[:23]


def test_a_quiet_step_answers_as_the_whole_rewrite_would() -> None:
    """Without records, the tail's texts decide; a reused call id reads the whole history."""
    earlier_failure = ToolMessage("PermissionError: access denied", tool_call_id="c1")
    messages: list[BaseMessage] = [
        HumanMessage("go"),
        ai(call("read", {}, "c1")),
        earlier_failure,
        ai(call("read", {}, "c2")),
        ToolMessage("a row", tool_call_id="c2"),
    ]
    quiet = rewrite_messages(messages)
    assert quiet.messages == messages
    assert quiet.messages[2] is earlier_failure
    assert (quiet.changed, quiet.report.detections, quiet.report.skipped) == (False, (), ())
    failed = [*messages[:4], ToolMessage("PermissionError: access denied", tool_call_id="c2")]
    assert [d.call_id for d in rewrite_messages(failed).report.detections] == ["c2"]


def test_before_the_first_ai_turn_the_report_is_the_cores() -> None:
    first = rewrite_messages([HumanMessage("go")])
    assert first.report == Report((), Form.C3, False, ("no assistant turn: no decision step",))
