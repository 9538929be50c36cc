"""Crash harness: worker processes SIGKILLed inside a write tool, restarted from the checkpointer.

Each logical call is one LangGraph thread: a ``create_agent`` with a scripted
model that calls ``pay(invoice)`` once and then answers.  The tool writes one
row to a ledger table in the same database as the checkpoints.  For a chosen
share of calls the worker kills itself with SIGKILL, once, at a point drawn at
random: before the effect, during it (the row inserted, not committed), after it
(committed, the tool not returned), or after the tool returned (before the
checkpoint).  Three more points break toolmend's step store or the tool instead:
``begin`` (the store fails before the tool runs: the "started" record cannot be
written, so nothing runs and the model is told to call again), and two that break
something after the effect, then kill the worker once the tool step returned:
``store`` (the first statement of toolmend's step store after the effect fails, as
on a full disk or a database locked by another process) and
``raise`` (the tool raises ``PermissionError`` after its effect).  A worker whose
run raises resumes it from the checkpoint, as a job runner would.  The driver
restarts dead workers (forked from a parent that has imported everything, so a
restart costs milliseconds) and they resume every unfinished thread from the
checkpointer.  At the end the ledger is counted per
call.  Run::

    python bench/crash.py [--calls 500] [--crash-rate 0.3] [--workers 2]
                          [--backends sqlite,postgres,dbos] [--outage-calls 60]

Setups: ``stock`` (no toolmend; the tool makes its own key per run, as code
without a stable key does), ``key`` (toolmend ``durable=`` and a tool that
forwards the key to a ledger that deduplicates on it), ``verify`` (toolmend
``durable=`` and a verify hook that looks the invoice up), and ``outage``:
two workers whose read tool always fails with a transient error, toolmend with
per-process budgets against one budget shared in the database.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sqlite3
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from toolmend import RetryPolicy
from toolmend.integrations import CallContext, reset_budgets
from toolmend_langchain import ToolMendMiddleware
from toolmend_langchain.testing import ScriptedChatModel

POINTS = ("before", "during", "after", "returned", "begin", "store", "raise")
AFTER_THE_EFFECT = ("store", "raise")
"""Points that break something after the effect, then kill once the tool step returned."""
SETUPS = ("stock", "key", "verify")


# -- the database: one per scenario, SQLite file or Postgres database ---------------------


@dataclass(frozen=True)
class Database:
    """Where a scenario keeps checkpoints, toolmend's records and the ledger."""

    kind: str  # "sqlite" | "postgres"
    target: str  # a file path or a DSN

    def connect(self) -> Any:
        if self.kind == "sqlite":
            return sqlite3.connect(self.target, check_same_thread=False, timeout=60)
        import psycopg

        return psycopg.connect(self.target)

    def saver(self) -> Any:
        if self.kind == "sqlite":
            from langgraph.checkpoint.sqlite import SqliteSaver

            conn = sqlite3.connect(self.target, check_same_thread=False, timeout=60)
            saver = SqliteSaver(conn)
        else:
            import psycopg
            from langgraph.checkpoint.postgres import PostgresSaver
            from psycopg.rows import dict_row

            pg = psycopg.connect(
                self.target, autocommit=True, prepare_threshold=0, row_factory=dict_row
            )
            saver = PostgresSaver(pg)
        saver.setup()
        return saver

    @property
    def mark(self) -> str:
        return "?" if self.kind == "sqlite" else "%s"

    def run(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        conn = self.connect()
        try:
            cur = conn.cursor()
            cur.execute(sql.replace("?", self.mark), params)
            rows = list(cur.fetchall()) if cur.description else []
            conn.commit()
            return [tuple(r) for r in rows]
        finally:
            conn.close()

    def create(self, checkpoints: bool = True) -> None:
        serial = "INTEGER PRIMARY KEY" if self.kind == "sqlite" else "SERIAL PRIMARY KEY"
        self.run(f"CREATE TABLE ledger (id {serial}, call TEXT NOT NULL, key TEXT UNIQUE)")
        self.run("CREATE TABLE crashes (call TEXT PRIMARY KEY, point TEXT NOT NULL)")
        self.run("CREATE TABLE attempts (id TEXT PRIMARY KEY, worker INTEGER NOT NULL)")
        # the checkpoint tables, once, before the workers race to make them; the parent
        # keeps no connection open across fork
        if checkpoints:
            self.saver().conn.close()
        if self.kind == "sqlite":
            self.run("PRAGMA journal_mode=WAL")


@contextmanager
def databases(kind: str, names: list[str]) -> Iterator[dict[str, Database]]:
    """A fresh database per scenario name, on a temporary SQLite folder or Postgres cluster."""
    if kind == "sqlite":
        with tempfile.TemporaryDirectory(prefix="toolmend-crash-") as folder:
            yield {n: Database("sqlite", str(Path(folder) / f"{n}.db")) for n in names}
        return
    from tools import pg_cluster

    reason = pg_cluster.missing_reason()
    if reason is not None:
        raise SystemExit(f"postgres: {reason}")
    with pg_cluster.running() as cluster:
        yield {n: Database("postgres", cluster.database(n)) for n in names}


# -- one worker -----------------------------------------------------------------------------


@dataclass
class Plan:
    """Which calls crash, and where (at most once each)."""

    points: dict[str, str] = field(default_factory=dict)


def arm(db: Database, plan: Plan, call: str, here: str) -> bool:
    """Whether to die at ``here`` now: planned, and not died for this call yet (recorded first)."""
    if plan.points.get(call) != here:
        return False
    if db.run("SELECT point FROM crashes WHERE call = ?", (call,)):
        return False
    db.run("INSERT INTO crashes (call, point) VALUES (?, ?)", (call, here))
    return True


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


class StoreOutage:
    """Makes the next statement of toolmend's step store fail in this worker.

    Installed once per worker process: while ``down`` is set, the next
    ``SqlStepStore.execute`` raises as SQLite does on a full disk or a locked file, and
    the store is back for the statements after it (the error that erased the record
    before issue 29 was fixed was one failed statement, then a successful delete).
    ``broken`` names the call whose tool step broke something after its effect; the
    step's end kills the worker for it.
    """

    down = False
    broken: str | None = None

    @classmethod
    def install(cls) -> None:
        from toolmend.durable import SqlStepStore

        original = SqlStepStore.execute

        def execute(self: Any, sql: str, params: Any = ()) -> Any:
            if cls.down:
                cls.down = False
                raise sqlite3.OperationalError("disk I/O error")
            return original(self, sql, params)

        SqlStepStore.execute = execute  # type: ignore[method-assign]

    @classmethod
    def step_returned(cls, call: str) -> None:
        """The tool step of ``call`` returned: the store is back, and a broken call dies."""
        cls.down = False
        if cls.broken == call:
            die()


def break_after_effect(db: Database, plan: Plan, invoice: str) -> None:
    """The planned ``store`` or ``raise`` point of ``invoice``, once."""
    if arm(db, plan, invoice, "store"):
        StoreOutage.down = True
        StoreOutage.broken = invoice
    elif arm(db, plan, invoice, "raise"):
        StoreOutage.broken = invoice
        raise PermissionError(13, "Permission denied", "/var/spool/receipts")


def crash_if_planned(db: Database, plan: Plan, call: str, here: str) -> None:
    """SIGKILL this process if ``call`` is planned to crash ``here`` and has not yet."""
    if arm(db, plan, call, here):
        die()


def pay_tool(db: Database, plan: Plan, setup: str) -> Any:
    """The write tool: one ledger row per run; ``key`` setups send the key to a deduplicating
    ledger (``ON CONFLICT (key) DO NOTHING``)."""

    def effect(invoice: str, key: str) -> None:
        crash_if_planned(db, plan, invoice, "before")
        during = arm(db, plan, invoice, "during")  # armed before the transaction holds a lock
        conn = db.connect()
        try:
            cur = conn.cursor()
            cur.execute(
                "INSERT INTO ledger (call, key) VALUES (?, ?) ON CONFLICT (key) DO NOTHING".replace(
                    "?", db.mark
                ),
                (invoice, key),
            )
            if during:  # inserted, not committed
                die()
            conn.commit()
        finally:
            conn.close()
        crash_if_planned(db, plan, invoice, "after")
        break_after_effect(db, plan, invoice)

    if setup == "key":

        @tool
        def pay(invoice: str, key: str) -> str:
            """Pay an invoice."""
            effect(invoice, key)
            return f"paid {invoice}"

    else:

        @tool
        def pay(invoice: str) -> str:
            """Pay an invoice."""
            effect(invoice, uuid.uuid4().hex)  # a fresh key every run: no deduplication
            return f"paid {invoice}"

    return pay


class CrashAfterReturn(AgentMiddleware[Any, Any, Any]):
    """Outermost: kills the worker after the tool step returned, before its checkpoint."""

    def __init__(self, db: Database, plan: Plan) -> None:
        super().__init__()
        self.db = db
        self.plan = plan

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        invoice = request.tool_call["args"]["invoice"]
        if arm(self.db, self.plan, invoice, "begin"):
            StoreOutage.down = True
        try:
            result = handler(request)
        finally:
            StoreOutage.down = False
        StoreOutage.step_returned(invoice)
        crash_if_planned(self.db, self.plan, invoice, "returned")
        return result


RETRY = "Retrying the same call is expected to succeed."


def script(messages: list[Any]) -> AIMessage | str:
    """Pay the thread's invoice, then answer with the tool's result.

    The model follows guidance: told that the call did not run and that retrying is
    expected to succeed, it calls again (a new call, so a new id), up to 3 times.
    """
    results = [m for m in messages if isinstance(m, ToolMessage)]
    if results and not (RETRY in str(results[-1].content) or _told_after(messages, results[-1])):
        return f"done: {results[-1].content}"
    if len(results) >= 3:
        return f"gave up: {results[-1].content}"
    invoice = next(m.content for m in messages if isinstance(m, HumanMessage))
    call_id = f"c-{invoice}" if not results else f"c-{invoice}-{len(results)}"
    call = {"name": "pay", "args": {"invoice": invoice}, "id": call_id, "type": "tool_call"}
    return AIMessage(content="", tool_calls=[call])


def _told_after(messages: list[Any], result: ToolMessage) -> bool:
    """Whether a runtime note after ``result`` says that retrying is expected to succeed."""
    after = messages[messages.index(result) + 1 :]
    return any(isinstance(m, HumanMessage) and RETRY in str(m.content) for m in after)


def build_agent(db: Database, plan: Plan, setup: str) -> Any:
    saver = db.saver()
    middleware: list[Any] = [CrashAfterReturn(db, plan)]
    if setup == "key":
        middleware.append(
            ToolMendMiddleware(
                durable=saver, effects={"pay": "write"}, idempotency_keys={"pay": "key"}
            )
        )
    elif setup == "verify":

        def landed(ctx: CallContext, exc: BaseException) -> bool:
            rows = db.run("SELECT COUNT(*) FROM ledger WHERE call = ?", (ctx.arguments["invoice"],))
            return bool(rows[0][0])

        middleware.append(
            ToolMendMiddleware(durable=saver, effects={"pay": "write"}, verify={"pay": landed})
        )
    model = ScriptedChatModel(script=script)
    return create_agent(
        model, [pay_tool(db, plan, setup)], middleware=middleware, checkpointer=saver
    )


def finished(agent: Any, config: Any) -> bool | None:
    """``True`` done, ``False`` to resume, ``None`` never started."""
    state = agent.get_state(config)
    if not state.values:
        return None
    if state.next:
        return False
    messages = state.values.get("messages", [])
    return bool(messages) and isinstance(messages[-1], AIMessage) and not messages[-1].tool_calls


def worker(db: Database, plan: Plan, setup: str, calls: list[str]) -> None:
    """Run (or resume) every thread of ``calls`` to its end; a run that raises is resumed."""
    StoreOutage.install()
    agent = build_agent(db, plan, setup)
    for call in calls:
        config = {"configurable": {"thread_id": call}}
        for _ in range(5):
            state = finished(agent, config)
            if state is True:
                break
            try:
                if state is None:
                    agent.invoke({"messages": [HumanMessage(call)]}, config, durability="sync")
                else:
                    agent.invoke(None, config, durability="sync")
            except Exception as exc:  # a job runner resumes a failed run from its checkpoint
                print(f"resuming {call} after {type(exc).__name__}: {exc}", file=sys.stderr)


# -- the driver -------------------------------------------------------------------------------


def supervise(target: Callable[[int], None], workers: int) -> int:
    """Run ``workers`` forked processes; restart each one SIGKILL ends.  Returns restarts."""
    restarts = 0
    running: dict[int, int] = {}
    for w in range(workers):
        running[_fork(target, w)] = w
    while running:
        pid, status = os.wait()
        w = running.pop(pid)
        if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL:
            restarts += 1
            running[_fork(target, w)] = w
        elif os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"worker {w} failed with status {status}")
    return restarts


def _fork(target: Callable[[int], None], w: int) -> int:
    pid = os.fork()
    if pid == 0:  # the child: run, then leave without the parent's cleanup
        code = 0
        try:
            target(w)
        except BaseException:
            import traceback

            traceback.print_exc()
            code = 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    return pid


@dataclass(frozen=True)
class Row:
    backend: str
    setup: str
    calls: int
    crashed: int
    restarts: int
    exactly_once: int
    duplicated: int
    lost: int
    points: dict[str, int]
    seconds: float


def draw(calls: list[str], rate: float, seed: int, points: tuple[str, ...] = POINTS) -> Plan:
    rng = random.Random(seed)
    return Plan({c: rng.choice(points) for c in calls if rng.random() < rate})


def scenario(db: Database, setup: str, calls: list[str], plan: Plan, workers: int) -> Row:
    """Run every call to its end under crashes and restarts, then count the ledger."""
    n = len(calls)
    db.create()
    started = time.monotonic()
    restarts = supervise(lambda w: worker(db, plan, setup, calls[w::workers]), workers)
    seconds = time.monotonic() - started
    effects = dict.fromkeys(calls, 0)
    for call, count in db.run("SELECT call, COUNT(*) FROM ledger GROUP BY call"):
        effects[call] = int(count)
    agent = build_agent(db, Plan(), setup)
    done = {c for c in calls if finished(agent, {"configurable": {"thread_id": c}}) is True}
    agent.checkpointer.conn.close()
    crashed = db.run("SELECT point, COUNT(*) FROM crashes GROUP BY point")
    return Row(
        backend=db.kind,
        setup=setup,
        calls=n,
        crashed=sum(int(k) for _, k in crashed),
        restarts=restarts,
        exactly_once=sum(1 for c in calls if effects[c] == 1 and c in done),
        duplicated=sum(1 for c in calls if effects[c] > 1),
        lost=sum(1 for c in calls if effects[c] == 0 or c not in done),
        points={str(p): int(k) for p, k in crashed},
        seconds=seconds,
    )


# -- DBOS: the same calls as workflows, a tool call as a step -----------------------------


def dbos_worker(db: Database, plan: Plan, setup: str, calls: list[str], w: int) -> None:
    """One DBOS worker (executor ``w<w>``): runs or recovers the workflow of each call."""
    from dbos import DBOS, SetWorkflowID

    from toolmend_dbos import DurableTools

    DBOS(
        config={
            "name": "toolmend-crash",
            "system_database_url": db.target,
            "executor_id": f"w{w}",
            "log_level": "WARNING",
        }
    )
    tools = DurableTools(db.target)

    def effect(invoice: str, key: str | None) -> str:
        crash_if_planned(db, plan, invoice, "before")
        during = arm(db, plan, invoice, "during")
        conn = db.connect()
        try:
            cur = conn.cursor()
            cur.execute(
                "INSERT INTO ledger (call, key) VALUES (%s, %s) ON CONFLICT (key) DO NOTHING",
                (invoice, key or uuid.uuid4().hex),
            )
            if during:
                die()
            conn.commit()
        finally:
            conn.close()
        crash_if_planned(db, plan, invoice, "after")
        break_after_effect(db, plan, invoice)
        return f"paid {invoice}"

    def landed(ctx: CallContext, exc: BaseException) -> bool:
        rows = db.run("SELECT COUNT(*) FROM ledger WHERE call = ?", (ctx.arguments["invoice"],))
        return bool(rows[0][0])

    def pay(invoice: str, key: str | None = None) -> str:
        return effect(invoice, key)

    if setup == "key":
        tool = tools.tool(pay, effect="write", idempotency_key="key")
    elif setup == "verify":
        tool = tools.tool(pay, effect="write", verify=landed)
    else:
        tool = DBOS.step(name="pay")(pay)

    @DBOS.workflow(name="turn")
    def turn(invoice: str) -> Any:
        if arm(db, plan, invoice, "begin"):
            StoreOutage.down = True
        for _ in range(3):  # as the model: told that retrying will succeed, it calls again
            try:
                result = tool(invoice)
            finally:
                StoreOutage.down = False
            StoreOutage.step_returned(invoice)
            crash_if_planned(db, plan, invoice, "returned")
            if RETRY not in str(result):
                break
        return repr(result)

    StoreOutage.install()
    DBOS.launch()
    try:
        for call in calls:
            status = DBOS.get_workflow_status(f"wf-{call}")
            if status is not None:
                handle = DBOS.retrieve_workflow(f"wf-{call}")
            else:
                with SetWorkflowID(f"wf-{call}"):
                    handle = DBOS.start_workflow(turn, call)
            try:
                handle.get_result()
            except Exception as exc:  # the workflow ended in an error: counted as lost
                print(f"workflow of {call} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
    finally:
        DBOS.destroy()


def dbos_scenario(db: Database, setup: str, calls: list[str], plan: Plan, workers: int) -> Row:
    """The LangGraph scenario's twin under DBOS: one workflow per call."""
    db.create(checkpoints=False)
    started = time.monotonic()
    restarts = supervise(lambda w: dbos_worker(db, plan, setup, calls[w::workers], w), workers)
    seconds = time.monotonic() - started
    effects = dict.fromkeys(calls, 0)
    for call, count in db.run("SELECT call, COUNT(*) FROM ledger GROUP BY call"):
        effects[call] = int(count)
    done = {
        str(c)[3:]
        for (c,) in db.run(
            "SELECT workflow_uuid FROM dbos.workflow_status WHERE status = 'SUCCESS'"
        )
    }
    crashed = db.run("SELECT point, COUNT(*) FROM crashes GROUP BY point")
    return Row(
        backend="dbos+pg",
        setup=setup,
        calls=len(calls),
        crashed=sum(int(k) for _, k in crashed),
        restarts=restarts,
        exactly_once=sum(1 for c in calls if effects[c] == 1 and c in done),
        duplicated=sum(1 for c in calls if effects[c] > 1),
        lost=sum(1 for c in calls if effects[c] == 0 or c not in done),
        points={str(p): int(k) for p, k in crashed},
        seconds=seconds,
    )


# -- the outage: retries two workers spend, budgets per process against one shared ----------


def outage_worker(db: Database, shared: bool, calls: list[str]) -> None:
    reset_budgets()
    saver = db.saver()

    @tool
    def quote(invoice: str) -> str:
        """Read a quote."""
        db.run("INSERT INTO attempts (id, worker) VALUES (?, ?)", (uuid.uuid4().hex, os.getpid()))
        raise ConnectionResetError("upstream down")

    policy = RetryPolicy(attempts=4, base=0.0, deadline=None)
    middleware = ToolMendMiddleware(
        effects={"quote": "read_only"}, retry=policy, durable=saver if shared else None
    )

    def ask(messages: list[Any]) -> AIMessage | str:
        if any(isinstance(m, ToolMessage) for m in messages):
            return "gave up"
        invoice = next(m.content for m in messages if isinstance(m, HumanMessage))
        call = {"name": "quote", "args": {"invoice": invoice}, "id": f"q-{invoice}"}
        return AIMessage(content="", tool_calls=[{**call, "type": "tool_call"}])

    agent = create_agent(
        ScriptedChatModel(script=ask), [quote], middleware=[middleware], checkpointer=saver
    )
    for call in calls:
        config = {"configurable": {"thread_id": call}}
        agent.invoke({"messages": [HumanMessage(call)]}, config, durability="sync")


def outage(db: Database, shared: bool, n: int, workers: int) -> tuple[int, int]:
    """Calls and retries (attempts beyond the first) of ``n`` calls during an outage."""
    db.create()
    calls = [f"q-{i:04d}" for i in range(n)]
    supervise(lambda w: outage_worker(db, shared, calls[w::workers]), workers)
    attempts = int(db.run("SELECT COUNT(*) FROM attempts")[0][0])
    return n, attempts - n


# -- the table ---------------------------------------------------------------------------------


def table(rows: list[Row]) -> str:
    head = (
        f"{'backend':<9} {'setup':<30} {'calls':>5} {'crashed':>7} {'restarts':>8} "
        f"{'exactly once':>12} {'duplicated':>10} {'lost':>4}  crash points"
    )
    lines = [head, "-" * len(head)]
    names = {
        "stock": "stock (no toolmend)",
        "key": "toolmend, key-honouring tool",
        "verify": "toolmend, verify-hook tool",
    }
    for r in rows:
        points = " ".join(f"{p}={r.points.get(p, 0)}" for p in POINTS)
        lines.append(
            f"{r.backend:<9} {names[r.setup]:<30} {r.calls:>5} {r.crashed:>7} {r.restarts:>8} "
            f"{r.exactly_once:>12} {r.duplicated:>10} {r.lost:>4}  {points}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--crash-rate", type=float, default=0.3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--backends", default="sqlite,postgres,dbos")
    parser.add_argument("--outage-calls", type=int, default=60)
    args = parser.parse_args(argv)
    rows: list[Row] = []
    outages: list[tuple[str, str, int, int]] = []
    for backend in args.backends.split(","):
        if backend == "dbos":
            with databases("postgres", list(SETUPS)) as dbs:
                for setup in SETUPS:
                    calls = [f"inv-{i:04d}" for i in range(args.calls)]
                    plan = draw(calls, args.crash_rate, args.seed)
                    rows.append(dbos_scenario(dbs[setup], setup, calls, plan, args.workers))
                    print(table(rows[-1:]).splitlines()[-1], f"({rows[-1].seconds:.0f} s)")
            continue
        names = [*SETUPS, "outage_local", "outage_shared"]
        with databases(backend, names) as dbs:
            for setup in SETUPS:
                calls = [f"inv-{i:04d}" for i in range(args.calls)]
                plan = draw(calls, args.crash_rate, args.seed)
                rows.append(scenario(dbs[setup], setup, calls, plan, args.workers))
                print(table(rows[-1:]).splitlines()[-1], f"({rows[-1].seconds:.0f} s)", flush=True)
            for shared in (False, True):
                name = "outage_shared" if shared else "outage_local"
                calls, retries = outage(dbs[name], shared, args.outage_calls, args.workers)
                outages.append((backend, "shared in the database" if shared else "per process",
                                calls, retries))  # fmt: skip
    print()
    print(
        f"Crash harness: {args.workers} workers, SIGKILL once at a random point on "
        f"~{args.crash_rate:.0%} of calls (seed {args.seed})"
    )
    print(table(rows))
    print()
    print(
        f"Outage: {args.workers} workers, a read tool that always fails (transient), "
        "4 attempts per call, budget capacity 10 tokens, +0.1 per call"
    )
    print(f"{'backend':<9} {'budget':<24} {'calls':>5} {'retries':>7}")
    for backend, budget, calls, retries in outages:
        print(f"{backend:<9} {budget:<24} {calls:>5} {retries:>7}")


if __name__ == "__main__":
    main()
