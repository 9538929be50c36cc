"""The crash harness (bench/crash.py), small and with fixed kill points, as a correctness test.

Real worker processes, real SIGKILLs, real checkpointers; one call crashes at
each point (before, during and after the effect, and after the tool returned).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

_PATH = Path(__file__).resolve().parents[2] / "bench" / "crash.py"
_SPEC = importlib.util.spec_from_file_location("toolmend_bench_crash", _PATH)
assert _SPEC is not None
assert _SPEC.loader is not None
crash: Any = importlib.util.module_from_spec(_SPEC)
sys.modules["toolmend_bench_crash"] = crash
_SPEC.loader.exec_module(crash)

CALLS = [f"inv-{i:04d}" for i in range(6)]
PLAN = {"inv-0000": "before", "inv-0001": "during", "inv-0002": "after", "inv-0003": "returned"}


@pytest.fixture(params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "sqlite":
        return lambda name: crash.Database("sqlite", str(tmp_path / f"{name}.db"))
    cluster = request.getfixturevalue("postgres")
    return lambda name: crash.Database("postgres", cluster.database(f"crash_{name}"))


@pytest.mark.parametrize(
    ("setup", "exactly_once", "duplicated"),
    [("stock", 4, 2), ("key", 6, 0), ("verify", 6, 0)],
)
def test_crash_at_every_point(
    database: Any, setup: str, exactly_once: int, duplicated: int
) -> None:
    row = crash.scenario(database(setup), setup, CALLS, crash.Plan(dict(PLAN)), workers=2)
    assert (row.crashed, row.restarts) == (4, 4)
    assert row.points == {"before": 1, "during": 1, "after": 1, "returned": 1}
    assert (row.exactly_once, row.duplicated, row.lost) == (exactly_once, duplicated, 0)


def test_two_workers_share_one_retry_budget(database: Any) -> None:
    """An outage costs the fleet the budget's 10 tokens (+0.1 a call), not 10 per worker."""
    calls, local = crash.outage(database("local"), False, 20, workers=2)
    _, shared = crash.outage(database("shared"), True, 20, workers=2)
    assert calls == 20
    assert local == 20
    assert shared == 11
