"""RunRegistry: bounded per-run state."""

from __future__ import annotations

import threading

from toolmend import Kind, LoopGuard, Verdict
from toolmend.integrations import RunRegistry, Source, verdict_from_record, verdict_record
from toolmend.run._registry import BoundedDict


def test_state_is_per_run_and_reused() -> None:
    runs = RunRegistry()
    first = runs.get("a")
    assert runs.get("a") is first
    assert runs.get("b") is not first
    assert isinstance(first.loop, LoopGuard)
    assert first.loop is not runs.get("b").loop


def test_least_recently_used_run_is_evicted() -> None:
    runs = RunRegistry(max_runs=2)
    a = runs.get("a")
    runs.get("b")
    runs.get("a")
    runs.get("c")
    assert ("a" in runs, "b" in runs, "c" in runs) == (True, False, True)
    assert runs.get("a") is a
    assert len(runs) == 2


def test_drop() -> None:
    runs = RunRegistry()
    runs.get("a")
    runs.drop("a")
    runs.drop("missing")
    assert len(runs) == 0


def test_loop_factory() -> None:
    runs = RunRegistry(loop_factory=lambda: LoopGuard(max_consecutive_failures=7))
    assert runs.get(("thread", 1)).loop.max_consecutive_failures == 7


def test_verdicts_are_bounded() -> None:
    verdicts = BoundedDict(limit=2)
    verdict = Verdict(True, Kind.TRANSIENT)
    verdicts["a"] = verdict
    verdicts["b"] = verdict
    verdicts["a"] = verdict
    verdicts["c"] = verdict
    assert list(verdicts) == ["a", "c"]
    state = RunRegistry().get("r")
    state.verdicts["call_1"] = verdict
    assert state.verdicts == {"call_1": verdict}


def test_concurrent_access_creates_one_state_per_run() -> None:
    runs = RunRegistry(max_runs=1000)
    seen: list[object] = []

    def worker() -> None:
        for i in range(50):
            seen.append(runs.get(i % 10))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(runs) == 10
    assert len({id(state) for state in seen}) == 10


def test_verdicts_travel_as_records() -> None:
    verdict = Verdict(True, Kind.FIXABLE, "status", Source.FLAG, "'nknown tool'", "Fix it.")
    record = verdict_record(verdict)
    assert record == {
        "failed": True,
        "kind": "fixable",
        "rule": "status",
        "source": "flag",
        "reason": "'nknown tool'",
        "guidance": "Fix it.",
    }
    assert verdict_from_record(record) == verdict
    assert verdict_from_record({**record, "extra": 1}) == verdict
    assert verdict_from_record({"failed": False}) == Verdict(False)
    assert verdict_from_record({"failed": True, "kind": "fixable"}, rule="is_error") == Verdict(
        True, Kind.FIXABLE, "is_error", Source.FLAG
    )
    assert verdict_from_record({"failed": True, "kind": "odd"}) is None
    assert verdict_from_record({"failed": True}) is None
    assert verdict_from_record({}) is None


def test_drop_later_from_a_finalizer_inside_get_does_not_deadlock() -> None:
    import gc
    import weakref

    registry = RunRegistry(max_runs=4)

    class Owner:
        pass

    owner = Owner()
    registry.get("old")
    weakref.finalize(owner, registry.drop_later, "old")
    gc.disable()
    try:
        cycle: list[object] = [owner]
        cycle.append(cycle)
        del owner, cycle
        with registry._lock:  # the collector may run while the lock is held
            gc.collect()
    finally:
        gc.enable()
    assert list(registry._pending) != []
    registry.get("new")
    assert "old" not in registry
    assert "new" in registry


def test_drop_later_spares_a_new_run_under_the_same_key() -> None:
    registry = RunRegistry()
    first = registry.get("k")
    registry.drop_later("k")
    registry.drop("k")
    second = registry.get("k")
    assert second is not first
    assert registry.get("k") is second
