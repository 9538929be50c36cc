"""What toolmend costs on every tool call and every model request: the overhead table.

Run: python bench/core.py [--repeat N] [--quick]

toolmend sits on every tool call and every model request of an agent, so its cost
must stay invisible in the longest runs.  One run prints, on this machine and under
its current load (printed first):

- ``rewrite(messages, "c3")`` with 10, 100 and 1,000 earlier tool results (the
  last one failed): the work should not grow with the history;
- a whole conversation of 1,000 tool calls (one in ten fails), one rewrite per model
  request as an agent makes them, in CPU time;
- ``classify_result`` per tool message on the error corpus
  (tests/core/corpus/errors.jsonl), clean and failed results under 1 KB, and the
  failed ones against the paper's rules restated naively (start texts, then the
  word lists searched in the lowercased text);
- the LangChain middleware's model side per request, with 10, 100 and 1,000 earlier
  tool results (all succeeded, or the last one failed);
- the LangChain middleware's tool step per call in a run with 10, 100 and 1,000
  earlier tool results (the loop guard kept per run, and rebuilt for every call);
- LangChain ``create_agent`` on a scripted model, two steps, with and without
  ``ToolMendMiddleware``, and with a failing tool against the stock
  ``ToolRetryMiddleware()`` (its sleeps recorded, not slept); the Agents SDK with
  and without ``run_config()`` and toolmend's ``function_tool``;
- the OpenTelemetry instrumentation of a failed call with no SDK configured;
- resident memory after 2,000 and 20,000 failing calls through each adapter.

Timings are CPU time of the process (``time.process_time_ns``: on a shared machine
wall time mostly measures the other jobs), the best of several short runs, the two
sides of a ratio measured in alternating rounds so that a change in load affects both.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import gc
import json
import logging
import math
import os
import statistics
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import toolmend
from toolmend.classify._words import COMMON
from toolmend.integrations import text_of

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "core" / "corpus" / "errors.jsonl"
SMALL = 1024


def per_call_ns(action: Callable[[], object], repeat: int, rounds: int = 15) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time_ns()
        for _ in range(repeat):
            action()
        best = min(best, (time.process_time_ns() - start) / repeat)
    return best


def paired(
    a: Callable[[], object], b: Callable[[], object], repeat: int, rounds: int
) -> tuple[float, float]:
    """Best ns per call of ``a`` and of ``b``, timed in alternating rounds."""
    best_a = best_b = float("inf")
    for _ in range(rounds):
        best_a = min(best_a, per_call_ns(a, repeat, 1))
        best_b = min(best_b, per_call_ns(b, repeat, 1))
    return best_a, best_b


# -- the paper's rules, restated naively ---------------------------------------------

# Table 5's start texts and Appendix A's common words, as a first implementation
# would write them: the kind from each word searched in the lowercased text, then
# the flags and the start texts for whether it failed.
PAPER_STARTS = (
    "Error:", "ERROR:", "error:", "Error executing tool", "MCP error ", "Database error:",
    "Parse error near line ", "fatal: ", "An error occurred while running the tool",
)  # fmt: skip


def paper_rules(content: Any, is_error: bool | None = None, status: str | None = None,
                client: str | None = None) -> tuple[bool, str | None]:  # fmt: skip
    text = content if isinstance(content, str) else json.dumps(content, default=str)
    kind = "ambiguous"
    for word, found in COMMON.items():
        if word.lower() in text.lower():
            kind = found.value
            break
    failed = is_error is True or status == "error"
    if not failed:
        stripped = text.lstrip()
        failed = any(stripped.startswith(start) for start in PAPER_STARTS)
    return failed, kind if failed else None


def classification(repeat: int) -> list[tuple[str, int, float, float]]:
    """(group, size, toolmend ns, paper-rule ns) per corpus case."""
    rows = []
    for line in CORPUS.read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        content = case["content"]
        flags = {k: case[k] for k in ("is_error", "status", "client") if k in case}
        ours, paper = paired(
            functools.partial(toolmend.classify_result, content, **flags),
            functools.partial(paper_rules, content, **flags),
            repeat,
            15,
        )
        group = "failed" if case["expect"]["failed"] else "clean"
        rows.append((group, len(text_of(content) or ""), ours, paper))
    return rows


# -- the rewrite, by history length --------------------------------------------------


def exchange(turn: int, tool: str, result: str, prefix: str = "call") -> list[dict[str, Any]]:
    call_id = f"{prefix}_{turn}"
    return [
        {"role": "assistant", "content": None, "tool_calls": [{"id": call_id, "type": "function",
         "function": {"name": tool, "arguments": json.dumps({"city": "Oslo", "day": turn})}}]},
        {"role": "tool", "tool_call_id": call_id, "content": result},
    ]  # fmt: skip


def conversation(results: int) -> list[dict[str, Any]]:
    """A user turn, then ``results`` earlier tool calls and results, then one that failed."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Plan my trip to Oslo."}]
    for turn in range(results):
        messages += exchange(turn, "forecast", "12 C, rain")
    messages += exchange(results, "forecast", "Error code: 503 - The service is busy.")
    return messages


def rewrite_cost(results: int, repeat: int) -> float:
    messages = conversation(results)
    assert toolmend.rewrite(messages, "c3").report.changed
    return per_call_ns(lambda: toolmend.rewrite(messages, "c3"), repeat)


TOOLS = ("forecast", "hotels", "trains")


def long_run(calls: int, prefix: str) -> float:
    """CPU seconds of one rewrite per model request over a run of ``calls`` tool calls.

    Call ids are new in each run (``prefix``), so nothing is remembered from an
    earlier run; one call in ten fails with a 503, and the next call succeeds.
    """
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Plan my trip to Oslo."}]
    start = time.process_time()
    toolmend.rewrite(messages, "c3")
    for turn in range(calls):
        failed = turn % 10 == 9
        result = "Error code: 503 - The service is busy." if failed else f"{turn} C, rain"
        messages += exchange(turn, TOOLS[turn % 3], result, prefix)
        toolmend.rewrite(messages, "c3")
    return time.process_time() - start


# -- the adapters --------------------------------------------------------------------


@contextlib.contextmanager
def _stock_sleep() -> Iterator[None]:
    """The stock retry middleware's sleeps recorded, not slept."""
    from langchain.agents.middleware import tool_retry

    original = tool_retry.time
    tool_retry.time = types.SimpleNamespace(sleep=lambda _: None)  # type: ignore[assignment]
    try:
        yield
    finally:
        tool_retry.time = original  # type: ignore[misc]


def langchain_costs(rounds: int) -> tuple[float, float, float, float, float] | None:
    """(no middleware, toolmend) on success, (stock retry, toolmend) on a failing tool, in ns.

    Last, a middleware that only passes both calls on, against no middleware: what
    any middleware with both hooks costs in LangChain itself.
    """
    try:
        from langchain.agents import create_agent
        from langchain.agents.middleware import AgentMiddleware, ToolRetryMiddleware
        from langchain_core.messages import AIMessage, ToolMessage
        from langchain_core.tools import tool

        from toolmend_langchain import ToolMendMiddleware
        from toolmend_langchain.testing import ScriptedChatModel
    except ImportError:
        return None

    def script(messages: list[Any]) -> AIMessage | str:
        if any(isinstance(m, ToolMessage) for m in messages):  # after C3's note too
            return "It is 12 C in Oslo."
        call = {"name": "forecast", "args": {"city": "Oslo"}, "id": "call_1", "type": "tool_call"}
        return AIMessage(content="", tool_calls=[call])

    @tool
    def forecast(city: str) -> str:
        """The forecast for a city."""
        return "12 C, rain"

    @tool("forecast")
    def failing(city: str) -> str:
        """The forecast for a city."""
        raise ValueError("invalid literal for int() with base 10: 'Oslo'")

    def agent(body: Any, middleware: list[Any]) -> Callable[[], object]:
        built = create_agent(ScriptedChatModel(script=script), tools=[body], middleware=middleware)
        request = {"messages": [{"role": "user", "content": "Weather in Oslo?"}]}
        return lambda: built.invoke(request)

    plain, ours = paired(agent(forecast, []), agent(forecast, [ToolMendMiddleware()]), 10, rounds)
    with _stock_sleep():
        stock, ours_failing = paired(
            agent(failing, [ToolRetryMiddleware()]),
            agent(failing, [ToolMendMiddleware()]),
            10,
            rounds,
        )

    class PassOn(AgentMiddleware):  # type: ignore[type-arg]
        def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            return handler(request)

        def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            return handler(request)

    bare, passing = paired(agent(forecast, []), agent(forecast, [PassOn()]), 10, rounds)
    return plain, ours, stock, ours_failing, passing / bare


def langchain_requests(results: int) -> tuple[float, float] | None:
    """ns per model request through the middleware's model side, ``results`` tool results before.

    The results carry the records the tool side writes; (all succeeded, the last one
    failed).  The model is a stand-in that answers at once: what is measured is the
    middleware's own work on the request.
    """
    try:
        from langchain.agents.middleware.types import ModelRequest, ModelResponse
        from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

        from toolmend_langchain import KEY, ToolMendMiddleware
    except ImportError:
        return None

    middleware = ToolMendMiddleware()
    clean = {KEY: toolmend.integrations.verdict_record(toolmend.Verdict(False))}
    messages: list[Any] = [HumanMessage("Plan my trip to Oslo.")]
    for turn in range(results):
        call_id = f"call_{turn}"
        call = {"name": "forecast", "args": {"day": turn}, "id": call_id, "type": "tool_call"}
        messages.append(AIMessage("", tool_calls=[call]))
        result = ToolMessage("12 C, rain", tool_call_id=call_id, name="forecast")
        messages.append(result.model_copy(update={"response_metadata": clean}))
    busy = "Error code: 503 - The service is busy."
    failed = [*messages[:-1], ToolMessage(busy, tool_call_id=call_id, name="forecast")]
    answer = ModelResponse(result=[AIMessage("It is 12 C in Oslo.")])

    def request(history: list[Any]) -> Callable[[], object]:
        made = ModelRequest(model=None, messages=history, system_message=None, tool_choice=None,  # type: ignore[arg-type]
                            tools=[], response_format=None, state={"messages": history},  # type: ignore[typeddict-item]
                            runtime=None)  # type: ignore[arg-type]  # fmt: skip
        return lambda: middleware.wrap_model_call(made, lambda _: answer)

    repeat = max(3, 3000 // results)
    return per_call_ns(request(messages), repeat, 5), per_call_ns(request(failed), repeat, 5)


def langchain_tool_steps(results: int, calls: int = 100) -> tuple[float, float] | None:
    """ns per tool call through the middleware's tool step, ``results`` tool results before.

    A run that goes on: each call's state holds the one before plus that call's result
    and the next AI message, as LangGraph's state grows; the results are successes
    without a record, so the loop guard classifies each one it replays.  (the default
    guard, kept per run; a guard from a factory of the user's, rebuilt from the whole
    run for every call as before).
    """
    try:
        from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
        from langchain_core.tools import tool
        from langgraph.prebuilt.tool_node import ToolCallRequest

        from toolmend_langchain import ToolMendMiddleware
    except ImportError:
        return None

    @tool
    def forecast(day: int) -> str:
        """The forecast for a day."""
        return "12 C, rain"

    messages: list[Any] = [HumanMessage("Plan my trip to Oslo.", id="human")]
    requests = []
    for turn in range(results + calls):
        call = {"name": "forecast", "args": {"day": turn}, "id": f"call_{turn}",
                "type": "tool_call"}  # fmt: skip
        messages.append(AIMessage("", tool_calls=[call]))
        if turn >= results:
            state = {"messages": list(messages)}
            requests.append(ToolCallRequest(tool_call=call, tool=forecast, state=state,  # type: ignore[arg-type]
                                            runtime=None))  # type: ignore[arg-type]  # fmt: skip
        messages.append(ToolMessage("12 C, rain", tool_call_id=f"call_{turn}", name="forecast"))
    answer = ToolMessage("12 C, rain", tool_call_id="x", name="forecast")

    def run(middleware: Any) -> float:
        middleware.wrap_tool_call(requests[0], lambda _: answer)  # replays the run once
        start = time.process_time_ns()
        for request in requests[1:]:
            middleware.wrap_tool_call(request, lambda _: answer)
        return (time.process_time_ns() - start) / (len(requests) - 1)

    # A fresh middleware per round, its first call untimed: that one replays the whole
    # run (about 3 us per earlier result), once per run and process.
    kept = min(run(ToolMendMiddleware()) for _ in range(5))
    rebuilt = min(run(ToolMendMiddleware(loop_guard=lambda: toolmend.LoopGuard()))
                  for _ in range(3 if results >= 1000 else 5))  # fmt: skip
    return kept, rebuilt


def agents_sdk_costs(rounds: int) -> tuple[float, float] | None:
    """(plain Agents SDK, with run_config() and toolmend's function_tool) on success, in ns."""
    try:
        from agents import Agent, RunConfig, Runner
        from agents import function_tool as stock_tool
        from agents.testing import ScriptedModel, assistant_message, function_call

        from toolmend_openai_agents import function_tool, run_config
    except ImportError:
        return None

    def forecast(city: str) -> str:
        """The forecast for a city."""
        return "12 C, rain"

    def run(tool: Any, config: Any) -> Callable[[], object]:
        def once() -> object:
            model = ScriptedModel(
                [[function_call("forecast", {"city": "Oslo"}, call_id="call_1")],
                 [assistant_message("It is 12 C in Oslo.")]]
            )  # fmt: skip
            agent = Agent(name="weather", model=model, tools=[tool])
            return Runner.run_sync(agent, "Weather in Oslo?", run_config=config)

        return once

    return paired(
        run(stock_tool(forecast), RunConfig(tracing_disabled=True)),
        run(function_tool(forecast), run_config(tracing_disabled=True)),
        10,
        rounds,
    )


def rss_mib() -> float:
    gc.collect()
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _core_calls() -> Callable[[int], None]:
    from toolmend.integrations import execute

    def thunk(ctx: Any) -> str:
        raise ConnectionRefusedError("[Errno 111] Connection refused")

    policy = toolmend.RetryPolicy.none()

    def calls(n: int) -> None:
        for _ in range(n):
            execute(thunk, tool="fetch", effect="read_only", policy=policy)

    return calls


def _langchain_calls() -> Callable[[int], None]:
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import tool
    from langgraph.prebuilt.tool_node import ToolCallRequest

    from toolmend_langchain import ToolMendMiddleware

    @tool
    def fetch(url: str) -> str:
        """Fetch a page."""
        raise ConnectionRefusedError("[Errno 111] Connection refused")

    middleware = ToolMendMiddleware()
    counter = iter(range(10**9))

    def handler(request: ToolCallRequest) -> ToolMessage:
        assert request.tool is not None
        content = request.tool.invoke(request.tool_call["args"])
        return ToolMessage(content=str(content), tool_call_id=request.tool_call["id"])

    def calls(n: int) -> None:
        for _ in range(n):
            call_id = f"call_{next(counter)}"
            request = ToolCallRequest(
                tool_call={"name": "fetch", "args": {"url": f"https://x/{call_id}"}, "id": call_id,
                           "type": "tool_call"},
                tool=fetch, state={"messages": []}, runtime=None,  # type: ignore[arg-type]
            )  # fmt: skip
            middleware.wrap_tool_call(request, handler)

    return calls


def _agents_calls() -> Callable[[int], None]:
    from agents.tool_context import ToolContext

    from toolmend_openai_agents import function_tool

    def fetch(url: str) -> str:
        """Fetch a page."""
        raise ConnectionRefusedError("[Errno 111] Connection refused")

    tool = function_tool(fetch)
    counter = iter(range(10**9))

    async def run(n: int) -> None:
        for _ in range(n):
            call_id = f"call_{next(counter)}"
            arguments = json.dumps({"url": f"https://x/{call_id}"})
            ctx = ToolContext(
                None, tool_name="fetch", tool_call_id=call_id, tool_arguments=arguments
            )
            await tool.on_invoke_tool(ctx, arguments)

    return lambda n: asyncio.run(run(n))


def _mcp_calls() -> Callable[[int], None]:
    from mcp import Client
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from toolmend_mcp import RecoveringSession

    server = MCPServer("bench")

    @server.tool()
    def fetch(url: str) -> str:
        """Fetch a page."""
        raise ToolError("Forbidden: you may not read this page")

    counter = iter(range(10**9))

    async def run(n: int) -> None:
        async with Client(server) as client:
            session = RecoveringSession(client, effects={"fetch": "read_only"})
            for _ in range(n):
                await session.call_tool("fetch", {"url": f"https://x/{next(counter)}"})

    return lambda n: asyncio.run(run(n))


def memory(first: int, second: int) -> list[tuple[str, float, float, float]]:
    """(adapter, RSS before, after ``first`` and after ``second`` failing calls) in MiB."""
    rows = []
    # The Agents SDK warns on every failing call made outside a run, and the MCP
    # server logs each call to the console: neither is what is measured here.
    logging.disable(logging.WARNING)
    for name, make in [("core execute", _core_calls), ("LangChain middleware", _langchain_calls),
                       ("Agents SDK function_tool", _agents_calls),
                       ("MCP RecoveringSession", _mcp_calls)]:  # fmt: skip
        try:
            calls = make()
        except ImportError:
            continue
        calls(50)  # imports, caches and first-call allocations out of the way
        before = rss_mib()
        calls(first)
        after_first = rss_mib()
        calls(second - first)
        rows.append((name, before, after_first, rss_mib()))
    return rows


def _untraced(tool: str, arguments: object) -> contextlib.nullcontext[None]:
    return contextlib.nullcontext()


def failed_call_cost(repeat: int) -> tuple[float, float]:
    """ns per failed call (classified, not retried) without and with the instrumentation.

    Without an SDK the hook is a check of the API's globals; with one, toolmend's
    spans cost what the SDK costs.
    """
    from toolmend import telemetry
    from toolmend.integrations import execute

    def thunk(ctx: Any) -> str:
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


def by_length(title: str, measure: Callable[[int], tuple[float, float] | None], extra: int) -> None:
    """Print ``measure`` (two ns figures) at 10, 100 and 1,000 earlier tool results."""
    rows = [(n, measure(n)) for n in (10, 100, 1000)]
    if any(pair is None for _, pair in rows):
        return
    print(f"  LangChain {title}")
    for n, pair in rows:
        assert pair is not None
        print(f"  {n:>6} results ({2 * n + extra:>5} messages): {pair[0] / 1000:9.1f} "
              f"{pair[1] / 1000:9.1f}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=100, help="calls per timed run")
    parser.add_argument("--quick", action="store_true", help="fewer rounds, 200/2,000 calls")
    args = parser.parse_args()
    rounds = 5 if args.quick else 15

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{os.cpu_count()} CPUs, load average {load} (1, 5, 15 min) at the start")

    print()
    print("toolmend.rewrite(messages, 'c3'), the last tool result failed")
    print(f"{'earlier results':>16}{'us per call':>14}{'vs 10':>8}")
    base = 0.0
    for results in (10, 100, 1000):
        cost = rewrite_cost(results, max(1, args.repeat // 3)) / 1000
        base = base or cost
        print(f"{results:>16}{cost:>14.1f}{cost / base:>8.2f}")

    print()
    runs = [long_run(1000, f"run{n}") for n in range(3 if args.quick else 5)]
    print(
        f"a run of 1,000 tool calls, one rewrite per model request: {min(runs) * 1000:.0f} ms "
        f"of CPU (best of {len(runs)}; median {statistics.median(runs) * 1000:.0f} ms)"
    )

    rows = classification(args.repeat)
    small = [row for row in rows if row[1] < SMALL]
    print()
    print(f"toolmend.classify_result per tool message ({len(rows)} corpus cases, best of 15 "
          f"x {args.repeat} calls each; 'paper': the paper's rules restated naively)")  # fmt: skip
    print(f"{'set':<20}{'cases':>6}{'median us':>11}{'p90 us':>9}{'max us':>9}"
          f"{'paper us':>10}{'vs paper':>10}")  # fmt: skip
    for name, chosen in [
        ("clean, < 1 KB", [r for r in small if r[0] == "clean"]),
        ("failed, < 1 KB", [r for r in small if r[0] == "failed"]),
        ("mixed, < 1 KB", small),
        ("failed, >= 1 KB", [r for r in rows if r[0] == "failed" and r[1] >= SMALL]),
    ]:
        costs = sorted(r[2] / 1000 for r in chosen)
        paper = statistics.median(r[3] / 1000 for r in chosen)
        p90 = costs[max(0, math.ceil(0.9 * len(costs)) - 1)]
        median = statistics.median(costs)
        print(f"{name:<20}{len(costs):>6}{median:>11.2f}{p90:>9.2f}{costs[-1]:>9.2f}"
              f"{paper:>10.2f}{median / paper:>9.2f}x")  # fmt: skip

    print()
    print("agent runs on a scripted model, two steps (ms per run, best of alternating rounds)")
    langchain = langchain_costs(rounds)
    if langchain is not None:
        plain, ours, stock, ours_failing, passing = langchain
        print(f"  LangChain create_agent, success: no middleware {plain / 1e6:.2f}, "
              f"ToolMendMiddleware {ours / 1e6:.2f}: {ours / plain:.2f}x "
              f"(a middleware that only passes both calls on: {passing:.2f}x)")  # fmt: skip
        print(f"  LangChain create_agent, failing tool: ToolRetryMiddleware() "
              f"{stock / 1e6:.2f}, ToolMendMiddleware {ours_failing / 1e6:.2f}: "
              f"{ours_failing / stock:.2f}x")  # fmt: skip
    by_length("model side per request (us), by earlier tool results: "
              "all succeeded / the last one failed", langchain_requests, 1)  # fmt: skip
    by_length("tool step per call (us), by earlier tool results in the run: "
              "the loop guard kept per run / rebuilt from the run for every call",
              langchain_tool_steps, 2)  # fmt: skip
    sdk = agents_sdk_costs(rounds)
    if sdk is not None:
        print(f"  Agents SDK Runner, success: plain {sdk[0] / 1e6:.2f}, run_config() and "
              f"toolmend function_tool {sdk[1] / 1e6:.2f}: {sdk[1] / sdk[0]:.2f}x")  # fmt: skip

    plain, instrumented = failed_call_cost(args.repeat)
    print()
    print(f"a failed call through execute (classified, not retried), no OpenTelemetry SDK: "
          f"{plain / 1000:.1f} us with a null hook, {instrumented / 1000:.1f} us instrumented "
          f"({instrumented / plain - 1:+.1%})")  # fmt: skip

    first, second = (200, 2000) if args.quick else (2000, 20000)
    print()
    print("resident memory, MiB, failing calls through each adapter in one process")
    print(f"{'adapter':<28}{'before':>8}{f'{first:,}':>9}{f'{second:,}':>9}{'growth':>9}")
    for name, before, after_first, after_second in memory(first, second):
        print(f"{name:<28}{before:>8.1f}{after_first:>9.1f}{after_second:>9.1f}"
              f"{after_second - after_first:>+9.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
