"""Fault-injection benchmark: toolmend's retry core next to LangChain's stock retry.

Scripted tools, no model, no network: each scenario runs the same scripted tool
under LangChain's ``ToolRetryMiddleware()`` with its defaults and under
``toolmend.integrations.execute`` with the tool's declared effect.  Sleeping is virtual
(LangChain's ``time.sleep`` is recorded, toolmend runs under ``testing()``), so
the whole table takes seconds.  Run::

    ./dev python bench/faults.py [--calls 1000] [--seed 0]

Scenarios: (a) lost reply on a write (the write commits, then the call times
out), on every attempt or on the first only; (b) reads failing their first k
attempts with 503, or 429 with ``Retry-After: 2``, and a rate limit that
really lifts only after the 2 seconds it announced ("until 2s"), so an early
retry fails again; (c) permanent 403 and 422; (d) a sustained outage over 100
calls; (e) a write that commits and then fails on a refused follow-up connection;
(f) a read failing its first 9 calls (an outage) and then recovering, under the
loop guard.  A second table times attempts of 0.4 s against a 1 s deadline, and
counts the retry tokens a tool has left after 10 calls cancelled in backoff.
"""

from __future__ import annotations

import argparse
import random
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

import httpx
from langchain.agents.middleware import ToolRetryMiddleware
from langchain.agents.middleware import tool_retry as stock_module
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.prebuilt.tool_node import ToolCallRequest

import toolmend
from toolmend import ToolFailure
from toolmend.integrations import CallContext, reset_budgets
from toolmend.run._retry import now

URL = "https://api.example.test/v1/resource"


def http_error(status: int, retry_after: str | None = None) -> Exception:
    """A real ``httpx.HTTPStatusError``, raised by httpx itself, without a network."""
    headers = {"Retry-After": retry_after} if retry_after else {}
    response = httpx.Response(status, headers=headers, request=httpx.Request("GET", URL))
    try:
        response.raise_for_status()
    except httpx.HTTPStatusError as exc:
        return exc
    raise AssertionError(status)


class Script:
    """A scripted tool.  Per logical call, attempts up to ``fail_first`` fail
    (``None``: every attempt fails); a write commits on every attempt before its
    failure, deduplicated by key when the server honours keys."""

    def __init__(
        self,
        error: Callable[[], Exception],
        fail_first: int | None,
        *,
        commits: bool = False,
        dedup: bool = False,
        lifts_after: float | None = None,
        outage_calls: int = 0,
    ) -> None:
        self.error = error
        self.outage_calls = outage_calls
        self._calls = 0
        self.lifts_after = lifts_after
        self.clock: Callable[[], float] = lambda: 0.0
        self._started: float | None = None
        self.fail_first = fail_first
        self.commits = commits
        self.dedup = dedup
        self.effects = 0
        self.attempts = 0
        self._attempt_in_call = 0
        self._keys: set[str] = set()

    def begin(self) -> None:
        self._attempt_in_call = 0
        self._started = None
        self._calls += 1

    def would_succeed(self) -> bool:
        """Whether the current call would succeed if it were sent (for refusals)."""
        return self.outage_calls > 0 and self._calls > self.outage_calls

    def _fails(self) -> bool:
        if self.outage_calls:
            return self._calls <= self.outage_calls
        if self.lifts_after is not None:
            assert self._started is not None
            return self.clock() - self._started < self.lifts_after
        return self.fail_first is None or self._attempt_in_call <= self.fail_first

    def __call__(self, key: str | None = None) -> str:
        if self._started is None:
            self._started = self.clock()  # the call's own clock, read inside the call
        self.attempts += 1
        self._attempt_in_call += 1
        if self.commits and not (self.dedup and key in self._keys):
            self.effects += 1
            if key is not None:
                self._keys.add(key)
        if self._fails():
            raise self.error()
        return "ok"


@dataclass
class Row:
    scenario: str
    handler: str
    calls: int
    recovered: int
    attempts: int
    duplicates: int
    sleep: float
    told_retry: int
    failed: int
    refused_ok: int = 0


RETRY_WORDS = ("try again", "Retrying the same call is expected to succeed")


def _says_retry(text: str) -> bool:
    return any(word in text for word in RETRY_WORDS)


@contextmanager
def _stock_sleep() -> Iterator[list[float]]:
    """Record the stock middleware's ``time.sleep`` instead of sleeping."""
    slept: list[float] = []
    original = getattr(stock_module, "time")  # noqa: B009
    setattr(stock_module, "time", types.SimpleNamespace(sleep=slept.append))  # noqa: B010
    try:
        yield slept
    finally:
        setattr(stock_module, "time", original)  # noqa: B010


def _stock(body: Callable[..., str]) -> Callable[[str], ToolMessage]:
    """One call of ``body`` under LangChain's stock middleware, by call id."""
    tool: BaseTool = StructuredTool.from_function(body, name="tool", description="scripted")
    middleware: ToolRetryMiddleware[Any, Any] = ToolRetryMiddleware()

    def handler(request: ToolCallRequest) -> ToolMessage:
        assert request.tool is not None
        content = request.tool.invoke(request.tool_call["args"])
        return ToolMessage(content=str(content), tool_call_id=request.tool_call["id"])

    def call(call_id: str) -> ToolMessage:
        request = ToolCallRequest(
            tool_call={"name": "tool", "args": {}, "id": call_id, "type": "tool_call"},
            tool=tool,
            state={},
            runtime=None,  # type: ignore[arg-type]
        )
        message = middleware.wrap_tool_call(request, handler)
        assert isinstance(message, ToolMessage)
        return message

    return call


def run_stock(name: str, script: Script, calls: int, seed: int) -> Row:
    random.seed(seed)

    def body(**_: Any) -> str:
        return script()

    call = _stock(body)
    recovered = told = failed = 0
    with _stock_sleep() as slept:
        script.clock = lambda: sum(slept)
        for i in range(calls):
            script.begin()
            message = call(f"call_{i}")
            if message.status == "error":
                failed += 1
                told += _says_retry(str(message.content))
            else:
                recovered += 1
    return _row(name, "LangChain ToolRetryMiddleware()", script, calls, recovered, sum(slept),
                told, failed)  # fmt: skip


def run_toolmend(
    name: str,
    script: Script,
    calls: int,
    seed: int,
    *,
    effect: str,
    honours_key: bool = False,
    guarded: bool = False,
) -> Row:
    reset_budgets()
    label = f"toolmend ({effect}{', honoured key' if honours_key else ''}"
    label += ", loop guard)" if guarded else ")"
    recovered = told = failed = refused_ok = 0
    loop = toolmend.LoopGuard() if guarded else None

    def thunk(ctx: CallContext) -> str:
        return script(ctx.idempotency_key)

    with toolmend.testing(seed=seed) as log:
        script.clock = now
        for _ in range(calls):
            script.begin()
            attempts = script.attempts
            result = toolmend.integrations.execute(
                thunk, tool=name, effect=effect, honours_key=honours_key, loop=loop
            )
            if isinstance(result, ToolFailure):
                failed += 1
                told += _says_retry(str(result))
                refused_ok += script.attempts == attempts and script.would_succeed()
            else:
                recovered += 1
    row = _row(name, label, script, calls, recovered, log.total, told, failed)
    row.refused_ok = refused_ok
    return row


def _row(
    name: str,
    handler: str,
    script: Script,
    calls: int,
    recovered: int,
    sleep: float,
    told: int,
    failed: int,
) -> Row:
    duplicates = max(0, script.effects - calls) if script.commits else 0
    return Row(name, handler, calls, recovered, script.attempts, duplicates, sleep, told, failed)


@dataclass(frozen=True)
class Variant:
    effect: str
    honours_key: bool = False
    guarded: bool = False


@dataclass(frozen=True)
class Scenario:
    name: str
    calls: int
    make: Callable[[], Script]
    variants: tuple[Variant, ...]


def _timeout() -> Exception:
    return TimeoutError("The read operation timed out")


def scenarios(calls: int) -> list[Scenario]:
    write = (Variant("write"), Variant("write", honours_key=True))
    read = (Variant("read_only"),)
    e503 = partial(http_error, 503)
    e429 = partial(http_error, 429, "2")
    lost_every = partial(Script, _timeout, None, commits=True, dedup=True)
    lost_first = partial(Script, _timeout, 1, commits=True, dedup=True)
    found = [
        Scenario("a. lost reply, every attempt", calls, lost_every, write),
        Scenario("a. lost reply, first attempt", calls, lost_first, write),
    ]
    found += [
        Scenario(f"b. 503 first {k}", calls, partial(Script, e503, k), read) for k in (1, 2, 3)
    ]
    found += [
        Scenario(f"b. 429 RA=2s first {k}", calls, partial(Script, e429, k), read) for k in (1, 2)
    ]
    until = partial(Script, e429, None, lifts_after=2.0)
    found.append(Scenario("b. 429 RA=2s until 2s", calls, until, read))
    for status in (403, 422):
        permanent = partial(Script, partial(http_error, status), None)
        found.append(Scenario(f"c. permanent {status}", calls, permanent, read))
    found.append(Scenario("d. outage, 100 calls", 100, partial(Script, e503, None), read))
    refused = partial(ConnectionRefusedError, 111, "Connection refused")
    committed = partial(Script, refused, 1, commits=True)
    found.append(
        Scenario("e. committed, then refused follow-up", calls, committed, (Variant("write"),))
    )
    outage = partial(Script, e503, None, outage_calls=9)
    guarded = (Variant("read_only", guarded=True),)
    found.append(Scenario("f. outage of 9 calls, then up", 20, outage, guarded))
    return found


def render(rows: list[Row]) -> str:
    header = (
        "scenario", "handler", "calls", "recovered", "attempts", "retries/call",
        "dup effects/1000", "refused ok/1000", "sleep/call s", "failures told to retry",
    )  # fmt: skip
    table = [header]
    for r in rows:
        told = f"{r.told_retry}/{r.failed}" if r.failed else "-"
        table.append(
            (
                r.scenario,
                r.handler,
                str(r.calls),
                f"{100 * r.recovered / r.calls:.1f}%",
                str(r.attempts),
                f"{(r.attempts - r.calls) / r.calls:.2f}",
                f"{1000 * r.duplicates / r.calls:.0f}",
                f"{1000 * r.refused_ok / r.calls:.0f}",
                f"{r.sleep / r.calls:.2f}",
                told,
            )
        )
    return text_table(table)


def text_table(table: list[tuple[str, ...]]) -> str:
    """Rows of cells (the header first) as aligned text columns, a rule under the header."""
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    lines = [
        " | ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in table
    ]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--calls", type=int, default=1000, help="logical calls per scenario")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rows: list[Row] = []
    for scenario in scenarios(args.calls):
        name, calls = scenario.name, scenario.calls
        rows.append(run_stock(name, scenario.make(), calls, args.seed))
        for variant in scenario.variants:
            rows.append(
                run_toolmend(
                    name,
                    scenario.make(),
                    calls,
                    args.seed,
                    effect=variant.effect,
                    honours_key=variant.honours_key,
                    guarded=variant.guarded,
                )
            )
    print(render(rows))
    print()
    print(render_bounds())


def _stock_wall(attempt_seconds: float) -> float:
    """Real seconds of one call under the stock middleware (its sleeps recorded, not slept)."""
    import time

    def body(**_: Any) -> str:
        time.sleep(attempt_seconds)
        raise ConnectionResetError(104, "Connection reset by peer")

    call = _stock(body)
    with _stock_sleep() as slept:
        start = time.monotonic()
        call("c")
        return time.monotonic() - start + sum(slept)


async def _toolmend_wall(attempt_seconds: float, deadline: float) -> float:
    import asyncio
    import time

    async def body(ctx: CallContext) -> str:
        await asyncio.sleep(attempt_seconds)
        raise ConnectionResetError(104, "Connection reset by peer")

    policy = toolmend.RetryPolicy(attempts=3, base=0.0, cap=0.0, deadline=deadline)
    start = time.monotonic()
    await toolmend.integrations.aexecute(body, tool="slow", effect="read_only", policy=policy)
    return time.monotonic() - start


async def _tokens_after_cancelling(n: int) -> float:
    import asyncio

    budget = toolmend.integrations.RetryBudget(capacity=10)
    policy = toolmend.RetryPolicy(base=0.001, cap=0.001, budget=budget)
    hang = asyncio.Event()

    async def body(ctx: CallContext) -> str:
        if ctx.attempt == 1:
            raise ConnectionResetError(104, "Connection reset by peer")
        await hang.wait()
        return "ok"

    tasks = [
        asyncio.ensure_future(
            toolmend.integrations.aexecute(body, tool="t", effect="read_only", policy=policy)
        )
        for _ in range(n)
    ]
    await asyncio.sleep(0.2)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return budget.available


def render_bounds() -> str:
    import asyncio

    stock = _stock_wall(0.4)
    ours = asyncio.run(_toolmend_wall(0.4, 1.0))
    tokens = asyncio.run(_tokens_after_cancelling(10))
    return "\n".join(
        [
            "bounds                                   | LangChain ToolRetryMiddleware() | toolmend",
            "-----------------------------------------+---------------------------------+---------",
            f"wall s, attempts of 0.4 s, deadline 1 s  | {stock:.2f} (no deadline)"
            f"{'':{31 - len(f'{stock:.2f} (no deadline)')}} | {ours:.2f}",
            f"retry tokens left of 10, 10 cancelled    | - (no budget)"
            f"{'':{31 - len('- (no budget)')}} | {tokens:.0f}",
        ]
    )


if __name__ == "__main__":
    main()
