"""What a hostile or broken client can do to ``serve`` and ``proxy`` on one connection.

Raw sockets on loopback, so the tests see exactly what goes over the wire: a
refused body is never parsed as the next request, and the connection closes.
"""

from __future__ import annotations

import http.client
import json
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import pytest
from engine_fakes import FakeModel, Seen, echo_or_call, recording_upstream, running

from toolmend_engine import ChatEngine, Step, make_proxy, make_server
from toolmend_engine.http._base import MAX_BODY, Limits

WAIT = 5.0
"""Seconds a test waits for the server to answer or to close; only reached on failure."""
SHORT = 0.3
"""The timeout under test, in seconds: far below ``WAIT``."""
LONG = 60.0
"""The timeouts not under test: never reached while a test runs."""


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


def eventually(condition: Callable[[], bool]) -> bool:
    """Whether ``condition`` holds within ``WAIT`` (polled every 10 ms)."""
    deadline = time.monotonic() + WAIT
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


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


# -- item 11: timeouts and the connection limit -----------------------------------------

Start = Callable[[Limits], tuple[str, list[Seen]]]


@pytest.fixture(params=["serve", "proxy"])
def start(request: pytest.FixtureRequest) -> Iterator[Start]:
    """Starts ``serve`` or ``proxy`` (before a recording upstream) with the given limits."""
    with ExitStack() as stack:

        def started(limits: Limits) -> tuple[str, list[Seen]]:
            if request.param == "serve":
                engine = ChatEngine(FakeModel(echo_or_call))
                return stack.enter_context(running(make_server(engine, port=0, limits=limits))), []
            upstream, seen = recording_upstream()
            base = stack.enter_context(running(upstream))
            proxy = make_proxy(base + "/v1", port=0, limits=limits)
            return stack.enter_context(running(proxy)), seen

        yield started


def trickle(sock: socket.socket, data: bytes) -> int:
    """Send ``data`` a byte at a time while the server keeps silent and the connection open.

    Returns how many bytes went out before the server answered or closed (all of
    them: it did neither while they were sent).
    """
    for sent, byte in enumerate(data):
        sock.settimeout(0.02)
        try:
            answer = sock.recv(1, socket.MSG_PEEK)
        except TimeoutError:
            answer = None
        except ConnectionError:
            return sent
        if answer is not None:
            return sent
        try:
            sock.sendall(bytes([byte]))
        except ConnectionError:
            return sent
    return len(data)


def limits(**changed: float) -> Limits:
    """Every timeout long but those ``changed``."""
    base = {"header_timeout": LONG, "body_timeout": LONG, "idle_timeout": LONG,
            "write_timeout": LONG}  # fmt: skip
    return Limits(**{**base, **changed})  # type: ignore[arg-type]


def test_a_silent_connection_is_closed_after_the_header_timeout(start: Start) -> None:
    url, seen = start(limits(header_timeout=SHORT))
    with socket.create_connection(address(url), timeout=WAIT) as sock:
        assert read_until_close(sock) == (b"", True)
    assert seen == []


def test_partial_headers_are_cut_off_after_the_header_timeout(start: Start) -> None:
    url, seen = start(limits(header_timeout=SHORT))
    with socket.create_connection(address(url), timeout=WAIT) as sock:
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n")
        assert read_until_close(sock) == (b"", True)
    assert seen == []


def test_the_header_timeout_is_a_deadline_not_a_pause(start: Start) -> None:
    """A byte every 20 ms never pauses for the timeout, yet the headers run out of time."""
    url, seen = start(limits(header_timeout=SHORT))
    request = b"GET /health HTTP/1.1\r\nX-Slow: " + b"x" * 2000 + b"\r\n\r\n"
    with socket.create_connection(address(url), timeout=WAIT) as sock:
        sent = trickle(sock, request)
        assert sent < len(request)
        assert read_until_close(sock) == (b"", True)
    assert seen == []


def test_an_idle_kept_alive_connection_is_closed_after_the_idle_timeout(start: Start) -> None:
    url, _ = start(limits(idle_timeout=SHORT))
    with socket.create_connection(address(url), timeout=WAIT) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        data, closed = read_until_close(sock)
    response = first_response(data)
    assert (response.status, response.json, response.rest) == (200, {"status": "ok"}, b"")
    assert response.header("Connection") == []
    assert closed


def test_a_slow_body_is_a_408_after_the_body_timeout(start: Start) -> None:
    url, seen = start(limits(body_timeout=SHORT))
    with socket.create_connection(address(url), timeout=WAIT) as sock:
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 2000\r\n\r\n")
        assert trickle(sock, b" " * 2000) < 2000
        data, closed = read_until_close(sock)
    response = first_response(data)
    message = f"the request body did not arrive within {SHORT} s"
    assert (response.status, response.json, response.rest) == (408, openai_error(message), b"")
    assert response.header("Connection") == ["close"]
    assert closed
    assert seen == []


def test_connections_beyond_the_limit_are_answered_503(start: Start) -> None:
    url, _ = start(Limits(max_connections=2, header_timeout=LONG))
    with ExitStack() as stack:
        held = [stack.enter_context(socket.create_connection(address(url))) for _ in range(2)]
        data, closed = exchange(url, b"")
        assert closed
        response = first_response(data)
        message = "the server is busy: 2 connections are open; retry later"
        body = {"error": {"message": message, "type": "server_error", "param": None,
                          "code": None}}  # fmt: skip
        assert (response.status, response.json, response.rest) == (503, body, b"")
        assert response.header("Connection") == ["close"]
        assert response.header("Retry-After") == ["1"]
        assert closed
        held[0].sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data, closed = read_until_close(held[0])
        assert (first_response(data).status, closed) == (200, True)
        statuses = []
        for _ in range(100):  # the slot frees once the server has seen the close
            data, _ = exchange(url, b"GET /health HTTP/1.1\r\nConnection: close\r\n\r\n")
            statuses.append(first_response(data).status)
            if statuses[-1] == 200:
                break
        assert statuses[-1] == 200
        assert set(statuses[:-1]) <= {503}


LIMIT_OPTIONS = ["--max-connections", "3", "--header-timeout", "1.5", "--body-timeout", "2",
                 "--idle-timeout", "4", "--write-timeout", "0.5"]  # fmt: skip
CHOSEN = Limits(max_connections=3, header_timeout=1.5, body_timeout=2.0, idle_timeout=4.0,
                write_timeout=0.5)  # fmt: skip


class _Model(FakeModel):
    def close(self) -> None:
        pass


@pytest.mark.parametrize("options", [LIMIT_OPTIONS, []], ids=["chosen", "defaults"])
def test_serve_and_proxy_take_the_limits_from_the_command_line(
    monkeypatch: pytest.MonkeyPatch, options: list[str]
) -> None:
    from toolmend_engine import cli
    from toolmend_engine.http._proxy import ProxyServer
    from toolmend_engine.http._server import EngineServer

    started: list[Limits] = []
    for kind in (EngineServer, ProxyServer):
        monkeypatch.setattr(kind, "serve_forever", lambda self: started.append(self.limits))
    monkeypatch.setattr(cli, "_load_model", lambda _args: _Model())
    monkeypatch.setattr(logging.getLogger("toolmend"), "level", logging.NOTSET)
    assert cli.main(["serve", "--port", "0", *options]) == 0
    assert cli.main(["proxy", "--upstream", "http://127.0.0.1:9/v1", "--port", "0", *options]) == 0
    assert started == [CHOSEN if options else Limits()] * 2


@pytest.mark.parametrize("option", ["--header-timeout", "--write-timeout"])
@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "soon"])
def test_a_timeout_must_be_a_positive_number_of_seconds(
    capsys: pytest.CaptureFixture[str], option: str, value: str
) -> None:
    from toolmend_engine.cli import main

    with pytest.raises(SystemExit) as exited:
        main(["proxy", "--upstream", "http://127.0.0.1:9/v1", option, value])
    assert exited.value.code == 2
    assert f"expected a positive number of seconds, got {value!r}" in capsys.readouterr().err


# -- the limits http.server sets (the README's Limits table) ---------------------------

FIXED = [
    pytest.param(b"GET /" + b"x" * 65536 + b" HTTP/1.1\r\n\r\n", 414, "Request-URI Too Long",
                 id="request-line"),
    pytest.param(b"GET /health HTTP/1.1\r\nX-Long: " + b"x" * 65536 + b"\r\n\r\n", 431,
                 "Line too long", id="header-line"),
    pytest.param(b"GET /health HTTP/1.1\r\n" + b"X-Many: 1\r\n" * 101 + b"\r\n", 431,
                 "Too many headers", id="header-count"),
]  # fmt: skip


@pytest.mark.parametrize(("request_bytes", "status", "message"), FIXED)
def test_oversized_request_heads_are_refused_and_closed(
    target: tuple[str, list[Seen]], request_bytes: bytes, status: int, message: str
) -> None:
    url, seen = target
    data, closed = exchange(url, request_bytes)
    response = first_response(data)
    assert (response.status, response.json, response.rest) == (status, openai_error(message), b"")
    assert response.header("Connection") == ["close"]
    assert closed
    assert seen == []


# -- item 6: a client that stops reading a stream holds neither the model nor its thread --

BIG = 16 * 2**20
"""A reply far larger than the socket buffers between the server and a client."""
STREAMS: dict[str, dict[str, Any]] = {
    "/v1/chat/completions": {"stream": True, "max_tokens": 64,
                             "messages": [{"role": "user", "content": "stall"}]},
    "/v1/messages": {"stream": True, "max_tokens": 64,
                     "messages": [{"role": "user", "content": "stall"}]},
    "/v1/responses": {"stream": True, "max_output_tokens": 64, "input": "stall"},
}  # fmt: skip


def _big_or_ok(prompt: str) -> str:
    return "x" * BIG if "stall" in prompt else "ok"


@pytest.fixture(params=["serve", "proxy"])
def streaming(
    request: pytest.FixtureRequest,
) -> Iterator[Callable[[Limits], tuple[str, FakeModel]]]:
    """Starts ``serve`` over a model that streams 16 MiB when asked to, or a proxy before it."""
    with ExitStack() as stack:

        def started(limits: Limits) -> tuple[str, FakeModel]:
            model = FakeModel(_big_or_ok, piece=2**20)
            server = make_server(ChatEngine(model), port=0, limits=limits)
            url = stack.enter_context(running(server))
            if request.param == "proxy":
                url = stack.enter_context(running(make_proxy(url, port=0, limits=limits)))
            return url, model

        yield started


def stall(url: str, route: str, model: FakeModel) -> socket.socket:
    """A client that asks for a large stream, reads none of it, and a model generating it."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    sock.connect(address(url))
    body = json.dumps(STREAMS[route]).encode()
    head = f"POST {route} HTTP/1.1\r\nContent-Length: {len(body)}\r\n\r\n"
    sock.sendall(head.encode() + body)
    assert eventually(lambda: bool(model.prompts))
    assert len(model.prompts) == 1
    return sock


def logged(caplog: pytest.LogCaptureFixture, text: str) -> Callable[[], bool]:
    return lambda: any(text in message for message in caplog.messages)


@pytest.mark.parametrize("route", STREAMS)
def test_a_client_that_stops_reading_does_not_hold_the_model(
    streaming: Callable[[Limits], tuple[str, FakeModel]], route: str
) -> None:
    url, model = streaming(limits())
    with stall(url, route, model):
        connection = http.client.HTTPConnection(*address(url), timeout=WAIT)
        try:
            connection.request("POST", "/v1/chat/completions", json.dumps(
                {"messages": [{"role": "user", "content": "hi"}]}))  # fmt: skip
            response = connection.getresponse()
            reply = json.loads(response.read())
        finally:
            connection.close()
    assert response.status == 200
    assert reply["choices"][0]["message"]["content"] == "ok"
    assert len(model.prompts) == 2


@pytest.mark.parametrize("route", STREAMS)
def test_a_client_that_stops_reading_is_cut_off_after_the_write_timeout(
    streaming: Callable[[Limits], tuple[str, FakeModel]],
    route: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="toolmend.engine")
    url, model = streaming(limits(write_timeout=SHORT))
    with stall(url, route, model) as sock:
        assert eventually(logged(caplog, "stopped reading"))
        data, closed = read_until_close(sock)
    assert closed
    assert b"200 OK" in data.split(b"\r\n", 1)[0]
    assert len(data) < BIG
    assert not data.endswith(b"0\r\n\r\n")


class Gated(FakeModel):
    """Generates 16 MiB in 16 steps, then waits for ``gate`` before each of 48 more."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.steps = 0

    def generate(
        self,
        tokens: Sequence[int],
        max_tokens: int,
        *,
        top_logprobs: int = 0,
        grammar: str | None = None,
    ) -> Iterator[Step]:
        self.prompts.append("".join(chr(t) for t in tokens))
        for i in range(64):
            if i >= 16:
                assert self.gate.wait(WAIT)
            self.steps += 1
            yield Step(120, b"x" * (2**20 if i < 16 else 1), -0.25, False, ())
        yield Step(0, b"", -0.1, True)


def test_a_stalled_stream_stops_its_generation_and_frees_the_model(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="toolmend.engine")
    model = Gated()
    server = make_server(ChatEngine(model), port=0, limits=limits(write_timeout=SHORT))
    with running(server) as url, stall(url, "/v1/chat/completions", model):
        assert eventually(logged(caplog, "stopping its generation"))
        assert model.steps == 16
        model.gate.set()
        assert eventually(lambda: _free(model.lock))
        assert model.steps == 17


def _free(lock: threading.Lock) -> bool:
    if not lock.acquire(blocking=False):
        return False
    lock.release()
    return True
