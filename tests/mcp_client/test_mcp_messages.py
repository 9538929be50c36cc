"""Host-ready tool messages, and a host loop handing them to ``toolmend.rewrite``."""

from __future__ import annotations

import json

from mcp.types import CallToolResult, ImageContent, TextContent
from mcp_sdk import Connect

import notes
import toolmend
from toolmend import Verdict
from toolmend.integrations import VERIFY_FIRST
from toolmend_mcp import RecoveringSession, findings_of, tool_message, verdict_of

PAY = {"amount": 5, "to": "bob"}
DATA = "aGk="
ERROR_TEXT = "Error executing tool transfer: 503 Service Unavailable: ledger busy, retry in 1s"


def openai_turn(call_id: str) -> list[dict[str, object]]:
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": "transfer", "arguments": json.dumps(PAY)},
    }
    return [
        {"role": "user", "content": "Pay bob 5."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
    ]


def test_openai_message_keeps_the_error_flag() -> None:
    result = CallToolResult(content=[TextContent(type="text", text="boom")], isError=True)
    assert tool_message(result, "c1", name="t") == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "boom",
        "name": "t",
        "is_error": True,
    }


def test_anthropic_block_keeps_images_and_the_flag() -> None:
    result = CallToolResult(
        content=[
            TextContent(type="text", text="chart"),
            ImageContent(type="image", data=DATA, mimeType="image/png"),
        ]
    )
    assert tool_message(result, "tu_1", format="anthropic") == {
        "type": "tool_result",
        "tool_use_id": "tu_1",
        "content": [
            {"type": "text", "text": "chart"},
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": "aGk="},
            },
        ],
        "is_error": False,
    }


def test_responses_item_and_structured_only_results() -> None:
    result = CallToolResult(content=[], structuredContent={"price": 3})
    assert tool_message(result, "fc_1", format="responses") == {
        "type": "function_call_output",
        "call_id": "fc_1",
        "output": '{"price": 3}',
    }


def test_results_without_findings_have_no_verdict() -> None:
    result = CallToolResult(content=[TextContent(type="text", text="ok")])
    assert (findings_of(result), verdict_of(result)) == (None, None)


async def test_host_loop_delivers_the_true_next_step_through_rewrite(connect: Connect) -> None:
    async with connect() as client:
        session = RecoveringSession(client, trust_annotations=True)
        result = await session.call_tool("transfer", PAY)
    verdict = verdict_of(result)
    assert verdict == Verdict(
        True, toolmend.Kind.TRANSIENT, "is_error", toolmend.integrations.Source.FLAG,
        "text 'Service Unavailable'", VERIFY_FIRST,
    )  # fmt: skip
    messages = [*openai_turn("call_1"), tool_message(result, "call_1", name="transfer")]
    rewritten = toolmend.rewrite(messages, form="c3", recorded={"call_1": verdict})
    note = notes.called("transfer with amount=5, to=bob", ERROR_TEXT, VERIFY_FIRST)
    assert rewritten.messages == [*messages, {"role": "user", "content": note}]
    findings = findings_of(result)
    assert findings is not None
    assert findings["note"] == note


async def test_anthropic_host_loop(connect: Connect) -> None:
    async with connect() as client:
        session = RecoveringSession(client, effects={"add": "read_only"})
        result = await session.call_tool("add", {"a": 1})
    use = {"type": "tool_use", "id": "tu_1", "name": "add", "input": {"a": 1}}
    block = tool_message(result, "tu_1", format="anthropic")
    messages = [
        {"role": "user", "content": "Add one."},
        {"role": "assistant", "content": [use]},
        {"role": "user", "content": [block]},
    ]
    verdict = verdict_of(result)
    assert verdict is not None
    rewritten = toolmend.rewrite(
        messages, form="c1", format="anthropic", recorded={"tu_1": verdict}
    )
    [text] = [part["text"] for part in rewritten.messages[-1]["content"][0]["content"]]
    assert block["is_error"] is True
    assert text == (
        "Tool 'add' was not run: invalid arguments. b: 'b' is a required property\n"
        + toolmend.integrations.GUIDANCE[toolmend.Kind.FIXABLE]
    )
