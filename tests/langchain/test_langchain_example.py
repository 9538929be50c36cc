"""Acceptance 7: the example runs offline, and against an OpenAI-compatible endpoint.

The endpoint is a scripted Chat Completions server on 127.0.0.1, reached
through langchain-openai's ChatOpenAI exactly as a real server would be; it
records each request so the test can read what the model was sent.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from toolmend import Kind
from toolmend.integrations import GUIDANCE

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "langchain_agent.py"
NOTE = (
    "Note from the tool runtime: the last attempt called book_table with "
    "`restaurant=Fiskeriet, time=19:00, people=2` and it failed with:\n> Tool 'book_table' "
    "failed after 1 attempt with PermissionError: this API key may read bookings but not create "
    "them"
)


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("langchain_agent_example", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def completion(message: dict[str, Any], finish: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "fake",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


TOOL_CALLS = completion(
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_w",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
            },
            {
                "id": "call_b",
                "type": "function",
                "function": {
                    "name": "book_table",
                    "arguments": '{"restaurant": "Fiskeriet", "time": "19:00", "people": 2}',
                },
            },
        ],
    },
    "tool_calls",
)
ANSWER = completion({"role": "assistant", "content": "Rainy; no booking."}, "stop")


class Server(ThreadingHTTPServer):
    requests: list[dict[str, Any]]


class Handler(BaseHTTPRequestHandler):
    server: Server

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append({"path": self.path, "body": body})
        reply = TOOL_CALLS if len(self.server.requests) == 1 else ANSWER
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[Server]:
    httpd = Server(("127.0.0.1", 0), Handler)
    httpd.requests = []
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def test_example_offline(capsys: pytest.CaptureFixture[str]) -> None:
    assert load_example().main([]) == 0
    out = capsys.readouterr().out
    transcript, sent, records = out.split("\n\n== ")
    assert transcript.splitlines()[:4] == [
        "== transcript (the graph state: no note in it) ==",
        "human: What is the weather in Oslo? And book a table for two at Fiskeriet at 19:00.",
        "ai -> get_weather(city=Oslo), book_table(restaurant=Fiskeriet, time=19:00, people=2)",
        "tool get_weather [success]: Oslo: 14°C, light rain",
    ]
    assert "Note from the tool runtime" not in transcript
    assert "\n".join(sent.splitlines()[1:3]).startswith("human: " + NOTE)
    assert records.splitlines() == [
        "toolmend reports ==",
        "get_weather: succeeded after 3 attempts",
        "book_table: failed kind=unrecoverable attempts=1 stop=kind",
        "model request: form=c3 changed=True (book_table:unrecoverable)",
    ]


def test_example_runs_as_a_script() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("== transcript (the graph state: no note in it) ==\n")


def test_example_against_an_openai_compatible_endpoint(
    server: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    assert load_example().main(["--base-url", url, "--model", "fake", "--api-key", "k"]) == 0

    assert [r["path"] for r in server.requests] == ["/v1/chat/completions"] * 2
    first, second = (r["body"] for r in server.requests)
    assert [t["function"]["name"] for t in first["tools"]] == ["get_weather", "book_table"]
    sent = second["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert sent[3] == {
        "role": "tool",
        "tool_call_id": "call_w",
        "content": "Oslo: 14°C, light rain",
    }
    assert sent[4]["content"].startswith(NOTE[NOTE.index("> Tool 'book_table'") + 2 :])
    assert sent[5]["content"].startswith(NOTE)
    assert sent[5]["content"].endswith("\n\n" + GUIDANCE[Kind.UNRECOVERABLE])
    out = capsys.readouterr().out
    assert "ai: Rainy; no booking." in out.splitlines()
    assert "Note from the tool runtime" not in out
