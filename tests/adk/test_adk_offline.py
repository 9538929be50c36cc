"""Importing ADK and running an agent with the plugin reaches nothing beyond loopback."""

from __future__ import annotations

from typing import Any

from adk_support import run_agent

from toolmend_adk import ToolMendPlugin
from toolmend_adk.testing import call, reply


def test_a_run_opens_no_connection_beyond_loopback(offline: list[Any]) -> None:
    def ping(host: str) -> str:
        """Ping a host."""
        raise ConnectionError("connection refused")

    model = run_agent(
        [ping], [call("ping", {"host": "db"}), reply("Down.")],
        [ToolMendPlugin(effects={"ping": "read_only"})],
    )  # fmt: skip
    assert model.function_responses(1)[0]["response"]["error"].startswith(
        "Tool 'ping' failed after 3 attempts with ConnectionError: connection refused"
    )
    assert offline == []
