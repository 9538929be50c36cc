"""The HTTP layer with the real clients: provider error shapes, unique ids, count_tokens,
the proxy's methods, headers and health, and ``X-Tool-Errors`` on errors.

A live ``serve`` (scripted model) and a live ``proxy`` in front of it, on loopback;
the openai and anthropic clients validate responses strictly.
"""

from __future__ import annotations

import copy
import http.client
import json
import logging
import socket
import threading
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import anthropic
import openai
import pytest
from engine_fakes import (
    ANTHROPIC_FAILED,
    ANTHROPIC_TOOLS,
    FAILED,
    TOOLS,
    FakeModel,
    echo_or_call,
    running,
)
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_openai import ChatOpenAI

from toolmend_engine import ChatEngine, make_proxy, make_server
from toolmend_engine.http._proxy import ProxyHandler
from toolmend_engine.http._server import EngineHandler

MODEL = "fake-model"
OFF = "failed=2:get_order:transient:generic/paper; form=off; changed=false"
C3 = "failed=2:get_order:transient:generic/paper; form=c3; changed=true"


@pytest.fixture(scope="module")
def serve() -> Iterator[str]:
    with running(make_server(ChatEngine(FakeModel(echo_or_call)), port=0)) as url:
        yield url


@pytest.fixture(scope="module")
def proxy(serve: str) -> Iterator[str]:
    with running(make_proxy(serve + "/v1", port=0)) as url:
        yield url


@pytest.fixture(params=["serve", "proxy"])
def base(request: pytest.FixtureRequest, serve: str, proxy: str) -> str:
    return serve if request.param == "serve" else proxy


def _openai(base: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=base + "/v1", api_key="unused", max_retries=0, _strict_response_validation=True
    )


def _anthropic(base: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=base, api_key="unused", max_retries=0, _strict_response_validation=True
    )


def _orphan_result() -> list[Any]:
    messages = copy.deepcopy(FAILED)
    messages[2]["tool_call_id"] = "c9"
    return messages


# -- OpenAI: each invalid-input class, parsed by the client into its typed error ---------

OPENAI_INVALID = [
    (
        {"messages": FAILED[:1], "top_logprobs": 2},
        openai.BadRequestError,
        {
            "message": "The 'top_logprobs' parameter is only allowed when 'logprobs' is enabled.",
            "type": "invalid_request_error",
            "param": "top_logprobs",
            "code": None,
        },
    ),
    (
        {"messages": FAILED[:1], "temperature": "hot"},
        openai.BadRequestError,
        {
            "message": "Invalid type for 'temperature': expected a decimal, but got a string "
            "instead.",
            "type": "invalid_request_error",
            "param": "temperature",
            "code": "invalid_type",
        },
    ),
    (
        {"messages": FAILED[:1], "top_p": 1.5},
        openai.BadRequestError,
        {
            "message": "Invalid 'top_p': decimal above maximum value. Expected a value <= 1, "
            "but got 1.5 instead.",
            "type": "invalid_request_error",
            "param": "top_p",
            "code": "decimal_above_max_value",
        },
    ),
    (
        {"messages": FAILED[:1], "seed": "7"},
        openai.BadRequestError,
        {
            "message": "Invalid type for 'seed': expected an integer, but got a string instead.",
            "type": "invalid_request_error",
            "param": "seed",
            "code": "invalid_type",
        },
    ),
    (
        {"messages": FAILED[:1], "model": "gpt-unknown"},
        openai.NotFoundError,
        {
            "message": "The model `gpt-unknown` does not exist or you do not have access to it.",
            "type": "invalid_request_error",
            "param": None,
            "code": "model_not_found",
        },
    ),
    (
        {"messages": _orphan_result()},
        openai.BadRequestError,
        {
            "message": "Invalid parameter: 'tool_call_id' of 'c9' not found in 'tool_calls' of "
            "previous message.",
            "type": "invalid_request_error",
            "param": "messages[2].tool_call_id",
            "code": None,
        },
    ),
    (
        {"messages": [FAILED[0], FAILED[2]]},
        openai.BadRequestError,
        {
            "message": "Invalid parameter: messages with role 'tool' must be a response to a "
            "preceding message with 'tool_calls'.",
            "type": "invalid_request_error",
            "param": "messages[1].role",
            "code": None,
        },
    ),
    (
        {"messages": FAILED[:1], "n": 2},
        openai.BadRequestError,
        {
            "message": "only n=1 is supported",
            "type": "invalid_request_error",
            "param": "n",
            "code": None,
        },
    ),
]


@pytest.mark.parametrize(("fields", "error", "body"), OPENAI_INVALID)
def test_openai_errors_are_typed_by_the_client(
    base: str, fields: dict[str, Any], error: type[openai.APIStatusError], body: dict[str, Any]
) -> None:
    request = {"model": MODEL, **fields}
    with pytest.raises(error) as info:
        _openai(base).chat.completions.create(**request)
    assert type(info.value) is error
    assert info.value.body == body
    assert (info.value.code, info.value.param) == (body["code"], body["param"])


def test_unknown_model_by_id(base: str) -> None:
    client = _openai(base)
    assert client.models.retrieve(MODEL).id == MODEL
    with pytest.raises(openai.NotFoundError) as info:
        client.models.retrieve("gpt-unknown")
    assert info.value.code == "model_not_found"


# -- Anthropic: its error shape on every /v1/messages route ------------------------------


def _tool_result_for(ident: str) -> list[Any]:
    messages = copy.deepcopy(ANTHROPIC_FAILED)
    messages[2]["content"][0]["tool_use_id"] = ident
    return messages


ANTHROPIC_INVALID = [
    (
        {"messages": ANTHROPIC_FAILED[:1], "temperature": "hot"},
        anthropic.BadRequestError,
        "invalid_request_error",
        "temperature: Input should be a valid number",
    ),
    (
        {"messages": ANTHROPIC_FAILED[:1], "temperature": 1.5},
        anthropic.BadRequestError,
        "invalid_request_error",
        "temperature: Input should be less than or equal to 1",
    ),
    (
        {"messages": ANTHROPIC_FAILED[:1], "model": "claude-unknown"},
        anthropic.NotFoundError,
        "not_found_error",
        "model: claude-unknown",
    ),
    (
        {"messages": _tool_result_for("tu9")},
        anthropic.BadRequestError,
        "invalid_request_error",
        "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: tu9. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous "
        "message.",
    ),
]


@pytest.mark.parametrize(("fields", "error", "kind", "message"), ANTHROPIC_INVALID)
def test_anthropic_errors_are_typed_by_the_client(
    base: str,
    fields: dict[str, Any],
    error: type[anthropic.APIStatusError],
    kind: str,
    message: str,
) -> None:
    request = {"model": MODEL, "messages": fields["messages"]}
    request.update({k: v for k, v in fields.items() if k in ("model",)})
    extra = {k: v for k, v in fields.items() if k not in ("model", "messages")}
    with pytest.raises(error) as info:
        _anthropic(base).messages.create(max_tokens=20, **request, extra_body=extra)
    assert type(info.value) is error
    assert info.value.body == {"type": "error", "error": {"type": kind, "message": message}}
    assert info.value.type == kind
    with pytest.raises(error) as counted:
        _anthropic(base).messages.count_tokens(**request, extra_body=extra)
    assert counted.value.body == info.value.body


def test_error_shape_follows_each_request_on_a_kept_alive_connection(serve: str) -> None:
    connection = http.client.HTTPConnection(serve.removeprefix("http://"))
    try:
        answers = []
        for method, path in [
            ("POST", "/v1/messages/nothing"),
            ("GET", "/v1/nothing"),
            ("PUT", "/v1/messages"),
            ("PUT", "/v1/chat/completions"),
        ]:
            connection.request(method, path, body=b"{}" if method == "POST" else None)
            response = connection.getresponse()
            answers.append((response.status, json.loads(response.read())))
            if response.will_close:
                connection.close()
    finally:
        connection.close()
    assert answers == [
        (
            404,
            {
                "type": "error",
                "error": {
                    "type": "not_found_error",
                    "message": "no route for POST /v1/messages/nothing",
                },
            },
        ),
        (
            404,
            {
                "error": {
                    "message": "no route for GET /v1/nothing",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "not_found",
                }
            },
        ),
        (
            405,
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "method PUT is not allowed here",
                },
            },
        ),
        (
            405,
            {
                "error": {
                    "message": "method PUT is not allowed here",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": None,
                }
            },
        ),
    ]


# -- ids: unique per response, the tokens unchanged --------------------------------------


def test_ids_are_unique_across_identical_requests(base: str) -> None:
    client = _openai(base)
    first, second = (
        client.chat.completions.create(
            model=MODEL, messages=FAILED[:1], tools=TOOLS, max_tokens=max_tokens
        )
        for max_tokens in (300, 301)
    )
    calls = [c.choices[0].message.tool_calls for c in (first, second)]
    assert calls[0] is not None
    assert calls[1] is not None
    assert first.id != second.id
    assert calls[0][0].id != calls[1][0].id
    assert [c[0].function for c in calls] == [calls[0][0].function] * 2
    streamed = list(
        client.chat.completions.create(
            model=MODEL, messages=FAILED[:1], tools=TOOLS, max_tokens=300, stream=True
        )
    )
    assert len({c.id for c in streamed}) == 1
    assert streamed[0].id not in (first.id, second.id)
    claude = _anthropic(base)
    messages = [
        claude.messages.create(
            model=MODEL, max_tokens=300, messages=ANTHROPIC_FAILED[:1], tools=ANTHROPIC_TOOLS
        )
        for _ in range(2)
    ]
    assert messages[0].id != messages[1].id
    assert messages[0].content[0].id != messages[1].content[0].id  # type: ignore[union-attr]
    assert messages[0].content[0].input == messages[1].content[0].input  # type: ignore[union-attr]


# -- count_tokens -------------------------------------------------------------------------


def test_count_tokens_is_the_prompt_the_model_reads(base: str) -> None:
    claude = _anthropic(base)
    request: dict[str, Any] = {
        "model": MODEL,
        "messages": ANTHROPIC_FAILED,
        "tools": ANTHROPIC_TOOLS,
    }
    counted = claude.messages.count_tokens(**request)
    message = claude.messages.create(max_tokens=300, **request)
    assert counted.input_tokens == message.usage.input_tokens
    raw = claude.messages.with_raw_response.count_tokens(
        **request, extra_body={"tool_errors": "c3"}
    )
    assert raw.headers["x-tool-errors"] == C3
    assert raw.parse().input_tokens > counted.input_tokens
    layered = claude.messages.create(max_tokens=300, **request, extra_body={"tool_errors": "c3"})
    assert raw.parse().input_tokens == layered.usage.input_tokens


# -- X-Tool-Errors on errors --------------------------------------------------------------


def test_serve_reports_the_layer_on_its_400_and_500() -> None:
    def broken(prompt: str) -> str:
        raise RuntimeError("decode failed")

    long = [*FAILED, {"role": "user", "content": "x" * 5000}]
    with running(make_server(ChatEngine(FakeModel(broken)), port=0)) as url:
        client = _openai(url)
        with pytest.raises(openai.BadRequestError) as info:
            client.chat.completions.create(model=MODEL, messages=long)
        assert info.value.code == "context_length_exceeded"
        assert info.value.response.headers["x-tool-errors"] == OFF
        with pytest.raises(openai.InternalServerError) as failed:
            client.chat.completions.create(model=MODEL, messages=FAILED)
        assert failed.value.response.headers["x-tool-errors"] == OFF
        with pytest.raises(anthropic.BadRequestError) as counted:
            _anthropic(url).messages.count_tokens(
                model=MODEL,
                messages=[
                    *ANTHROPIC_FAILED[:2],
                    {
                        "role": "user",
                        "content": [
                            *ANTHROPIC_FAILED[2]["content"],
                            {"type": "text", "text": "y" * 5000},
                        ],
                    },
                ],
            )
        assert counted.value.response.headers["x-tool-errors"] == OFF


def test_proxy_reports_the_layer_on_upstream_errors(proxy: str) -> None:
    with pytest.raises(openai.NotFoundError) as info:
        _openai(proxy).chat.completions.create(
            model="gpt-unknown", messages=FAILED, extra_body={"tool_errors": "c3"}
        )
    assert info.value.response.headers["x-tool-errors"] == C3
    with pytest.raises(anthropic.NotFoundError) as refused:
        _anthropic(proxy).messages.create(
            model="claude-unknown", max_tokens=5, messages=ANTHROPIC_FAILED
        )
    assert refused.value.response.headers.get_list("x-tool-errors") == [OFF]


# -- LangChain reads the header ----------------------------------------------------------


def test_langchain_reads_the_header_on_a_failed_tool_result(base: str) -> None:
    model = ChatOpenAI(
        model=MODEL,
        base_url=base + "/v1",
        api_key="unused",  # type: ignore[arg-type]
        max_retries=0,
        include_response_headers=True,
        extra_body={"tool_errors": "c3"},
    )
    call = {"name": "get_order", "args": {"order_id": "ORD-1"}, "id": "c1", "type": "tool_call"}
    reply = model.invoke(
        [
            HumanMessage("Total of ORD-1?"),
            AIMessage("", tool_calls=[call]),
            ToolMessage("Error: 503 Service Unavailable", tool_call_id="c1"),
        ]
    )
    assert reply.response_metadata["headers"]["x-tool-errors"] == C3
    assert str(reply.content).startswith("Echo: Note from the tool runtime: the last attempt")


# -- the proxy: every method, each header once, local health -----------------------------


class Echo(BaseHTTPRequestHandler):
    """An upstream that answers every method with what it received, and two cookies."""

    protocol_version = "HTTP/1.1"
    seen: ClassVar[list[tuple[str, str, bytes, str | None]]] = []

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def version_string(self) -> str:
        return "echo-upstream/1.0"

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.seen.append((self.command, self.path, body, self.headers.get("X-Custom")))
        data = json.dumps({"method": self.command, "body": body.decode()}).encode()
        self.send_response(201 if self.command == "PUT" else 200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Set-Cookie", "a=1")
        self.send_header("Set-Cookie", "b=2")
        self.send_header("X-Tool-Errors", "from-upstream")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _answer


@pytest.fixture
def echo_proxy() -> Iterator[str]:
    Echo.seen = []
    with (
        running(ThreadingHTTPServer(("127.0.0.1", 0), Echo)) as upstream,
        running(make_proxy(upstream, port=0)) as url,
    ):
        yield url


def test_proxy_forwards_every_method_with_each_header_once(echo_proxy: str) -> None:
    connection = http.client.HTTPConnection(echo_proxy.removeprefix("http://"))
    answers = []
    try:
        for method in ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"):
            body = f"body of {method}".encode() if method in ("PUT", "PATCH", "DELETE") else None
            connection.request(method, "/v1/things/7?x=1", body, {"X-Custom": method.lower()})
            response = connection.getresponse()
            data = response.read()
            names = Counter(name.lower() for name in response.headers)
            assert {n for n, k in names.items() if k > 1} == {"set-cookie"}, method
            assert response.headers.get_all("Set-Cookie") == ["a=1", "b=2"]
            assert response.headers["Server"] == "echo-upstream/1.0"
            assert response.headers["X-Tool-Errors"] == "from-upstream"
            answers.append((method, response.status, data))
            assert not response.will_close
    finally:
        connection.close()
    expected_body = {"PUT": "body of PUT", "PATCH": "body of PATCH", "DELETE": "body of DELETE"}
    assert Echo.seen == [
        (m, "/v1/things/7?x=1", expected_body.get(m, "").encode(), m.lower())
        for m in ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
    ]
    assert [(m, s) for m, s, _ in answers] == [
        ("GET", 200), ("POST", 200), ("PUT", 201), ("PATCH", 200), ("DELETE", 200),
        ("HEAD", 200), ("OPTIONS", 200),
    ]  # fmt: skip
    assert answers[5][2] == b""
    assert json.loads(answers[2][2]) == {"method": "PUT", "body": "body of PUT"}


def test_proxy_answers_health_itself(echo_proxy: str) -> None:
    connection = http.client.HTTPConnection(echo_proxy.removeprefix("http://"))
    try:
        connection.request("GET", "/health")
        response = connection.getresponse()
        assert (response.status, json.loads(response.read())) == (200, {"status": "ok"})
        assert Counter(name.lower() for name in response.headers).most_common(1)[0][1] == 1
    finally:
        connection.close()
    assert Echo.seen == []


def test_proxy_relays_the_servers_method_refusal(proxy: str) -> None:
    connection = http.client.HTTPConnection(proxy.removeprefix("http://"))
    try:
        connection.request("DELETE", "/v1/chat/completions")
        response = connection.getresponse()
        assert response.status == 405
        assert json.loads(response.read())["error"]["message"] == (
            "method DELETE is not allowed here"
        )
        assert response.headers.get_all("Date") is not None
        assert len(response.headers.get_all("Date") or []) == 1
        assert len(response.headers.get_all("Server") or []) == 1
    finally:
        connection.close()


class ClosingEcho(Echo):
    """Closes every connection after answering, without saying so: a kept-alive
    connection that the upstream dropped while it was idle."""

    def _answer(self) -> None:
        super()._answer()
        self.close_connection = True

    do_GET = do_POST = _answer


def test_proxy_resends_on_a_connection_the_upstream_dropped() -> None:
    Echo.seen = []
    with (
        running(ThreadingHTTPServer(("127.0.0.1", 0), ClosingEcho)) as upstream,
        running(make_proxy(upstream, port=0)) as url,
    ):
        connection = http.client.HTTPConnection(url.removeprefix("http://"))
        try:
            statuses = []
            for method in ("POST", "GET", "POST"):
                connection.request(method, "/v1/x", b"{}" if method == "POST" else None)
                response = connection.getresponse()
                response.read()
                statuses.append(response.status)
        finally:
            connection.close()
    assert statuses == [200, 200, 200]
    assert [(m, b) for m, _, b, _ in Echo.seen] == [("POST", b"{}"), ("GET", b""), ("POST", b"{}")]


def test_proxy_refuses_an_upstream_that_is_not_a_url(capsys: pytest.CaptureFixture[str]) -> None:
    from toolmend_engine.cli import main

    logger = logging.getLogger("toolmend")
    level = logger.level
    try:
        assert main(["proxy", "--upstream", "gpu-node:8000/v1", "--port", "0"]) == 2
    finally:
        logger.setLevel(level)  # the command turns the layer's log on for the process
    assert capsys.readouterr().err == (
        "toolmend-engine proxy: the upstream must be an http(s) URL, got 'gpu-node:8000/v1'\n"
    )


# -- TCP_NODELAY on accepted sockets --------------------------------------------------------


@pytest.mark.parametrize("handler", [EngineHandler, ProxyHandler])
def test_accepted_sockets_have_tcp_nodelay(handler: type[BaseHTTPRequestHandler]) -> None:
    seen: list[int] = []

    class Recording(handler):  # type: ignore[valid-type,misc]
        def handle(self) -> None:
            seen.append(self.connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))

    server = ThreadingHTTPServer(("127.0.0.1", 0), Recording)
    thread = threading.Thread(target=server.handle_request)
    thread.start()
    with socket.create_connection(server.server_address[:2]):
        thread.join()
    server.server_close()
    assert seen == [1]
