"""The proxy in front of the local server: the layer, streaming pass-through, failures."""

from __future__ import annotations

import base64
import http.client
import json
import logging
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from engine_fakes import (
    ANTHROPIC_FAILED,
    FAILED,
    NOTE,
    TOOLS,
    FakeModel,
    recording_upstream,
    running,
)

from toolmend import Form
from toolmend_engine import ChatEngine, make_proxy, make_server


@pytest.fixture
def upstream(fake: FakeModel) -> Iterator[str]:
    with running(make_server(ChatEngine(fake), port=0)) as url:
        yield url


@pytest.fixture
def proxy(upstream: str) -> Iterator[str]:
    with running(make_proxy(upstream + "/v1", port=0)) as url:
        yield url


@pytest.fixture
def client(proxy: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=proxy + "/v1", api_key="unused", max_retries=0, _strict_response_validation=True
    )


def test_models_pass_through(client: openai.OpenAI) -> None:
    assert [m.id for m in client.models.list()] == ["fake-model"]


def test_proxy_applies_the_layer_before_the_upstream(
    client: openai.OpenAI, fake: FakeModel
) -> None:
    raw = client.chat.completions.with_raw_response.create(
        model="fake-model", messages=FAILED, tools=TOOLS, extra_body={"tool_errors": "c3"}
    )
    assert (
        raw.headers["x-tool-errors"]
        == "failed=2:get_order:transient:generic/paper; form=c3; changed=true"
    )
    assert raw.parse().choices[0].message.content == "Echo: " + NOTE
    assert fake.prompts[-1].endswith(f"<|im_start|>user\n{NOTE}<|im_end|>\n<|im_start|>assistant\n")


def test_proxy_without_a_form_forwards_the_conversation_unchanged(client: openai.OpenAI) -> None:
    raw = client.chat.completions.with_raw_response.create(
        model="fake-model", messages=FAILED, tools=TOOLS
    )
    assert (
        raw.headers["x-tool-errors"]
        == "failed=2:get_order:transient:generic/paper; form=off; changed=false"
    )
    assert raw.parse().choices[0].message.content == "Echo: Error: 503 Service Unavailable"


def test_streaming_passes_through(client: openai.OpenAI) -> None:
    chunks = list(
        client.chat.completions.create(
            model="fake-model", messages=[{"role": "user", "content": "via proxy"}], stream=True
        )
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "Echo: via proxy"
    tool_chunks = list(
        client.chat.completions.create(
            model="fake-model", messages=FAILED[:1], tools=TOOLS, stream=True
        )
    )
    deltas = [tc for c in tool_chunks for tc in c.choices[0].delta.tool_calls or []]
    assert [(d.function.name, d.function.arguments) for d in deltas if d.function] == [
        ("get_order", '{"order_id": "ORD-1"}')
    ]


def test_server_option_of_the_proxy(upstream: str, fake: FakeModel) -> None:
    with running(make_proxy(upstream, form=Form.C2, port=0)) as url:
        client = openai.OpenAI(
            base_url=url + "/v1", api_key="unused", max_retries=0, _strict_response_validation=True
        )
        raw = client.chat.completions.with_raw_response.create(model="fake-model", messages=FAILED)
        assert (
            raw.headers["x-tool-errors"]
            == "failed=2:get_order:transient:generic/paper; form=c2; changed=true"
        )
        assert fake.prompts[-1] == (
            f"<|im_start|>user\nTotal of ORD-1?\n\n{NOTE}<|im_end|>\n<|im_start|>assistant\n"
        )


def _post(url: str, body: bytes) -> tuple[int, dict[str, str], Any]:
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), json.loads(exc.read())


def test_anthropic_messages_through_the_proxy(proxy: str) -> None:
    body = {
        "model": "fake-model",
        "max_tokens": 300,
        "messages": ANTHROPIC_FAILED,
        "tool_errors": "c3",
    }
    status, headers, reply = _post(proxy + "/v1/messages", json.dumps(body).encode())
    assert status == 200
    assert (
        headers["X-Tool-Errors"]
        == "failed=2:get_order:transient:generic/paper; form=c3; changed=true"
    )
    assert reply["content"] == [{"type": "text", "text": "Echo: " + NOTE}]


def test_upstream_errors_pass_through(proxy: str) -> None:
    status, _, body = _post(proxy + "/v1/chat/completions", b'{"messages": []}')
    assert (status, body["error"]["message"]) == (400, "messages must be a non-empty list")
    status, _, body = _post(proxy + "/v1/chat/completions", b'{"messages": [], "tool_errors": "x"}')
    assert status == 400
    assert body["error"]["message"] == "tool_errors must be one of off, c0, c1, c2, c3, c4; got 'x'"


def test_unreachable_upstream_is_a_502() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with running(make_proxy(f"http://127.0.0.1:{port}/v1", port=0)) as url:
        status, headers, body = _post(
            url + "/v1/chat/completions", json.dumps({"messages": FAILED}).encode()
        )
    assert status == 502
    assert (
        headers["X-Tool-Errors"]
        == "failed=2:get_order:transient:generic/paper; form=off; changed=false"
    )
    assert body["error"]["type"] == "upstream_error"
    assert body["error"]["message"].startswith(f"upstream http://127.0.0.1:{port}/v1 unreachable: ")


# -- credentials in the upstream URL (issue 29, item 8) -----------------------------------

SECRET = "s3cr@t"
"""The password in the upstream URL, percent-encoded there as ``s3cr%40t``."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def test_upstream_credentials_go_in_authorization_never_in_host() -> None:
    upstream, seen = recording_upstream()
    with running(upstream) as base:
        host = base.removeprefix("http://")
        with running(make_proxy(f"http://user:s3cr%40t@{host}/v1", port=0)) as url:
            connection = http.client.HTTPConnection(url.removeprefix("http://"))
            try:
                for headers in ({}, {"Authorization": "Bearer the-client's"}):
                    connection.request("GET", "/v1/models", headers=headers)
                    response = connection.getresponse()
                    assert (response.status, response.read()) == (200, b'{"ok": true}')
            finally:
                connection.close()
    basic = "Basic " + base64.b64encode(f"user:{SECRET}".encode()).decode()
    assert [(s.path, s.header("Host"), s.header("Authorization")) for s in seen] == [
        ("/v1/models", [host], [basic]),
        ("/v1/models", [host], ["Bearer the-client's"]),
    ]


def test_upstream_credentials_stay_out_of_the_502() -> None:
    port = _free_port()
    with running(make_proxy(f"http://user:s3cr%40t@127.0.0.1:{port}/v1", port=0)) as url:
        status, _, body = _post(url + "/v1/chat/completions", json.dumps({"messages": []}).encode())
    assert status == 502
    message = body["error"]["message"]
    assert message.startswith(f"upstream http://127.0.0.1:{port}/v1 unreachable: ")
    assert "s3cr" not in json.dumps(body)
    assert "user" not in message


@pytest.mark.parametrize(
    ("upstream", "printed"),
    [
        ("http://user:s3cr%40t@127.0.0.1:9/v1", " -> http://127.0.0.1:9/v1\n"),
        ("ftp://user:s3cr%40t@127.0.0.1:9/v1", "got 'ftp://127.0.0.1:9/v1'\n"),
    ],
)
def test_upstream_credentials_stay_out_of_the_proxys_own_output(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    upstream: str,
    printed: str,
) -> None:
    from toolmend_engine.cli import main
    from toolmend_engine.http._proxy import ProxyServer

    monkeypatch.setattr(ProxyServer, "serve_forever", lambda self: None)
    monkeypatch.setattr(logging.getLogger("toolmend"), "level", logging.NOTSET)
    main(["proxy", "--upstream", upstream, "--port", "0"])
    err = capsys.readouterr().err
    assert err.endswith(printed)
    assert "s3cr" not in err
    assert "user" not in err


def test_an_upstream_that_never_answers_is_a_502_after_the_timeout() -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        with running(make_proxy(f"http://127.0.0.1:{port}/v1", port=0, timeout=0.3)) as url:
            status, _, body = _post(url + "/v1/models", b"{}")
    assert status == 502
    assert body["error"] == {
        "message": f"upstream http://127.0.0.1:{port}/v1 unreachable: timed out",
        "type": "upstream_error",
        "param": None,
        "code": None,
    }
