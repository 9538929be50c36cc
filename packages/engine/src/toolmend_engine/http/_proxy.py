"""The layer in front of any OpenAI-compatible server (vLLM, SGLang, llama.cpp, Ollama).

Chat Completions, Responses and Anthropic Messages bodies (and ``count_tokens``,
so a count matches what the model will read) are rewritten by the layer (the field
``tool_errors`` is removed before forwarding, since upstreams do not know it); such
a body that is JSON but nests too deeply, holds a lone surrogate or a number that
is not finite (``NaN``) is refused with 400 as the server refuses it, while one
that is not JSON at all is forwarded for the upstream to refuse; every other
request, whatever its method, is forwarded unchanged.  ``/health``
is answered by the proxy itself: it says the proxy is up, not the upstream.
The upstream's status, headers (each once, the upstream's ``Date`` and
``Server`` included), body and stream pass through as they come; a response to
a request the layer ran on gains ``X-Tool-Errors``, errors included.  An
unreachable upstream is a 502 with an OpenAI-style body (Anthropic-style on the
Messages routes).  With an outcome recorder installed, the new tool results of
each layered request (``count_tokens`` aside) are observed, and a 200 reply read
as it passes with no tool call ends the conversation's run (``.._outcomes``).

Connections to the upstream are kept alive and reused, each with TCP_NODELAY,
so a short request costs the proxy about a millisecond rather than a TCP
handshake and a delayed ACK.  A request that fails on a reused connection
before any answer (the upstream closed it while idle) is sent once more on a
new one.

Credentials in the upstream URL (``http://user:pass@host/v1``) never leave
towards the upstream in ``Host`` nor towards anyone in a body or a log: the URL
is shown without them.  They are sent to the upstream as ``Authorization:
Basic``, on requests whose client sent no ``Authorization`` of its own (a
client's own credentials pass unchanged).
"""

from __future__ import annotations

import base64
import json
import logging
import socket
import threading
from http.client import HTTPConnection, HTTPException, HTTPResponse, HTTPSConnection
from urllib.parse import SplitResult, unquote, urlsplit

from toolmend import ContextPolicy, Form, telemetry

from .._layer import HEADER, apply_layer, choose_form, header_value
from .._outcomes import Conversations, ReplyCalls
from ._base import BodyError, ClientGone, JsonHandler, Limits, Server, parse_json

__all__ = ["ProxyServer", "Upstream", "make_proxy", "without_credentials"]

log = logging.getLogger("toolmend.engine")

_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "expect",
        "host",
        "content-length",
        "accept-encoding",
    }
)
_LAYERED = {
    "/v1/chat/completions": "openai",
    "/chat/completions": "openai",
    "/v1/messages": "anthropic",
    "/v1/messages/count_tokens": "anthropic",
    "/v1/responses": "responses",
    "/responses": "responses",
}
_CONVERSATION = {"openai": "messages", "anthropic": "messages", "responses": "input"}
_IDLE_LIMIT = 32
"""Idle upstream connections kept for reuse."""


def without_credentials(url: str) -> str:
    """``url`` without the ``user:password@`` of its authority, for logs and error bodies."""
    parts = urlsplit(url)
    return parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()


def _basic_authorization(parts: SplitResult) -> str | None:
    """The ``Authorization`` value for the URL's credentials (percent-decoded), if any."""
    if "@" not in parts.netloc:
        return None
    user, password = unquote(parts.username or ""), unquote(parts.password or "")
    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    return f"Basic {token}"


class _Connection(HTTPConnection):
    def connect(self) -> None:
        super().connect()
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class _TlsConnection(HTTPSConnection):
    def connect(self) -> None:
        super().connect()
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class Upstream:
    """The upstream server: its base URL and a pool of kept-alive connections."""

    def __init__(self, base: str, timeout: float) -> None:
        base = base.rstrip("/")
        self.base = without_credentials(base)
        """The URL as logs and error bodies show it."""
        parts = urlsplit(base)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"the upstream must be an http(s) URL, got {self.base!r}")
        self.tls = parts.scheme == "https"
        self.netloc = parts.netloc.rpartition("@")[2]
        self.authorization = _basic_authorization(parts)
        self.host = parts.hostname
        self.port = parts.port or (443 if self.tls else 80)
        self.prefix = parts.path
        self.timeout = timeout
        self._idle: list[HTTPConnection] = []
        self._lock = threading.Lock()

    def target(self, path: str) -> str:
        """The upstream path for a client's path.

        The upstream path for a client's path: ``/v1/x`` under a base ending in ``/v1``
        is ``/v1/x``, not ``/v1/v1/x``.
        """
        if self.prefix.endswith("/v1") and path.startswith("/v1/"):
            return self.prefix + path[3:]
        return self.prefix + path

    def _new(self) -> HTTPConnection:
        kind = _TlsConnection if self.tls else _Connection
        return kind(self.host, self.port, timeout=self.timeout)

    def _take(self) -> tuple[HTTPConnection, bool]:
        with self._lock:
            if self._idle:
                return self._idle.pop(), True
        return self._new(), False

    def release(self, connection: HTTPConnection, response: HTTPResponse) -> None:
        """Keep the connection for the next request when the exchange ended cleanly."""
        if response.will_close or not response.isclosed():
            connection.close()
            return
        with self._lock:
            if len(self._idle) < _IDLE_LIMIT:
                self._idle.append(connection)
                return
        connection.close()

    def send(
        self, method: str, path: str, body: bytes | None, headers: list[tuple[str, str]]
    ) -> tuple[HTTPConnection, HTTPResponse]:
        """The upstream's response, status and headers read.

        The upstream's response (status and headers read); ``OSError`` or
        ``HTTPException`` when there is none.
        """
        while True:
            connection, reused = self._take()
            try:
                connection.putrequest(
                    method, self.target(path), skip_host=True, skip_accept_encoding=True
                )
                connection.putheader("Host", self.netloc)
                for name, value in headers:
                    connection.putheader(name, value)
                if self.authorization and not any(n.lower() == "authorization" for n, _ in headers):
                    connection.putheader("Authorization", self.authorization)
                if body is not None:
                    connection.putheader("Content-Length", str(len(body)))
                connection.endheaders(body)
                return connection, connection.getresponse()
            except (OSError, HTTPException):
                connection.close()
                if not reused:
                    raise
                log.debug("toolmend-engine proxy: stale upstream connection, retrying")

    def close(self) -> None:
        """Close every idle upstream connection."""
        with self._lock:
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()


class ProxyServer(Server):
    """The HTTP proxy: requests go upstream with the delivery form applied to them."""

    def __init__(
        self,
        address: tuple[str, int],
        upstream: str,
        form: Form | None,
        timeout: float,
        context: ContextPolicy | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.upstream = Upstream(upstream, timeout)
        self.outcomes = Conversations()
        self.form = form
        self.context = context
        self.timeout = timeout
        super().__init__(address, ProxyHandler, limits)

    def server_close(self) -> None:
        """Close the server and its upstream connections."""
        super().server_close()
        self.upstream.close()


def make_proxy(
    upstream: str,
    *,
    form: Form | None = None,
    host: str = "127.0.0.1",
    port: int = 8081,
    timeout: float = 600.0,
    context: ContextPolicy | None = None,
    limits: Limits | None = None,
) -> ProxyServer:
    """A proxy to ``upstream`` (its base URL, with or without ``/v1``).

    ``context`` is the core's policy for errors in context (default ``ContextPolicy()``).

    Args:
        upstream: The upstream server's base URL.
        form: The default form (a request may choose its own).
        host: The address to listen on.
        port: The port to listen on.
        timeout: Seconds to wait for the upstream server.
        context: The core's policy for errors in context.
        limits: Connections and timeouts towards clients (default ``Limits()``).
    """
    return ProxyServer((host, port), upstream, form, timeout, context, limits)


class ProxyHandler(JsonHandler):
    server: ProxyServer

    def _handle(self) -> None:
        path = urlsplit(self.path).path.rstrip("/")
        if path == "/health" and self.command in ("GET", "HEAD"):
            self.send_json(200, {"status": "ok"})
            return
        with telemetry.server_span(f"{self.command} {path or '/'}", self.headers.items()):
            self._proxy(path)

    def _proxy(self, path: str) -> None:
        extra: list[tuple[str, str]] = []
        self._run: str | None = None
        self._reply: ReplyCalls | None = None
        try:
            data = self.read_body()
            fmt = _LAYERED.get(path) if self.command == "POST" else None
            if fmt is not None:
                data, extra = self._layer(data, fmt, observe=not path.endswith("/count_tokens"))
        except BodyError as exc:
            self.send_error_json(exc.status, str(exc), param=exc.param)
            return
        except Exception:
            log.exception("toolmend-engine proxy: request failed")
            self.send_internal_error()
            return
        has_body = data or self.headers.get("Content-Length") is not None
        self._forward(data if has_body else None, extra)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _handle

    def _layer(
        self, data: bytes, fmt: str, *, observe: bool
    ) -> tuple[bytes, list[tuple[str, str]]]:
        try:
            body = parse_json(data)
        except BodyError:
            raise
        except (ValueError, UnicodeDecodeError):
            return data, []
        if not isinstance(body, dict):
            return data, []
        had_field = "tool_errors" in body
        try:
            form = choose_form(body.pop("tool_errors", None), self.server.form)
        except ValueError as exc:
            raise BodyError(400, str(exc), "tool_errors") from None
        conversation = body.get(_CONVERSATION[fmt])
        if fmt == "responses" and isinstance(conversation, str):
            conversation = []  # one user message: nothing can have failed
        rewrite = apply_layer(
            conversation,
            form,
            format=fmt,
            client=self.headers.get("User-Agent"),
            context=self.server.context,
        )
        headers = [(HEADER, header_value(rewrite.report))]
        if observe:
            self._run = self.server.outcomes.observe(body, fmt, rewrite.report)
            self._reply = ReplyCalls(fmt) if self._run is not None else None
        if not rewrite.report.changed and not had_field:
            return data, headers
        body[_CONVERSATION[fmt]] = rewrite.messages
        return json.dumps(body, ensure_ascii=False).encode("utf-8"), headers

    def _request_headers(self) -> list[tuple[str, str]]:
        listed = {
            token.strip().lower()
            for value in self.headers.get_all("Connection", [])
            for token in value.split(",")
        }
        return [
            (name, value)
            for name, value in self.headers.items()
            if name.lower() not in _HOP_BY_HOP and name.lower() not in listed
        ]

    def _forward(self, data: bytes | None, extra: list[tuple[str, str]]) -> None:
        upstream = self.server.upstream
        try:
            connection, response = upstream.send(
                self.command, self.path, data, telemetry.outgoing_headers(self._request_headers())
            )
        except (OSError, HTTPException) as exc:
            self.send_error_json(
                502, f"upstream {upstream.base} unreachable: {exc}", kind="upstream_error",
                headers=extra,
            )  # fmt: skip
            return
        try:
            self._relay(response, extra)
        except ClientGone:
            log.info("toolmend-engine proxy: the client went away or stopped reading")
            self.close_connection = True
            connection.close()
        except (OSError, HTTPException):
            log.exception("toolmend-engine proxy: the upstream failed mid-response")
            self.close_connection = True
            connection.close()
        else:
            upstream.release(connection, response)
            reply = self._reply
            if reply is not None and response.status == 200 and self.command != "HEAD":
                self.server.outcomes.replied(self._run, reply.found)

    def _relay(self, response: HTTPResponse, extra: list[tuple[str, str]]) -> None:
        ours = {name.lower() for name, _ in extra}
        passed = [
            (name, value)
            for name, value in response.getheaders()
            if name.lower() not in _HOP_BY_HOP and name.lower() not in ours
        ]
        passed.extend(extra)
        if self.command == "HEAD" or response.status in (204, 304):
            response.read()
            self.begin_response(response.status, passed)
            length = response.getheader("Content-Length")
            if length is not None and response.status not in (204, 304):
                self.send_header("Content-Length", length)
            self.end_headers()
            return
        if response.chunked or response.length is None:
            content_type = next((v for n, v in passed if n.lower() == "content-type"), "")
            self.start_stream(
                response.status, content_type, [p for p in passed if p[0].lower() != "content-type"]
            )
            while chunk := response.read1(65536):
                if self._reply is not None:
                    self._reply.feed(chunk)
                self.write_chunk(chunk)
            self.end_stream()
            return
        data = response.read()
        if self._reply is not None:
            self._reply.feed(data)
        self.begin_response(response.status, [*passed, ("Content-Length", str(len(data)))])
        self.end_headers()
        self.wfile.write(data)
