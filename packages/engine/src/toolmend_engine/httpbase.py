"""Shared HTTP plumbing for the server and the proxy (stdlib only).

Responses use HTTP/1.1 with a Content-Length, or chunked transfer for streams,
so clients can keep connections alive.  Every accepted socket has TCP_NODELAY:
the headers and the body of a response go out as separate writes, and with
Nagle's algorithm the body waited for the client's delayed ACK (about 40 ms on
every request of a kept-alive connection).  Each header is sent once: ``Server``
and ``Date`` only when the response does not bring its own (the proxy relays the
upstream's).  Errors carry an OpenAI-style body, or an Anthropic-style one on
the Messages routes, also for what ``http.server`` itself refuses (a malformed
request line, an unsupported method: 405); nothing a client sends can take the
server down.  A body is refused with 400 when it is not JSON, nests deeper than
``MAX_DEPTH``, holds a lone surrogate (valid JSON, but not text that can be
encoded) or a number that is not finite (``NaN``, ``Infinity``, ``1e999``:
Python's ``json`` reads them, but no range check can refuse a ``NaN``).  Error
bodies never repeat what the client sent: a 500 says only that the server
failed, and the log has the details.

A response sent before the request's body was read (a refused ``Content-Length``,
a ``Transfer-Encoding``, a route that takes no body) closes the connection: the
unread bytes would otherwise be parsed as the next request, and through the proxy
a request smuggled in a refused body would reach the upstream.  ``Content-Length``
must be digits only, and given once (or repeated with the same value).
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Iterable, Mapping
from email.message import Message
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from .errors import ANTHROPIC_KINDS, anthropic_error_body, error_body

__all__ = [
    "MAX_BODY",
    "MAX_DEPTH",
    "Headers",
    "JsonHandler",
    "Server",
    "body_length",
    "check_json",
    "error_body",
    "header_pairs",
    "parse_json",
]

log = logging.getLogger("toolmend.engine")

MAX_BODY = 32 * 1024 * 1024
MAX_DEPTH = 64
"""How deeply a request body's arrays and objects may nest."""

_SURROGATE = re.compile("[\ud800-\udfff]")
_DIGITS = re.compile("[0-9]+")
Headers = Mapping[str, str] | Iterable[tuple[str, str]]
"""Response headers: a mapping, or pairs where a name may repeat (``Set-Cookie``)."""


def header_pairs(headers: Headers | None) -> list[tuple[str, str]]:
    """Response headers as name-value pairs, from a mapping or pairs (``None``: none)."""
    if headers is None:
        return []
    if isinstance(headers, Mapping):
        return list(headers.items())
    return list(headers)


def _anthropic_kind(status: int, kind: str) -> str:
    if kind == "upstream_error" or status >= 500:
        return ANTHROPIC_KINDS.get(status, "api_error")
    return ANTHROPIC_KINDS.get(status, "invalid_request_error")


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


class _NotFinite(Exception):
    """Raised inside the JSON parser; not a ``ValueError``, so the parser does not wrap it."""


def _refuse_constant(_name: str) -> Any:
    raise _NotFinite


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotFinite
    return value


def parse_json(data: bytes) -> Any:
    """A request body as JSON, as the server and the proxy read it.

    Raises :class:`BodyError` (400) for what parses but must not be used: nesting deeper
    than ``MAX_DEPTH``, a lone surrogate, a number that is not finite; ``ValueError`` or
    ``UnicodeDecodeError`` when ``data`` is not JSON at all.
    """
    try:
        body = json.loads(data, parse_constant=_refuse_constant, parse_float=_finite_float)
    except _NotFinite:
        raise BodyError(
            400, "the request body holds a number that is not finite (NaN, Infinity, 1e999)"
        ) from None
    except RecursionError:
        raise BodyError(400, f"the request body nests deeper than {MAX_DEPTH} levels") from None
    check_json(body)
    return body


def body_length(headers: Message) -> int:
    """The length of a request's body, from headers that frame it unambiguously.

    Raises :class:`BodyError` for a ``Transfer-Encoding`` (411: only ``Content-Length``
    bodies are read, and a length beside an encoding is how requests are smuggled), a
    ``Content-Length`` that is not digits or differs between repeats (400), or one above
    ``MAX_BODY`` (413).  No ``Content-Length`` is an empty body.
    """
    if "Transfer-Encoding" in headers:
        raise BodyError(
            411, "request bodies with a Transfer-Encoding are not supported; send Content-Length"
        )
    values = {value.strip() for value in headers.get_all("Content-Length", [])}
    if not values:
        return 0
    value = values.pop()
    if values or not _DIGITS.fullmatch(value):
        raise BodyError(400, "invalid Content-Length")
    if len(value.lstrip("0")) > len(str(MAX_BODY)) or int(value) > MAX_BODY:
        raise BodyError(413, f"the request body must be at most {MAX_BODY} bytes")
    return int(value)


def _expects_body(headers: Message) -> bool:
    try:
        return body_length(headers) > 0
    except BodyError:
        return True


class Server(ThreadingHTTPServer):
    """A threaded HTTP server whose threads never keep the process alive."""

    daemon_threads = True
    allow_reuse_address = True


class BodyError(ValueError):
    def __init__(self, status: int, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.param = param


class JsonHandler(BaseHTTPRequestHandler):
    """An HTTP/1.1 handler for JSON APIs: bounded bodies, JSON errors, chunked streams."""

    protocol_version = "HTTP/1.1"
    server_version = "toolmend-engine"
    sys_version = ""
    disable_nagle_algorithm = True
    """TCP_NODELAY on every accepted socket (see the module doc)."""
    anthropic_errors = False
    """Answer errors in the Anthropic shape (set per request: the ``/v1/messages`` routes)."""
    body_pending = True
    """Whether the request's body may still be unread: a response then closes the connection."""

    def log_message(self, format: str, *args: Any) -> None:
        """Requests are logged at debug level, not written to stderr."""
        log.debug("%s %s", self.address_string(), format % args)

    def parse_request(self) -> bool:
        """Parse the request line and headers; errors are answered as JSON."""
        self.anthropic_errors = False
        self.body_pending = True
        ok = super().parse_request()
        if ok:
            self.anthropic_errors = urlsplit(self.path).path.startswith("/v1/messages")
            self.body_pending = _expects_body(self.headers)
        return ok

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """What ``http.server`` refuses by itself, as a JSON error.

        What ``http.server`` refuses by itself, as a JSON error; the connection closes
        since the request's body, if any, was not read.
        """
        self.close_connection = True
        if code == HTTPStatus.NOT_IMPLEMENTED and self.command:
            code, message = 405, f"method {self.command} is not allowed here"
        text = message or HTTPStatus(code).phrase
        self.send_error_json(code, text, headers={"Connection": "close"})

    def begin_response(self, status: int, headers: Headers | None = None) -> None:
        """Send the status line and the headers, each once.

        The status line and the headers, each once; ``Server`` and ``Date`` are added
        only when ``headers`` has none.  While the request's body is unread the
        connection closes after this response (see the module doc).
        """
        self.log_request(status)
        self.send_response_only(status)
        pairs = header_pairs(headers)
        if self.body_pending:
            self.close_connection = True
            pairs = [(n, v) for n, v in pairs if n.lower() != "connection"]
            pairs.append(("Connection", "close"))
        names = set()
        for name, value in pairs:
            self.send_header(name, value)
            names.add(name.lower())
        if "server" not in names:
            self.send_header("Server", self.version_string())
        if "date" not in names:
            self.send_header("Date", self.date_time_string())

    def read_body(self) -> bytes:
        """The request body, bounded; raises :class:`BodyError` for what cannot be read."""
        length = body_length(self.headers)
        data = self.rfile.read(length) if length else b""
        if len(data) < length:
            raise BodyError(400, "the request body ended before its Content-Length")
        self.body_pending = False
        return data

    def read_json(self) -> Any:
        """The request body as a JSON object; raises :class:`BodyError` otherwise."""
        data = self.read_body()
        if not data:
            raise BodyError(400, "the request body is empty; send a JSON object")
        try:
            return parse_json(data)
        except BodyError:
            raise
        except (ValueError, UnicodeDecodeError) as exc:
            raise BodyError(400, f"the request body is not valid JSON: {exc}") from None

    def send_bytes(
        self, status: int, data: bytes, content_type: str, headers: Headers | None = None
    ) -> None:
        """Send a complete response with ``data`` as its body."""
        pairs = [("Content-Type", content_type), ("Content-Length", str(len(data)))]
        self.begin_response(status, [*pairs, *header_pairs(headers)])
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def send_json(self, status: int, body: Any, headers: Headers | None = None) -> None:
        """Send ``body`` as a JSON response."""
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
        headers: Headers | None = None,
    ) -> None:
        """Send an error in the API's error shape (OpenAI's, or Anthropic's for its routes)."""
        if self.anthropic_errors:
            body = anthropic_error_body(message, _anthropic_kind(status, kind))
        else:
            body = error_body(message, kind, param, code)
        self.send_json(status, body, headers)

    def send_internal_error(self, headers: Headers | None = None) -> None:
        """A 500 that says nothing of the request: the log has the traceback."""
        self.send_error_json(
            500, "internal error; see the server log", kind="server_error", headers=headers
        )

    def start_stream(self, status: int, content_type: str, headers: Headers | None = None) -> None:
        """Start a chunked response.

        A chunked response; an event stream gets ``Cache-Control: no-cache`` unless
        ``headers`` set it.
        """
        extra = header_pairs(headers)
        pairs = [("Content-Type", content_type)] if content_type else []
        pairs.append(("Transfer-Encoding", "chunked"))
        cached = any(name.lower() == "cache-control" for name, _ in extra)
        if content_type.startswith("text/event-stream") and not cached:
            pairs.append(("Cache-Control", "no-cache"))
        self.begin_response(status, [*pairs, *extra])
        self.end_headers()

    def write_chunk(self, data: bytes) -> None:
        """Send one chunk of a chunked response (an empty one sends nothing)."""
        if data:
            self.wfile.write(f"{len(data):X}\r\n".encode("ascii") + data + b"\r\n")
            self.wfile.flush()

    def end_stream(self) -> None:
        """End a chunked response."""
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def write_sse(self, data: Any, event: str | None = None) -> None:
        """Send one server-sent event as a chunk."""
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        prefix = f"event: {event}\n" if event else ""
        self.write_chunk(f"{prefix}data: {text}\n\n".encode())
