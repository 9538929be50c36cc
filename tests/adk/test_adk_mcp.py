"""ToolMendPlugin with ADK's ``McpToolset`` over stdio: the server counts every execution.

The server is tests/openai_agents/oa_mcp_server.py: its flaky tools answer the first two
calls with an ``isError`` "503 Service Unavailable" result, then succeed.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from adk_support import TRANSIENT, VERIFY_FIRST, arun_agent
from google.adk.tools.mcp_tool import McpToolset, StdioConnectionParams
from mcp import StdioServerParameters

from toolmend_adk import ToolMendPlugin
from toolmend_adk.testing import call, reply

SERVER = Path(__file__).resolve().parents[1] / "openai_agents" / "oa_mcp_server.py"
UNAVAILABLE = "503 Service Unavailable"


def toolset(counts: Path) -> McpToolset:
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER), str(counts)])
    return McpToolset(connection_params=StdioConnectionParams(server_params=params, timeout=30))


def ran(counts: Path, tool: str) -> int:
    log = counts / tool
    return len(log.read_text().splitlines()) if log.exists() else 0


def text_of(response: dict[str, Any]) -> str:
    return "".join(block["text"] for block in response["content"] if block["type"] == "text")


async def test_a_transient_read_only_mcp_tool_is_retried(tmp_path: Path) -> None:
    plugin = ToolMendPlugin(effects={"stock": "read_only"})
    tools = toolset(tmp_path)
    model = await arun_agent([tools], [call("stock", {"sku": "X1"}), reply("12.")], [plugin])
    [seen] = model.function_responses(1)
    assert text_of(seen["response"]) == "X1: 12 in stock"
    assert ran(tmp_path, "stock") == 3


async def test_an_mcp_write_that_failed_is_not_repeated(tmp_path: Path) -> None:
    plugin = ToolMendPlugin(effects={"set_price": "write"})
    script = [call("set_price", {"sku": "X1", "price": 9.5}), reply("Checking.")]
    model = await arun_agent([toolset(tmp_path)], script, [plugin])
    assert model.function_responses(1)[0]["response"] == {
        "error": f"Error executing tool set_price: {UNAVAILABLE}",
        "guidance": VERIFY_FIRST,
    }
    assert ran(tmp_path, "set_price") == 1


async def test_annotations_count_only_when_trusted(tmp_path: Path) -> None:
    script = [call("shelf", {"sku": "X1"}), reply("Shelf 4.")]
    untrusted = await arun_agent([toolset(tmp_path)], script, [ToolMendPlugin()])
    assert untrusted.function_responses(1)[0]["response"]["guidance"] == VERIFY_FIRST
    assert ran(tmp_path, "shelf") == 1

    trusted_dir = tmp_path / "trusted"
    trusted_dir.mkdir()
    script = [call("shelf", {"sku": "X1"}), reply("Shelf 4.")]
    plugin = ToolMendPlugin(trust_annotations=True, retry=None)
    trusted = await arun_agent([toolset(trusted_dir)], script, [plugin])
    assert trusted.function_responses(1)[0]["response"]["guidance"] == TRANSIENT
    assert ran(trusted_dir, "shelf") == 1
