"""The OpenAI Agents SDK on the engine, with both model classes: X-Tool-Errors, form C3.

    pip install 'toolmend-engine[clients,model]'
    toolmend-engine serve          # or: toolmend-engine proxy --upstream URL
    python examples/engine_clients/agents_sdk.py

``Agent()`` without a model asks for the SDK's default model over the Responses API
(``OpenAIResponsesModel``); ``serve`` answers to any model name by default, so that
works unchanged.  ``OpenAIChatCompletionsModel`` uses Chat Completions.  The SDK does
not show response headers: an httpx event hook on the client reads them.
"""

import asyncio
import os

import httpx
from agents import (
    Agent,
    ModelSettings,
    OpenAIChatCompletionsModel,
    Runner,
    set_default_openai_client,
    set_tracing_disabled,
)
from openai import AsyncOpenAI

base_url = os.environ.get("TOOLMEND_BASE_URL", "http://127.0.0.1:8080/v1")
headers: list[str] = []


async def keep_header(response: httpx.Response) -> None:
    headers.append(response.headers.get("X-Tool-Errors", "(none)"))


client = AsyncOpenAI(
    base_url=base_url,
    api_key="not-needed",
    http_client=httpx.AsyncClient(event_hooks={"response": [keep_header]}),
)
set_default_openai_client(client, use_for_tracing=False)
set_tracing_disabled(True)  # nothing is sent to OpenAI's trace endpoint
# the form of these requests (the server's default otherwise)
settings = ModelSettings(extra_body={"tool_errors": "c3"})
history = [
    {"role": "user", "content": "What is the weather in Oslo?"},
    {
        "type": "function_call",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": '{"city": "Oslo"}',
    },
    {
        "type": "function_call_output",
        "call_id": "call_1",
        "output": "Error: 503 Service Unavailable",
    },
]
agents = {
    "Responses (the SDK's default model)": Agent(name="assistant", model_settings=settings),
    "Chat Completions": Agent(
        name="assistant",
        model=OpenAIChatCompletionsModel(model="local", openai_client=client),
        # a short reply; the SDK takes a Responses reply cut at max_tokens for an error
        # ("response.incomplete"), so the agent above is not capped
        model_settings=ModelSettings(max_tokens=32, extra_body={"tool_errors": "c3"}),
    ),
}


async def main() -> None:
    for label, agent in agents.items():
        result = await Runner.run(agent, history)  # type: ignore[arg-type]
        print(f"{label}: X-Tool-Errors: {headers[-1]}")
        print("reply:", result.final_output)


asyncio.run(main())
