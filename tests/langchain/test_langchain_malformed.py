"""Malformed calls under create_agent: an unknown tool, arguments that are not a JSON
object, arguments that break the tool's schema.  Each comes back to the model as a
fixable error with the core's text, the run goes on, and the tool body never runs;
``malformed_calls=False`` leaves LangChain's own handling exactly as it was."""

from __future__ import annotations

import logging
from collections import Counter
from typing import Annotated, Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import ModelCallLimitMiddleware
from langchain.agents.structured_output import ToolStrategy
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from lc_support import ai, call, notes, shape
from pydantic import BaseModel, Field, field_validator

from toolmend import Kind
from toolmend.integrations import GUIDANCE, runtime_note
from toolmend_langchain import ToolMendMiddleware, reports
from toolmend_langchain.testing import ScriptedChatModel, replies

GO = {"messages": [HumanMessage("go")]}
FIXABLE = GUIDANCE[Kind.FIXABLE]
RUNS: list[str] = []


@tool
def get_time(timezone: str) -> str:
    """The time in a timezone."""
    RUNS.append(timezone)
    return f"12:00 {timezone}"


@tool
def echo(text: str) -> str:
    """Echo a text."""
    return text


@pytest.fixture(autouse=True)
def runs() -> list[str]:
    RUNS.clear()
    return RUNS


def invalid(args: str, call_id: str, name: str = "get_time") -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "error": None, "type": "invalid_tool_call"}


def agent_for(
    model: ScriptedChatModel, middleware: ToolMendMiddleware | None = None, **options: Any
) -> Any:
    chosen = middleware if middleware is not None else ToolMendMiddleware()
    return create_agent(model, [get_time, echo], middleware=[chosen], **options)


async def run(agent: Any, use_async: bool) -> dict[str, Any]:
    result: dict[str, Any] = await agent.ainvoke(GO) if use_async else agent.invoke(GO)
    return result


def answered_once(messages: list[Any]) -> bool:
    """Every tool call of every AI message is answered by exactly one tool message."""
    asked = Counter(c["id"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls)
    answers = Counter(m.tool_call_id for m in messages if isinstance(m, ToolMessage))
    return asked == answers and set(asked.values()) <= {1}


FIXED = ai(call("get_time", {"timezone": "UTC"}, "c2"))
FIXED_SHAPE = [
    ("ai", "", (("get_time", '{"timezone": "UTC"}', "c2"),)),
    ("tool", "c2", "get_time", "success", "12:00 UTC"),
    ("ai", "done", ()),
]


@pytest.mark.parametrize("use_async", [False, True])
async def test_an_unknown_tool_gets_the_cores_text_and_the_run_goes_on(
    use_async: bool, runs: list[str]
) -> None:
    model = ScriptedChatModel(
        script=replies([ai(call("get_tim", {"timezone": "UTC"}, "c1")), FIXED, "done"])
    )
    out = await run(agent_for(model), use_async)

    cause = (
        "Tool 'get_tim' does not exist. Did you mean 'get_time'? Available tools: get_time, echo."
    )
    assert shape(out["messages"]) == [
        ("human", "go"),
        ("ai", "", (("get_tim", '{"timezone": "UTC"}', "c1"),)),
        ("tool", "c1", "get_tim", "error", cause),
        *FIXED_SHAPE,
    ]
    assert shape(model.seen[1][-1:]) == [
        ("human", runtime_note("get_tim", {"timezone": "UTC"}, cause, FIXABLE))
    ]
    record = out["messages"][2].response_metadata["toolmend"]
    assert (record["kind"], record["rule"], record["attempts"]) == ("fixable", "unknown-tool", 0)
    assert notes(model.seen[2]) == []
    assert runs == ["UTC"]
    assert answered_once(out["messages"])


@pytest.mark.parametrize("use_async", [False, True])
async def test_arguments_that_are_not_json_get_the_cores_text_instead_of_ending_the_run(
    use_async: bool, runs: list[str]
) -> None:
    broken = AIMessage(content="", invalid_tool_calls=[invalid('{"timezone": "UT', "c1")])
    model = ScriptedChatModel(script=replies([broken, FIXED, "done"]))
    out = await run(agent_for(model), use_async)

    cause = (
        "Tool 'get_time' was not run: its arguments are not valid JSON "
        "(Unterminated string starting at: line 1 column 14 (char 13))."
    )
    assert shape(out["messages"]) == [
        ("human", "go"),
        ("ai", "", (("get_time", "{}", "c1"),)),
        ("tool", "c1", "get_time", "error", cause),
        *FIXED_SHAPE,
    ]
    assert out["messages"][1].invalid_tool_calls == []
    assert shape(model.seen[1][-1:]) == [("human", runtime_note("get_time", {}, cause, FIXABLE))]
    record = out["messages"][2].response_metadata["toolmend"]
    assert (record["kind"], record["rule"]) == ("fixable", "invalid-arguments")
    assert runs == ["UTC"]
    assert answered_once(out["messages"])


def test_the_run_goes_on_with_other_middleware_after_the_model(runs: list[str]) -> None:
    """Answered calls route back to the model through the agent's own edge, which an
    ``after_model`` hook in between does not break (a ``jump_to`` would not survive it)."""
    broken = AIMessage(content="", invalid_tool_calls=[invalid("{'timezone': 'UTC'}", "c1")])
    model = ScriptedChatModel(script=replies([broken, FIXED, "done"]))
    limit = ModelCallLimitMiddleware(run_limit=5)
    agent = create_agent(model, [get_time, echo], middleware=[limit, ToolMendMiddleware()])
    out = agent.invoke(GO)

    assert shape(out["messages"])[3:] == FIXED_SHAPE
    assert runs == ["UTC"]
    assert answered_once(out["messages"])


def test_arguments_that_are_not_an_object_are_refused_with_what_was_found() -> None:
    broken = AIMessage(content="", invalid_tool_calls=[invalid('["UTC"]', "c1")])
    model = ScriptedChatModel(script=replies([broken, FIXED, "done"]))
    out = agent_for(model).invoke(GO)

    cause = "Tool 'get_time' was not run: its arguments must be a JSON object, not an array."
    assert shape(out["messages"])[2] == ("tool", "c1", "get_time", "error", cause)
    assert shape(out["messages"])[3:] == FIXED_SHAPE
    assert RUNS == ["UTC"]


def test_arguments_with_one_repair_run_repaired_and_the_repair_is_reported(
    caplog: pytest.LogCaptureFixture, runs: list[str]
) -> None:
    broken = AIMessage(content="", invalid_tool_calls=[invalid('{"timezone": "UTC",}', "c1")])
    model = ScriptedChatModel(script=replies([broken, "done"]))
    with caplog.at_level(logging.WARNING, logger="toolmend"):
        out = agent_for(model).invoke(GO)

    assert shape(out["messages"]) == [
        ("human", "go"),
        ("ai", "", (("get_time", '{"timezone": "UTC"}', "c1"),)),
        ("tool", "c1", "get_time", "success", "12:00 UTC"),
        ("ai", "done", ()),
    ]
    assert reports(out["messages"]) == [
        {
            "message_id": out["messages"][1].id,
            "tool_call_id": None,
            "type": "ai",
            "repaired": [
                {"tool_call_id": "c1", "tool": "get_time", "repair": "removed a trailing comma"}
            ],
        }
    ]
    assert caplog.messages == [
        "toolmend: arguments of 'get_time' repaired: removed a trailing comma"
    ]
    assert notes(model.seen[1]) == []
    assert runs == ["UTC"]


def test_a_good_call_and_a_broken_one_in_one_turn_are_each_answered_once(
    runs: list[str],
) -> None:
    both = AIMessage(
        content="",
        tool_calls=[call("echo", {"text": "hi"}, "c0")],
        invalid_tool_calls=[invalid('{"timezone": "UTC"}}', "c1")],
    )
    model = ScriptedChatModel(script=replies([both, FIXED, "done"]))
    out = agent_for(model).invoke(GO)

    cause = (
        "Tool 'get_time' was not run: its arguments are not valid JSON "
        "(Extra data: line 1 column 20 (char 19))."
    )
    assert shape(out["messages"]) == [
        ("human", "go"),
        ("ai", "", (("echo", '{"text": "hi"}', "c0"), ("get_time", "{}", "c1"))),
        ("tool", "c1", "get_time", "error", cause),
        ("tool", "c0", "echo", "success", "hi"),
        *FIXED_SHAPE,
    ]
    assert shape(model.seen[1][-1:]) == [("human", runtime_note("get_time", {}, cause, FIXABLE))]
    assert runs == ["UTC"]
    assert answered_once(out["messages"])


@pytest.mark.parametrize(
    ("arguments", "details"),
    [
        ({"timezone": 3}, "timezone: Input should be a valid string (got 3)"),
        ({}, "timezone: Field required (got {})"),
    ],
)
@pytest.mark.parametrize("use_async", [False, True])
async def test_arguments_that_break_the_schema_name_the_field_and_the_tool_never_runs(
    arguments: dict[str, Any], details: str, use_async: bool, runs: list[str]
) -> None:
    model = ScriptedChatModel(
        script=replies([ai(call("get_time", arguments, "c1")), FIXED, "done"])
    )
    out = await run(agent_for(model), use_async)

    cause = f"Tool 'get_time' was not run: invalid arguments. {details}"
    assert shape(out["messages"])[2:] == [("tool", "c1", "get_time", "error", cause), *FIXED_SHAPE]
    assert shape(model.seen[1][-1:]) == [
        ("human", runtime_note("get_time", arguments, cause, FIXABLE))
    ]
    record = out["messages"][2].response_metadata["toolmend"]
    assert (record["kind"], record["rule"], record["attempts"]) == (
        "fixable",
        "invalid-arguments",
        0,
    )
    assert runs == ["UTC"]


def test_the_schemas_validators_count_and_injected_arguments_do_not() -> None:
    ran: list[str] = []

    class Booking(BaseModel):
        city: str
        nights: int = Field(ge=1)
        tool_call_id: Annotated[str, InjectedToolCallId]

        @field_validator("city")
        @classmethod
        def known(cls, city: str) -> str:
            if city != "Oslo":
                raise ValueError("only Oslo is served")
            return city

    @tool(args_schema=Booking)
    def book(city: str, nights: int, tool_call_id: str) -> str:
        """Book a hotel."""
        ran.append(tool_call_id)
        return f"booked {nights} in {city}"

    model = ScriptedChatModel(
        script=replies(
            [
                ai(call("book", {"city": "Bergen", "nights": 0}, "b1")),
                ai(call("book", {"city": "Oslo", "nights": 2}, "b2")),
                "done",
            ]
        )
    )
    out = create_agent(model, [book], middleware=[ToolMendMiddleware()]).invoke(GO)

    cause = (
        "Tool 'book' was not run: invalid arguments. "
        "city: Value error, only Oslo is served (got 'Bergen'); "
        "nights: Input should be greater than or equal to 1 (got 0)"
    )
    assert shape(out["messages"])[2:] == [
        ("tool", "b1", "book", "error", cause),
        ("ai", "", (("book", '{"city": "Oslo", "nights": 2}', "b2"),)),
        ("tool", "b2", "book", "success", "booked 2 in Oslo"),
        ("ai", "done", ()),
    ]
    assert ran == ["b2"]


def test_form_c1_puts_the_guidance_in_the_refusal_and_adds_no_note() -> None:
    model = ScriptedChatModel(script=replies([ai(call("get_tim", {}, "c1")), "done"]))
    out = agent_for(model, ToolMendMiddleware(form="c1")).invoke(GO)

    cause = (
        "Tool 'get_tim' does not exist. Did you mean 'get_time'? Available tools: get_time, echo."
    )
    assert shape(out["messages"])[2] == ("tool", "c1", "get_tim", "error", cause + "\n" + FIXABLE)
    assert notes(model.seen[1]) == []


def test_structured_output_calls_are_left_to_the_agent() -> None:
    class Answer(BaseModel):
        text: str

    reply = ai(call("Answer", {"text": "hi"}, "s1"))
    model = ScriptedChatModel(script=replies([reply]))
    out = agent_for(model, response_format=ToolStrategy(Answer)).invoke(GO)

    assert out["structured_response"] == Answer(text="hi")
    assert shape(out["messages"])[2] == (
        "tool",
        "s1",
        "Answer",
        "success",
        "Returning structured response: text='hi'",
    )
    assert reports(out["messages"]) == []

    broken = AIMessage(content="", invalid_tool_calls=[invalid('{"text": "hi",}', "s1", "Answer")])
    model = ScriptedChatModel(script=replies([broken]))
    out = agent_for(model, response_format=ToolStrategy(Answer)).invoke(GO)
    assert shape(out["messages"]) == [("human", "go"), ("ai", "", ())]
    assert out["messages"][1].invalid_tool_calls == [invalid('{"text": "hi",}', "s1", "Answer")]


@pytest.mark.parametrize("use_async", [False, True])
async def test_without_malformed_calls_langchain_handles_each_case_as_before(
    use_async: bool, runs: list[str]
) -> None:
    off = ToolMendMiddleware(malformed_calls=False)
    unknown = ScriptedChatModel(script=replies([ai(call("get_tim", {}, "c1")), "done"]))
    out = await run(agent_for(unknown, off), use_async)
    assert shape(out["messages"])[2] == (
        "tool",
        "c1",
        "get_tim",
        "error",
        "Error: get_tim is not a valid tool, try one of [get_time, echo].",
    )

    broken = AIMessage(content="", invalid_tool_calls=[invalid('{"timezone": "UTC",}', "c1")])
    ended = ScriptedChatModel(script=replies([broken, "done"]))
    out = await run(agent_for(ended, off), use_async)
    assert shape(out["messages"]) == [("human", "go"), ("ai", "", ())]
    assert out["messages"][1].invalid_tool_calls == [invalid('{"timezone": "UTC",}', "c1")]
    assert len(ended.seen) == 1

    schema = ScriptedChatModel(script=replies([ai(call("get_time", {"timezone": 3}, "c1")), "ok"]))
    out = await run(agent_for(schema, off), use_async)
    assert shape(out["messages"])[2] == (
        "tool",
        "c1",
        "get_time",
        "error",
        "Error invoking tool 'get_time' with kwargs {'timezone': 3} with error:\n"
        " timezone: Input should be a valid string\n"
        " Please fix the error and try again.",
    )
    assert runs == []


def test_a_required_idempotency_key_is_not_the_models_to_write() -> None:
    keys: list[str] = []

    @tool
    def charge(amount: int, key: str) -> str:
        """Charge a card."""
        keys.append(key)
        return "charged"

    model = ScriptedChatModel(script=replies([ai(call("charge", {"amount": 9}, "k1")), "ok"]))
    middleware = ToolMendMiddleware(effects={"charge": "write"}, idempotency_keys={"charge": "key"})
    out = create_agent(model, [charge], middleware=[middleware]).invoke(GO)

    assert shape(out["messages"])[2] == ("tool", "k1", "charge", "success", "charged")
    assert len(keys) == 1


def test_the_loop_guard_still_stops_a_repeated_refused_call(runs: list[str]) -> None:
    bad = [ai(call("get_time", {"timezone": 3}, f"c{i}")) for i in range(3)]
    model = ScriptedChatModel(script=replies([*bad, "done"]))
    out = agent_for(model).invoke(GO)

    first = (
        "Tool 'get_time' was not run: invalid arguments. "
        "timezone: Input should be a valid string (got 3)"
    )
    again = (
        "Tool 'get_time' was not run: this exact call already failed in this task. "
        "The earlier error: " + first
    )
    results = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert [(m.content, m.response_metadata["toolmend"]["rule"]) for m in results] == [
        (first, "invalid-arguments"),
        (again, "loop-repeat"),
        (again, "loop-repeat"),
    ]
    assert runs == []
