"""Shared HTTP plumbing for the server and the proxy (stdlib only).

Responses use HTTP/1.1 with a Content-Length, or chunked transfer for streams,
so clients can keep connections alive.  Errors carry an OpenAI-style body, or an
Anthropic-style one on the Messages routes; nothing a client sends can take the
server down.  A body is refused with 400 when it is not JSON, nests deeper than
``MAX_DEPTH`` or holds a lone surrogate (valid JSON, but not text that can be
encoded).  Error bodies never repeat what the client sent: a 500 says only that
the server failed, and the log has the details.
"""

from __future__ import annotations

import json
import logging
import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["MAX_BODY", "MAX_DEPTH", "JsonHandler", "Server", "check_json", "error_body"]

log = logging.getLogger("toolmend.engine")

MAX_BODY = 32 * 1024 * 1024
MAX_DEPTH = 64
"""How deeply a request body's arrays and objects may nest."""

_SURROGATE = re.compile("[\ud800-\udfff]")
_ANTHROPIC_KIND = {
    "invalid_request_error": "invalid_request_error",
    "not_found": "not_found_error",
    "server_error": "api_error",
    "upstream_error": "api_error",
}


def error_body(
    message: str,
    kind: str = "invalid_request_error",
    param: str | None = None,
    code: str | None = None,
) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def anthropic_error_body(message: str, kind: str = "invalid_request_error") -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def check_json(value: Any) -> None:
    """Refuse nesting deeper than ``MAX_DEPTH`` and lone surrogates, without recursion."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                raise BodyError(400, "the request body holds a lone surrogate (\\ud800-\\udfff)")
            continue
        if isinstance(item, dict | list):
            if depth > MAX_DEPTH:
                raise BodyError(400, f"the request body nests deeper than {MAX_DEPTH} levels")
            if isinstance(item, dict):
                stack.extend((key, depth) for key in item)
                stack.extend((v, depth + 1) for v in item.values())
            else:
                stack.extend((v, depth + 1) for v in item)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class BodyError(ValueError):
    def __init__(self, status: int, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.param = param


class JsonHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "toolmend-engine"
    sys_version = ""
    anthropic_errors = False
    """Answer errors in the Anthropic shape (set per request on the Messages routes)."""

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
            body = json.loads(data)
        except (ValueError, UnicodeDecodeError) as exc:
            raise BodyError(400, f"the request body is not valid JSON: {exc}") from None
        except RecursionError:
            raise BodyError(400, f"the request body nests deeper than {MAX_DEPTH} levels") from None
        check_json(body)
        return body

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
        if self.anthropic_errors:
            if status == 413:
                kind = "request_too_large"
            body = anthropic_error_body(message, _ANTHROPIC_KIND.get(kind, kind))
        else:
            body = error_body(message, kind, param, code)
        self.send_json(status, body, headers)

    def send_internal_error(self, headers: dict[str, str] | None = None) -> None:
        """A 500 that says nothing of the request: the log has the traceback."""
        self.send_error_json(
            500, "internal error; see the server log", kind="server_error", headers=headers
        )

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
