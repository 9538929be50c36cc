"""A throwaway PostgreSQL cluster on 127.0.0.1 for tests and the crash benchmark.

``initdb`` refuses to run as root, so as root the cluster belongs to the
``postgres`` user (the Debian package creates it) or, failing that, ``nobody``,
and every server command runs through ``runuser``.  The data directory is a
temporary one, removed with the cluster; authentication is ``trust`` on
loopback only.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Cluster", "find_bin", "missing_reason", "running"]

_CANDIDATES = ("/usr/lib/postgresql/17/bin", "/usr/lib/postgresql/16/bin",
               "/usr/lib/postgresql/15/bin")  # fmt: skip


def find_bin() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl``, or ``None``."""
    for folder in _CANDIDATES:
        if (Path(folder) / "initdb").exists():
            return Path(folder)
    found = shutil.which("initdb")
    return Path(found).resolve().parent if found else None


def missing_reason() -> str | None:
    """Why no cluster can start here (``None``: it can)."""
    if find_bin() is None:
        return "PostgreSQL server binaries (initdb, pg_ctl) not found: apt-get install postgresql"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser: initdb refuses root"
    return None


def _owner() -> str | None:
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            pwd.getpwnam(name)
            return name
    raise RuntimeError("no unprivileged user to own the PostgreSQL cluster")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class Cluster:
    """A running cluster: its DSN and where it lives."""

    port: int
    root: Path

    @property
    def dsn(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def database(self, name: str) -> str:
        """Create database ``name`` and return its DSN."""
        import psycopg

        with psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"


def _run(owner: str | None, *argv: str) -> None:
    command = list(argv) if owner is None else ["runuser", "-u", owner, "--", *argv]
    subprocess.run(command, check=True, capture_output=True, text=True)


@contextlib.contextmanager
def running() -> Iterator[Cluster]:
    """Start a cluster in a temporary folder; stop it and remove the folder after."""
    folder = find_bin()
    if folder is None:
        raise RuntimeError(missing_reason() or "no PostgreSQL")
    owner = _owner()
    root = Path(tempfile.mkdtemp(prefix="toolmend-pg-"))
    data = root / "data"
    data.mkdir()
    if owner is not None:
        entry = pwd.getpwnam(owner)
        for path in (root, data):
            os.chown(path, entry.pw_uid, entry.pw_gid)
    port = _free_port()
    _run(owner, str(folder / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust",
         "--no-sync", "-E", "UTF8")  # fmt: skip
    options = (
        f"-c listen_addresses=127.0.0.1 -p {port} -k {root} -c fsync=off -c max_connections=200"
    )
    _run(owner, str(folder / "pg_ctl"), "-D", str(data), "-o", options, "-l",
         str(root / "log"), "-w", "-t", "60", "start")  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield Cluster(port=port, root=root)
    finally:
        with contextlib.suppress(subprocess.CalledProcessError):
            _run(owner, str(folder / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(root, ignore_errors=True)


def _fixture() -> Iterator[Cluster]:
    import pytest

    reason = missing_reason()
    if reason is not None:
        pytest.skip(reason)
    with running() as cluster:
        yield cluster


def pg_fixture() -> object:
    """The session-scoped ``postgres`` fixture, for a conftest to expose: one cluster a run."""
    import pytest

    return pytest.fixture(scope="session", name="postgres")(_fixture)
