"""A failing tool under the Agents SDK's Runner (scripted model) traced through the SDK."""

from __future__ import annotations

from agents import Agent, Runner
from agents.testing import ScriptedModel, assistant_message, function_call
from oa_support import config, http_error, script
from otel_support import SECRET_ARGUMENT, Otel, attrs, events, status, text_of_spans

import toolmend_openai_agents as tm
from toolmend.integrations import SleepLog


async def test_a_failing_tool_gives_the_documented_span(otel: Otel, sleeps: SleepLog) -> None:
    @tm.function_tool(effect="read_only")
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        raise http_error(503)

    model = script("get_weather", {"city": SECRET_ARGUMENT}, "call_w", "No weather today.")
    agent = Agent(name="weather", model=model, tools=[get_weather])

    await Runner.run(agent, "Weather?", run_config=config())

    [span] = otel.spans()
    assert span.name == "execute_tool get_weather"
    assert status(span) == ("ERROR", None)
    assert attrs(span) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "get_weather",
        "gen_ai.tool.call.id": "call_w",
        "toolmend.framework": "openai_agents",
        "toolmend.attempts": 3,
        "toolmend.outcome": "unknown",
        "toolmend.effect": "read_only",
        "error.type": "httpx.HTTPStatusError",
        "toolmend.kind": "transient",
        "toolmend.rule": "exception",
        "toolmend.evidence.length": 8,
        "toolmend.evidence.hash": "1e682c53d8c50a63",
        "toolmend.signature.hash": "1315158e6d32889e",
        "toolmend.stop_reason": "attempts",
    }
    first, second = sleeps.sleeps
    assert [(e["toolmend.attempt"], e["toolmend.attempt.wait"]) for _, e in events(span)] == [
        (1, 0.0),
        (2, first),
        (3, second),
    ]
    assert SECRET_ARGUMENT not in text_of_spans([span])
    assert otel.metrics() == {
        "toolmend.tool.failures": {
            (("gen_ai.tool.name", "get_weather"), ("toolmend.kind", "transient")): 1
        },
        "toolmend.tool.retries": {
            (("gen_ai.tool.name", "get_weather"), ("toolmend.kind", "transient")): 2
        },
        "toolmend.tool.attempts": {(("gen_ai.tool.name", "get_weather"),): (1, 3)},
    }


async def test_a_repeated_fixable_call_is_refused_as_an_event(otel: Otel) -> None:
    @tm.function_tool(effect="read_only")
    def lookup(email: str) -> str:
        """Look a customer up."""
        raise http_error(422)

    model = ScriptedModel(
        [
            [function_call("lookup", {"email": SECRET_ARGUMENT}, call_id="l1")],
            [function_call("lookup", {"email": SECRET_ARGUMENT}, call_id="l2")],
            [assistant_message("Not found.")],
        ]
    )
    agent = Agent(name="crm", model=model, tools=[lookup])

    await Runner.run(agent, "Find her", run_config=config())

    first, refused = otel.spans()
    assert attrs(first)["toolmend.kind"] == "fixable"
    assert attrs(refused)["gen_ai.tool.call.id"] == "l2"
    assert attrs(refused)["error.type"] == "toolmend.refused"
    assert status(refused) == ("ERROR", None)
    assert events(refused) == [
        (
            "toolmend.loop_guard.refusal",
            {
                "toolmend.rule": "loop-repeat",
                "toolmend.kind": "fixable",
                "toolmend.reason": "exact repeat of a failed call",
            },
        )
    ]
    assert otel.metrics()["toolmend.loop_guard.refusals"] == {
        (("gen_ai.tool.name", "lookup"), ("toolmend.rule", "loop-repeat")): 1
    }
