"""The Responses API over loopback with the openai SDK and the Agents SDK (scripted model)."""

from __future__ import annotations

import asyncio
import json
import re
import urllib.error
import urllib.request
from typing import Any

import httpx
import openai
import pytest
from agents import Agent, OpenAIResponsesModel, RunConfig, Runner, function_tool
from engine_fakes import (
    CALL_TEXT,
    FAILED,
    NOTE,
    RESPONSES_FAILED,
    RESPONSES_TOOLS,
    TOOLS,
    FakeModel,
    echo_or_call,
    running,
)

from toolmend import Form
from toolmend_engine import ChatEngine, make_proxy, make_server

HELLO_PROMPT = (
    "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nhello<|im_end|>\n"
    "<|im_start|>assistant\n"
)
TEXT_EVENTS = [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.content_part.added",
    *["response.output_text.delta"] * 4,
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
    "response.completed",
]
CALL_EVENTS = [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.function_call_arguments.delta",
    "response.function_call_arguments.done",
    "response.output_item.done",
    "response.completed",
]
TRANSIENT = "failed=2:get_order:transient:generic/paper"


def _post(url: str, body: Any) -> tuple[int, dict[str, str], Any]:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), json.loads(exc.read())


def _without_time(response: Any) -> Any:
    """A response without its time and its random ids (new for every generation)."""
    data: dict[str, Any] = response.model_dump()
    data.pop("created_at")
    ident = response.id.removeprefix("resp_")
    text = json.dumps(data, sort_keys=True).replace(ident, "ID").replace(ident[:16], "ID")
    return json.loads(text)


def test_text_reply_with_instructions(client: openai.OpenAI, fake: FakeModel) -> None:
    raw = client.responses.with_raw_response.create(
        model="fake-model", input="hello", instructions="Be brief."
    )
    assert raw.headers["x-tool-errors"] == "failed=none; form=off; changed=false"
    response = raw.parse()
    assert fake.prompts == [HELLO_PROMPT]
    assert re.fullmatch("resp_[0-9a-f]{24}", response.id)
    ident = response.id.removeprefix("resp_")
    assert (response.status, response.output_text, response.instructions) == (
        "completed",
        "Echo: hello",
        "Be brief.",
    )
    assert [(o.type, o.id, o.status) for o in response.output] == [
        ("message", "msg_" + ident, "completed")
    ]
    assert response.usage is not None
    assert (response.usage.input_tokens, response.usage.output_tokens) == (len(HELLO_PROMPT), 4)
    assert response.usage.total_tokens == len(HELLO_PROMPT) + 4


def test_function_call(client: openai.OpenAI) -> None:
    response = client.responses.create(
        model="fake-model", input=RESPONSES_FAILED[:1], tools=RESPONSES_TOOLS
    )
    ident = response.id.removeprefix("resp_")[:16]
    assert [
        (o.type, o.id, o.call_id, o.name, o.arguments, o.status)  # type: ignore[union-attr]
        for o in response.output
    ] == [
        (
            "function_call",
            f"fc_{ident}_0",
            f"call_{ident}_0",
            "get_order",
            '{"order_id": "ORD-1"}',
            "completed",
        )
    ]
    assert response.output_text == ""
    assert [t.name for t in response.tools] == ["get_order"]  # type: ignore[union-attr]


def test_failed_call_goes_through_the_layer_like_chat(
    client: openai.OpenAI, fake: FakeModel, base: str
) -> None:
    off = client.responses.with_raw_response.create(
        model="fake-model", input=RESPONSES_FAILED, tools=RESPONSES_TOOLS
    )
    assert off.headers["x-tool-errors"] == f"{TRANSIENT}; form=off; changed=false"
    assert off.parse().output_text == "Echo: Error: 503 Service Unavailable"
    on = client.responses.with_raw_response.create(
        model="fake-model",
        input=RESPONSES_FAILED,
        tools=RESPONSES_TOOLS,
        extra_body={"tool_errors": "c3"},
    )
    assert on.headers["x-tool-errors"] == f"{TRANSIENT}; form=c3; changed=true"
    assert on.parse().output_text == "Echo: " + NOTE
    _, _, chat = _post(
        base + "/v1/render", {"messages": FAILED, "tools": TOOLS, "tool_errors": "c3"}
    )
    assert fake.prompts[-1] == chat["prompt"]
    status, headers, rendered = _post(
        base + "/v1/responses/render",
        {"input": RESPONSES_FAILED, "tools": RESPONSES_TOOLS, "tool_errors": "c3"},
    )
    assert (status, rendered["prompt"], rendered["grammar"]) == (200, chat["prompt"], None)
    assert headers["X-Tool-Errors"] == f"{TRANSIENT}; form=c3; changed=true"


def test_streamed_text_events_and_final_response(client: openai.OpenAI) -> None:
    kwargs: dict[str, Any] = {"model": "fake-model", "input": "hello", "instructions": "Be brief."}
    events = list(client.responses.create(**kwargs, stream=True))
    assert [e.type for e in events] == TEXT_EVENTS
    assert [e.sequence_number for e in events] == list(range(len(TEXT_EVENTS)))
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    assert deltas == ["Ech", "o:", " hel", "lo"]
    created = events[0].response  # type: ignore[union-attr]
    assert (created.status, created.output) == ("in_progress", [])
    final = events[-1].response  # type: ignore[union-attr]
    assert _without_time(final) == _without_time(client.responses.create(**kwargs))
    with client.responses.stream(**kwargs) as stream:
        streamed = "".join(e.delta for e in stream if e.type == "response.output_text.delta")
        assert stream.get_final_response().output_text == streamed == "Echo: hello"


def test_streamed_function_call(client: openai.OpenAI) -> None:
    kwargs: dict[str, Any] = {
        "model": "fake-model",
        "input": RESPONSES_FAILED[:1],
        "tools": RESPONSES_TOOLS,
    }
    events = list(client.responses.create(**kwargs, stream=True))
    assert [e.type for e in events] == CALL_EVENTS
    assert events[2].item.arguments == ""  # type: ignore[union-attr]
    assert events[3].delta == '{"order_id": "ORD-1"}'  # type: ignore[union-attr]
    final = events[-1].response  # type: ignore[union-attr]
    assert _without_time(final) == _without_time(client.responses.create(**kwargs))
    with client.responses.stream(**kwargs) as stream:
        for _ in stream:
            pass
        (call,) = stream.get_final_response().output
    assert (call.type, call.name, call.arguments) == (  # type: ignore[union-attr]
        "function_call",
        "get_order",
        '{"order_id": "ORD-1"}',
    )


def test_max_output_tokens_makes_the_response_incomplete(client: openai.OpenAI) -> None:
    response = client.responses.create(model="fake-model", input="abcdef", max_output_tokens=2)
    assert (response.status, response.output_text) == ("incomplete", "Echo:")
    assert response.incomplete_details is not None
    assert response.incomplete_details.reason == "max_output_tokens"
    assert response.output[0].status == "incomplete"  # type: ignore[union-attr]
    events = list(
        client.responses.create(
            model="fake-model", input="abcdef", max_output_tokens=2, stream=True
        )
    )
    assert events[-1].type == "response.incomplete"


@pytest.mark.parametrize(
    ("body", "message", "param"),
    [
        (
            {"input": "x", "previous_response_id": "resp_1"},
            "previous_response_id is not supported: the engine stores nothing; "
            "send the whole conversation as input",
            "previous_response_id",
        ),
        ({"input": []}, "input must be a string or a non-empty list of items", "input"),
        (
            {"input": "x", "tools": [{"type": "web_search"}]},
            "tools[0]: tool type 'web_search' is not supported; only function tools",
            "tools[0]",
        ),
        (
            {
                "input": "x",
                "tools": RESPONSES_TOOLS,
                "tool_choice": {"type": "function", "name": "f"},
            },
            "tool_choice names 'f', which is not among the tools",
            "tool_choice",
        ),
        (
            {"input": "x", "tool_choice": "required"},
            "tool_choice 'required' needs at least one tool",
            "tool_choice",
        ),
        (
            {"input": "x", "text": {"format": {"type": "yaml"}}},
            "text.format.type must be 'text', 'json_object' or 'json_schema'",
            "text.format",
        ),
        (
            {"input": [{"type": "input_image", "image_url": "x"}]},
            "input[0]: item of type 'input_image' is not supported",
            "input[0]",
        ),
        (
            {"input": [{"role": "user", "content": [{"type": "input_image"}]}]},
            "input[0]: content part of type 'input_image' is not supported; only text",
            "input[0]",
        ),
    ],
)
def test_bad_requests_get_a_400(
    client: openai.OpenAI, base: str, body: dict[str, Any], message: str, param: str
) -> None:
    status, _, error = _post(base + "/v1/responses", body)
    assert (status, error) == (
        400,
        {
            "error": {
                "message": message,
                "type": "invalid_request_error",
                "param": param,
                "code": None,
            }
        },
    )
    assert (
        client.responses.create(model="fake-model", input="still here").output_text
        == "Echo: still here"
    )


def test_tool_choice_none_reads_the_reply_as_text() -> None:
    fake = FakeModel(CALL_TEXT)
    with running(make_server(ChatEngine(fake), port=0)) as url:
        client = openai.OpenAI(
            base_url=url + "/v1", api_key="unused", max_retries=0, _strict_response_validation=True
        )
        response = client.responses.create(
            model="fake-model", input="x", tools=RESPONSES_TOOLS, tool_choice="none"
        )
        assert [o.type for o in response.output] == ["message"]
        assert response.output_text == CALL_TEXT
        chat = client.chat.completions.create(
            model="fake-model",
            messages=[{"role": "user", "content": "x"}],
            tools=TOOLS,
            tool_choice="none",
        )
        assert (chat.choices[0].message.content, chat.choices[0].message.tool_calls) == (
            CALL_TEXT,
            None,
        )
        chunks = client.chat.completions.create(
            model="fake-model",
            messages=[{"role": "user", "content": "x"}],
            tools=TOOLS,
            tool_choice="none",
            stream=True,
        )
        assert "".join(c.choices[0].delta.content or "" for c in chunks) == CALL_TEXT
    assert all("<tools>" not in p for p in fake.prompts)
    assert fake.grammars == [None, None, None]


def test_forced_choices_and_formats_send_a_grammar(client: openai.OpenAI, fake: FakeModel) -> None:
    client.responses.create(
        model="fake-model", input="x", tools=RESPONSES_TOOLS, tool_choice="required"
    )
    client.chat.completions.create(
        model="fake-model",
        messages=[{"role": "user", "content": "x"}],
        tools=TOOLS,
        tool_choice={"type": "function", "function": {"name": "get_order"}},
    )
    client.responses.create(model="fake-model", input="x", text={"format": {"type": "json_object"}})
    client.chat.completions.create(
        model="fake-model",
        messages=[{"role": "user", "content": "x"}],
        response_format={"type": "text"},
    )
    forced, named, json_object, text = fake.grammars
    assert forced is not None
    assert forced == named
    assert forced.startswith('root ::= "<tool_call>" call "</tool_call>"\n')
    assert json_object is not None
    assert json_object.startswith("root ::= reply\n")
    assert text is None


def _agent(url: str, seen: list[str | None]) -> tuple[Agent[Any], list[str]]:
    calls: list[str] = []

    @function_tool
    def get_order(order_id: str) -> str:
        """Look up an order."""
        calls.append(order_id)
        return "Error: 503 Service Unavailable"

    async def record(response: httpx.Response) -> None:
        seen.append(response.headers.get("x-tool-errors"))

    client = openai.AsyncOpenAI(
        base_url=url + "/v1",
        api_key="unused",
        max_retries=0,
        _strict_response_validation=True,
        http_client=httpx.AsyncClient(event_hooks={"response": [record]}),
    )
    model = OpenAIResponsesModel(model="fake-model", openai_client=client)
    return Agent(name="orders", tools=[get_order], model=model), calls


async def _run_both(agent: Agent[Any]) -> tuple[Any, Any]:
    config = RunConfig(tracing_disabled=True)
    result = await Runner.run(agent, "Total of ORD-1?", run_config=config)
    streamed = Runner.run_streamed(agent, "Total of ORD-1?", run_config=config)
    async for _ in streamed.stream_events():
        pass
    return result.final_output, streamed.final_output


@pytest.mark.parametrize("where", ["serve", "proxy"])
def test_agents_sdk_default_model_recovers_through_the_layer(where: str) -> None:
    fake = FakeModel(echo_or_call)
    seen: list[str | None] = []
    server_form = Form.C3 if where == "serve" else None
    with running(make_server(ChatEngine(fake, form=server_form), port=0)) as url:
        if where == "proxy":
            with running(make_proxy(url + "/v1", form=Form.C3, port=0)) as proxied:
                agent, calls = _agent(proxied, seen)
                outputs = asyncio.run(_run_both(agent))
        else:
            agent, calls = _agent(url, seen)
            outputs = asyncio.run(_run_both(agent))
    assert outputs == ("Echo: " + NOTE, "Echo: " + NOTE)
    assert calls == ["ORD-1", "ORD-1"]
    first, failed = "failed=none; form=c3; changed=false", f"{TRANSIENT}; form=c3; changed=true"
    assert seen == [first, failed, first, failed]
    assert fake.prompts[1].endswith(f"<|im_start|>user\n{NOTE}<|im_end|>\n<|im_start|>assistant\n")


def test_proxy_layers_responses(fake: FakeModel, base: str) -> None:
    with running(make_proxy(base + "/v1", port=0)) as url:
        client = openai.OpenAI(
            base_url=url + "/v1", api_key="unused", max_retries=0, _strict_response_validation=True
        )
        raw = client.responses.with_raw_response.create(
            model="fake-model",
            input=RESPONSES_FAILED,
            tools=RESPONSES_TOOLS,
            extra_body={"tool_errors": "c3"},
        )
        assert raw.headers["x-tool-errors"] == f"{TRANSIENT}; form=c3; changed=true"
        assert raw.parse().output_text == "Echo: " + NOTE
        plain = client.responses.with_raw_response.create(
            model="fake-model", input="hi", stream=True
        )
        assert plain.headers["x-tool-errors"] == "failed=none; form=off; changed=false"
        assert [e.type for e in plain.parse()][-1] == "response.completed"
