"""What a hostile or broken client can do to ``serve`` and ``proxy`` on one connection.

Raw sockets on loopback, so the tests see exactly what goes over the wire: a
refused body is never parsed as the next request, and the connection closes.
"""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from engine_fakes import FakeModel, Seen, echo_or_call, recording_upstream, running

from toolmend_engine.httpbase import MAX_BODY
from toolmend_engine.proxy import make_proxy
from toolmend_engine.server import make_server
from toolmend_engine.service import ChatEngine

WAIT = 5.0
"""Seconds a test waits for the server to answer or to close; only reached on failure."""


def address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


def read_until_close(sock: socket.socket, wait: float = WAIT) -> tuple[bytes, bool]:
    """Everything the server sends, and whether it closed (False: ``wait`` passed in silence)."""
    sock.settimeout(wait)
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            return data, False
        except ConnectionResetError:
            return data, True
        if not chunk:
            return data, True
        data += chunk


def exchange(url: str, data: bytes) -> tuple[bytes, bool]:
    """Send ``data`` on a new connection; what came back, and whether the server closed."""
    with socket.create_connection(address(url), timeout=WAIT) as sock:
        sock.sendall(data)
        return read_until_close(sock)


@dataclass(frozen=True)
class Response:
    status: int
    headers: list[tuple[str, str]]
    body: bytes
    rest: bytes
    """What came after this response on the connection."""

    def header(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k.lower() == name.lower()]

    @property
    def json(self) -> Any:
        return json.loads(self.body)


def first_response(data: bytes) -> Response:
    """The first response in ``data`` (with a Content-Length), and the bytes after it."""
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = [(k, v.strip()) for k, _, v in (line.partition(":") for line in lines[1:])]
    length = int(next(v for k, v in headers if k.lower() == "content-length"))
    return Response(status, headers, rest[:length], rest[length:])


def openai_error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": None,
                      "code": None}}  # fmt: skip


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    with running(make_server(ChatEngine(FakeModel(echo_or_call)), port=0)) as url:
        yield url


@pytest.fixture(scope="module")
def proxied() -> Iterator[tuple[str, list[Seen]]]:
    upstream, seen = recording_upstream()
    with running(upstream) as base, running(make_proxy(base + "/v1", port=0)) as url:
        yield url, seen


@pytest.fixture(params=["serve", "proxy"])
def target(
    request: pytest.FixtureRequest, served: str, proxied: tuple[str, list[Seen]]
) -> tuple[str, list[Seen]]:
    """``serve`` over the fake model, or ``proxy`` in front of an upstream that records."""
    if request.param == "serve":
        return served, []
    url, seen = proxied
    seen.clear()
    return url, seen


# -- item 5: a body refused unread is never parsed as the next request --------------------

SMUGGLED = b"DELETE /v1/files/file-1 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"
CHUNKED = "request bodies with a Transfer-Encoding are not supported; send Content-Length"
REFUSED = [
    pytest.param(b"Content-Length: 99999999999\r\n", 413,
                 f"the request body must be at most {MAX_BODY} bytes", id="too-long"),
    pytest.param(b"Content-Length: -5\r\n", 400, "invalid Content-Length", id="negative"),
    pytest.param(b"Content-Length: five\r\n", 400, "invalid Content-Length", id="not-a-number"),
    pytest.param(b"Content-Length: 1_0\r\n", 400, "invalid Content-Length", id="underscore"),
    pytest.param(b"Content-Length: 5\r\nContent-Length: 60\r\n", 400, "invalid Content-Length",
                 id="two-lengths"),
    pytest.param(b"Transfer-Encoding: chunked\r\n", 411, CHUNKED, id="chunked"),
    pytest.param(b"Transfer-Encoding: gzip\r\nContent-Length: 60\r\n", 411, CHUNKED,
                 id="other-encoding"),
]  # fmt: skip


@pytest.mark.parametrize(("head", "status", "message"), REFUSED)
def test_a_refused_body_is_never_read_as_a_request(
    target: tuple[str, list[Seen]], head: bytes, status: int, message: str
) -> None:
    url, seen = target
    request = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n" + head + b"\r\n" + SMUGGLED
    data, closed = exchange(url, request)
    assert seen == []
    response = first_response(data)
    assert response.rest == b""
    assert (response.status, response.json) == (status, openai_error(message))
    assert response.header("Connection") == ["close"]
    assert closed


def test_a_body_cut_short_is_refused(target: tuple[str, list[Seen]]) -> None:
    url, seen = target
    with socket.create_connection(address(url), timeout=WAIT) as sock:
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 100\r\n\r\n{}")
        sock.shutdown(socket.SHUT_WR)
        data, closed = read_until_close(sock)
    assert seen == []
    response = first_response(data)
    message = "the request body ended before its Content-Length"
    assert (response.status, response.json, response.rest) == (400, openai_error(message), b"")
    assert closed


def test_a_body_the_route_does_not_read_closes_the_connection(served: str) -> None:
    head = f"GET /v1/models HTTP/1.1\r\nHost: x\r\nContent-Length: {len(SMUGGLED)}\r\n\r\n"
    data, closed = exchange(served, head.encode() + SMUGGLED)
    response = first_response(data)
    assert (response.status, response.json["data"][0]["id"]) == (200, "fake-model")
    assert response.header("Connection") == ["close"]
    assert response.rest == b""
    assert closed


def test_a_body_refused_after_reading_keeps_the_connection(target: tuple[str, list[Seen]]) -> None:
    url, _ = target
    connection = http.client.HTTPConnection(*address(url), timeout=WAIT)
    try:
        connection.request("POST", "/v1/chat/completions", b'{"messages": [], "tool_errors": "x"}')
        refused = connection.getresponse()
        assert (refused.status, refused.will_close) == (400, False)
        refused.read()
        connection.request("GET", "/health")
        health = connection.getresponse()
        assert (health.status, json.loads(health.read())) == (200, {"status": "ok"})
    finally:
        connection.close()


# -- item 11: numbers that are not finite ------------------------------------------------

NOT_FINITE = "the request body holds a number that is not finite (NaN, Infinity, 1e999)"


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999", "-1e999"])
@pytest.mark.parametrize("route", ["/v1/chat/completions", "/v1/messages"])
def test_numbers_that_are_not_finite_are_refused(
    target: tuple[str, list[Seen]], route: str, number: str
) -> None:
    url, seen = target
    fields = (
        '"model": "fake-model", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]'
    )
    body = "{" + fields + ', "temperature": ' + number + "}"
    connection = http.client.HTTPConnection(*address(url), timeout=WAIT)
    try:
        connection.request("POST", route, body.encode())
        response = connection.getresponse()
        answer = (response.status, json.loads(response.read()), response.will_close)
    finally:
        connection.close()
    error = (
        {"type": "error", "error": {"type": "invalid_request_error", "message": NOT_FINITE}}
        if route == "/v1/messages"
        else openai_error(NOT_FINITE)
    )
    assert answer == (400, error, False)
    assert seen == []
