"""The core's spans and metrics: one ``execute_tool`` span per call, an event per attempt,
refusal, violation and rewrite, and no argument or error text unless opted in."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry import trace
from otel_support import SECRET_ARGUMENT, Otel, attrs, events, status, text_of_spans

import toolmend
from hostile import CYCLIC_SHOWN, DEEP_SHOWN, cyclic, nest
from toolmend import LoopGuard, RetryPolicy, ToolFailure, fail_soft, telemetry
from toolmend.contracts import Contracts, check
from toolmend.integrations import RetryBudget, SleepLog

TOOL = "toolmend.tool"


def http_error(status_code: int, headers: dict[str, str] | None = None) -> httpx.HTTPStatusError:
    request = httpx.Request("GET", "http://127.0.0.1/data")
    response = httpx.Response(status_code, request=request, headers=headers)
    return httpx.HTTPStatusError(f"HTTP {status_code}", request=request, response=response)


def test_a_read_retried_until_the_attempts_run_out(otel: Otel, sleeps: SleepLog) -> None:
    @fail_soft(effect="read_only")
    def fetch(email: str) -> str:
        raise http_error(503)

    result = fetch(SECRET_ARGUMENT)

    assert isinstance(result, ToolFailure)
    [span] = otel.spans()
    first, second = sleeps.sleeps
    assert span.name == "execute_tool fetch"
    assert span.kind is trace.SpanKind.INTERNAL
    assert status(span) == ("ERROR", None)
    assert attrs(span) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "fetch",
        "toolmend.attempts": 3,
        "toolmend.outcome": "unknown",
        "toolmend.effect": "read_only",
        "error.type": "httpx.HTTPStatusError",
        "toolmend.kind": "transient",
        "toolmend.rule": "exception",
        "toolmend.evidence.length": 8,
        "toolmend.evidence.hash": "1e682c53d8c50a63",
        "toolmend.signature.hash": "4e7791f2a4381d6e",
        "toolmend.stop_reason": "attempts",
    }
    attempt = {
        "toolmend.kind": "transient",
        "toolmend.outcome_unknown": False,
        "error.type": "httpx.HTTPStatusError",
        "toolmend.evidence.length": 8,
        "toolmend.evidence.hash": "1e682c53d8c50a63",
    }
    assert events(span) == [
        ("toolmend.attempt", {"toolmend.attempt": 1, "toolmend.attempt.wait": 0.0, **attempt,
                              "toolmend.retry.delay": first}),
        ("toolmend.attempt", {"toolmend.attempt": 2, "toolmend.attempt.wait": first, **attempt,
                              "toolmend.retry.delay": second}),
        ("toolmend.attempt", {"toolmend.attempt": 3, "toolmend.attempt.wait": second, **attempt,
                              "toolmend.stop_reason": "attempts"}),
    ]  # fmt: skip
    assert otel.metrics() == {
        "toolmend.tool.failures": {
            (("gen_ai.tool.name", "fetch"), ("toolmend.kind", "transient")): 1
        },
        "toolmend.tool.retries": {
            (("gen_ai.tool.name", "fetch"), ("toolmend.kind", "transient")): 2
        },
        "toolmend.tool.attempts": {(("gen_ai.tool.name", "fetch"),): (1, 3)},
    }


def test_a_retried_success_has_ok_status_and_an_event_for_the_attempt_that_worked(
    otel: Otel, sleeps: SleepLog
) -> None:
    calls: list[int] = []

    @fail_soft(effect="read_only")
    def fetch() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise http_error(503)
        return "ok"

    assert fetch() == "ok"

    [span] = otel.spans()
    [wait] = sleeps.sleeps
    assert status(span) == ("UNSET", None)
    assert attrs(span) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "fetch",
        "toolmend.attempts": 2,
        "toolmend.outcome": "landed",
        "toolmend.effect": "read_only",
    }
    assert [name for name, _ in events(span)] == ["toolmend.attempt", "toolmend.attempt"]
    assert events(span)[1] == (
        "toolmend.attempt",
        {"toolmend.attempt": 2, "toolmend.attempt.wait": wait},
    )
    assert otel.metrics() == {
        "toolmend.tool.retries": {
            (("gen_ai.tool.name", "fetch"), ("toolmend.kind", "transient")): 1
        },
        "toolmend.tool.attempts": {(("gen_ai.tool.name", "fetch"),): (1, 2)},
    }


def test_a_write_that_may_have_landed_is_refused_a_retry_as_unsafe(otel: Otel) -> None:
    @fail_soft(effect="write")
    def pay(to: str) -> str:
        raise httpx.ReadTimeout("timed out", request=httpx.Request("POST", "http://127.0.0.1/"))

    pay("bob")

    [span] = otel.spans()
    assert attrs(span)["toolmend.outcome"] == "unknown"
    assert attrs(span)["toolmend.stop_reason"] == "unsafe"
    assert attrs(span)["toolmend.effect"] == "write"
    assert attrs(span)["error.type"] == "httpx.ReadTimeout"
    assert otel.metrics() == {
        "toolmend.tool.failures": {
            (("gen_ai.tool.name", "pay"), ("toolmend.kind", "transient")): 1
        },
        "toolmend.tool.retries_refused": {
            (("gen_ai.tool.name", "pay"), ("toolmend.stop_reason", "unsafe")): 1
        },
        "toolmend.tool.attempts": {(("gen_ai.tool.name", "pay"),): (1, 1)},
    }


@pytest.mark.parametrize(
    ("policy", "error", "stop"),
    [
        (RetryPolicy(budget=RetryBudget(capacity=0, per_call=0)), http_error(503), "budget"),
        (RetryPolicy(deadline=5.0), http_error(429, {"Retry-After": "60"}), "deadline"),
    ],
    ids=["budget", "deadline"],
)
def test_retries_refused_by_budget_and_deadline_are_counted_by_reason(
    otel: Otel, policy: RetryPolicy, error: Exception, stop: str
) -> None:
    @fail_soft(effect="read_only", retry=policy)
    def fetch() -> str:
        raise error

    fetch()

    [span] = otel.spans()
    assert attrs(span)["toolmend.stop_reason"] == stop
    assert otel.metrics()["toolmend.tool.retries_refused"] == {
        (("gen_ai.tool.name", "fetch"), ("toolmend.stop_reason", stop)): 1
    }


def test_a_loop_guard_refusal_is_an_event_and_a_count(otel: Otel) -> None:
    guard = LoopGuard()

    @fail_soft(effect="read_only", loop=guard)
    def lookup(key: str) -> str:
        raise http_error(400)

    lookup("k")
    refused = lookup("k")

    assert isinstance(refused, ToolFailure)
    first, second = otel.spans()
    assert events(second) == [
        (
            "toolmend.loop_guard.refusal",
            {
                "toolmend.rule": "loop-repeat",
                "toolmend.kind": "fixable",
                "toolmend.reason": "exact repeat of a failed call",
            },
        )
    ]
    assert status(second) == ("ERROR", None)
    assert attrs(second) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "lookup",
        "toolmend.attempts": 0,
        "toolmend.outcome": "not_landed",
        "toolmend.effect": "read_only",
        "error.type": "toolmend.refused",
        "toolmend.kind": "fixable",
        "toolmend.rule": "loop-repeat",
        "toolmend.evidence.length": 29,
        "toolmend.evidence.hash": attrs(second)["toolmend.evidence.hash"],
        "toolmend.signature.hash": "1d0220d5b7e73d0a",
    }
    assert attrs(first)["error.type"] == "httpx.HTTPStatusError"
    assert otel.metrics() == {
        "toolmend.tool.failures": {
            (("gen_ai.tool.name", "lookup"), ("toolmend.kind", "fixable")): 2
        },
        "toolmend.loop_guard.refusals": {
            (("gen_ai.tool.name", "lookup"), ("toolmend.rule", "loop-repeat")): 1
        },
        "toolmend.tool.attempts": {(("gen_ai.tool.name", "lookup"),): (1, 1)},
    }


def test_contract_violations_are_events_of_the_call_and_counted_by_code(otel: Otel) -> None:
    contracts = Contracts().declare("quote", {"type": "object", "required": ["price"]})

    with telemetry.tool_call("quote", call_id="q1", framework="test"):
        found = check(contracts, "quote", {}, {"currency": SECRET_ARGUMENT})
        telemetry.record(None)

    assert [v.code.value for v in found] == ["schema_violation"]
    [span] = otel.spans()
    assert events(span) == [
        (
            "toolmend.contract.violation",
            {"toolmend.contract.code": "schema_violation", "toolmend.contract.path": "price"},
        )
    ]
    assert attrs(span) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "quote",
        "gen_ai.tool.call.id": "q1",
        "toolmend.framework": "test",
        "toolmend.attempts": 0,
        "toolmend.outcome": "landed",
        "toolmend.contract.codes": ["schema_violation"],
    }
    assert SECRET_ARGUMENT not in text_of_spans([span])
    assert otel.metrics() == {
        "toolmend.contract.violations": {
            (("gen_ai.tool.name", "quote"), ("toolmend.contract.code", "schema_violation")): 1
        }
    }


def test_a_rewrite_at_the_decision_step_is_an_event_of_the_current_span(otel: Otel) -> None:
    messages = [
        {"role": "user", "content": "Where is my order?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_order", "arguments": '{"id": 7}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "Error: 503 Service Unavailable"},
    ]
    with trace.get_tracer("test").start_as_current_span("chat"):
        result = toolmend.rewrite(messages, "c3")

    assert result.report.changed
    [span] = otel.spans()
    assert events(span) == [
        (
            "toolmend.rewrite",
            {
                "toolmend.form": "c3",
                "toolmend.rewrite.changed": True,
                "toolmend.rewrite.failures": 1,
                "toolmend.kind": ["transient"],
                "toolmend.rule": ["generic"],
                "toolmend.basis": ["paper"],
                "gen_ai.tool.name": ["get_order"],
                "toolmend.neutralised": False,
            },
        )
    ]


def test_no_argument_or_error_text_in_spans_by_default(otel: Otel) -> None:
    @fail_soft(effect="read_only", retry=None)
    def find(email: str) -> str:
        raise LookupError(f"no account for {email}")

    find(SECRET_ARGUMENT)

    spans = otel.spans()
    assert SECRET_ARGUMENT not in text_of_spans(spans)
    assert "no account" not in text_of_spans(spans)


def test_argument_and_error_texts_are_recorded_when_opted_in(otel: Otel) -> None:
    telemetry.configure(record_content=True)

    @fail_soft(effect="read_only", retry=None)
    def find(email: str) -> str:
        raise LookupError(f"no account for {email}")

    failure = find(SECRET_ARGUMENT)

    assert isinstance(failure, ToolFailure)
    [span] = otel.spans()
    assert status(span) == ("ERROR", failure.cause)
    assert attrs(span)["gen_ai.tool.call.arguments"] == '{"email": "alice@example.com"}'
    assert attrs(span)["toolmend.error.message"] == failure.cause
    assert attrs(span)["toolmend.evidence"] == failure.reason
    assert "toolmend.evidence.hash" not in attrs(span)
    # the error's template groups its occurrences; without content only its hash goes out
    assert attrs(span)["toolmend.signature"] == (
        "Tool '<v>' failed after <n> attempt with LookupError: no account for <email> "
        "Where: test_otel_core.py:<n> in find"
    )
    assert "toolmend.signature.hash" not in attrs(span)
    [(_, attempt)] = events(span)
    assert attempt["toolmend.error.message"] == "LookupError: no account for alice@example.com"
    telemetry.configure(record_content=False)
    otel.exporter.clear()
    find("bob@example.org")
    [span] = otel.spans()
    assert "toolmend.signature" not in attrs(span)
    signature = "Tool '<v>' failed after <n> attempt with LookupError: no account for <email> "
    signature += "Where: test_otel_core.py:<n> in find"
    digest = hashlib.sha256(signature.encode()).hexdigest()[:16]
    assert attrs(span)["toolmend.signature.hash"] == digest


def test_the_environment_variable_opts_in_for_a_new_process() -> None:
    code = "from toolmend import telemetry; print(telemetry.records_content())"
    env = {**os.environ, telemetry.RECORD_CONTENT_ENV: "1"}
    shown = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert shown.stdout == "True\n"
    env[telemetry.RECORD_CONTENT_ENV] = ""
    shown = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert shown.stdout == "False\n"


def test_a_guarded_call_inside_a_framework_call_gets_a_child_span(otel: Otel) -> None:
    @fail_soft(effect="read_only", retry=None)
    def inner() -> str:
        raise ValueError("bad")

    with telemetry.tool_call("outer", call_id="o1", framework="test"):

        @fail_soft(effect="read_only", retry=None, name="outer")
        def outer() -> object:
            return inner()

        outer()

    child, parent = otel.spans()
    assert (child.name, parent.name) == ("execute_tool inner", "execute_tool outer")
    assert child.parent is not None
    assert child.parent.span_id == parent.context.span_id
    assert attrs(parent)["toolmend.attempts"] == 1
    assert status(parent) == ("ERROR", None)  # the guarded tool returned a ToolFailure


def test_without_an_sdk_nothing_is_recorded_and_calls_behave_the_same() -> None:
    """A fresh process with no SDK configured: the API's no-op path."""
    code = (
        "from opentelemetry import trace\n"
        "from toolmend import fail_soft, ToolFailure, telemetry\n"
        "seen = []\n"
        "@fail_soft(effect='read_only', retry=None)\n"
        "def t():\n"
        "    seen.append(trace.get_current_span().is_recording())\n"
        "    raise ValueError('x')\n"
        "r = t()\n"
        "print(type(r).__name__, r.kind.value, seen, telemetry.current())\n"
    )
    root = Path(__file__).resolve().parents[2]
    shown = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root
    )
    assert shown.stdout == "ToolFailure ambiguous [False] None\n"


def test_control_flow_through_a_call_is_no_error_but_an_exception_is(otel: Otel) -> None:
    with pytest.raises(KeyboardInterrupt), telemetry.tool_call("stop"):
        raise KeyboardInterrupt
    with pytest.raises(RuntimeError), telemetry.tool_call("boom"):
        raise RuntimeError("adapter bug")

    stopped, boom = otel.spans()
    assert status(stopped) == ("UNSET", None)
    assert "error.type" not in attrs(stopped)
    assert status(boom) == ("ERROR", None)
    assert attrs(boom)["error.type"] == "RuntimeError"


@pytest.mark.parametrize(
    ("doc", "shown"),
    [
        (nest(600, {"x": 1}), DEEP_SHOWN),
        (cyclic(), CYCLIC_SHOWN),
    ],
    ids=["deep", "cyclic"],
)
def test_deep_or_cyclic_arguments_are_recorded_within_the_bounds(
    otel: Otel, doc: Any, shown: Any
) -> None:
    telemetry.configure(record_content=True)

    @fail_soft(effect="write", retry=None)
    def save(doc: Any) -> str:
        raise ValueError("Invalid arguments: the document is malformed")

    failure = save(doc)

    assert isinstance(failure, ToolFailure)
    [span] = otel.spans()
    assert attrs(span)["gen_ai.tool.call.arguments"] == json.dumps(
        {"doc": shown}, ensure_ascii=False, sort_keys=True
    )
