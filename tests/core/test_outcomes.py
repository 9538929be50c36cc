"""The run-time outcome recorder: each failure settled by what followed it, as rows for learn."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from outcome_rows import Rows, recording
from toolmend.integrations import (
    CallRecord,
    Outcomes,
    end_run,
    follow_ups,
    learn,
    observe_call,
    read_outcomes,
    record_outcomes,
    recording_outcomes,
)


class Broken:
    """A sink whose store is down."""

    def add(self, row: Mapping[str, Any]) -> None:
        raise OSError("database is locked")


def ok(tool: str, **arguments: Any) -> CallRecord:
    return CallRecord(tool=tool, failed=False, attempts=1, arguments=arguments)


def failed(tool: str, cause: str, **arguments: Any) -> CallRecord:
    return CallRecord(tool=tool, failed=True, attempts=1, cause=cause, arguments=arguments)


@pytest.fixture
def rows() -> Iterator[Rows]:
    with recording() as sink:
        yield sink


def test_each_outcome_is_settled_when_its_evidence_arrives(rows: Rows) -> None:
    observe_call(failed("get", "HTTP 503 for order 7", id=7), "run-1")
    observe_call(failed("find", "no such table: ordrs", table="ordrs"), "run-1")
    observe_call(failed("drop", "permission denied for table 't1'", table="t1"), "run-1")
    assert rows.rows == []
    settled = observe_call(ok("get", id=7), "run-1")
    assert [r.outcome for r in settled] == ["retry_succeeded"]
    observe_call(ok("find", table="orders"), "run-1")
    observe_call(failed("drop", "permission denied for table 't2'", table="t2"), "run-1")
    assert [r["outcome"] for r in rows.rows] == ["retry_succeeded", "changed_arguments_succeeded"]
    end_run("run-1")
    assert rows.rows == [
        {
            "tool": "get",
            "content": "HTTP 503 for order 7",
            "is_error": True,
            "arguments": {"id": 7},
            "outcome": "retry_succeeded",
            "signature": "HTTP 503 for order <n>",
            "run": "run-1",
            "at": 0.0,
        },
        {
            "tool": "find",
            "content": "no such table: ordrs",
            "is_error": True,
            "arguments": {"table": "ordrs"},
            "outcome": "changed_arguments_succeeded",
            "signature": "no such table: ordrs",
            "run": "run-1",
            "at": 0.0,
        },
        {
            "tool": "drop",
            "content": "permission denied for table 't1'",
            "is_error": True,
            "arguments": {"table": "t1"},
            "outcome": "failed_again",
            "signature": "permission denied for table '<v>'",
            "run": "run-1",
            "at": 0.0,
        },
        {
            "tool": "drop",
            "content": "permission denied for table 't2'",
            "is_error": True,
            "arguments": {"table": "t2"},
            "outcome": "stopped",
            "signature": "permission denied for table '<v>'",
            "run": "run-1",
            "at": 0.0,
        },
    ]


def test_runs_are_followed_apart(rows: Rows) -> None:
    observe_call(failed("get", "HTTP 503", id=1), "a")
    observe_call(ok("get", id=1), "b")  # another run's success is no evidence
    assert rows.rows == []
    end_run("a")
    assert [(r["run"], r["outcome"]) for r in rows.rows] == [("a", "stopped")]


def test_a_retried_success_settles_its_own_attempts(rows: Rows) -> None:
    record = CallRecord(
        tool="get",
        failed=False,
        attempts=3,
        arguments={"id": 1},
        history=(
            {"attempt": 1, "error": "HTTP 503", "kind": "transient"},
            {"attempt": 2, "error": "timed out after 5 s", "kind": "transient"},
        ),
    )
    settled = observe_call(record, "r")
    assert [(r.cause, r.outcome, r.failed) for r in settled] == [
        ("HTTP 503", "retry_succeeded", True),
        ("timed out after 5 s", "retry_succeeded", True),
    ]
    assert [r["content"] for r in rows.rows] == ["HTTP 503", "timed out after 5 s"]


def test_the_recorder_agrees_with_follow_ups_on_a_run() -> None:
    run = [
        failed("a", "HTTP 503", x=1),
        failed("b", "bad value 'q'", v="q"),
        ok("b", v="r"),
        failed("a", "HTTP 503", x=1),
        failed("c", "gone"),
        ok("a", x=1),
        failed("c", "gone", y=2),
        failed("d", "first"),
        failed("d", "second"),
    ]
    sink = Rows()
    recorder = Outcomes(sink)
    for record in run:
        recorder.observe(record, "r")
    recorder.end("r")
    expected = [(r.tool, r.cause, r.outcome) for r in follow_ups(run) if r.failed]
    got = [(r["tool"], r["content"], r["outcome"]) for r in sink.rows]
    assert sorted(got) == sorted(expected)
    assert len(got) == 7


def test_bounds_settle_the_oldest_first() -> None:
    sink = Rows()
    recorder = Outcomes(sink, runs=2, pending=2)
    recorder.observe(failed("t", "e1"), "r1")
    recorder.observe(failed("t", "e2"), "r2")
    recorder.observe(failed("t", "e3"), "r3")  # r1 ends: three runs, two kept
    assert [(r["run"], r["content"], r["outcome"]) for r in sink.rows] == [("r1", "e1", "stopped")]
    recorder.observe(failed("u", "f1"), "r3")
    recorder.observe(failed("u", "f2"), "r3")  # r3 waits on three: the oldest settles
    assert sink.rows[-1]["content"] == "e3"
    assert len(sink.rows) == 2
    recorder.close()
    assert len(sink.rows) == 5
    with pytest.raises(ValueError, match="at least 1"):
        Outcomes(runs=0)


def test_a_broken_sink_is_logged_and_never_raises(caplog: pytest.LogCaptureFixture) -> None:
    record_outcomes(Broken())
    try:
        with caplog.at_level(logging.INFO, logger="toolmend.outcomes"):
            observe_call(failed("get", "HTTP 503", id=1), "r")
            settled = observe_call(ok("get", id=1), "r")
    finally:
        record_outcomes(None)
    assert [r.outcome for r in settled] == ["retry_succeeded"]
    messages = [r.getMessage() for r in caplog.records]
    assert messages == [
        "toolmend: get failed with 'HTTP 503'; what followed: retry_succeeded",
        "toolmend: outcome of get not stored: OSError('database is locked')",
    ]


def test_nothing_is_recorded_unless_installed() -> None:
    assert recording_outcomes() is None
    assert observe_call(failed("get", "HTTP 503"), "r") == ()
    assert end_run("r") == ()


def test_replacing_the_recorder_ends_its_runs() -> None:
    first, second = Rows(), Rows()
    record_outcomes(first)
    observe_call(failed("get", "HTTP 503"), "r")
    record_outcomes(second)
    try:
        assert [r["outcome"] for r in first.rows] == ["stopped"]
        assert recording_outcomes() is not None
    finally:
        record_outcomes(None)


def test_bad_arguments_and_huge_texts_are_bounded(rows: Rows) -> None:
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    observe_call(failed("t", "x" * 100_000, a=cyclic, b=b"\x00\xff"), "r")
    end_run("r")
    (row,) = rows.rows
    assert len(row["content"]) == 4096
    json.dumps(row)  # JSON-ready whatever the arguments were
    assert row["arguments"]["a"] == {"self": "<cycle>"}


def test_rows_are_what_learn_reads(rows: Rows) -> None:
    for n in range(3):
        observe_call(failed("quota", f'{{"reason": "QUOTA", "id": {n}}}', n=n), f"r{n}")
        observe_call(ok("quota", n=n), f"r{n}")
    observed, problems = read_outcomes(json.dumps(r) for r in rows.rows)
    assert problems == []
    (rule,) = learn(observed).rules
    assert (rule.tool, rule.kind, rule.support) == ("quota", "transient", 3)


def test_a_call_refused_before_it_ran_is_no_evidence(rows: Rows) -> None:
    observe_call(failed("get", "HTTP 503", id=1), "r")
    refused = CallRecord(
        tool="get",
        failed=True,
        attempts=0,
        cause="was not run: already failed",
        arguments={"id": 1},
    )
    assert observe_call(refused, "r") == ()
    end_run("r")
    assert [(r["content"], r["outcome"]) for r in rows.rows] == [("HTTP 503", "stopped")]
