"""Pydantic AI under DBOS (``DBOSAgent``, SQLite): a worker killed after a write's effect.

Each test runs ``pa_dbos_worker.py`` twice as real subprocesses on one system database:
the first dies with ``os._exit`` right after ``pay`` wrote its ledger row, before the
call could be recorded; the second launches DBOS, which recovers workflow ``wf-1`` and
replays it.  Stock, DBOS runs function tools inline in the workflow, so the replay pays
again.  Wrapped with ``durable=``, the call is a DBOS step keyed by the workflow and
step; its "started" record tells the replay that it may have landed, and the write is
reported (or verified), never repeated.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("dbos", reason="dbos is not installed (requirements/dev.txt pins it)")

from toolmend.durable import LANDED_TEXT
from toolmend.integrations import VERIFY_FIRST

WORKER = str(Path(__file__).with_name("pa_dbos_worker.py"))
STOPPED = (
    "Note from the tool runtime: the last attempt called pay with `invoice=7` and it failed "
    "with: `Tool 'pay' was interrupted: the worker running it stopped before the call "
    "finished, and whether it took effect is unknown. It was not repeated.`\n\n" + VERIFY_FIRST
)


def crash_and_resume(tmp_path: Path, setup: str) -> tuple[list[str], dict[str, Any]]:
    """Run the dying worker, then the resuming one; the ledger and what the model read."""
    url = f"sqlite:///{tmp_path / 'dbos.sqlite'}"
    ledger = tmp_path / "ledger.sqlite"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}

    def worker(die: str, out: Path) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, WORKER, url, str(ledger), setup, die, str(out)]
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=240)

    first = worker("after", tmp_path / "first.json")
    assert first.returncode == 9, first.stderr  # died by os._exit, mid-call
    assert not (tmp_path / "first.json").exists()
    second = worker("never", tmp_path / "second.json")
    assert second.returncode == 0, second.stderr
    with sqlite3.connect(ledger) as conn:
        rows = [invoice for (invoice,) in conn.execute("SELECT invoice FROM ledger")]
    return rows, json.loads((tmp_path / "second.json").read_text())


def test_stock_dbos_agent_pays_twice_after_a_crash(tmp_path: Path) -> None:
    rows, seen = crash_and_resume(tmp_path, "stock")
    assert rows == ["7", "7"]
    assert seen == {"output": "done", "results": [{"content": "paid 7", "outcome": "success"}]}


def test_toolmend_leaves_exactly_one_payment_and_says_so(tmp_path: Path) -> None:
    rows, seen = crash_and_resume(tmp_path, "toolmend")
    assert rows == ["7"]
    assert seen == {"output": "done", "results": [{"content": STOPPED, "outcome": "failed"}]}


def test_a_verify_hook_confirms_the_payment_instead(tmp_path: Path) -> None:
    rows, seen = crash_and_resume(tmp_path, "verify")
    assert rows == ["7"]
    assert seen == {"output": "done", "results": [{"content": LANDED_TEXT, "outcome": "success"}]}
