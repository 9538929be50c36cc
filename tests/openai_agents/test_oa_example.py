"""The example runs offline, and against an OpenAI-compatible endpoint on loopback."""

from __future__ import annotations

import importlib.util
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import notes

EXAMPLE = Path(__file__).parents[2] / "examples" / "openai_agents_agent.py"
UNRECOVERABLE = (
    "This cannot be fixed by retrying or by changing the arguments. Tell the user what happened."
)


def _note(cause: str) -> str:
    return notes.note(
        "book_table", "restaurant=Fiskeriet, time=19:00, people=2", cause, UNRECOVERABLE
    )


def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("openai_agents_agent", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cause() -> str:
    lines = EXAMPLE.read_text().splitlines()
    number = next(i for i, text in enumerate(lines, 1) if "raise PermissionError" in text)
    return (
        "Tool 'book_table' failed after 1 attempt with PermissionError: this API key may "
        f"read bookings but not create them\nWhere: openai_agents_agent.py:{number} in book_table"
    )


def test_example_runs_offline(capsys: pytest.CaptureFixture[str]) -> None:
    assert _example().main([]) == 0

    cause = _cause()
    assert capsys.readouterr().out == "\n".join(
        [
            "== history (result.to_input_list(): no note in it) ==",
            "user: What is the weather in Oslo? And book a table for two at Fiskeriet at 19:00.",
            "model -> get_weather(city=Oslo)",
            "model -> book_table(restaurant=Fiskeriet, time=19:00, people=2)",
            "tool [call_weather]: Oslo: 14°C, light rain",
            f"tool [call_booking]: {cause}",
            "assistant: Oslo: 14°C with light rain. I could not book the table: the booking "
            "service refused the request because this account may not create bookings.",
            "",
            "== the end of what the model was sent at its second decision ==",
            f"user: {_note(cause)}",
            "",
            "== toolmend reports ==",
            "book_table [call_booking]: failed kind=unrecoverable attempts=1 stop=kind",
            "model request: failed=4:book_table:unrecoverable:exception; form=c3; changed=true",
            "",
        ]
    )


def _completion(message: dict[str, Any], finish: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "fake",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def _tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


REPLIES = [
    _completion(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                _tool_call("call_weather", "get_weather", {"city": "Oslo"}),
                _tool_call(
                    "call_booking",
                    "book_table",
                    {"restaurant": "Fiskeriet", "time": "19:00", "people": 2},
                ),
            ],
        },
        "tool_calls",
    ),
    _completion({"role": "assistant", "content": "Oslo is rainy; no booking."}, "stop"),
]


@pytest.fixture
def endpoint() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A scripted OpenAI-compatible Chat Completions endpoint on 127.0.0.1."""
    requests: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            requests.append({"path": self.path, "body": body})
            reply = json.dumps(REPLIES[min(len(requests), len(REPLIES)) - 1]).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", requests
    finally:
        server.shutdown()
        server.server_close()


def test_example_runs_against_an_openai_compatible_endpoint(
    endpoint: tuple[str, list[dict[str, Any]]], capsys: pytest.CaptureFixture[str]
) -> None:
    url, requests = endpoint
    assert _example().main(["--base-url", url, "--model", "fake", "--api-key", "x"]) == 0

    cause = _cause()
    assert [r["path"] for r in requests] == ["/v1/chat/completions"] * 2
    messages = requests[1]["body"]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert messages[3:] == [
        {"role": "tool", "tool_call_id": "call_weather", "content": "Oslo: 14°C, light rain"},
        {"role": "tool", "tool_call_id": "call_booking", "content": cause},
        {"role": "user", "content": _note(cause)},
    ]
    out = capsys.readouterr().out
    assert "assistant: Oslo is rainy; no booking." in out
    assert "Note from the tool runtime" not in out.split("== toolmend reports ==")[0]
