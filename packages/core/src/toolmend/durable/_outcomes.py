"""Outcomes in SQL: what followed each failure, shared by every worker, read by ``toolmend learn``.

The run-time recorder resolves what followed a failure (the retry succeeded, a
changed call succeeded, later calls failed the same way, or nothing followed) and
hands it to a sink with one method, ``add(row)``.  :class:`SqlOutcomeStore` is
that sink on SQLite or Postgres: one row per resolved failure in
``toolmend_outcomes``, next to the step store's tables when it is the engine's
database.  ``lines()`` gives the rows back as the JSON lines ``toolmend learn``
reads (``toolmend learn --store URL``); ``observed()`` counts them in SQL, which
is what :func:`~toolmend.integrations.learned_rules` reads while agents run.

Recording never fails a call: a row that cannot be written (a closed connection,
a database locked by another process past the timeout, a full disk) is logged at
WARNING on the ``toolmend`` logger and dropped.  Texts are stored as the
classifier reads them (the head and tail of a huge one, which sign the same),
with NUL and lone surrogates replaced, which neither database stores; arguments
as bounded JSON.

The table is bounded: every ``prune_every`` rows it adds, a store deletes rows
older than ``max_age`` seconds and all but the newest ``keep`` rows, so with N
workers it holds at most about ``keep + N * prune_every`` rows.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from .._bounds import glance, jsonable
from ..classify._learn import OUTCOMES, Observed
from ..classify._signatures import error_signature
from ._sql import Connect, Dialect, connection_of, create_tables, run_statement

__all__ = ["OUTCOMES_SCHEMA", "SqlOutcomeStore", "open_outcomes", "sqlite_outcomes"]

log = logging.getLogger("toolmend")

OUTCOMES_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS toolmend_outcomes ("
    " at DOUBLE PRECISION NOT NULL, tool TEXT NOT NULL, content TEXT NOT NULL,"
    " arguments TEXT, outcome TEXT NOT NULL, signature TEXT NOT NULL, run TEXT)",
    "CREATE INDEX IF NOT EXISTS toolmend_outcomes_at ON toolmend_outcomes (at)",
)
"""The outcomes table and its index on time, valid in SQLite and Postgres."""

_COLUMNS = "tool, content, arguments, outcome, signature, run, at"


def _storable(text: str) -> str:
    """``text`` as both databases store it: no NUL, no lone surrogate."""
    text = glance(text).replace("\x00", "\ufffd")
    return text.encode("utf-8", "replace").decode("utf-8")


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(jsonable(value), sort_keys=True)


class SqlOutcomeStore:
    """Resolved failures in the ``toolmend_outcomes`` table, shared by many workers.

    Args:
        connect: Returns a context manager that yields a DB-API connection
            (:func:`~toolmend.durable.connection_of` makes one from a connection or a pool).
        dialect: ``"sqlite"`` or ``"postgres"``.
        setup: Create the table now (idempotent).
        keep: The newest rows kept when pruning (``None``: no bound by count).
        max_age: Seconds after which a row is pruned (``None``: no bound by age).
        prune_every: Rows this store adds between two prunings (``0``: never on its own).
    """

    def __init__(
        self,
        connect: Connect,
        dialect: Dialect,
        *,
        setup: bool = True,
        keep: int | None = 100_000,
        max_age: float | None = None,
        prune_every: int = 1_000,
    ) -> None:
        if dialect not in ("sqlite", "postgres"):
            raise ValueError(f"dialect must be 'sqlite' or 'postgres', not {dialect!r}")
        if keep is not None and keep < 1:
            raise ValueError(f"keep must be at least 1 (or None), not {keep!r}")
        self.connect = connect
        self.dialect = dialect
        self.keep = keep
        self.max_age = max_age
        self.prune_every = prune_every
        self._added = 0
        if setup:
            create_tables(connect, dialect, OUTCOMES_SCHEMA)

    def __repr__(self) -> str:
        return f"SqlOutcomeStore({self.dialect})"

    def add(self, row: Mapping[str, Any]) -> None:
        """Record one resolved failure; never raises (a failure is logged and dropped).

        Args:
            row: ``tool``, ``content`` (the error text), ``outcome`` (a key of
                :data:`~toolmend.integrations.OUTCOMES`), and optionally
                ``arguments``, ``signature`` (computed from ``content`` when
                missing), ``run`` and ``at`` (``time.time()`` when missing).
        """
        try:
            tool, outcome = row.get("tool"), row.get("outcome")
            if not isinstance(tool, str) or outcome not in OUTCOMES:
                log.warning(
                    "toolmend: outcome not recorded: needs a tool name and one of %s; got %.200r",
                    ", ".join(OUTCOMES),
                    {"tool": tool, "outcome": outcome},
                )
                return
            content = _storable(_text(row.get("content")))
            arguments = row.get("arguments")
            signature = row.get("signature")
            if not isinstance(signature, str):
                signature = error_signature(content)
            run = row.get("run")
            at = row.get("at")
            run_statement(
                self.connect,
                self.dialect,
                f"INSERT INTO toolmend_outcomes ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    _storable(tool),
                    content,
                    None if arguments is None else json.dumps(jsonable(arguments)),
                    outcome,
                    _storable(signature),
                    None if run is None else _storable(str(run)),
                    float(at) if isinstance(at, int | float) else time.time(),
                ),
            )
            self._added += 1
            if self.prune_every and self._added % self.prune_every == 0:
                self.prune()
        except Exception as exc:  # recording must never fail the call it records
            log.warning("toolmend: outcome not recorded in %r: %s", self, exc)

    def prune(self) -> int:
        """Delete rows older than ``max_age`` and all but the newest ``keep``; how many went."""
        removed = 0
        if self.max_age is not None:
            removed += run_statement(
                self.connect,
                self.dialect,
                "DELETE FROM toolmend_outcomes WHERE at < ?",
                (time.time() - self.max_age,),
            )[0]
        if self.keep is not None:
            removed += run_statement(
                self.connect,
                self.dialect,
                "DELETE FROM toolmend_outcomes WHERE at < (SELECT at FROM toolmend_outcomes"
                " ORDER BY at DESC LIMIT 1 OFFSET ?)",
                (self.keep - 1,),
            )[0]
        return removed

    def _select(
        self, columns: str, tail: str, since: float | None, tool: str | None
    ) -> list[Sequence[Any]]:
        where: list[str] = []
        params: list[Any] = []
        if since is not None:
            where.append("at >= ?")
            params.append(float(since))
        if tool is not None:
            where.append("tool = ?")
            params.append(tool)
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        sql = f"SELECT {columns} FROM toolmend_outcomes{clause}{tail}"
        return run_statement(self.connect, self.dialect, sql, params)[1]

    def observed(self, *, since: float | None = None, tool: str | None = None) -> list[Observed]:
        """The rows counted per (tool, signature, outcome) in SQL: what learning needs.

        One :class:`~toolmend.integrations.Observed` per group, with its
        ``count`` and one of its texts, signed again (so rows recorded by an
        older release sign as this one does); cheap on a large table, where
        :meth:`lines` gives every row.

        Args:
            since: Only rows recorded at or after this time (``time.time()`` seconds).
            tool: Only this tool's rows.
        """
        rows = self._select(
            "tool, signature, outcome, COUNT(*), MIN(content)",
            " GROUP BY tool, signature, outcome ORDER BY tool, signature, outcome",
            since,
            tool,
        )
        signed: dict[str, str] = {}
        found: list[Observed] = []
        for found_tool, _, outcome, count, example in rows:
            signature = signed.get(example)
            if signature is None:
                signature = signed[example] = error_signature(example)
            found.append(Observed(found_tool, example, outcome, signature, int(count)))
        return found

    def lines(self, *, since: float | None = None, tool: str | None = None) -> Iterator[str]:
        """The rows as JSON lines, oldest first: the input of ``toolmend learn``.

        Each line is the row as it was added: ``tool``, ``content``,
        ``is_error``, ``arguments``, ``outcome``, ``signature``, ``run``, ``at``.
        Raises what the database raises (a reader wants to know).

        Args:
            since: Only rows recorded at or after this time (``time.time()`` seconds).
            tool: Only this tool's rows.
        """
        rows = self._select(_COLUMNS, " ORDER BY at", since, tool)
        for found_tool, content, arguments, outcome, signature, run, at in rows:
            line = {
                "tool": found_tool,
                "content": content,
                "is_error": True,
                "arguments": None if arguments is None else json.loads(arguments),
                "outcome": outcome,
                "signature": signature,
                "run": run,
                "at": float(at),
            }
            yield json.dumps(line, ensure_ascii=False)


def sqlite_outcomes(
    path: str | Path,
    *,
    timeout: float = 2.0,
    setup: bool = True,
    wal: bool = True,
    **options: Any,
) -> SqlOutcomeStore:
    """An outcome store in a SQLite file, safe to share between threads and processes.

    One connection, used under a lock (adapters add rows from worker threads);
    other processes share the file through SQLite's own locking, each writer
    waiting at most ``timeout`` seconds before its row is dropped and logged.
    With ``wal`` (the default) the file is switched to write-ahead logging and
    this connection to ``synchronous=NORMAL``: a row's commit does not wait for
    the disk (tens of microseconds instead of milliseconds), readers do not
    block writers, and a power loss can lose the last rows but not corrupt the
    file.  The journal mode stays with the file; leave ``wal`` off for a file on
    a network share, where SQLite cannot use it.

    Args:
        path: The database file (created with the table unless ``setup`` is false).
        timeout: Seconds a write waits for another process's lock.
        setup: Create the table if missing; when false, the file must exist.
        wal: Use write-ahead logging and commit without waiting for the disk.
        options: ``keep``, ``max_age``, ``prune_every`` (see :class:`SqlOutcomeStore`).

    Raises:
        FileNotFoundError: ``setup`` is false and there is no such file.
    """
    if not setup and not Path(path).exists():
        raise FileNotFoundError(f"no outcome store at {path}")
    import sqlite3

    conn = sqlite3.connect(path, timeout=timeout, check_same_thread=False)
    if wal:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
    return SqlOutcomeStore(connection_of(conn, threading.Lock()), "sqlite", setup=setup, **options)


def open_outcomes(url: str, *, setup: bool = True, **options: Any) -> SqlOutcomeStore:
    """An outcome store from a URL: ``sqlite:///path`` or ``postgresql://...``.

    As SQLAlchemy writes them: ``sqlite:///outcomes.db`` is relative to the
    working directory, ``sqlite:////var/lib/outcomes.db`` absolute.  Postgres
    needs ``psycopg`` (imported only here); its one connection is used under a lock.

    Args:
        url: Where the store is.
        setup: Create the table if missing.
        options: ``keep``, ``max_age``, ``prune_every``, and ``timeout`` for SQLite.

    Raises:
        ValueError: Neither a ``sqlite:///`` nor a ``postgresql://`` URL.
    """
    if url.startswith("sqlite:///"):
        return sqlite_outcomes(url[len("sqlite:///") :], setup=setup, **options)
    if url.startswith(("postgresql://", "postgres://")):
        import psycopg

        conn = psycopg.connect(url)
        return SqlOutcomeStore(
            connection_of(conn, threading.Lock()), "postgres", setup=setup, **options
        )
    raise ValueError(f"an outcome store URL starts with sqlite:/// or postgresql://, not {url!r}")
