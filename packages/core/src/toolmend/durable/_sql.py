"""A :class:`~toolmend.durable.StepStore` in SQL: the engine's SQLite or Postgres database.

Two tables next to the engine's own: ``toolmend_steps`` (one row per step key)
and ``toolmend_budgets`` (one token bucket row per tool).  The caller supplies
connections (a DB-API 2 connection from ``sqlite3`` or ``psycopg``); no driver
is imported here.

Consistency model: every operation is one SQL statement committed on its own,
so it is atomic on both databases.  A step's "started" row is an
``INSERT ... ON CONFLICT DO NOTHING``: of two workers, exactly one inserts it.
A retry takes a token with ``UPDATE ... SET tokens = tokens - 1 WHERE tokens >= 1``:
Postgres locks the row and re-checks the condition after a concurrent update
(read committed), SQLite serialises writers, so two workers never spend the same
token and the fleet together retries at most the bucket's tokens during an outage.
Refills and refunds are single ``UPDATE`` statements capped at the capacity.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Literal

from ..run._retry import RetryBudget
from ._steps import Mark, StepRecord

__all__ = [
    "SCHEMA",
    "Connect",
    "Dialect",
    "SharedRetryBudget",
    "SqlStepStore",
    "connection_of",
    "create_tables",
    "run_statement",
]

Dialect = Literal["sqlite", "postgres"]
Connect = Callable[[], AbstractContextManager[Any]]

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS toolmend_steps ("
    " key TEXT PRIMARY KEY, tool TEXT NOT NULL, mark TEXT NOT NULL,"
    " result TEXT, updated DOUBLE PRECISION NOT NULL)",
    "CREATE TABLE IF NOT EXISTS toolmend_budgets ("
    " tool TEXT PRIMARY KEY, tokens DOUBLE PRECISION NOT NULL,"
    " capacity DOUBLE PRECISION NOT NULL)",
)
"""The two tables, valid in SQLite and Postgres."""


def connection_of(conn: Any, lock: AbstractContextManager[Any] | None = None) -> Connect:
    """A ``connect`` for :class:`SqlStepStore` from one shared connection or a pool.

    A pool (an object with ``connection()``, as ``psycopg_pool.ConnectionPool``)
    lends a connection per operation; a single connection is used under
    ``lock`` (the checkpointer's own lock, so the two never interleave).

    Args:
        conn: A DB-API connection, or a pool with a ``connection()`` context manager.
        lock: A lock held while the single connection is in use.
    """
    pooled = getattr(conn, "connection", None)
    if callable(pooled) and not hasattr(conn, "cursor"):
        return lambda: pooled()

    @contextmanager
    def shared() -> Iterator[Any]:
        if lock is None:
            yield conn
            return
        with lock:
            yield conn

    return shared


def _values(row: Any) -> Sequence[Any]:
    return list(row.values()) if isinstance(row, Mapping) else list(row)


def run_statement(
    connect: Connect, dialect: Dialect, sql: str, params: Sequence[Any] = ()
) -> tuple[int, list[Sequence[Any]]]:
    """Run one statement on a connection from ``connect`` and commit it; (rowcount, rows).

    A failed statement is rolled back first, so a shared connection never stays
    in a failed transaction.

    Args:
        connect: Returns a context manager that yields a DB-API connection.
        dialect: ``"sqlite"`` or ``"postgres"`` (whose ``?`` placeholders become ``%s``).
        sql: The statement, with ``?`` placeholders.
        params: Its parameters.
    """
    if dialect == "postgres":
        sql = sql.replace("?", "%s")
    with connect() as conn:
        cursor = conn.cursor()
        try:
            cursor.execute(sql, tuple(params))
            rows = [_values(r) for r in cursor.fetchall()] if cursor.description else []
            count = int(cursor.rowcount)
        except Exception:
            conn.rollback()
            raise
        finally:
            cursor.close()
        conn.commit()
    return count, rows


def create_tables(connect: Connect, dialect: Dialect, statements: Sequence[str]) -> None:
    """Run idempotent ``CREATE ... IF NOT EXISTS`` statements, retried a few times.

    Postgres can fail two concurrent ``CREATE TABLE IF NOT EXISTS`` of one table
    (a unique violation in its catalog), so workers starting together retry.

    Args:
        connect: Returns a context manager that yields a DB-API connection.
        dialect: ``"sqlite"`` or ``"postgres"``.
        statements: The statements, in order.
    """
    for statement in statements:
        for attempt in range(5):
            try:
                run_statement(connect, dialect, statement)
                break
            except Exception:
                if attempt == 4:
                    raise
                time.sleep(0.05 * (attempt + 1))


class SqlStepStore:
    """Step records and shared per-tool budgets in the engine's SQL database.

    Args:
        connect: Returns a context manager that yields a DB-API connection.
        dialect: ``"sqlite"`` (``?`` parameters) or ``"postgres"`` (``%s``).
        capacity: Tokens of each tool's shared retry budget (see ``RetryBudget``).
        per_call: Tokens each finished call adds back to its tool's budget.
        setup: Create the tables now (idempotent).
    """

    def __init__(
        self,
        connect: Connect,
        dialect: Dialect,
        *,
        capacity: float = 10.0,
        per_call: float = 0.1,
        setup: bool = True,
    ) -> None:
        if dialect not in ("sqlite", "postgres"):
            raise ValueError(f"dialect must be 'sqlite' or 'postgres', not {dialect!r}")
        self.connect = connect
        self.dialect = dialect
        self.capacity = float(capacity)
        self.per_call = float(per_call)
        self._budgets: dict[str, SharedRetryBudget] = {}
        if setup:
            self.setup()

    def setup(self) -> None:
        """Create the tables if they are missing (see :func:`create_tables`)."""
        create_tables(self.connect, self.dialect, SCHEMA)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> tuple[int, list[Sequence[Any]]]:
        """Run one statement and commit it; returns (rowcount, rows).

        Args:
            sql: The statement, with ``?`` placeholders (translated for Postgres).
            params: Its parameters.
        """
        return run_statement(self.connect, self.dialect, sql, params)

    # -- steps -------------------------------------------------------------------------

    def begin(self, key: str, tool: str) -> StepRecord | None:
        """Record ``key`` as started unless it has a record; return that earlier record.

        Args:
            key: The step's key.
            tool: The tool's name.
        """
        inserted, _ = self.execute(
            "INSERT INTO toolmend_steps (key, tool, mark, result, updated)"
            " VALUES (?, ?, ?, NULL, ?) ON CONFLICT (key) DO NOTHING",
            (key, tool, Mark.STARTED.value, time.time()),
        )
        if inserted == 1:
            return None
        _, rows = self.execute(
            "SELECT tool, mark, result FROM toolmend_steps WHERE key = ?", (key,)
        )
        if not rows:  # cleared in between: this run is the first again
            return self.begin(key, tool)
        found_tool, mark, result = rows[0]
        return StepRecord(key=key, tool=str(found_tool), mark=Mark(mark), result=result)

    def finish(self, key: str, result: str) -> None:
        """Record the step's result.

        Args:
            key: The step's key.
            result: The text the agent reads.
        """
        self._mark(key, Mark.FINISHED, result)

    def fail(self, key: str) -> None:
        """Record a failure known not to have taken effect.

        Args:
            key: The step's key.
        """
        self._mark(key, Mark.FAILED, None)

    def clear(self, key: str) -> None:
        """Forget the step.

        Args:
            key: The step's key.
        """
        self.execute("DELETE FROM toolmend_steps WHERE key = ?", (key,))

    def record(self, key: str) -> StepRecord | None:
        """The step's record, if any (for reports and tests).

        Args:
            key: The step's key.
        """
        _, rows = self.execute(
            "SELECT tool, mark, result FROM toolmend_steps WHERE key = ?", (key,)
        )
        if not rows:
            return None
        tool, mark, result = rows[0]
        return StepRecord(key=key, tool=str(tool), mark=Mark(mark), result=result)

    def _mark(self, key: str, mark: Mark, result: str | None) -> None:
        self.execute(
            "UPDATE toolmend_steps SET mark = ?, result = ?, updated = ? WHERE key = ?",
            (mark.value, result, time.time(), key),
        )

    # -- budgets -----------------------------------------------------------------------

    def budget(self, tool: str) -> RetryBudget:
        """The retry budget of ``tool``, one row shared by every worker on this database.

        Args:
            tool: The tool's name.
        """
        budget = self._budgets.get(tool)
        if budget is None:
            budget = self._budgets[tool] = SharedRetryBudget(self, tool)
        return budget


class SharedRetryBudget(RetryBudget):
    """A :class:`RetryBudget` whose tokens are one row of ``toolmend_budgets``.

    Args:
        store: The store whose database holds the row.
        tool: The tool the budget belongs to.
    """

    def __init__(self, store: SqlStepStore, tool: str) -> None:
        super().__init__(store.capacity, store.per_call)
        self.store = store
        self.tool = tool
        store.execute(
            "INSERT INTO toolmend_budgets (tool, tokens, capacity) VALUES (?, ?, ?)"
            " ON CONFLICT (tool) DO NOTHING",
            (tool, self.capacity, self.capacity),
        )

    @property
    def available(self) -> float:
        """The tokens left, as the database has them now."""
        _, rows = self.store.execute(
            "SELECT tokens FROM toolmend_budgets WHERE tool = ?", (self.tool,)
        )
        return float(rows[0][0]) if rows else self.capacity

    def acquire(self) -> bool:
        """Take one token for a retry in one atomic statement; ``False`` when spent."""
        taken, _ = self.store.execute(
            "UPDATE toolmend_budgets SET tokens = tokens - 1 WHERE tool = ? AND tokens >= 1",
            (self.tool,),
        )
        return taken == 1

    def _add(self, tokens: float) -> None:
        smaller = "MIN" if self.store.dialect == "sqlite" else "LEAST"
        self.store.execute(
            f"UPDATE toolmend_budgets SET tokens = {smaller}(capacity, tokens + ?) WHERE tool = ?",
            (tokens, self.tool),
        )

    def refund(self, tokens: int) -> None:
        """Give back tokens taken for retries that never ran.

        Args:
            tokens: How many.
        """
        self._add(float(tokens))

    def settle(self, *, succeeded: bool, retries: int) -> None:
        """Account for one finished logical call.

        Args:
            succeeded: Whether it succeeded (its retries paid off and are refunded).
            retries: How many retries it used.
        """
        self._add(self.per_call + (float(retries) if succeeded else 0.0))
