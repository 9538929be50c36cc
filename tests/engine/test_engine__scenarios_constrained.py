"""The embedded model under constraints, over the Responses and Chat APIs and the Agents SDK.

The grammar guarantees the shape, so the assertions are about the shape (a
well-formed call to an offered tool, JSON matching the schema), not about what
a 135M model chooses to write.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
from agents import (
    Agent,
    FunctionToolResult,
    ModelBehaviorError,
    ModelSettings,
    OpenAIResponsesModel,
    RunConfig,
    RunContextWrapper,
    Runner,
    ToolsToFinalOutputResult,
    function_tool,
)
from engine_fakes import running

from toolmend_engine import ChatEngine, make_server
from toolmend_engine.eval._scenarios import load_suite

pytestmark = pytest.mark.engine

TOOLS = list(load_suite().tools)
FLAT_TOOLS = [{"type": "function", **t["function"]} for t in TOOLS]
SCHEMAS = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
PARCEL = "Track parcel ZP-40021-Q."
NAME = "SmolLM2-135M-Instruct.Q4_1"
"""The id the server answers to: the model file's name."""
PERSON: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
    "required": ["city", "country"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def base(model: Any) -> Iterator[str]:
    with running(make_server(ChatEngine(model), port=0)) as url:
        yield url


@pytest.fixture(scope="module")
def client(base: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=base + "/v1", api_key="unused", max_retries=0, _strict_response_validation=True
    )


def _matches(arguments: str, schema: dict[str, Any]) -> bool:
    """The arguments parse and have the schema's required keys, all strings, and no others."""
    value = json.loads(arguments)
    return (
        isinstance(value, dict)
        and set(schema["required"]) <= set(value) <= set(schema["properties"])
        and all(isinstance(v, str) for v in value.values())
    )


def _call(item: Any) -> tuple[str, str, str]:
    """A call without its ids (random for every generation)."""
    return (item.type, item.name, item.arguments)


def test_required_and_named_choices_force_a_well_formed_call(client: openai.OpenAI) -> None:
    chat = client.chat.completions.create(
        model=NAME,
        messages=[{"role": "user", "content": PARCEL}],
        tools=TOOLS,
        tool_choice="required",
        max_tokens=64,
    )
    choice = chat.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.tool_calls is not None
    (call,) = choice.message.tool_calls
    assert call.function.name in SCHEMAS  # type: ignore[union-attr]
    assert _matches(call.function.arguments, SCHEMAS[call.function.name])  # type: ignore[union-attr]
    kwargs: dict[str, Any] = {
        "model": NAME,
        "input": PARCEL,
        "tools": FLAT_TOOLS,
        "tool_choice": {"type": "function", "name": "find_book"},
        "max_output_tokens": 64,
    }
    named = client.responses.create(**kwargs)
    assert named.status == "completed"
    (item,) = named.output
    assert (item.type, item.name) == ("function_call", "find_book")  # type: ignore[union-attr]
    assert _matches(item.arguments, SCHEMAS["find_book"])  # type: ignore[union-attr]
    with client.responses.stream(**kwargs) as stream:
        for _ in stream:
            pass
        streamed = stream.get_final_response()
    assert [_call(o) for o in streamed.output] == [_call(o) for o in named.output]


def test_json_formats_give_json(client: openai.OpenAI) -> None:
    strict = {"name": "place", "schema": PERSON, "strict": True}
    chat = client.chat.completions.create(
        model=NAME,
        messages=[{"role": "user", "content": "Where is the Eiffel Tower? Answer in JSON."}],
        response_format={"type": "json_schema", "json_schema": strict},
        max_tokens=48,
    )
    assert chat.choices[0].finish_reason == "stop"
    place = json.loads(chat.choices[0].message.content or "")
    assert set(place) == {"city", "country"}
    assert all(isinstance(v, str) for v in place.values())
    response = client.responses.create(
        model=NAME,
        input="Reply in JSON with the keys city and country for Paris.",
        text={"format": {"type": "json_object"}},
        max_output_tokens=48,
    )
    assert response.status == "completed"
    assert isinstance(json.loads(response.output_text), dict)


def test_tool_choice_none_gives_no_calls(client: openai.OpenAI) -> None:
    chat = client.chat.completions.create(
        model=NAME,
        messages=[{"role": "user", "content": PARCEL}],
        tools=TOOLS,
        tool_choice="none",
        max_tokens=24,
    )
    assert chat.choices[0].message.tool_calls is None
    assert chat.choices[0].message.content
    response = client.responses.create(
        model=NAME, input=PARCEL, tools=FLAT_TOOLS, tool_choice="none", max_output_tokens=24
    )
    assert [item.type for item in response.output] == ["message"]


def test_agents_sdk_default_model_retries_after_a_transient_failure(base: str) -> None:
    """A forced first call fails; the next request carries the note (C3), and the run ends.

    Whether the model then retries or answers in text is the model's choice; the
    requests and the layer's report are the same either way.
    """
    calls: list[str] = []
    headers: list[str | None] = []
    choices: list[Any] = []

    @function_tool
    def track_parcel(tracking_number: str) -> str:
        """Find where a parcel is now."""
        calls.append(tracking_number)
        if len(calls) == 1:
            return "Error: 503 Service Unavailable"
        return "At the Leeds depot."

    def stop_on_success(
        _: RunContextWrapper[Any], results: list[FunctionToolResult]
    ) -> ToolsToFinalOutputResult:
        done = results[-1].output != "Error: 503 Service Unavailable"
        return ToolsToFinalOutputResult(done, results[-1].output if done else None)

    async def sent(request: httpx.Request) -> None:
        choices.append(json.loads(request.content).get("tool_choice"))

    async def received(response: httpx.Response) -> None:
        headers.append(response.headers.get("x-tool-errors"))

    client = openai.AsyncOpenAI(
        base_url=base + "/v1",
        api_key="unused",
        max_retries=0,
        _strict_response_validation=True,
        http_client=httpx.AsyncClient(event_hooks={"request": [sent], "response": [received]}),
    )
    agent = Agent(
        name="parcels",
        instructions="You track parcels.",
        tools=[track_parcel],
        tool_use_behavior=stop_on_success,
        model=OpenAIResponsesModel(model=NAME, openai_client=client),
        model_settings=ModelSettings(
            tool_choice="required", max_tokens=64, extra_body={"tool_errors": "c3"}
        ),
    )

    async def run() -> Any:
        result = Runner.run_streamed(
            agent, PARCEL, run_config=RunConfig(tracing_disabled=True), max_turns=4
        )
        async for _ in result.stream_events():
            pass
        return result.final_output

    # Greedy decoding makes the model's choice fixed: after the note it answers in text
    # and runs out of max_tokens before it ends, and the SDK refuses an incomplete
    # response.  The requests and the layer's report are what this test is about.
    with pytest.raises(ModelBehaviorError, match="max_output_tokens"):
        asyncio.run(run())
    assert len(calls) == 1
    assert choices == ["required", None]
    assert headers == [
        "failed=none; form=c3; changed=false",
        "failed=2:track_parcel:transient:generic/paper; form=c3; changed=true",
    ]
