"""SQL databases for the durable tests: one per backend, and a SQLite file another process locks.

A test parametrised over ``sqlite`` and ``postgres`` asks :func:`database_url` for
an empty database of its backend (Postgres from the session's throwaway cluster,
skipped where none can start).  :class:`SqliteLocker` is a second process that
holds a SQLite file exclusively on demand, as another worker in the middle of a
write does.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest

_LOCKER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
sys.stdin.readline()
conn.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.readline()
conn.execute("COMMIT")
"""


def database_url(request: pytest.FixtureRequest, tmp_path: Path, name: str) -> str:
    """An empty database for ``request.param`` (``sqlite`` or ``postgres``), as a URL.

    Args:
        request: The parametrised fixture's request.
        tmp_path: Where the SQLite file goes.
        name: The SQLite file's name, and the Postgres database's prefix.
    """
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / name}"
    cluster = request.getfixturevalue("postgres")
    return str(cluster.database(f"{Path(name).stem}_{uuid.uuid4().hex[:8]}"))


class SqliteLocker:
    """Another process that takes a SQLite file's exclusive lock when told, until released.

    Args:
        path: The database file.
    """

    def __init__(self, path: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", _LOCKER, str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def lock(self) -> None:
        """Take the lock; returns once it is held."""
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.write("lock\n")
        self.process.stdin.flush()
        assert self.process.stdout.readline().strip() == "locked"

    def release(self) -> None:
        """Release the lock (or never take it) and end the process."""
        assert self.process.stdin is not None
        self.process.stdin.write("release\n")
        self.process.stdin.write("release\n")
        self.process.stdin.flush()
        self.process.wait(10)
