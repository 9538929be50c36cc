"""An OpenAI Agents SDK agent that recovers from failed tool calls with toolmend.

    pip install 'toolmend-openai-agents[examples]'
    python examples/openai_agents_agent.py                      # offline, scripted model
    python examples/openai_agents_agent.py --base-url http://127.0.0.1:8080/v1 --model local

Two tools fail: ``get_weather`` (read-only) answers 503 twice, and toolmend
retries it inside the call; ``book_table`` (a write) is refused with a
PermissionError, which is not retried.  The model reads the real cause instead
of the SDK's "An error occurred while running the tool. Please try again.",
and, in form C3, a note with the true next step at its next decision.  The
note is only in that one request: ``result.to_input_list()`` never holds it.
With ``--base-url`` the same agent runs against any OpenAI-compatible endpoint
through the SDK's ``OpenAIChatCompletionsModel``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

import httpx
from agents import Agent, Model, Runner, Tool
from agents.testing import ScriptedModel, assistant_message, function_call

from toolmend import RetryPolicy
from toolmend_openai_agents import Captured, capture, function_tool, run_config

QUESTION = "What is the weather in Oslo? And book a table for two at Fiskeriet at 19:00."
INSTRUCTIONS = "You are a helpful assistant. Use the tools to answer."
RETRY = RetryPolicy(attempts=3, base=0.05, cap=0.2)


def make_tools() -> list[Tool]:
    """Fresh tools for one run: the weather service is down for its first two requests."""
    weather_requests: list[str] = []

    @function_tool(effect="read_only", retry=RETRY)
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        weather_requests.append(city)
        if len(weather_requests) <= 2:
            request = httpx.Request("GET", f"https://weather.example/v1/{city}")
            httpx.Response(503, request=request).raise_for_status()
        return f"{city}: 14°C, light rain"

    @function_tool(effect="write")
    def book_table(restaurant: str, time: str, people: int) -> str:
        """Book a restaurant table."""
        raise PermissionError("this API key may read bookings but not create them")

    return [get_weather, book_table]


def scripted_model() -> ScriptedModel:
    calls = [
        function_call("get_weather", {"city": "Oslo"}, call_id="call_weather"),
        function_call(
            "book_table",
            {"restaurant": "Fiskeriet", "time": "19:00", "people": 2},
            call_id="call_booking",
        ),
    ]
    answer = (
        "Oslo: 14°C with light rain. I could not book the table: the booking service "
        "refused the request because this account may not create bookings."
    )
    return ScriptedModel([calls, [assistant_message(answer)]])


def openai_model(base_url: str, model: str, api_key: str | None) -> Model:
    from agents import OpenAIChatCompletionsModel
    from openai import AsyncOpenAI

    key = api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
    client = AsyncOpenAI(base_url=base_url, api_key=key)
    return OpenAIChatCompletionsModel(model=model, openai_client=client)


def line(item: Any) -> str:
    """One input item as a short line."""
    kind = item.get("type")
    if kind == "function_call":
        arguments = ", ".join(f"{k}={v}" for k, v in json.loads(item["arguments"]).items())
        return f"model -> {item['name']}({arguments})"
    if kind == "function_call_output":
        return f"tool [{item['call_id']}]: {item['output']}"
    content = item.get("content")
    if isinstance(content, list):
        content = " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    return f"{item.get('role', kind)}: {content}"


def summary(captured: Captured) -> list[str]:
    lines = [
        f"{f.tool} [{f.call_id}]: failed kind={f.kind} attempts={f.attempts} stop={f.stop}"
        for f in captured.failures
    ]
    lines += [f"model request: {r.header()}" for r in captured.rewrites]
    return lines


async def run(model: Model, question: str) -> tuple[Any, Captured]:
    agent = Agent(name="assistant", instructions=INSTRUCTIONS, model=model, tools=make_tools())
    with capture() as captured:
        result = await Runner.run(agent, question, run_config=run_config(tracing_disabled=True))
    return result, captured


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--base-url", help="an OpenAI-compatible endpoint, e.g. .../v1")
    parser.add_argument("--model", default="local", help="model name for --base-url")
    parser.add_argument("--api-key", help="defaults to $OPENAI_API_KEY, else a placeholder")
    parser.add_argument("--question", default=QUESTION)
    parser.add_argument("-v", "--verbose", action="store_true", help="show toolmend's log")
    args = parser.parse_args(argv)
    if args.verbose:
        logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")

    scripted = None if args.base_url else scripted_model()
    model: Model = scripted or openai_model(args.base_url, args.model, args.api_key)
    result, captured = asyncio.run(run(model, args.question))

    print("== history (result.to_input_list(): no note in it) ==")
    for item in result.to_input_list():
        print(line(item))
    if scripted is not None and len(scripted.calls) > 1:
        print("\n== the end of what the model was sent at its second decision ==")
        print(line(scripted.calls[1].input[-1]))
    print("\n== toolmend reports ==")
    for text in summary(captured):
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
