"""Smoke test of the installed ``toolmend-openai-agents`` wheel: under the SDK's scripted
model, a read-only tool that times out once is retried inside the call, and a write that
is refused shows the model the real cause instead of the SDK's generic text."""

from __future__ import annotations

import asyncio
from typing import Any

from agents import Agent, Runner
from agents.testing import ScriptedModel, assistant_message, function_call

from toolmend import RetryPolicy
from toolmend_openai_agents import function_tool, run_config

calls: list[str] = []


@function_tool(effect="read_only", retry=RetryPolicy(attempts=3, base=0.01, cap=0.02))
def get_weather(city: str) -> str:
    """Current weather for a city."""
    calls.append(city)
    if len(calls) == 1:
        raise TimeoutError("the weather service did not answer")
    return f"{city}: 14°C"


@function_tool(effect="write")
def book_table(restaurant: str) -> str:
    """Book a restaurant table."""
    raise PermissionError("this API key may read bookings but not create them")


def outputs(result: Any) -> dict[str, str]:
    return {
        item["call_id"]: item["output"]
        for item in result.to_input_list()
        if item.get("type") == "function_call_output"
    }


async def main() -> None:
    model = ScriptedModel(
        [
            [
                function_call("get_weather", {"city": "Oslo"}, call_id="w"),
                function_call("book_table", {"restaurant": "Fiskeriet"}, call_id="b"),
            ],
            [assistant_message("Oslo: 14°C. Not booked.")],
        ]
    )
    agent = Agent(name="assistant", model=model, tools=[get_weather, book_table])
    result = await Runner.run(
        agent, "Weather, then book.", run_config=run_config(tracing_disabled=True)
    )
    seen = outputs(result)
    assert calls == ["Oslo", "Oslo"], calls
    assert seen["w"] == "Oslo: 14°C", seen
    assert seen["b"].startswith(
        "Tool 'book_table' failed after 1 attempt with PermissionError: "
        "this API key may read bookings but not create them"
    ), seen
    assert result.final_output == "Oslo: 14°C. Not booked.", result.final_output
    print("toolmend-openai-agents:", seen["b"].splitlines()[0])


if __name__ == "__main__":
    asyncio.run(main())
