"""Tool calls as DBOS steps, with worker processes that really die (SIGKILL) mid-step.

Each run forks a worker that launches DBOS on the test's system database and
starts workflow ``wf-1``; the tool kills the worker once, after (or before) its
effect.  A second worker launches DBOS on the same database, which recovers the
pending workflow and re-runs the step, as a restarted worker would.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from dbos import DBOS, SetWorkflowID

from sql_databases import database_url
from toolmend import RetryPolicy, ToolFailure
from toolmend.durable import LANDED_TEXT, Recorded, dbos_key
from toolmend.integrations import CallContext
from toolmend_dbos import DurableTools, step_options


class Ledger:
    """The payment server: a SQLite file both workers write to; deduplicates sent keys."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS ledger (invoice TEXT, key TEXT UNIQUE)")
            conn.execute("CREATE TABLE IF NOT EXISTS died (point TEXT)")

    def pay(self, invoice: str, key: str | None) -> None:
        with sqlite3.connect(self.path) as conn:
            conn.execute(
                "INSERT INTO ledger VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
                (invoice, key or uuid.uuid4().hex),
            )

    def rows(self) -> list[tuple[str, str]]:
        with sqlite3.connect(self.path) as conn:
            return list(conn.execute("SELECT invoice, key FROM ledger"))

    def die_once(self, point: str) -> None:
        with sqlite3.connect(self.path) as conn:
            if list(conn.execute("SELECT point FROM died")):
                return
            conn.execute("INSERT INTO died VALUES (?)", (point,))
        os.kill(os.getpid(), signal.SIGKILL)


def in_child(work: Callable[[], None]) -> int:
    """Run ``work`` in a forked process; its exit code, or minus the signal that ended it."""
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            work()
        except BaseException:
            import traceback

            traceback.print_exc()
            code = 1
        finally:
            sys.stderr.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.waitstatus_to_exitcode(status)


def worker(url: str, ledger: Ledger, setup: str, die: str | None, out: Path) -> Callable[[], None]:
    """A worker process: DBOS on ``url``, workflow ``wf-1`` paying invoice 7 through a tool."""

    def work() -> None:
        DBOS(config={"name": "toolmend-test", "system_database_url": url})
        tools = DurableTools(url, retry=RetryPolicy(base=0.0))

        def landed(ctx: CallContext, exc: BaseException) -> bool:
            return any(i == ctx.arguments["invoice"] for i, _ in ledger.rows())

        def pay(invoice: str, key: str | None = None) -> str:
            if die == "before":
                ledger.die_once("before")
            ledger.pay(invoice, key)
            if die == "after":
                ledger.die_once("after")
            return f"paid {invoice}"

        if setup == "key":
            tool = tools.tool(pay, effect="write", idempotency_key="key")
        elif setup == "verify":
            tool = tools.tool(pay, effect="write", verify=landed)
        elif setup == "write":
            tool = tools.tool(pay, effect="write")
        else:  # stock DBOS: the same function as a plain DBOS step
            tool = DBOS.step(name="pay")(pay)

        @DBOS.workflow(name="turn")
        def turn(invoice: str) -> Any:
            return tool(invoice)

        DBOS.launch()
        try:
            handle = DBOS.retrieve_workflow("wf-1") if out.exists() else None
            if handle is None:
                out.write_text("started")
                with SetWorkflowID("wf-1"):
                    handle = DBOS.start_workflow(turn, "7")
            result = handle.get_result()
            out.write_text(repr(result))
        finally:
            DBOS.destroy()

    return work


@pytest.fixture(params=["sqlite", "postgres"])
def system_db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return database_url(request, tmp_path, "dbos.sqlite")


def crash_and_recover(system_db: str, tmp_path: Path, setup: str, die: str) -> tuple[int, str]:
    ledger, out = Ledger(tmp_path / "ledger.db"), tmp_path / "result.txt"
    first = in_child(worker(system_db, ledger, setup, die, out))
    second = in_child(worker(system_db, ledger, setup, die, out))
    assert (first, second) == (-signal.SIGKILL, 0)
    return len(ledger.rows()), out.read_text()


@pytest.mark.parametrize(
    ("setup", "die", "effects", "result"),
    [
        ("stock", "after", 2, "'paid 7'"),
        ("key", "after", 1, "'paid 7'"),
        ("verify", "after", 1, repr(Recorded(LANDED_TEXT, landed=True))),
        ("verify", "before", 1, "'paid 7'"),
    ],
)
def test_recovered_step(
    system_db: str, tmp_path: Path, setup: str, die: str, effects: int, result: str
) -> None:
    assert crash_and_recover(system_db, tmp_path, setup, die) == (effects, result)


def test_plain_write_is_reported_not_repeated(system_db: str, tmp_path: Path) -> None:
    effects, result = crash_and_recover(system_db, tmp_path, "write", "after")
    assert effects == 1
    assert result.startswith(
        "ToolFailure(tool='pay', arguments={'invoice': '7'}, kind=<Kind.AMBIGUOUS"
    )
    assert "outcome_unknown=True" in result


def test_key_is_the_workflow_and_step(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.db")
    url = f"sqlite:///{tmp_path / 'dbos.sqlite'}"
    assert in_child(worker(url, ledger, "key", None, tmp_path / "r.txt")) == 0
    assert ledger.rows() == [("7", dbos_key("wf-1", "1"))]


def test_step_settings_leave_retries_to_toolmend() -> None:
    assert step_options("pay") == {"name": "pay", "retries_allowed": False}


def test_outside_a_workflow_the_tool_is_fail_soft(tmp_path: Path) -> None:
    tools = DurableTools(f"sqlite:///{tmp_path / 'unused.sqlite'}", retry=RetryPolicy(base=0.0))
    calls: list[int] = []

    @tools.tool(effect="read_only")
    def quote(invoice: str) -> int:
        calls.append(1)
        if len(calls) == 1:
            raise ConnectionResetError("reset")
        return 3

    assert quote("7") == 3
    assert len(calls) == 2

    @tools.tool(effect="write")
    def pay(invoice: str) -> int:
        raise PermissionError("declined")

    failure = pay("7")
    assert isinstance(failure, ToolFailure)
    assert failure.cause.startswith(
        "Tool 'pay' failed after 1 attempt with PermissionError: declined"
    )
