"""Smoke test of the installed ``toolmend-adk`` wheel: an ADK runner whose read-only tool
fails once with a ConnectionError and is retried inside the call by ``ToolMendPlugin``."""

from __future__ import annotations

import asyncio

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.runners import InMemoryRunner
from google.genai import types

import toolmend
from toolmend_adk import ToolMendPlugin
from toolmend_adk.testing import ScriptedLlm, call, reply

runs: list[str] = []


def forecast(city: str) -> dict[str, str]:
    """The forecast."""
    runs.append(city)
    if len(runs) == 1:
        raise ConnectionError("connection reset by peer")
    return {"city": city, "forecast": "sunny"}


async def main() -> ScriptedLlm:
    model = ScriptedLlm(script=[call("forecast", {"city": "Oslo"}), reply("Sunny.")])
    agent = LlmAgent(name="a", model=model, tools=[forecast])
    plugin = ToolMendPlugin(effects={"forecast": "read_only"})
    runner = InMemoryRunner(app=App(name="smoke", root_agent=agent, plugins=[plugin]))
    session = await runner.session_service.create_session(app_name="smoke", user_id="u")
    message = types.Content(role="user", parts=[types.Part(text="Weather?")])
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
        pass
    await runner.close()
    return model


with toolmend.testing(seed=0):
    model = asyncio.run(main())
response = model.function_responses(1)[0]["response"]
assert response == {"city": "Oslo", "forecast": "sunny"}, response
assert runs == ["Oslo", "Oslo"], runs
print(f"retried inside the call: {len(runs)} runs, the model read {response}")
