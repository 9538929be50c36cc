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

What one client can hold is bounded by the server's :class:`Limits`: connections
served at once, and deadlines for a request's headers and body, for the wait
between requests, and for a client that stops reading a response.
"""

from __future__ import annotations

import io
import json
import logging
import math
import re
import socket
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from email.message import Message
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ._errors import ANTHROPIC_KINDS, anthropic_error_body, error_body

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer, WriteableBuffer

__all__ = [
    "MAX_BODY",
    "MAX_DEPTH",
    "ClientGone",
    "Headers",
    "JsonHandler",
    "Limits",
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


@dataclass(frozen=True, slots=True)
class Limits:
    """What one client may hold of a server: connections and the time of each phase.

    Every timeout is a deadline for the whole phase, not for each read, so a client
    that trickles a byte at a time gains nothing.  The defaults suit agents on a
    network; tests set them small.

    Attributes:
        max_connections: Connections served at once (a thread each); one more is answered
            503 and closed.
        header_timeout: Seconds a new connection has to send its first request line and
            headers, and any request to send its headers once its first byte arrived.
        body_timeout: Seconds a request has to send its whole body once its headers are in
            (408 after).
        idle_timeout: Seconds a kept-alive connection may wait for its next request.
        write_timeout: Seconds a client may accept no byte of a response before the
            response is abandoned and the connection closed.
    """

    max_connections: int = 128
    header_timeout: float = 10.0
    body_timeout: float = 60.0
    idle_timeout: float = 60.0
    write_timeout: float = 30.0

    def __post_init__(self) -> None:
        if self.max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        for name in ("header_timeout", "body_timeout", "idle_timeout", "write_timeout"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a positive number of seconds")


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


def _busy_response(limit: int) -> bytes:
    message = f"the server is busy: {limit} connections are open; retry later"
    body = json.dumps(error_body(message, "server_error")).encode("utf-8")
    head = (
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


class Server(ThreadingHTTPServer):
    """A threaded HTTP server whose threads never keep the process alive, within ``limits``.

    At most ``limits.max_connections`` connections are served at once, a thread each;
    one more is answered 503 from the accepting thread (a send that cannot block on a
    new socket) and closed, so a flood of connections costs no thread.
    """

    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        limits: Limits | None = None,
    ) -> None:
        self.limits = limits or Limits()
        self._slots = threading.BoundedSemaphore(self.limits.max_connections)
        self._busy = _busy_response(self.limits.max_connections)
        super().__init__(address, handler)

    def process_request(
        self, request: socket.socket | tuple[bytes, socket.socket], client_address: Any
    ) -> None:
        """Serve the connection on a new thread while a slot is free; otherwise a 503."""
        if not self._slots.acquire(blocking=False):
            if isinstance(request, socket.socket):
                try:
                    request.setblocking(False)
                    request.send(self._busy)
                except OSError:
                    pass
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(
        self, request: socket.socket | tuple[bytes, socket.socket], client_address: Any
    ) -> None:
        """Serve the connection, then free its slot."""
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()


class BodyError(ValueError):
    def __init__(self, status: int, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.param = param


class ClientGone(ConnectionError):
    """The client accepted no byte of a response for ``write_timeout``, or closed."""


class _Reader(io.RawIOBase):
    """The client's socket as a raw stream whose reads share one deadline per phase.

    A socket timeout bounds each read alone, so a client that sends a byte just
    within it holds the connection (and its thread) for ever; here the wait for a
    request, its headers and its body each have one deadline for all their reads.
    """

    def __init__(self, sock: socket.socket) -> None:
        super().__init__()
        self._sock = sock
        self._deadline = math.inf
        self._then: float | None = None

    def readable(self) -> bool:
        return True

    def expect(self, seconds: float, then: float | None = None) -> None:
        """Reads must end within ``seconds``; with ``then``, a new deadline from the first byte."""
        self._deadline = time.monotonic() + seconds
        self._then = then

    def readinto(self, buffer: WriteableBuffer) -> int:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the client ran out of time")
        self._sock.settimeout(None if math.isinf(left) else left)
        count = self._sock.recv_into(buffer)
        if count and self._then is not None:
            self.expect(self._then)
        return count


class _Writer(io.BufferedIOBase):
    """Unbuffered writes to the client's socket; a client that takes nothing for long is gone.

    Each ``send`` waits at most ``timeout`` for room in the socket's buffer, so a
    slow reader that keeps accepting bytes is served, while one that stopped
    reading raises :class:`ClientGone` instead of holding the thread for ever.
    """

    def __init__(self, sock: socket.socket, timeout: float) -> None:
        super().__init__()
        self._sock = sock
        self._timeout = timeout

    def writable(self) -> bool:
        return True

    def write(self, data: ReadableBuffer) -> int:
        view = memoryview(data).cast("B")
        sent = 0
        try:
            self._sock.settimeout(self._timeout)
            while sent < len(view):
                sent += self._sock.send(view[sent:])
        except OSError as exc:
            raise ClientGone("the client stopped reading or closed the connection") from exc
        return sent

    def fileno(self) -> int:
        return self._sock.fileno()


class JsonHandler(BaseHTTPRequestHandler):
    """An HTTP/1.1 handler for JSON APIs: bounded bodies, JSON errors, chunked streams."""

    protocol_version = "HTTP/1.1"
    server_version = "toolmend-engine"
    sys_version = ""

    def version_string(self) -> str:
        """The ``Server`` header: the name alone (the base class adds a space and Python's)."""
        return self.server_version

    disable_nagle_algorithm = True
    """TCP_NODELAY on every accepted socket (see the module doc)."""
    anthropic_errors = False
    """Answer errors in the Anthropic shape (set per request: the ``/v1/messages`` routes)."""
    body_pending = True
    """Whether the request's body may still be unread: a response then closes the connection."""

    def log_message(self, format: str, *args: Any) -> None:
        """Requests are logged at debug level, not written to stderr."""
        log.debug("%s %s", self.address_string(), format % args)

    def setup(self) -> None:
        """The connection's streams, each within the server's :class:`Limits`.

        ``StreamRequestHandler.setup`` with deadline-bound reads and timed writes; a
        server without ``limits`` (any ``http.server``) gets the defaults.
        """
        self.connection = self.request
        self.limits: Limits = getattr(self.server, "limits", None) or Limits()
        if self.disable_nagle_algorithm:
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, True)
        self._reader = _Reader(self.connection)
        self.rfile = io.BufferedReader(self._reader)
        self.wfile = _Writer(self.connection, self.limits.write_timeout)
        self._served = 0

    def handle_one_request(self) -> None:
        """One request, within its deadlines; a client that went away ends the connection.

        The first request of a connection must arrive within ``header_timeout``; a
        later one within ``idle_timeout``, then its headers within ``header_timeout``
        from its first byte.  A read past its deadline closes the connection.
        """
        limits = self.limits
        if self._served:
            self._reader.expect(limits.idle_timeout, then=limits.header_timeout)
        else:
            self._reader.expect(limits.header_timeout)
        self._served += 1
        try:
            super().handle_one_request()
        except ConnectionError:
            log.debug("%s: the client went away", self.address_string())
            self.close_connection = True

    def parse_request(self) -> bool:
        """Parse the request line and headers; errors are answered as JSON."""
        self.anthropic_errors = False
        self.body_pending = True
        ok = super().parse_request()
        if ok:
            self.anthropic_errors = urlsplit(self.path).path.startswith("/v1/messages")
            self.body_pending = _expects_body(self.headers)
            self._reader.expect(self.limits.body_timeout)
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
        try:
            data = self.rfile.read(length) if length else b""
        except TimeoutError:
            timeout = self.limits.body_timeout
            raise BodyError(408, f"the request body did not arrive within {timeout:g} s") from None
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
