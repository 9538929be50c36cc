"""The evaluation's progress line: time left from each group's measured pace."""

from __future__ import annotations

import io

from toolmend_engine.eval._results import Progress


class Clock:
    """Seconds that advance only when told."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_time_left_uses_each_groups_own_pace_and_the_pace_per_reply_before_it() -> None:
    clock, out = Clock(), io.StringIO()
    progress = Progress(
        [("failed call", 2, 5), ("resolved", 2, 2), ("repeated", 1, 2)],
        "eval m",
        stream=out,
        clock=clock,
    )
    assert progress.left() == 0.0
    clock.now += 10  # a 5-reply conversation in 10 s: 2 s a reply
    progress.step("failed call")
    # 1 more failed call at 10 s, then 3 situation conversations of 2 replies at 2 s each
    assert progress.left() == 10 + 3 * 4
    clock.now += 20
    progress.step("failed call")
    assert progress.left() == 3 * 6  # per reply now (10 + 20) / 10 = 3 s
    clock.now += 1
    progress.step("resolved")  # measured: 1 s, much faster than the guess of 6 s
    # resolved: 1 left at its own 1 s; repeated: per reply, the mean of 3 s and 0.5 s
    assert progress.left() == 1 + 2 * (3 + 0.5) / 2
    clock.now += 1
    progress.step("resolved")
    clock.now += 4
    progress.step("repeated")
    assert progress.left() == 0.0
    assert out.getvalue().splitlines() == [
        "eval m [######........................] 1/5    10s elapsed,    22s left",
        "eval m [############..................] 2/5    30s elapsed,    18s left",
        "eval m [##################............] 3/5    31s elapsed,     4s left",
        "eval m [########################......] 4/5    32s elapsed,     4s left",
        "eval m [##############################] 5/5    36s elapsed,     0s left",
    ]
