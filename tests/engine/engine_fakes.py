"""A scripted stand-in for the llama.cpp model, and a loopback server runner.

The fake tokenizes one token per character and replies with a scripted text,
so the server, proxy and formats are tested exactly and fast; the real model
is exercised by the tests marked ``engine``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from toolmend_engine import Step, TopLogprob

PIECE = 3
TOP = (TopLogprob(60, b"<", -0.5), TopLogprob(84, b"The", -1.5))

CALL_TEXT = '<tool_call>{"name": "get_order", "arguments": {"order_id": "ORD-1"}}</tool_call>'
TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "get_order",
            "description": "Look up an order.",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
        },
    }
]
FAILED: list[Any] = [
    {"role": "user", "content": "Total of ORD-1?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "get_order", "arguments": '{"order_id": "ORD-1"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "Error: 503 Service Unavailable"},
]
NOTE = (
    "Note from the tool runtime: the last attempt called get_order with `order_id=ORD-1` "
    "and it failed with: `Error: 503 Service Unavailable`\n\n"
    "This is a temporary failure. Retrying the same call is expected to succeed."
)


def echo_or_call(prompt: str) -> str:
    """Call when the prompt asks for an order, otherwise echo the last turn."""
    last = prompt.rsplit("<|im_start|>", 2)[-2]
    if last.startswith("user\nTotal of ORD-1?<|im_end|>"):
        return "  " + CALL_TEXT
    return "Echo: " + last.split("\n", 1)[1].removesuffix("<|im_end|>\n")


ANTHROPIC_FAILED: list[Any] = [
    {"role": "user", "content": "Total of ORD-1?"},
    {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "tu1", "name": "get_order", "input": {"order_id": "ORD-1"}}
        ],
    },
    {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "tu1",
                "content": "Error: 503 Service Unavailable",
            }
        ],
    },
]
ANTHROPIC_TOOLS: list[Any] = [{"name": "get_order", "input_schema": {"type": "object"}}]


class FakeModel:
    """Replies ``respond(prompt)`` in pieces of ``piece`` characters, then ends the turn."""

    name = "fake-model"
    n_ctx = 4096
    chat_template: str | None = None
    bos_text = ""
    eos_text = "<|im_end|>"

    def __init__(
        self, respond: Callable[[str], str] | str = "Hello there.", *, piece: int = PIECE
    ) -> None:
        self.respond = respond if callable(respond) else (lambda _prompt, text=respond: text)
        self.piece = piece
        self.lock = threading.Lock()
        self.prompts: list[str] = []
        self.grammars: list[str | None] = []

    def tokenize(self, text: str, *, special: bool = True) -> list[int]:
        return [ord(c) for c in text]

    def generate(
        self,
        tokens: Sequence[int],
        max_tokens: int,
        *,
        top_logprobs: int = 0,
        grammar: str | None = None,
    ) -> Iterator[Step]:
        prompt = "".join(chr(t) for t in tokens)
        self.prompts.append(prompt)
        self.grammars.append(grammar)
        reply = self.respond(prompt)
        pieces = [reply[i : i + self.piece] for i in range(0, len(reply), self.piece)]
        for piece in pieces[:max_tokens]:
            yield Step(ord(piece[0]), piece.encode(), -0.25, False, TOP[:top_logprobs])
        if len(pieces) < max_tokens:
            yield Step(0, b"", -0.1, True)


@contextmanager
def running(server: ThreadingHTTPServer) -> Iterator[str]:
    """Serve on a thread; yields the base URL (``http://127.0.0.1:PORT``)."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host}:{port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


RESPONSES_TOOLS: list[Any] = [
    {
        "type": "function",
        "name": "get_order",
        "description": "Look up an order.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
    }
]
RESPONSES_FAILED: list[Any] = [
    {"role": "user", "content": "Total of ORD-1?"},
    {
        "type": "function_call",
        "call_id": "c1",
        "name": "get_order",
        "arguments": '{"order_id": "ORD-1"}',
    },
    {"type": "function_call_output", "call_id": "c1", "output": "Error: 503 Service Unavailable"},
]
"""``FAILED`` as Responses input items."""


@dataclass(frozen=True)
class Seen:
    """One request as an upstream received it: every header as sent, repeats included."""

    method: str
    path: str
    headers: tuple[tuple[str, str], ...]
    body: bytes

    def header(self, name: str) -> list[str]:
        """Every value of the header ``name`` (any case), in order."""
        return [v for k, v in self.headers if k.lower() == name.lower()]


def recording_upstream() -> tuple[ThreadingHTTPServer, list[Seen]]:
    """An upstream that answers every method with ``{"ok": true}`` and records each request."""
    seen: list[Seen] = []

    class Recording(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            seen.append(Seen(self.command, self.path, tuple(self.headers.items()), body))
            data = b'{"ok": true}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _answer

    return ThreadingHTTPServer(("127.0.0.1", 0), Recording), seen
