"""The core's call record: its successes, its optional keys, and reading any of them back."""

from __future__ import annotations

from call_records import attempt, call_record
from toolmend import Kind, ToolFailure, Verdict
from toolmend.contracts import declared, review
from toolmend.integrations import AttemptRecord, CallRecord, Source, verdict_from_record

QUOTE = {"quote": {"type": "object", "properties": {"price": {"type": "number", "minimum": 0}}}}
VIOLATION = {
    "code": "schema_violation",
    "path": "price",
    "expected": {"minimum": 0},
    "observed": -3,
    "detail": "-3 is less than the minimum of 0",
}


def test_a_retried_success_lists_its_failed_attempts() -> None:
    failed = AttemptRecord(
        attempt=1,
        error="OSError: reset",
        kind=Kind.TRANSIENT,
        reason="errno",
        retry_after=None,
        before_dispatch=False,
        outcome_unknown=False,
        delay=0.5,
        stop=None,
    )
    record = CallRecord.of_success(
        "fetch", history=[failed], effect="read_only", effect_source="declared", form="c3"
    )
    assert record.to_dict() == call_record(
        tool="fetch",
        effect="read_only",
        effect_source="declared",
        form="c3",
        failed=False,
        attempts=2,
        history=[attempt(1, "OSError: reset", "transient", "errno", delay=0.5)],
    )
    assert verdict_from_record(record.to_dict()) == Verdict(False)


def test_a_receipted_success_carries_the_violations_the_receipt_and_what_is_shown() -> None:
    checked = review(declared(QUOTE), "quote", {"s": "X"}, '{"price": -3}', failed=False)
    record = CallRecord.of_success("quote", review=checked, call_id="q1", arguments={"s": "X"})
    body = {"status": "inconsistent", "violations": [VIOLATION], "admissible_recovery_tools": []}
    assert record.to_dict() == call_record(
        tool="quote",
        failed=False,
        attempts=1,
        source="contract",
        violations=[VIOLATION],
        receipt=body,
        call_id="q1",
        arguments={"s": "X"},
        shown=checked.text,
    )
    assert checked.text.startswith('{"tool_result": {"price": -3}, "outcome_contract": ')


def test_a_replayed_call_says_so_and_reads_back_as_clean() -> None:
    record = CallRecord(tool="pay", failed=False, attempts=0, replayed=True, landed=False)
    assert record.to_dict() == call_record(
        tool="pay", failed=False, attempts=0, replayed=True, landed=False
    )
    assert verdict_from_record(record.to_dict()) == Verdict(False)


def test_a_failure_reads_back_as_the_verdict_it_was_decided_by() -> None:
    failure = ToolFailure.invalid_arguments("pay", {"amount": -1}, "amount: must be > 0")
    for source, shown in ((Source.EXCEPTION, None), (Source.FLAG, "the text")):
        record = CallRecord.of_failure(
            failure, source=source.value, call_id="c1", shown=shown, guidance_in_content=True
        ).to_dict()
        assert (record["rule"], record["call_id"], record["guidance_in_content"]) == (
            "invalid-arguments",
            "c1",
            True,
        )
        assert ("shown" in record) is (shown is not None)
        assert verdict_from_record(record) == Verdict(
            True, Kind.FIXABLE, "invalid-arguments", source, failure.reason, failure.guidance
        )
