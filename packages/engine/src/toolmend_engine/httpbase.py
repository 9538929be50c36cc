"""Shared HTTP plumbing for the server and the proxy (stdlib only).

Responses use HTTP/1.1 with a Content-Length, or chunked transfer for streams,
so clients can keep connections alive.  Errors always carry an OpenAI-style
body; nothing a client sends can take the server down.
"""

from __future__ import annotations

import json
import logging
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["MAX_BODY", "JsonHandler", "Server", "error_body"]

log = logging.getLogger("toolmend.engine")

MAX_BODY = 32 * 1024 * 1024


def error_body(
    message: str,
    kind: str = "invalid_request_error",
    param: str | None = None,
    code: str | None = None,
) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class BodyError(ValueError):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class JsonHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "toolmend-engine"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), format % args)

    def read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            raise BodyError(411, "chunked request bodies are not supported; send Content-Length")
        raw = self.headers.get("Content-Length")
        try:
            length = int(raw) if raw is not None else 0
        except ValueError:
            raise BodyError(400, "invalid Content-Length") from None
        if length < 0 or length > MAX_BODY:
            raise BodyError(413, f"the request body must be at most {MAX_BODY} bytes")
        return self.rfile.read(length) if length else b""

    def read_json(self) -> Any:
        data = self.read_body()
        if not data:
            raise BodyError(400, "the request body is empty; send a JSON object")
        try:
            return json.loads(data)
        except (ValueError, UnicodeDecodeError) as exc:
            raise BodyError(400, f"the request body is not valid JSON: {exc}") from None

    def send_bytes(
        self, status: int, data: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        self.send_bytes(status, data, "application/json", headers)

    def send_error_json(
        self,
        status: int,
        message: str,
        *,
        kind: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_json(status, error_body(message, kind, param, code), headers)

    def start_stream(
        self, status: int, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()

    def write_chunk(self, data: bytes) -> None:
        if data:
            self.wfile.write(f"{len(data):X}\r\n".encode("ascii") + data + b"\r\n")
            self.wfile.flush()

    def end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def write_sse(self, data: Any, event: str | None = None) -> None:
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        prefix = f"event: {event}\n" if event else ""
        self.write_chunk(f"{prefix}data: {text}\n\n".encode())
