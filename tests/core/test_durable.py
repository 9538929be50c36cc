"""Durable steps: stable keys, the replay decision, and step records on SQLite and Postgres."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from sql_databases import SqliteLocker
from toolmend import Effect, Kind, RetryPolicy, ToolFailure
from toolmend.durable import (
    LANDED_TEXT,
    Mark,
    Recorded,
    Replay,
    SqlStepStore,
    StepRecord,
    WorkerStopped,
    connection_of,
    dbos_key,
    langgraph_key,
    on_replay,
    run_durably,
    step_key,
)
from toolmend.integrations import CallContext, ResultFailed, Stop
from tools.pg_cluster import Cluster


def test_keys_are_stable_and_distinct() -> None:
    assert langgraph_key("t1", "tools:abc", "call_1") == langgraph_key("t1", "tools:abc", "call_1")
    keys = {
        langgraph_key("t1", "tools:abc", "call_1"),
        langgraph_key("t1", "tools:abc", "call_2"),
        langgraph_key("t2", "tools:abc", "call_1"),
        langgraph_key("t1", "tools:abd", "call_1"),
        dbos_key("wf-1", 1),
        dbos_key("wf-1", 2),
        dbos_key("wf-2", 1),
    }
    assert len(keys) == 7
    assert step_key("ab", "c") != step_key("a", "bc")
    # fixed forever: a release that changed it would re-run every step in flight
    assert (
        langgraph_key("t1", "tools:abc", "call_1") == "tm-a7263aec4f63f4835482ea4060471e3649965ad6"
    )
    assert len(dbos_key("wf", 3)) == 43
    assert dbos_key("wf", 3).startswith("tm-")


STARTED = StepRecord("k", "pay", Mark.STARTED)


@pytest.mark.parametrize(
    ("record", "effect", "honours_key", "can_verify", "expected"),
    [
        (None, Effect.WRITE, False, False, Replay.RUN),
        (StepRecord("k", "pay", Mark.FAILED), Effect.WRITE, False, False, Replay.RUN),
        (StepRecord("k", "pay", Mark.FINISHED, "ok"), Effect.WRITE, False, False, Replay.REUSE),
        (STARTED, Effect.READ_ONLY, False, False, Replay.RUN),
        (STARTED, Effect.IDEMPOTENT, False, False, Replay.RUN),
        (STARTED, Effect.WRITE, True, True, Replay.RUN),
        (STARTED, Effect.WRITE, False, True, Replay.VERIFY),
        (STARTED, Effect.WRITE, False, False, Replay.REPORT),
        (STARTED, Effect.UNKNOWN, False, False, Replay.REPORT),
    ],
)
def test_replay_decision(
    record: StepRecord | None, effect: Effect, honours_key: bool, can_verify: bool, expected: Replay
) -> None:
    assert (
        on_replay(record, effect=effect, honours_key=honours_key, can_verify=can_verify) is expected
    )


def sqlite_store(path: Path, **options: Any) -> SqlStepStore:
    conn = sqlite3.connect(path, check_same_thread=False, timeout=30)
    lock = threading.Lock()

    @contextmanager
    def connect() -> Iterator[sqlite3.Connection]:
        with lock:
            yield conn

    return SqlStepStore(connect, "sqlite", **options)


def postgres_store(dsn: str, **options: Any) -> SqlStepStore:
    import psycopg

    @contextmanager
    def connect() -> Iterator[Any]:
        with psycopg.connect(dsn) as conn:
            yield conn

    return SqlStepStore(connect, "postgres", **options)


@pytest.fixture(params=["sqlite", "postgres"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """A factory of stores that all share one database (like several workers)."""
    if request.param == "sqlite":
        return lambda **options: sqlite_store(tmp_path / "steps.db", **options)
    cluster: Cluster = request.getfixturevalue("postgres")
    dsn = cluster.database(f"t{abs(hash(request.node.name)) % 10**8}")
    return lambda **options: postgres_store(dsn, **options)


class Bank:
    """A payment server: ``keys`` deduplicates when a key is sent."""

    def __init__(self) -> None:
        self.effects: list[str] = []
        self.keys: list[str] = []

    def pay(self, ctx: CallContext, *, dedup: bool) -> str:
        self.keys.append(ctx.idempotency_key)
        if dedup and ctx.idempotency_key in self.effects:
            return "paid"
        self.effects.append(ctx.idempotency_key)
        return "paid"


def test_first_run_records_the_result_and_a_replay_reuses_it(make_store: Any) -> None:
    store, bank = make_store(), Bank()
    out = run_durably(
        lambda ctx: bank.pay(ctx, dedup=False), store=store, key="k1", tool="pay", text=str,
        effect="write",
    )  # fmt: skip
    assert out == "paid"
    assert store.record("k1") == StepRecord("k1", "pay", Mark.FINISHED, "paid")
    again = run_durably(
        lambda ctx: bank.pay(ctx, dedup=False), store=make_store(), key="k1", tool="pay",
        text=str, effect="write",
    )  # fmt: skip
    assert again == Recorded("paid")
    assert bank.effects == ["k1"]


def test_started_step_with_key_runs_again_with_the_same_key(make_store: Any) -> None:
    store, bank = make_store(), Bank()
    assert store.begin("k2", "pay") is None  # the first run crashed after this
    out = run_durably(
        lambda ctx: bank.pay(ctx, dedup=True), store=store, key="k2", tool="pay", text=str,
        effect="write", honours_key=True,
    )  # fmt: skip
    assert out == "paid"
    assert bank.keys == ["k2"]


def test_started_write_with_verify_is_checked_first(make_store: Any) -> None:
    store, bank = make_store(), Bank()
    asked: list[tuple[str, str]] = []

    def landed(ctx: CallContext, exc: BaseException) -> bool:
        asked.append((ctx.idempotency_key, type(exc).__name__))
        return True

    store.begin("k3", "pay")
    out = run_durably(
        lambda ctx: bank.pay(ctx, dedup=False), store=store, key="k3", tool="pay", text=str,
        effect="write", verify=landed,
    )  # fmt: skip
    assert out == Recorded(LANDED_TEXT, landed=True)
    assert asked == [("k3", WorkerStopped.__name__)]
    assert bank.effects == []
    assert store.record("k3") == StepRecord("k3", "pay", Mark.FINISHED, LANDED_TEXT)

    store.begin("k4", "pay")
    out = run_durably(
        lambda ctx: bank.pay(ctx, dedup=False), store=store, key="k4", tool="pay", text=str,
        effect="write", verify=lambda ctx, exc: False,
    )  # fmt: skip
    assert out == "paid"
    assert bank.effects == ["k4"]


def test_started_write_without_verify_is_reported_not_repeated(make_store: Any) -> None:
    store, bank = make_store(), Bank()
    store.begin("k5", "pay")
    out = run_durably(
        lambda ctx: bank.pay(ctx, dedup=False), store=store, key="k5", tool="pay", text=str,
        effect="write", arguments={"amount": 5},
    )  # fmt: skip
    assert isinstance(out, ToolFailure)
    assert (out.kind.value, out.outcome_unknown, out.rule) == ("ambiguous", True, "worker-stopped")
    assert str(out) == (
        "Tool 'pay' was interrupted: the worker running it stopped before the call finished, "
        "and whether it took effect is unknown. It was not repeated.\n"
        "This call may already have taken effect. Check whether it did before calling it again."
    )
    assert bank.effects == []


def test_a_failure_is_recorded_as_failure_and_never_replayed_as_success(make_store: Any) -> None:
    """A tool that opted in to be read from its exception: a refusal did not take effect."""
    store, calls = make_store(), []

    def refused(ctx: CallContext) -> str:
        calls.append(ctx.attempt)
        if len(calls) == 1:
            raise PermissionError("card declined")
        return "paid"

    trusted = RetryPolicy(retry_before_dispatch=True)
    first = run_durably(
        refused, store=store, key="k6", tool="pay", text=str, effect="write", policy=trusted
    )
    assert isinstance(first, ToolFailure)
    assert store.record("k6") == StepRecord("k6", "pay", Mark.FAILED)
    second = run_durably(
        refused, store=store, key="k6", tool="pay", text=str, effect="write", policy=trusted
    )
    assert second == "paid"
    assert calls == [1, 1]


def assert_resume_does_not_repeat(thunk: Any, store: SqlStepStore, key: str, bank: Bank) -> None:
    """The resume of a write whose step stayed "started" reports it, and pays nothing more."""
    resumed = run_durably(thunk, store=store, key=key, tool="pay", text=str, effect="write")
    assert isinstance(resumed, ToolFailure)
    assert resumed.rule == "worker-stopped"
    assert bank.effects == [key]


RAISED_AFTER_THE_EFFECT = [
    PermissionError("403 Forbidden: receipt printer"),
    ValueError("amount must be a positive number, got -5"),
    ResultFailed("Error: 403 Forbidden", Kind.UNRECOVERABLE, "status 403", None),
    ResultFailed("Error: amount must be positive", Kind.FIXABLE, "words", None),
]


@pytest.mark.parametrize("error", RAISED_AFTER_THE_EFFECT, ids=lambda e: type(e).__name__)
def test_a_write_that_fails_after_its_effect_is_not_run_again_on_resume(
    make_store: Any, error: Exception
) -> None:
    """Issue 29.2: a Python tool may have done anything before it raised or returned an error.

    The worker dies before its checkpoint; the resume must not pay again.
    """
    store, bank = make_store(), Bank()

    def pay_then_fail(ctx: CallContext) -> str:
        bank.pay(ctx, dedup=False)
        raise error

    first = run_durably(pay_then_fail, store=store, key="f1", tool="pay", text=str, effect="write")
    assert isinstance(first, ToolFailure)
    assert first.outcome_unknown is True
    assert store.record("f1") == StepRecord("f1", "pay", Mark.STARTED)
    assert_resume_does_not_repeat(pay_then_fail, make_store(), "f1", bank)


def test_a_failed_write_that_the_verify_hook_finds_landed_is_finished_not_failed(
    make_store: Any,
) -> None:
    """Found by bench/crash.py: a landed failure recorded as ``failed`` was run again."""
    store, bank = make_store(), Bank()

    def pay_then_fail(ctx: CallContext) -> str:
        bank.pay(ctx, dedup=False)
        raise PermissionError("receipt printer: permission denied")

    first = run_durably(
        pay_then_fail, store=store, key="v1", tool="pay", text=str, effect="write",
        verify=lambda ctx, exc: True,
    )  # fmt: skip
    assert isinstance(first, ToolFailure)
    assert first.stop is Stop.LANDED
    assert store.record("v1") == StepRecord("v1", "pay", Mark.FINISHED, LANDED_TEXT)
    resumed = run_durably(
        pay_then_fail, store=store, key="v1", tool="pay", text=str, effect="write",
        verify=lambda ctx, exc: True,
    )  # fmt: skip
    assert resumed == Recorded(LANDED_TEXT)
    assert bank.effects == ["v1"]


class FailingStore:
    """A store whose statements fail from the ``fail_from``-th on, as a full or locked disk."""

    def __init__(self, inner: SqlStepStore, fail_from: int) -> None:
        self.inner = inner
        self.fail_from = fail_from
        self.statements = 0
        inner_execute = inner.execute

        def execute(sql: str, params: Any = ()) -> tuple[int, list[Any]]:
            self.statements += 1
            if self.statements >= self.fail_from:
                raise sqlite3.OperationalError("disk I/O error")
            return inner_execute(sql, params)

        inner.execute = execute  # type: ignore[method-assign]


def test_counting_the_statements_of_one_call() -> None:
    """The points FailingStore can break: begin, budget row, settle, finish (in this order)."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        store = sqlite_store(Path(folder) / "s.db")
        counted = FailingStore(store, fail_from=10**6)
        run_durably(lambda ctx: "paid", store=store, key="c", tool="pay", text=str, effect="write")
        assert counted.statements == 4


@pytest.mark.parametrize("fail_from", [2, 3, 4])
def test_a_store_error_after_the_effect_keeps_the_record_and_the_resume_does_not_pay_again(
    tmp_path: Path, fail_from: int, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 29.1: the budget row, the budget's settle or the finish fails after the tool ran."""
    bank = Bank()
    store = sqlite_store(tmp_path / "steps.db")
    FailingStore(store, fail_from)
    out = run_durably(
        lambda ctx: bank.pay(ctx, dedup=False), store=store, key="s1", tool="pay", text=str,
        effect="write",
    )  # fmt: skip
    assert out == "paid"
    assert bank.effects == ["s1"]
    healthy = sqlite_store(tmp_path / "steps.db")
    assert healthy.record("s1") == StepRecord("s1", "pay", Mark.STARTED)
    assert_resume_does_not_repeat(lambda ctx: bank.pay(ctx, dedup=False), healthy, "s1", bank)
    assert any("stays 'started'" in r.getMessage() for r in caplog.records)


def test_a_step_whose_start_cannot_be_recorded_is_not_run(tmp_path: Path) -> None:
    """The store fails before the tool: nothing runs, the agent is told, the next run pays once."""
    bank = Bank()
    store = sqlite_store(tmp_path / "steps.db")
    FailingStore(store, 1)
    out = run_durably(
        lambda ctx: bank.pay(ctx, dedup=False), store=store, key="b1", tool="pay", text=str,
        effect="write",
    )  # fmt: skip
    assert isinstance(out, ToolFailure)
    assert (out.kind, out.attempts, out.rule, out.outcome_unknown) == (
        Kind.TRANSIENT, 0, "store-unavailable", False,
    )  # fmt: skip
    assert str(out) == (
        "Tool 'pay' was not run: its step could not be recorded in the durable store "
        "(OperationalError: disk I/O error), and a durable call never runs unrecorded.\n"
        "This is a temporary failure. Retrying the same call is expected to succeed."
    )
    assert bank.effects == []
    healthy = sqlite_store(tmp_path / "steps.db")
    again = run_durably(
        lambda ctx: bank.pay(ctx, dedup=False), store=healthy, key="b1", tool="pay", text=str,
        effect="write",
    )  # fmt: skip
    assert again == "paid"
    assert bank.effects == ["b1"]


def test_a_database_locked_by_another_process_after_the_effect_does_not_duplicate(
    tmp_path: Path,
) -> None:
    """Issue 29.1 with a real lock: another process holds the SQLite file exclusively."""
    path = tmp_path / "steps.db"
    conn = sqlite3.connect(path, check_same_thread=False, timeout=0.2)
    store = SqlStepStore(connection_of(conn, threading.Lock()), "sqlite")
    store.budget("pay")  # the budget row exists, as after any earlier call
    bank = Bank()
    locker = SqliteLocker(path)
    try:

        def pay_then_lose_the_database(ctx: CallContext) -> str:
            bank.pay(ctx, dedup=False)
            locker.lock()
            return "paid"

        out = run_durably(
            pay_then_lose_the_database, store=store, key="l1", tool="pay", text=str,
            effect="write",
        )  # fmt: skip
        assert out == "paid"
    finally:
        locker.release()
    assert store.record("l1") == StepRecord("l1", "pay", Mark.STARTED)
    assert_resume_does_not_repeat(pay_then_lose_the_database, store, "l1", bank)


def test_a_postgres_connection_killed_after_the_effect_does_not_duplicate(
    postgres: Cluster,
) -> None:
    """Issue 29.1 on Postgres: the store's connection is terminated while the tool runs."""
    import psycopg

    dsn = postgres.database("killed")
    conn = psycopg.connect(dsn)
    store = SqlStepStore(connection_of(conn, threading.Lock()), "postgres")
    store.budget("pay")
    pid = conn.info.backend_pid
    bank = Bank()

    def pay_then_lose_the_connection(ctx: CallContext) -> str:
        bank.pay(ctx, dedup=False)
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        return "paid"

    out = run_durably(
        pay_then_lose_the_connection, store=store, key="p1", tool="pay", text=str, effect="write"
    )
    assert out == "paid"
    healthy = postgres_store(dsn)
    assert healthy.record("p1") == StepRecord("p1", "pay", Mark.STARTED)
    assert_resume_does_not_repeat(pay_then_lose_the_connection, healthy, "p1", bank)


def test_an_error_escaping_the_runner_leaves_the_record(make_store: Any) -> None:
    """Only the engine's control flow clears a record; a bug or store error does not."""
    store, bank = make_store(), Bank()

    class Boom(Exception):
        pass

    def pay(ctx: CallContext) -> str:
        bank.pay(ctx, dedup=False)
        return "paid"

    def exploding_text(value: str) -> str:
        raise Boom("cannot render")

    out = run_durably(pay, store=store, key="e1", tool="pay", text=exploding_text, effect="write")
    assert out == "paid"
    assert store.record("e1") == StepRecord("e1", "pay", Mark.STARTED)

    class Interrupt(Exception):
        pass

    def interrupted(ctx: CallContext) -> str:
        raise Interrupt("ask a human")

    with pytest.raises(Interrupt):
        run_durably(
            interrupted, store=store, key="e2", tool="pay", text=str, effect="write",
            passthrough=(Interrupt,),
        )  # fmt: skip
    assert store.record("e2") is None
    assert bank.effects == ["e1"]


def test_unknown_outcome_stays_started_for_the_replay_to_check(make_store: Any) -> None:
    store = make_store()

    def lost(ctx: CallContext) -> str:
        raise TimeoutError("no reply from the bank")

    out = run_durably(lost, store=store, key="k7", tool="pay", text=str, effect="write")
    assert isinstance(out, ToolFailure)
    assert out.outcome_unknown
    assert store.record("k7") == StepRecord("k7", "pay", Mark.STARTED)


def test_two_workers_share_one_budget(make_store: Any) -> None:
    """An outage costs the fleet the budget's tokens, not tokens times workers."""
    workers = [make_store(capacity=3, per_call=0.0) for _ in range(2)]
    attempts: list[int] = []

    def down(ctx: CallContext) -> str:
        attempts.append(ctx.attempt)
        raise ConnectionResetError("upstream down")

    policy = RetryPolicy(attempts=5, base=0.0, deadline=None)
    for i in range(6):
        out = run_durably(
            down, store=workers[i % 2], key=f"o{i}", tool="fetch", text=str,
            effect="read_only", policy=policy,
        )  # fmt: skip
        assert isinstance(out, ToolFailure)
    retries = len(attempts) - 6
    assert retries == 3
    assert workers[0].budget("fetch").available == 0.0
    assert workers[1].budget("fetch").available == 0.0


async def test_the_async_twin_decides_the_same(make_store: Any) -> None:
    from toolmend.durable import arun_durably

    store, bank = make_store(), Bank()

    async def pay(ctx: CallContext) -> str:
        return bank.pay(ctx, dedup=False)

    async def landed(ctx: CallContext, exc: BaseException) -> bool:
        return True

    assert await arun_durably(pay, store=store, key="a1", tool="pay", text=str) == "paid"
    assert await arun_durably(pay, store=store, key="a1", tool="pay", text=str) == Recorded("paid")
    store.begin("a2", "pay")
    out = await arun_durably(
        pay, store=store, key="a2", tool="pay", text=str, effect="write", verify=landed
    )
    assert out == Recorded(LANDED_TEXT, landed=True)
    assert bank.effects == ["a1"]


def test_a_connection_pool_lends_one_connection_per_operation(postgres: Cluster) -> None:
    from psycopg_pool import ConnectionPool

    from toolmend.durable import connection_of

    dsn = postgres.database("pooled")
    with ConnectionPool(dsn, min_size=1, max_size=2, kwargs={"autocommit": True}) as pool:
        store = SqlStepStore(connection_of(pool), "postgres")
        assert store.begin("p1", "pay") is None
        store.finish("p1", "paid")
        assert store.begin("p1", "pay") == StepRecord("p1", "pay", Mark.FINISHED, "paid")
        assert store.budget("pay").acquire() is True
        assert store.budget("pay").available == 9.0
