"""Cost of the core's hot paths: classifying a tool message and rewriting with C3.

Run: python bench/core.py [--repeat N]

Classification is timed on every case of the error corpus
(tests/core/corpus/errors.jsonl: real library errors and clean outputs), each
case ``--repeat`` times in a row with ``time.perf_counter_ns``; the figure per
case is the best of 15 such runs divided by the repeat count (short runs, so
that other processes on a shared machine rarely interrupt one), and the table
shows the median over cases.  The C3 rewrite is timed on conversations of 10,
100 and 1,000 messages whose last tool result failed: the work should be bounded
by the decision step, not by the history.  The last table prices the
OpenTelemetry instrumentation with no SDK configured (the default): one failed
call through the runner (classified, no retry), with the instrumentation and
with the runner's telemetry hook replaced by a null one.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import math
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import toolmend
from toolmend import telemetry
from toolmend.integrations import CallContext, execute, text_of

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "core" / "corpus" / "errors.jsonl"
SMALL = 1024


def per_call_ns(action: Callable[[], object], repeat: int, rounds: int = 15) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter_ns()
        for _ in range(repeat):
            action()
        best = min(best, (time.perf_counter_ns() - start) / repeat)
    return best


def classification(repeat: int) -> list[tuple[str, int, float]]:
    rows = []
    for line in CORPUS.read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        content = case["content"]
        flags = {k: case[k] for k in ("is_error", "status", "client") if k in case}
        cost = per_call_ns(functools.partial(toolmend.classify_result, content, **flags), repeat)
        group = "failed" if case["expect"]["failed"] else "clean"
        rows.append((group, len(text_of(content) or ""), cost))
    return rows


def conversation(length: int) -> list[dict[str, Any]]:
    """A user turn, then exchanges of an assistant tool call and its result; the last fails."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Plan my trip to Oslo."}]
    turn = 0
    while len(messages) < length:
        call_id = f"call_{turn}"
        messages.append({
            "role": "assistant", "content": None,
            "tool_calls": [{"id": call_id, "type": "function", "function": {
                "name": "forecast", "arguments": json.dumps({"city": "Oslo", "day": turn})}}],
        })  # fmt: skip
        messages.append({"role": "tool", "tool_call_id": call_id, "content": "12 C, rain"})
        turn += 1
    messages[-1]["content"] = "Error code: 503 - The service is busy."
    return messages


def rewrite_cost(length: int, repeat: int) -> float:
    messages = conversation(length)
    result = toolmend.rewrite(messages, "c3")
    assert result.report.changed, result.report
    return per_call_ns(lambda: toolmend.rewrite(messages, "c3"), repeat)


def _untraced(tool: str, arguments: object) -> contextlib.nullcontext[None]:
    return contextlib.nullcontext()


def failed_call_cost(repeat: int) -> tuple[float, float]:
    """ns per failed call (classified, not retried) without and with the instrumentation.

    The two are timed in alternating rounds, best of each, so that a change in
    the machine's load affects both alike.  Without an SDK the hook is a check
    of the API's globals; with one, toolmend's spans cost what the SDK costs.
    """

    def thunk(ctx: CallContext) -> str:
        raise TimeoutError("read timed out")  # a new one each time: a raise extends its traceback

    policy = toolmend.RetryPolicy.none()
    call = functools.partial(execute, thunk, tool="fetch", effect="read_only", policy=policy)
    traced = telemetry.runner_call
    plain = instrumented = float("inf")
    for _ in range(9):
        telemetry.runner_call = _untraced  # type: ignore[assignment]
        try:
            plain = min(plain, per_call_ns(call, repeat))
        finally:
            telemetry.runner_call = traced  # type: ignore[misc]
        instrumented = min(instrumented, per_call_ns(call, repeat))
    return plain, instrumented


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=100, help="calls per timed run")
    args = parser.parse_args()

    rows = classification(args.repeat)
    small = [row for row in rows if row[1] < SMALL]
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{os.cpu_count()} CPUs, load average {load}")
    print(
        f"toolmend.classify_result per tool message ({len(rows)} corpus cases, "
        f"best of 15 x {args.repeat} calls each)"
    )
    print(f"{'set':<24}{'cases':>7}{'median us':>12}{'p90 us':>10}{'max us':>10}")
    for name, chosen in [
        ("mixed, < 1 KB", small),
        ("clean, < 1 KB", [r for r in small if r[0] == "clean"]),
        ("failed, < 1 KB", [r for r in small if r[0] == "failed"]),
        ("mixed, all sizes", rows),
        ("failed, >= 1 KB", [r for r in rows if r[0] == "failed" and r[1] >= SMALL]),
    ]:
        costs = sorted(r[2] / 1000 for r in chosen)
        p90 = costs[max(0, math.ceil(0.9 * len(costs)) - 1)]
        print(
            f"{name:<24}{len(costs):>7}{statistics.median(costs):>12.2f}{p90:>10.2f}"
            f"{costs[-1]:>10.2f}"
        )

    print()
    print("toolmend.rewrite(messages, 'c3'), last tool result failed")
    print(f"{'messages':>9}{'us per call':>14}{'vs 10':>8}")
    base = 0.0
    for length in (10, 100, 1000):
        cost = rewrite_cost(length, max(1, args.repeat // 3)) / 1000
        base = base or cost
        print(f"{length:>9}{cost:>14.1f}{cost / base:>8.2f}")

    print()
    print("failed call through execute (classified, not retried), no OpenTelemetry SDK")
    print(f"{'instrumentation':<24}{'us per call':>14}{'overhead':>10}")
    plain, instrumented = failed_call_cost(args.repeat)
    print(f"{'off (null hook)':<24}{plain / 1000:>14.2f}{'':>10}")
    print(f"{'on (API, no SDK)':<24}{instrumented / 1000:>14.2f}{instrumented / plain - 1:>10.1%}")


if __name__ == "__main__":
    main()
