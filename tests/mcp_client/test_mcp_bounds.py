"""Deep and cyclic arguments through ``RecoveringSession``: the call fails, the session goes on.

Valid JSON nested 600 levels deep, or a Python structure that holds itself,
cannot be checked against the input schema (a validator recurses with it) and is
refused by the SDK or by the server.  The host still gets an error result with
the core's findings, the arguments in them within the core's bounds, and the
session keeps working.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp.types import CallToolResult, TextContent
from mcp_sdk import Connect, is_error, structured

from hostile import CYCLIC_SHOWN, DEEP_SHOWN, cyclic, nest
from toolmend_mcp import RecoveringSession

CASES = {
    "deep": ({"timezone": nest(600, {"x": 1})}, {"timezone": DEEP_SHOWN}),
    "cyclic": ({"timezone": cyclic()}, {"timezone": CYCLIC_SHOWN}),
}


def texts(result: CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, TextContent)]


@pytest.mark.parametrize("malformed_calls", [True, False], ids=["checked", "sent"])
@pytest.mark.parametrize(("arguments", "shown"), CASES.values(), ids=CASES.keys())
async def test_deep_or_cyclic_arguments_give_an_error_result_with_findings(
    connect: Connect, arguments: dict[str, Any], shown: dict[str, Any], malformed_calls: bool
) -> None:
    async with connect() as client:
        session = RecoveringSession(client, malformed_calls=malformed_calls)
        result = await session.call_tool("get_time", arguments)
        after = await session.call_tool("get_time", {"timezone": "UTC"})
        ran = structured(await client.call_tool("counts", {}))

    assert is_error(result) is True
    (text,) = texts(result)  # the SDK's own words: 2.x refuses to send, 1.x's server says
    assert text != ""
    assert result.meta is not None
    findings = result.meta["toolmend"]
    assert (findings["failed"], findings["attempts"], findings["arguments"]) == (True, 1, shown)
    json.dumps(findings)
    assert (is_error(after), texts(after)) == (False, ["12:00 in UTC"])
    assert ran == {"get_time": 1}
