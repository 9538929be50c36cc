"""Acceptance 7: the example starts a local stdio server and shows the session at work."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from mcp_sdk import MCP2

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mcp_client.py"


@pytest.mark.skipif(
    not MCP2, reason="the example is written for the MCP SDK 2.x (mcp.Client, MCPServer)"
)
def test_example_runs_offline_and_shows_each_recovery() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:4] == [
        '== stock({"sku": "A-1"})',
        "   is_error=False kind=None attempts=2 effect=read_only stop=None",
        "   the model reads:",
        "   | 12",
    ]
    assert lines[4:9] == [
        '== reserve({"sku": "A-1", "quantity": 2})',
        "   is_error=True kind=transient attempts=1 effect=write stop=unsafe",
        "   the model reads:",
        "   | Error executing tool reserve: 503 Service Unavailable: warehouse busy",
        "   | This call may already have taken effect. Check whether it did before calling it "
        "again.",
    ]
    start = lines.index('== reserve({"sku": "A-1", "quantity": "two"})')
    assert lines[start + 1 : start + 4] == [
        "   is_error=True kind=fixable attempts=0 effect=write stop=None",
        "   the model reads:",
        "   | Tool 'reserve' was not run: invalid arguments. "
        "quantity: 'two' is not of type 'integer'",
    ]
    assert lines[-2] == (
        '   | Violation: schema_violation at `amount`; expected {"exclusiveMinimum": 0}, '
        "observed -1."
    )
    assert done.stderr == ""
