"""Errors in context for MCP hosts: the session's note filters developer steps, and
``model_messages`` gives the host's model request the core's collapse and pile-up note."""

from __future__ import annotations

import copy
from typing import Any

from mcp_sdk import Connect

from toolmend import ContextPolicy, Kind
from toolmend.integrations import GUIDANCE, PILE_UP, runtime_note
from toolmend_mcp import RecoveringSession, findings_of, model_messages, tool_message

EXPIRED = "401 Unauthorized: the access token has expired."
STEP = "Run `gcloud auth login` to obtain new credentials."
MARKER = "[a step for the developer was omitted]"


def _turn(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    function = {"name": name, "arguments": arguments}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": function}],
    }


async def test_the_sessions_note_omits_the_developer_step(connect: Connect) -> None:
    async with connect() as client:
        filtered = await RecoveringSession(client).call_tool("list_drive", {"folder": "x"})
        waived = await RecoveringSession(
            client, context=ContextPolicy(agent_steps={"list_drive"})
        ).call_tool("list_drive", {"folder": "x"})
    text = tool_message(filtered, "c1")["content"]  # the server's wording, e.g. its prefix
    assert text.endswith(f"{EXPIRED} {STEP}")
    found = findings_of(filtered)
    assert found is not None
    guidance = GUIDANCE[Kind.UNRECOVERABLE]
    shown = text.replace(STEP, MARKER)
    assert found["note"] == runtime_note("list_drive", {"folder": "x"}, shown, guidance)
    assert found["omitted"] == [STEP]
    kept = findings_of(waived)
    assert kept is not None
    assert kept["note"] == runtime_note("list_drive", {"folder": "x"}, text, guidance)
    assert "omitted" not in kept


async def test_model_messages_collapses_and_notes_the_pile_up(connect: Connect) -> None:
    async with connect() as client:
        session = RecoveringSession(client, retry=None)
        results = {}
        messages: list[Any] = [{"role": "user", "content": "status?"}]
        for n in (1, 2, 3):
            call_id = f"call_{n}"
            results[call_id] = await session.call_tool("status", {})
            messages += [
                _turn(call_id, "status", "{}"),
                tool_message(results[call_id], call_id, name="status"),
            ]
    before = copy.deepcopy(messages)
    out = model_messages(messages, results, context=ContextPolicy(collapse_resolved=True))
    error = messages[2]["content"]
    assert messages == before
    assert out.report.collapsed == ("4: status repeated",)
    assert out.messages[4] == {
        **messages[4],
        "content": "[status failed again with the same error as its earlier call above: "
        f"{error.splitlines()[0]}]",
    }
    piled = PILE_UP.format(count=3, tool="status", error_class="503")
    assert out.messages[-1] == {
        "role": "user",
        "content": runtime_note("status", "{}", error, piled),
    }
