"""A loopback upstream that records the headers it is sent, for trace propagation tests."""

from __future__ import annotations

import json
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Recorder(ThreadingHTTPServer):
    """A loopback upstream that records each request's headers and answers ``{}``."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Recording)
        self.seen: list[dict[str, str]] = []


class _Recording(BaseHTTPRequestHandler):
    server: Recorder

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.server.seen.append({k.lower(): v for k, v in self.headers.items()})
        body = b"{}"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def post(url: str, body: Any, headers: dict[str, str]) -> None:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **headers},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        response.read()


def parts(traceparent: str) -> tuple[str, str]:
    _, trace_id, span_id, _ = traceparent.split("-")
    return trace_id, span_id
