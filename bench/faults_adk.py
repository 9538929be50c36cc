"""Fault benchmark on Google ADK: stock ADK, ``ReflectAndRetryToolPlugin`` and ``ToolMendPlugin``.

Each task is one real ``InMemoryRunner`` run (google-adk) with a scripted model and a
scripted tool, no network; retry waits are virtual (``toolmend.testing``).  The model
is a simple agent: it calls the tool, and while the function response is an error it
calls it again (same arguments, up to 3 calls in all) unless the response tells it not
to repeat the call or to check first (``STOP``); the "ignores advice" scenario's model
repeats regardless.  Run::

    ./dev python bench/faults_adk.py [--runs 50]

Scenarios: a write whose reply is lost (it commits, then ``TimeoutError``), with the
model that obeys and with one that repeats whatever it is told; a read that
fails its first 2 attempts with ``ConnectionError``; a read whose first result is
``{"error": "503 Service Unavailable"}`` (a failure inside a successful result); a 403
(``PermissionError``) that the model repeats 3 times whatever it is told (the loop guard).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import Any

from faults import text_table
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins import ReflectAndRetryToolPlugin
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import InMemoryRunner
from google.genai import types
from pydantic import Field

import toolmend
from toolmend.integrations import reset_budgets
from toolmend_adk import ToolMendPlugin
from toolmend_adk.testing import call, reply

STOP = (
    "Do not repeat the exact same call",  # ReflectAndRetryToolPlugin, on every failure
    "Check whether it did before calling it again",  # toolmend: verify first
    "cannot be fixed by retrying",
    "retrying now is unlikely to help",
    "Stop retrying it",
    "was not run",
)
LANDED = ("may already have taken effect",)
MAX_CALLS = 3


def is_error(response: dict[str, Any] | None) -> bool:
    """Whether a function response reports a failure (toolmend's or ADK's plugin's shape)."""
    return bool(response) and ("error" in response or "error_details" in response)


class Agentish(BaseLlm):
    """Calls the tool, then calls it again while the answer is an error (see the module)."""

    model: str = "agentish"
    tool: str = "tool"
    args: dict[str, Any] = Field(default_factory=dict)
    obeys: bool = True
    responses: list[dict[str, Any]] = Field(default_factory=list)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1].parts or []
        answers = [p.function_response.response for p in last if p.function_response]
        self.responses.extend(a or {} for a in answers)
        calls = len(self.responses)
        if not answers:
            yield call(self.tool, self.args, id="c0")
            return
        text = json.dumps(answers[-1])
        failed = is_error(answers[-1])
        stop = self.obeys and any(s in text for s in STOP)
        if failed and not stop and calls < MAX_CALLS:
            yield call(self.tool, self.args, id=f"c{calls}")
        else:
            yield reply("done")


@dataclass
class Backend:
    """The scripted tool's side: executions, committed effects."""

    runs: int = 0
    effects: int = 0


@dataclass(frozen=True)
class Scenario:
    name: str
    tool: str
    effect: str
    make: Callable[[Backend], Callable[..., Any]]
    obeys: bool = True


def lost_reply(b: Backend) -> Callable[..., Any]:
    def book_room(room: str) -> dict[str, Any]:
        """Book a room."""
        b.runs += 1
        b.effects += 1
        raise TimeoutError("the booking service did not answer in 10 s")

    return book_room


def flaky_read(b: Backend) -> Callable[..., Any]:
    def forecast(city: str) -> dict[str, Any]:
        """The forecast."""
        b.runs += 1
        if b.runs <= 2:
            raise ConnectionError("connection reset by peer")
        return {"city": city, "forecast": "sunny"}

    return forecast


def returned_503(b: Backend) -> Callable[..., Any]:
    def stock(sku: str) -> dict[str, Any]:
        """Units in stock."""
        b.runs += 1
        return {"error": "503 Service Unavailable"} if b.runs == 1 else {"sku": sku, "units": 12}

    return stock


def forbidden(b: Backend) -> Callable[..., Any]:
    def read_file(path: str) -> str:
        """Read a file."""
        b.runs += 1
        raise PermissionError(f"access denied: {path}")

    return read_file


SCENARIOS = [
    Scenario("write, lost reply", "book_room", "write", lost_reply),
    Scenario("write, lost reply, model repeats", "book_room", "write", lost_reply, obeys=False),
    Scenario("read, 2x ConnectionError", "forecast", "read_only", flaky_read),
    Scenario('read returns {"error": "503"}', "stock", "read_only", returned_503),
    Scenario("403, model ignores advice", "read_file", "read_only", forbidden, obeys=False),
]
ARGS = {"book_room": {"room": "A1"}, "forecast": {"city": "Oslo"}, "stock": {"sku": "X"},
        "read_file": {"path": "/etc/shadow"}}  # fmt: skip
HANDLERS: dict[str, Callable[[Scenario], list[BasePlugin]]] = {
    "ADK, no plugin": lambda s: [],
    "ReflectAndRetryToolPlugin": lambda s: [ReflectAndRetryToolPlugin()],
    "ToolMendPlugin": lambda s: [ToolMendPlugin(effects={s.tool: s.effect})],
}


@dataclass
class Row:
    scenario: str
    handler: str
    runs: int = 0
    ended: int = 0
    recovered: int = 0
    executions: int = 0
    duplicates: int = 0
    refused: int = 0
    turns: int = 0
    landed_said: int = 0
    failed_responses: int = 0


async def one(scenario: Scenario, plugins: list[BasePlugin], row: Row) -> None:
    backend = Backend()
    model = Agentish(tool=scenario.tool, args=ARGS[scenario.tool], obeys=scenario.obeys)
    agent = LlmAgent(name="a", model=model, tools=[scenario.make(backend)])
    runner = InMemoryRunner(app=App(name="bench", root_agent=agent, plugins=plugins))
    session = await runner.session_service.create_session(app_name="bench", user_id="u")
    message = types.Content(role="user", parts=[types.Part(text="go")])
    try:
        async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
            pass
    except Exception:
        row.ended += 1
    finally:
        await runner.close()
    row.runs += 1
    row.executions += backend.runs
    row.duplicates += max(0, backend.effects - 1)
    row.turns += len(model.responses)
    last = model.responses[-1] if model.responses else {}
    row.recovered += bool(model.responses) and not is_error(last)
    for response in model.responses:
        text = json.dumps(response)
        if not is_error(response):
            continue
        row.failed_responses += 1
        row.refused += "was not run" in text
        row.landed_said += any(s in text for s in LANDED)


def render(rows: list[Row]) -> str:
    header = (
        "scenario", "handler", "runs", "run ended", "recovered", "tool runs/task",
        "dup effects/1000", "refused/task", "tool answers/task", "says may have landed",
    )  # fmt: skip
    table = [header]
    for r in rows:
        table.append(
            (
                r.scenario,
                r.handler,
                str(r.runs),
                f"{100 * r.ended / r.runs:.0f}%",
                f"{100 * r.recovered / r.runs:.0f}%",
                f"{r.executions / r.runs:.2f}",
                f"{1000 * r.duplicates / r.runs:.0f}",
                f"{r.refused / r.runs:.2f}",
                f"{r.turns / r.runs:.2f}",
                f"{r.landed_said}/{r.failed_responses}" if r.failed_responses else "-",
            )
        )
    return text_table(table)


async def bench(runs: int) -> list[Row]:
    rows = []
    for scenario in SCENARIOS:
        for handler, plugins in HANDLERS.items():
            row = Row(scenario.name, handler)
            for _ in range(runs):
                reset_budgets()
                await one(scenario, plugins(scenario), row)
            rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=50, help="tasks per scenario and handler")
    args = parser.parse_args(argv)
    import logging

    logging.disable(logging.CRITICAL)  # ADK logs every tool error it re-raises
    with toolmend.testing(seed=0):
        rows = asyncio.run(bench(args.runs))
    print(render(rows))


if __name__ == "__main__":
    main()
