"""The outcome store: rows shared by workers, ``learn --store``, learned rules at run time."""

from __future__ import annotations

import io
import json
import logging
import os
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sql_databases import SqliteLocker, database_url
from toolmend import Kind, Rule, Rules, classify_result, set_rules
from toolmend.cli import main
from toolmend.durable import SqlOutcomeStore, connection_of, open_outcomes, sqlite_outcomes
from toolmend.integrations import error_signature, learned_rules

QUOTA = '{"reason": "QUOTA", "request": "r-%d"}'
QUOTA_SIGNATURE = '{"reason": "QUOTA", "request": "<v>"}'


def row(
    i: int, outcome: str = "retry_succeeded", tool: str = "billing", **extra: Any
) -> dict[str, Any]:
    """A row as the recorder hands it to the sink."""
    content = QUOTA % i
    return {
        "tool": tool,
        "content": content,
        "is_error": True,
        "arguments": {"invoice": i},
        "outcome": outcome,
        "signature": error_signature(content),
        "run": f"run-{i}",
        "at": 1_000.0 + i,
        **extra,
    }


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A URL of an empty database that several stores (workers) can open."""
    return database_url(request, tmp_path, "outcomes.db")


def rows_of(store: SqlOutcomeStore, **filters: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in store.lines(**filters)]


# -- rows ------------------------------------------------------------------------------------


def test_rows_round_trip_exactly_and_filter_by_time_and_tool(store_url: str) -> None:
    store = open_outcomes(store_url)
    added = [
        row(2),
        row(1, "changed_arguments_succeeded", arguments=None, run=None),
        row(3, "failed_again", tool="search", content="nö: 'ü' — not found"),
    ]
    for item in added:
        store.add(item)
    assert rows_of(store) == [added[1], added[0], added[2]]  # oldest first
    assert rows_of(store, since=1_002.0) == [added[0], added[2]]
    assert rows_of(store, tool="search") == [added[2]]
    assert rows_of(store, since=1_002.5, tool="billing") == []


def test_odd_values_are_stored_bounded_and_signed(tmp_path: Path) -> None:
    store = sqlite_outcomes(tmp_path / "o.db")
    cyclic: dict[str, Any] = {"a": 1}
    cyclic["self"] = cyclic
    store.add(
        {
            "tool": "t",
            "content": {"error": "bad\x00value \udce9"},
            "arguments": cyclic,
            "outcome": "stopped",
            "at": 5,
        }
    )
    content = '{"error": "bad\\u0000value \\udce9"}'
    assert rows_of(store) == [
        {
            "tool": "t",
            "content": content,
            "is_error": True,
            "arguments": {"a": 1, "self": "<cycle>"},
            "outcome": "stopped",
            "signature": '{"error": "bad\\u0000value ?"}',  # stored: no lone surrogate
            "run": None,
            "at": 5.0,
        }
    ]
    store.add({"tool": "t", "content": "nul\x00 and \udce9", "outcome": "stopped", "at": 6})
    assert rows_of(store)[1]["content"] == "nul\ufffd and ?"


def test_a_row_without_a_tool_or_a_known_outcome_is_logged_not_stored(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = sqlite_outcomes(tmp_path / "o.db")
    with caplog.at_level(logging.WARNING, logger="toolmend"):
        store.add({"tool": "t", "content": "x", "outcome": "worked"})
        store.add({"content": "x", "outcome": "stopped"})
    assert rows_of(store) == []
    needs = (
        "toolmend: outcome not recorded: needs a tool name and one of retry_succeeded, "
        "changed_arguments_succeeded, failed_again, stopped; got "
    )
    assert [r.getMessage() for r in caplog.records] == [
        needs + "{'tool': 't', 'outcome': 'worked'}",
        needs + "{'tool': None, 'outcome': 'stopped'}",
    ]


def test_a_closed_connection_is_logged_and_swallowed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    conn = sqlite3.connect(tmp_path / "o.db", check_same_thread=False)
    store = SqlOutcomeStore(connection_of(conn, threading.Lock()), "sqlite")
    conn.close()
    with caplog.at_level(logging.WARNING, logger="toolmend"):
        store.add(row(1))  # no exception
    assert [r.getMessage() for r in caplog.records] == [
        "toolmend: outcome not recorded in SqlOutcomeStore(sqlite): "
        "Cannot operate on a closed database."
    ]


def test_a_sqlite_file_locked_by_another_process_drops_the_row_and_logs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "o.db"
    store = sqlite_outcomes(path, timeout=0.1)
    locker = SqliteLocker(path)
    try:
        locker.lock()
        with caplog.at_level(logging.WARNING, logger="toolmend"):
            store.add(row(1))
    finally:
        locker.release()
    assert [r.getMessage() for r in caplog.records] == [
        "toolmend: outcome not recorded in SqlOutcomeStore(sqlite): database is locked"
    ]
    store.add(row(2))  # the same store works once the lock is gone
    assert rows_of(store) == [row(2)]


_WRITER = """
import sys
from toolmend.durable import open_outcomes
store = open_outcomes(sys.argv[1])
print("ready", flush=True)
sys.stdin.readline()
for i in range(int(sys.argv[3])):
    store.add({"tool": "billing", "content": "quota spent", "is_error": True,
               "outcome": "retry_succeeded", "run": sys.argv[2] + "-" + str(i)})
"""


def test_two_processes_write_to_one_store(store_url: str) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    open_outcomes(store_url)  # the table, as a deployment's setup makes it
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, store_url, name, "60"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for name in ("a", "b")
    ]
    for writer in writers:
        assert writer.stdout is not None
        assert writer.stdout.readline().strip() == "ready"
    for writer in writers:  # both start writing together
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.flush()
    assert [writer.wait(60) for writer in writers] == [0, 0]
    runs = sorted(r["run"] for r in rows_of(open_outcomes(store_url, setup=False)))
    assert runs == sorted(f"{name}-{i}" for name in ("a", "b") for i in range(60))


def test_the_table_is_pruned_by_count_and_by_age(tmp_path: Path) -> None:
    store = sqlite_outcomes(tmp_path / "o.db", keep=3, prune_every=4)
    for i in range(1, 8):
        store.add(row(i))
    # pruned once, after the 4th row; rows 5-7 wait for the next pruning
    assert [r["at"] for r in rows_of(store)] == [1_002.0, 1_003.0, 1_004.0, 1_005.0, 1_006.0,
                                                 1_007.0]  # fmt: skip
    assert store.prune() == 3
    assert [r["at"] for r in rows_of(store)] == [1_005.0, 1_006.0, 1_007.0]
    aged = sqlite_outcomes(tmp_path / "o.db", keep=None, max_age=60.0, prune_every=0)
    aged.add(row(8, at=time.time()))
    assert aged.prune() == 3
    assert [r["run"] for r in rows_of(aged)] == ["run-8"]


def test_observed_counts_in_sql_and_learns_what_the_lines_teach(store_url: str) -> None:
    store = open_outcomes(store_url)
    for i in range(4):
        store.add(row(i))
    store.add(row(5, "failed_again"))
    store.add(row(6, tool="search", content="quota spent", signature="an older release's"))
    assert [(o.tool, o.outcome, o.signature, o.count) for o in store.observed()] == [
        ("billing", "failed_again", QUOTA_SIGNATURE, 1),
        ("billing", "retry_succeeded", QUOTA_SIGNATURE, 4),
        ("search", "retry_succeeded", "quota spent", 1),  # signed again from its text
    ]
    assert [o.count for o in store.observed(since=1_003.0, tool="billing")] == [1, 1]

    class LinesOnly:
        def lines(self, *, since: float | None = None, tool: str | None = None) -> Iterator[str]:
            return store.lines(since=since, tool=tool)

    counted = learned_rules(store, min_support=1, min_agreement=0.5).rules
    assert counted == learned_rules(LinesOnly(), min_support=1, min_agreement=0.5).rules
    assert [(r.tool, r.kind, r.support, r.agreement) for r in counted] == [
        ("billing", "transient", 4, 0.8),
        ("search", "transient", 1, 1.0),
    ]


def test_a_sqlite_store_writes_ahead_unless_told_not_to(tmp_path: Path) -> None:
    def mode(path: Path) -> str:
        with sqlite3.connect(path) as conn:
            return str(conn.execute("PRAGMA journal_mode").fetchone()[0])

    sqlite_outcomes(tmp_path / "wal.db")
    sqlite_outcomes(tmp_path / "plain.db", wal=False)
    assert (mode(tmp_path / "wal.db"), mode(tmp_path / "plain.db")) == ("wal", "delete")


def test_store_urls_and_a_missing_store() -> None:
    with pytest.raises(ValueError, match=r"starts with sqlite:/// or postgresql://"):
        open_outcomes("mysql://x")
    with pytest.raises(FileNotFoundError, match=r"no outcome store at /nonexistent/o\.db"):
        open_outcomes("sqlite:////nonexistent/o.db", setup=False)


# -- toolmend learn --store ----------------------------------------------------------------


def _cli(args: list[str], stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(args, io.StringIO(stdin), out, err)
    return code, out.getvalue(), err.getvalue()


def test_learn_reads_the_store_with_files_and_since(store_url: str, tmp_path: Path) -> None:
    store = open_outcomes(store_url)
    now = time.time()
    for i in range(2):
        store.add(row(i, at=now - 10))
    store.add(row(2, at=now - 10_000))  # older than --since
    url = store_url
    code, out, err = _cli(
        ["learn", "--store", url, "--since", "3600", "--min-support", "3"], stdin="ignored"
    )
    assert (code, json.loads(out)) == (0, {"rules": []})
    assert err == "toolmend learn: 2 failures read, 0 rules, 1 signatures undecided, 0 conflicts\n"
    extra = tmp_path / "more.jsonl"
    extra.write_text(json.dumps(row(9)) + "\n")
    code, out, err = _cli(["learn", str(extra), "--store", url, "--since", "3600"])
    assert (code, out) == (
        0,
        json.dumps(
            {
                "rules": [
                    {
                        "kind": "transient",
                        "tool": "billing",
                        "signature": QUOTA_SIGNATURE,
                        "support": 3,
                        "agreement": 1.0,
                    }
                ]
            },
            indent=2,
        )
        + "\n",
    )
    assert err == "toolmend learn: 3 failures read, 1 rules, 0 signatures undecided, 0 conflicts\n"
    code, out, err = _cli(["learn", "--store", url])
    assert (code, json.loads(out)["rules"][0]["support"]) == (0, 3)


def test_learn_says_when_it_cannot_read_the_store(tmp_path: Path) -> None:
    missing = tmp_path / "none.db"
    assert _cli(["learn", "--store", f"sqlite:///{missing}"]) == (
        2,
        "",
        f"toolmend learn: cannot read the store: no outcome store at {missing}\n",
    )
    assert not missing.exists()
    sqlite3.connect(missing).close()  # a database without the table
    assert _cli(["learn", "--store", f"sqlite:///{missing}"]) == (
        2,
        "",
        "toolmend learn: cannot read the store: no such table: toolmend_outcomes\n",
    )


# -- learned rules at run time ----------------------------------------------------------------


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def kind_of(rules: Rules, i: int, tool: str = "billing") -> tuple[Kind | None, str | None]:
    verdict = classify_result(QUOTA % i, is_error=True, tool=tool, rules=rules)
    return verdict.kind, verdict.basis


def test_learned_rules_pick_up_new_rows_only_after_the_interval(tmp_path: Path) -> None:
    store, clock = sqlite_outcomes(tmp_path / "o.db"), Clock()
    rules = learned_rules(store, refresh=60.0, clock=clock)
    assert kind_of(rules, 1) == (Kind.AMBIGUOUS, "none")
    for i in range(3):
        store.add(row(i))
    clock.now += 59.0
    assert kind_of(rules, 1) == (Kind.AMBIGUOUS, "none")  # not yet read again
    clock.now += 1.0
    assert kind_of(rules, 1) == (Kind.TRANSIENT, f"learned:{QUOTA_SIGNATURE}")
    assert kind_of(rules, 1, tool="other") == (Kind.AMBIGUOUS, "none")  # per tool


def test_learned_rules_are_one_line_for_every_caller(tmp_path: Path) -> None:
    store = sqlite_outcomes(tmp_path / "o.db")
    for i in range(3):
        store.add(row(i))
    old = set_rules(learned_rules(store))
    try:
        verdict = classify_result(QUOTA % 7, is_error=True, tool="billing")
    finally:
        set_rules(old)
    assert (verdict.kind, verdict.basis) == (Kind.TRANSIENT, f"learned:{QUOTA_SIGNATURE}")


class Flaky:
    """A store that answers ``lines`` until told to fail."""

    def __init__(self, lines: list[str]) -> None:
        self.rows = lines
        self.failing = False
        self.asked: list[tuple[float | None, str | None]] = []

    def lines(self, *, since: float | None = None, tool: str | None = None) -> Iterator[str]:
        self.asked.append((since, tool))
        if self.failing:
            raise sqlite3.OperationalError("disk I/O error")
        yield from self.rows

    def __repr__(self) -> str:
        return "Flaky()"


def test_a_failing_store_keeps_the_last_rules_and_logs(caplog: pytest.LogCaptureFixture) -> None:
    source, clock = Flaky([json.dumps(row(i)) for i in range(3)]), Clock()
    rules = learned_rules(source, refresh=10.0, clock=clock)
    assert kind_of(rules, 1)[0] is Kind.TRANSIENT
    source.failing = True
    clock.now += 10.0
    with caplog.at_level(logging.WARNING, logger="toolmend"):
        assert kind_of(rules, 1)[0] is Kind.TRANSIENT
        assert kind_of(rules, 1)[0] is Kind.TRANSIENT  # not asked again before the interval
    assert [r.getMessage() for r in caplog.records] == [
        "toolmend: rules learned from Flaky() not reloaded, the last one stays: disk I/O error"
    ]
    assert len(source.asked) == 2
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="toolmend"):
        down = learned_rules(source, base=[Rule("fixable", phrase="QUOTA")], clock=clock)
    assert [r.getMessage() for r in caplog.records] == [
        "toolmend: rules learned from Flaky() not loaded, starting without them: disk I/O error"
    ]
    assert [r.phrase for r in down.rules] == ["QUOTA"]


def test_learned_rules_scope_to_tools_and_keep_a_base_in_front() -> None:
    lines = [json.dumps(row(i, tool=tool)) for tool in ("billing_eu", "search") for i in range(3)]
    source = Flaky(lines)
    rules = learned_rules(source, tools=["billing_*"])
    assert [(r.tool, r.kind) for r in rules.rules] == [("billing_eu", "transient")]
    assert source.asked == [(None, None)]
    source.asked.clear()
    learned_rules(source, tools=["search", "billing_eu"], window=60.0)
    assert [tool for _, tool in source.asked] == ["search", "billing_eu"]  # plain names: by tool
    assert all(since is not None for since, _ in source.asked)
    reviewed = Rule("unrecoverable", signature=QUOTA_SIGNATURE, tool="search")
    mixed = learned_rules(source, base=Rules([reviewed]), precision="strict")
    assert mixed.precision == "strict"
    assert [(r.tool, r.kind) for r in mixed.rules] == [
        ("search", "unrecoverable"),
        ("billing_eu", "transient"),
        ("search", "transient"),
    ]
    assert kind_of(mixed, 4, tool="search")[0] is Kind.UNRECOVERABLE  # the reviewed rule wins
