"""What followed a failure, as a span: ``toolmend.follow_up {tool}``, ``toolmend.followed_by``."""

from __future__ import annotations

import json
from typing import Any

from otel_support import Otel, attrs

from toolmend import telemetry
from toolmend.integrations import CallRecord, Outcomes, learn, read_outcomes


def _failed(n: int) -> CallRecord:
    return CallRecord(
        tool="quota",
        failed=True,
        attempts=1,
        cause=f'{{"reason": "QUOTA", "request": "r-{n}"}}',
        arguments={"n": n},
    )


def test_each_settled_failure_is_a_span_hashed_unless_content_is_recorded(otel: Otel) -> None:
    recorder = Outcomes()
    recorder.observe(_failed(1), "run")
    recorder.observe(CallRecord(tool="quota", failed=False, attempts=1, arguments={"n": 1}), "run")
    (span,) = otel.spans()
    assert span.name == "toolmend.follow_up quota"
    found = attrs(span)
    assert found["toolmend.followed_by"] == "retry_succeeded"
    assert found["gen_ai.tool.name"] == "quota"
    assert found["toolmend.error.message.length"] == len('{"reason": "QUOTA", "request": "r-1"}')
    assert set(found) == {
        "gen_ai.tool.name",
        "toolmend.followed_by",
        "toolmend.signature.hash",
        "toolmend.error.message.length",
        "toolmend.error.message.hash",
    }


def test_with_content_recorded_learn_reads_the_spans(otel: Otel) -> None:
    telemetry.configure(record_content=True)
    recorder = Outcomes()
    for n in range(2):
        recorder.observe(_failed(n), f"run-{n}")
        recorder.observe(
            CallRecord(tool="quota", failed=False, attempts=1, arguments={"n": n}), f"run-{n}"
        )
    spans = otel.spans()
    assert [attrs(s)["toolmend.signature"] for s in spans] == [
        '{"reason": "QUOTA", "request": "<v>"}'
    ] * 2
    assert attrs(spans[0])["gen_ai.tool.call.arguments"] == '{"n": 0}'
    lines: list[Any] = [json.dumps({"attributes": dict(attrs(s))}) for s in spans]
    observed, problems = read_outcomes(lines)
    assert problems == []
    (rule,) = learn(observed).rules
    assert (rule.tool, rule.kind, rule.support) == ("quota", "transient", 2)
