"""SIGKILLed workers, store errors and tools that raise after their effect: the crash harness.

Runs ``bench/crash.py`` small (60 calls, 60% of them broken once at a random point) as a
user would, in a subprocess, and reads its table: with toolmend every call takes effect
exactly once and none is lost, at every point, on SQLite and Postgres; the stock setup
duplicates.  The points ``begin``, ``store`` and ``raise`` are issue 29's first two
defects (a store error after the effect erased the record; a write that raised after
its effect was recorded as not landed), which duplicated effects before they were fixed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tools.pg_cluster import missing_reason

ROOT = Path(__file__).resolve().parents[2]
ARGS = ["--calls", "60", "--crash-rate", "0.6", "--outage-calls", "0"]
ROW = re.compile(
    r"^(?P<backend>\w+)\s+(?P<setup>.+?)\s+(?P<calls>\d+)\s+(?P<crashed>\d+)\s+\d+\s+"
    r"(?P<once>\d+)\s+(?P<duplicated>\d+)\s+(?P<lost>\d+)\s+(?P<points>before=.*)$"
)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_every_crash_point_leaves_one_effect_with_toolmend(backend: str) -> None:
    if backend == "postgres" and missing_reason() is not None:
        pytest.skip(str(missing_reason()))
    out = subprocess.run(
        [sys.executable, "bench/crash.py", *ARGS, "--backends", backend],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        check=True,
    ).stdout
    rows = {m["setup"]: m for m in map(ROW.match, out.splitlines()[-8:]) if m is not None}
    assert set(rows) == {
        "stock (no toolmend)",
        "toolmend, key-honouring tool",
        "toolmend, verify-hook tool",
    }
    points = rows["stock (no toolmend)"]["points"]
    # every point was drawn at least once, the three new ones included
    assert all(int(n) > 0 for n in re.findall(r"=(\d+)", points)), points
    assert {p.split("=")[0] for p in points.split()} >= {"begin", "store", "raise"}
    for setup in ("toolmend, key-honouring tool", "toolmend, verify-hook tool"):
        row = rows[setup]
        assert (row["once"], row["duplicated"], row["lost"]) == ("60", "0", "0"), out
    assert int(rows["stock (no toolmend)"]["duplicated"]) > 0
