"""In-run history as evidence: ``classify_result(history=...)``."""

from __future__ import annotations

from typing import Any

from toolmend import Kind, classify_result
from toolmend.integrations import CallRecord

UNCLEAR = "Error executing tool search: something went wrong"


def ok(tool: str, **arguments: Any) -> CallRecord:
    return CallRecord(tool=tool, failed=False, attempts=1, arguments=arguments)


def failed(tool: str, cause: str, **arguments: Any) -> CallRecord:
    return CallRecord(tool=tool, failed=True, attempts=1, cause=cause, arguments=arguments)


def judge(history: list[Any], **arguments: Any) -> tuple[Kind | None, str | None, str | None]:
    verdict = classify_result(
        UNCLEAR, is_error=True, tool="search", arguments=arguments, history=history
    )
    return verdict.kind, verdict.basis, verdict.reason


def test_an_unclear_failure_of_a_call_that_worked_earlier_is_temporary() -> None:
    assert judge([])[0] is Kind.AMBIGUOUS
    assert judge([ok("search", q="tea"), ok("other", q="x")], q="tea") == (
        Kind.TRANSIENT,
        "history:succeeded-before",
        "the same call succeeded earlier in this run",
    )
    # as the records' dict form too
    assert judge([ok("search", q="tea").to_dict()], q="tea")[0] is Kind.TRANSIENT


def test_other_arguments_another_tool_or_a_failure_since_say_nothing() -> None:
    assert judge([ok("search", q="coffee")], q="tea")[0] is Kind.AMBIGUOUS
    assert judge([ok("lookup", q="tea")], q="tea")[0] is Kind.AMBIGUOUS
    since = [ok("search", q="tea"), failed("search", UNCLEAR, q="tea")]
    assert judge(since, q="tea")[0] is Kind.AMBIGUOUS
    # a different error since then does not count against it
    other = [ok("search", q="tea"), failed("search", "HTTP 404", q="tea")]
    assert judge(other, q="tea")[0] is Kind.TRANSIENT


def test_only_an_unclear_reading_gives_way() -> None:
    earlier = [ok("search", q="tea")]
    fixable = classify_result(
        "Invalid value for 'q': must not be empty",
        is_error=True,
        tool="search",
        arguments={"q": "tea"},
        history=earlier,
    )
    assert fixable.kind is Kind.FIXABLE
    assert fixable.basis != "history:succeeded-before"
    stop = classify_result(
        "HTTP 403 Forbidden", is_error=True, tool="search", arguments={"q": "tea"}, history=earlier
    )
    assert stop.kind is Kind.UNRECOVERABLE
    clean = classify_result("3 results", tool="search", arguments={"q": "tea"}, history=earlier)
    assert not clean.failed


def test_strict_precision_does_not_take_history_as_evidence() -> None:
    verdict = classify_result(
        UNCLEAR,
        is_error=True,
        tool="search",
        arguments={"q": "tea"},
        history=[ok("search", q="tea")],
        precision="strict",
    )
    assert verdict.kind is Kind.AMBIGUOUS


def test_odd_history_entries_are_skipped_never_an_error() -> None:
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    odd: list[Any] = [
        None,
        3,
        "text",
        {"tool": "search"},
        {"tool": "search", "failed": False, "arguments": cyclic},
    ]
    assert judge(odd, q="tea")[0] is Kind.AMBIGUOUS
    assert (
        judge([*odd, {"tool": "search", "failed": False, "arguments": {"q": "tea"}}], q="tea")[0]
        is Kind.TRANSIENT
    )
