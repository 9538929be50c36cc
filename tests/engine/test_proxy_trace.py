"""The proxy forwards the caller's W3C trace context: with no OpenTelemetry SDK configured
the upstream receives the caller's own ``traceparent`` and ``tracestate``."""

from __future__ import annotations

from engine_fakes import running
from trace_upstream import Recorder, parts, post

from toolmend_engine import make_proxy

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"


def test_the_upstream_sees_the_callers_trace_id() -> None:
    upstream = Recorder()
    headers = {"traceparent": f"00-{TRACE_ID}-00f067aa0ba902b7-01", "tracestate": "vendor=1"}
    with running(upstream) as url, running(make_proxy(url, port=0)) as proxy:
        post(proxy + "/v1/chat/completions", {"model": "m", "messages": []}, headers)
        post(proxy + "/v1/chat/completions", {"model": "m", "messages": []}, {})

    traced, untraced = upstream.seen
    assert parts(traced["traceparent"])[0] == TRACE_ID
    assert traced["tracestate"] == "vendor=1"
    assert "tracestate" not in untraced
