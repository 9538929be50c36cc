"""Fault benchmark on Pydantic AI: stock agents next to ``RecoveringToolset``, same faults.

A real ``Agent`` and a scripted ``FunctionModel``, no network, virtual time.  The
model is a simple, obedient one: after a tool result it calls the same tool again
with the same arguments when the result asks for that (Pydantic AI's ``retried``
outcome, or a text that says to try again), at most three calls in a run, and
otherwise answers.  The "stubborn" scenario's model repeats the failed call three
times whatever it reads.  Three setups run the same tools:

- stock, the tool raises: Pydantic AI ends the run with the tool's exception;
- stock, ``ModelRetry(str(exc))``: the documented way to let the model react;
- toolmend: the raw tool in ``RecoveringToolset(toolset, effects=...)``.

Scenarios: (a) a write whose reply is lost (it commits, then times out), on every
attempt or on the first only; (b) a read failing its first 2 attempts with 503, and
with 429 ``Retry-After: 2`` once; (c) a permanent 403 on a read; (d) the stubborn
model repeating a 403.  Columns: runs that finished (not ended by an exception); runs
whose last tool result was a success; tool calls the model made, and tool executions,
per run; effects beyond the
first per run; of the runs that ended failed, those whose model read the fault's own
words; writes whose model was asked to call again (``retried``, or "try again");
the model's calls the loop guard answered without running the tool.  Run::

    ./dev python bench/faults_pydantic_ai.py [--runs 100]
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from faults import http_error  # the same faults as bench/faults.py (this folder)
from pydantic_ai import Agent, FunctionToolset, ModelRetry
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

import toolmend
from toolmend.integrations import reset_budgets
from toolmend_pydantic_ai import RecoveringToolset

RETRY_WORDS = ("try again", "expected to succeed")
MAX_CALLS = 3


def lost_reply() -> Exception:
    return TimeoutError("The read operation timed out")


@dataclass
class Fault:
    """A scripted tool: per run, attempts up to ``fail_first`` fail (``None``: all).

    A write commits on every attempt, before its failure.
    """

    error: Callable[[], Exception]
    fail_first: int | None
    writes: bool = False
    effects: int = 0
    attempts: int = 0
    _in_run: int = 0

    def begin(self) -> None:
        self._in_run = 0

    def __call__(self, item: str) -> str:
        self.attempts += 1
        self._in_run += 1
        if self.writes:
            self.effects += 1
        if self.fail_first is None or self._in_run <= self.fail_first:
            raise self.error()
        return f"ok {item}"


@dataclass
class Obedient:
    """The scripted model: one call, then again only when the result asks for it."""

    stubborn: bool = False
    calls: int = 0
    texts: list[str] = field(default_factory=list)
    last_ok: bool = False
    asked_again: bool = False

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        returned = [
            p for p in getattr(last, "parts", []) if isinstance(p, ToolReturnPart)
        ] if isinstance(last, ModelRequest) else []  # fmt: skip
        again = not returned
        if returned:
            part = returned[0]
            text = str(part.content)
            self.texts.append(text)
            self.last_ok = part.outcome == "success"
            asks = part.outcome == "retried" or any(w in text for w in RETRY_WORDS)
            self.asked_again |= asks
            again = not self.last_ok and (self.stubborn or asks) and self.calls < MAX_CALLS
        if again:
            self.calls += 1
            return ModelResponse(parts=[ToolCallPart("tool", {"item": "A1"})])
        return ModelResponse(parts=[TextPart("done")])


def toolset(fault: Fault, setup: str, effect: str) -> Any:
    tools: FunctionToolset[None] = FunctionToolset(max_retries=MAX_CALLS)
    if setup == "modelretry":

        @tools.tool_plain(name="tool")
        def retried(item: str) -> str:
            """The tool."""
            try:
                return fault(item)
            except Exception as exc:
                raise ModelRetry(str(exc)) from exc

    else:

        @tools.tool_plain(name="tool")
        def raw(item: str) -> str:
            """The tool."""
            return fault(item)

    if setup == "toolmend":
        return RecoveringToolset(tools, effects={"tool": effect})
    return tools


@dataclass
class Row:
    scenario: str
    setup: str
    runs: int = 0
    finished: int = 0
    recovered: int = 0
    attempts: int = 0
    model_calls: int = 0
    duplicates: int = 0
    failed: int = 0
    saw_cause: int = 0
    told_retry_write: int = 0


SETUPS = {
    "raise": "stock, tool raises",
    "modelretry": "stock, ModelRetry(str(exc))",
    "toolmend": "toolmend RecoveringToolset",
}


def run(
    scenario: str, make: Callable[[], Fault], cause: str, effect: str, setup: str, runs: int
) -> Row:
    reset_budgets()
    row = Row(scenario, SETUPS[setup], runs)
    fault = make()
    stubborn = scenario.startswith("d.")
    with toolmend.testing(seed=0):
        for _ in range(runs):
            fault.begin()
            before = fault.effects
            model = Obedient(stubborn=stubborn)
            agent = Agent(FunctionModel(model), toolsets=[toolset(fault, setup, effect)])
            try:
                agent.run_sync("Do it")
                row.finished += 1
            except Exception:
                pass
            row.recovered += model.last_ok
            row.model_calls += model.calls
            row.duplicates += max(0, fault.effects - before - 1) if fault.writes else 0
            if not model.last_ok:
                row.failed += 1
                row.saw_cause += any(cause in text for text in model.texts)
            row.told_retry_write += fault.writes and model.asked_again
    row.attempts = fault.attempts
    return row


def scenarios() -> list[tuple[str, Callable[[], Fault], str, str]]:
    timeout = "The read operation timed out"
    return [
        ("a. lost reply on a write, every attempt",
         functools.partial(Fault, lost_reply, None, writes=True), timeout, "write"),
        ("a. lost reply on a write, first attempt",
         functools.partial(Fault, lost_reply, 1, writes=True), timeout, "write"),
        ("b. read, 503 first 2 attempts",
         functools.partial(Fault, functools.partial(http_error, 503), 2), "503", "read_only"),
        ("b. read, 429 Retry-After 2s once",
         functools.partial(Fault, functools.partial(http_error, 429, "2"), 1), "429", "read_only"),
        ("c. read, permanent 403",
         functools.partial(Fault, functools.partial(http_error, 403), None), "403", "read_only"),
        ("d. stubborn model repeats a 403",
         functools.partial(Fault, functools.partial(http_error, 403), None), "403", "read_only"),
    ]  # fmt: skip


def render(rows: list[Row]) -> str:
    header = (
        "scenario", "setup", "runs finished", "recovered", "model calls/run", "tool runs/run",
        "dup effects/1000", "failed runs: model saw true cause", "write: model asked to repeat",
        "calls refused by guard/run",
    )  # fmt: skip
    table = [header]
    for r in rows:
        table.append(
            (
                r.scenario,
                r.setup,
                f"{100 * r.finished / r.runs:.0f}%",
                f"{100 * r.recovered / r.runs:.0f}%",
                f"{r.model_calls / r.runs:.2f}",
                f"{r.attempts / r.runs:.2f}",
                f"{1000 * r.duplicates / r.runs:.0f}",
                f"{r.saw_cause}/{r.failed}" if r.failed else "-",
                f"{100 * r.told_retry_write / r.runs:.0f}%" if "write" in r.scenario else "-",
                f"{max(0, r.model_calls - r.attempts) / r.runs:.2f}",
            )
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = [" | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in table]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=100, help="agent runs per scenario and setup")
    args = parser.parse_args(argv)
    rows = [
        run(name, make, cause, effect, setup, args.runs)
        for name, make, cause, effect in scenarios()
        for setup in SETUPS
    ]
    print(render(rows))


if __name__ == "__main__":
    main()
