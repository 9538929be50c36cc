"""examples/otel_langchain.py runs offline and prints the documented spans, one a line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "otel_langchain.py"


def test_the_example_prints_the_spans_of_the_failing_run() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, check=True, timeout=120
    )
    spans: list[dict[str, Any]] = [json.loads(line) for line in done.stdout.splitlines()]

    assert [(s["name"], s["status"]["status_code"]) for s in spans] == [
        ("execute_tool get_weather", "ERROR"),
        ("execute_tool book_table", "ERROR"),
        ("execute_tool book_table", "ERROR"),
        ("agent run", "UNSET"),
    ]
    weather, booking, repeat, run = spans
    assert {k: weather["attributes"][k] for k in (
        "gen_ai.operation.name", "gen_ai.tool.call.id", "error.type", "toolmend.kind",
        "toolmend.attempts", "toolmend.stop_reason",
    )} == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.call.id": "call_weather",
        "error.type": "httpx.HTTPStatusError",
        "toolmend.kind": "transient",
        "toolmend.attempts": 3,
        "toolmend.stop_reason": "attempts",
    }  # fmt: skip
    assert [e["attributes"]["toolmend.attempt"] for e in weather["events"]] == [1, 2, 3]
    assert (booking["attributes"]["toolmend.kind"], booking["attributes"]["error.type"]) == (
        "unrecoverable",
        "PermissionError",
    )
    assert [e["name"] for e in repeat["events"]] == ["toolmend.loop_guard.refusal"]
    assert [e["name"] for e in run["events"]] == ["toolmend.rewrite"] * 3
    assert "Fiskeriet" not in done.stdout
    assert "API key" not in done.stdout
