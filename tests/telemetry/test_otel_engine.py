"""The engine's proxy continues the caller's trace to the upstream (W3C ``traceparent``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from engine_fakes import FAILED, TOOLS, FakeModel, echo_or_call, running
from opentelemetry import trace
from opentelemetry.propagate import inject
from otel_support import Otel, events
from trace_upstream import Recorder, parts, post

from toolmend_engine import ChatEngine, make_proxy, make_server

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = "00f067aa0ba902b7"


@pytest.fixture
def recorder() -> Iterator[tuple[Recorder, str]]:
    server = Recorder()
    with running(server) as url:
        yield server, url


def test_the_upstream_sees_the_callers_trace_id_with_the_proxys_span_as_parent(
    otel: Otel, recorder: tuple[Recorder, str]
) -> None:
    upstream, url = recorder
    body = {"model": "m", "messages": FAILED, "tools": TOOLS, "tool_errors": "c3"}
    headers = {"traceparent": f"00-{TRACE_ID}-{PARENT}-01", "tracestate": "vendor=1"}
    with running(make_proxy(url + "/v1", port=0)) as proxy:
        post(proxy + "/v1/chat/completions", body, headers)

    [seen] = upstream.seen
    [span] = otel.spans()
    assert span.name == "POST /v1/chat/completions"
    assert span.kind is trace.SpanKind.SERVER
    assert span.parent is not None
    assert (f"{span.parent.trace_id:032x}", f"{span.parent.span_id:016x}") == (TRACE_ID, PARENT)
    assert parts(seen["traceparent"]) == (TRACE_ID, f"{span.context.span_id:016x}")
    assert seen["tracestate"] == "vendor=1"
    [(name, rewrite)] = events(span)
    assert name == "toolmend.rewrite"
    assert (rewrite["toolmend.form"], rewrite["gen_ai.tool.name"]) == ("c3", ["get_order"])


def test_a_request_without_a_trace_is_forwarded_without_one_unless_traced(
    otel: Otel, recorder: tuple[Recorder, str]
) -> None:
    upstream, url = recorder
    with running(make_proxy(url, port=0)) as proxy:
        post(proxy + "/v1/chat/completions", {"model": "m", "messages": []}, {})

    [seen] = upstream.seen
    [span] = otel.spans()
    assert span.parent is None
    assert parts(seen["traceparent"]) == (
        f"{span.context.trace_id:032x}",
        f"{span.context.span_id:016x}",
    )


def test_one_trace_from_the_client_through_the_proxy_to_the_engine_server(otel: Otel) -> None:
    client_headers: dict[str, str] = {}
    body = {"model": "fake-model", "messages": [{"role": "user", "content": "hi"}]}
    with (
        running(make_server(ChatEngine(FakeModel(echo_or_call)), port=0)) as server,
        running(make_proxy(server, port=0)) as proxy,
        trace.get_tracer("client").start_as_current_span("client") as client,
    ):
        inject(client_headers)
        post(proxy + "/v1/chat/completions", body, client_headers)

    caller, relay, engine = sorted(otel.spans(), key=lambda s: s.start_time or 0)
    assert [s.name for s in (caller, relay, engine)] == [
        "client",
        "POST /v1/chat/completions",
        "POST /v1/chat/completions",
    ]
    assert [s.kind for s in (relay, engine)] == [trace.SpanKind.SERVER] * 2
    trace_id = client.get_span_context().trace_id
    assert {s.context.trace_id for s in (engine, relay, caller)} == {trace_id}
    assert relay.parent is not None
    assert relay.parent.span_id == caller.context.span_id
    assert engine.parent is not None
    assert engine.parent.span_id == relay.context.span_id
