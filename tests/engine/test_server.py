"""The server over loopback, driven by the openai and anthropic clients (scripted model)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import anthropic
import openai
import pytest
from engine_fakes import (
    ANTHROPIC_FAILED,
    ANTHROPIC_TOOLS,
    FAILED,
    NOTE,
    TOOLS,
    FakeModel,
    running,
)

from toolmend import Form
from toolmend_engine import ChatEngine, make_server


def _post(
    url: str, body: Any, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], Any]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data, {"Content-Type": "application/json", **(headers or {})}
    )
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), json.loads(exc.read())


def test_models(client: openai.OpenAI) -> None:
    assert [m.id for m in client.models.list()] == ["fake-model"]


def test_chat_completion_with_header(client: openai.OpenAI) -> None:
    raw = client.chat.completions.with_raw_response.create(
        model="fake-model", messages=[{"role": "user", "content": "hello"}]
    )
    assert raw.headers["x-tool-errors"] == "failed=none; form=off; changed=false"
    completion = raw.parse()
    assert completion.choices[0].message.content == "Echo: hello"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.choices[0].message.tool_calls is None
    assert completion.usage is not None
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (
        len("<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n"),
        4,
    )


def test_tool_call_in_openai_format(client: openai.OpenAI) -> None:
    completion = client.chat.completions.create(
        model="fake-model", messages=FAILED[:1], tools=TOOLS
    )
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    calls = choice.message.tool_calls
    assert calls is not None
    assert len(calls) == 1
    assert calls[0].type == "function"
    assert (calls[0].function.name, calls[0].function.arguments) == (
        "get_order",
        '{"order_id": "ORD-1"}',
    )
    assert calls[0].id == f"call_{completion.id.removeprefix('chatcmpl-')[:16]}_0"


def test_streaming_text_and_usage(client: openai.OpenAI) -> None:
    chunks = list(
        client.chat.completions.create(
            model="fake-model",
            messages=[{"role": "user", "content": "stream me"}],
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Echo: stream me"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == 5


def test_streaming_tool_call(client: openai.OpenAI) -> None:
    chunks = list(
        client.chat.completions.create(
            model="fake-model", messages=FAILED[:1], tools=TOOLS, stream=True
        )
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == ""
    deltas = [tc for c in chunks for tc in c.choices[0].delta.tool_calls or []]
    assert [(d.index, d.function.name, d.function.arguments) for d in deltas if d.function] == [
        (0, "get_order", '{"order_id": "ORD-1"}')
    ]
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def test_layer_rewrites_only_when_asked(client: openai.OpenAI, fake: FakeModel) -> None:
    off = client.chat.completions.with_raw_response.create(
        model="fake-model", messages=FAILED, tools=TOOLS
    )
    assert (
        off.headers["x-tool-errors"]
        == "failed=2:get_order:transient:generic/paper; form=off; changed=false"
    )
    assert off.parse().choices[0].message.content == "Echo: Error: 503 Service Unavailable"
    on = client.chat.completions.with_raw_response.create(
        model="fake-model", messages=FAILED, tools=TOOLS, extra_body={"tool_errors": "c3"}
    )
    assert (
        on.headers["x-tool-errors"]
        == "failed=2:get_order:transient:generic/paper; form=c3; changed=true"
    )
    assert on.parse().choices[0].message.content == "Echo: " + NOTE
    assert fake.prompts[-1].endswith(f"<|im_start|>user\n{NOTE}<|im_end|>\n<|im_start|>assistant\n")


def test_server_option_and_user_agent(fake: FakeModel) -> None:
    with running(make_server(ChatEngine(fake, form=Form.C1), port=0)) as url:
        qwen = [
            *FAILED[:2],
            {"role": "tool", "tool_call_id": "c1", "content": "File not found: /a.txt"},
        ]
        status, headers, _ = _post(url + "/v1/chat/completions", {"messages": qwen})
        assert headers["X-Tool-Errors"] == "failed=none; form=c1; changed=false"
        status, headers, _ = _post(
            url + "/v1/chat/completions", {"messages": qwen}, {"User-Agent": "QwenCode/0.1"}
        )
        assert status == 200
        assert (
            headers["X-Tool-Errors"]
            == "failed=2:get_order:ambiguous:qwen-notfound; form=c1; changed=false"
        )
        _, headers, _ = _post(
            url + "/v1/chat/completions", {"messages": FAILED, "tool_errors": "off"}
        )
        assert (
            headers["X-Tool-Errors"]
            == "failed=2:get_order:transient:generic/paper; form=off; changed=false"
        )


def test_bad_request_gets_a_400_and_the_next_request_works(
    client: openai.OpenAI, base: str
) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(model="fake-model", messages=[])
    assert info.value.body == {
        "message": "messages must be a non-empty list",
        "type": "invalid_request_error",
        "param": "messages",
        "code": None,
    }
    status, _, body = _post(base + "/v1/chat/completions", b"{not json")
    assert status == 400
    assert body["error"]["message"].startswith("the request body is not valid JSON: ")
    status, _, body = _post(
        base + "/v1/chat/completions", {"messages": FAILED, "tool_errors": "c7"}
    )
    assert (status, body["error"]["param"]) == (400, "tool_errors")
    status, _, body = _post(base + "/v1/nothing", {})
    assert (status, body["error"]["code"]) == (404, "not_found")
    reply = client.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": "still here"}]
    )
    assert reply.choices[0].message.content == "Echo: still here"


def test_render_endpoint_shows_the_prompt_and_the_report(base: str) -> None:
    status, headers, body = _post(
        base + "/v1/render", {"messages": FAILED, "tools": TOOLS, "tool_errors": "c2"}
    )
    assert status == 200
    assert (
        headers["X-Tool-Errors"]
        == "failed=2:get_order:transient:generic/paper; form=c2; changed=true"
    )
    assert body["messages"] == [{"role": "user", "content": "Total of ORD-1?\n\n" + NOTE}]
    assert body["prompt"].endswith(
        f"<|im_start|>user\nTotal of ORD-1?\n\n{NOTE}<|im_end|>\n<|im_start|>assistant\n"
    )
    assert body["prompt_tokens"] == len(body["prompt"])
    assert body["report"]["changed"] is True


@pytest.fixture
def claude(base: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=base, api_key="unused", max_retries=0, _strict_response_validation=True
    )


def test_anthropic_messages_tool_use(claude: anthropic.Anthropic) -> None:
    message = claude.messages.create(
        model="fake-model", max_tokens=100, messages=ANTHROPIC_FAILED[:1], tools=ANTHROPIC_TOOLS
    )
    assert message.stop_reason == "tool_use"
    assert [
        (b.type, getattr(b, "name", None), getattr(b, "input", None)) for b in message.content
    ] == [("tool_use", "get_order", {"order_id": "ORD-1"})]


def test_anthropic_messages_go_through_the_layer(claude: anthropic.Anthropic) -> None:
    raw = claude.messages.with_raw_response.create(
        model="fake-model",
        max_tokens=200,
        messages=ANTHROPIC_FAILED,
        tools=ANTHROPIC_TOOLS,
        extra_body={"tool_errors": "c3"},
    )
    assert (
        raw.headers["x-tool-errors"]
        == "failed=2:get_order:transient:generic/paper; form=c3; changed=true"
    )
    message = raw.parse()
    assert message.stop_reason == "end_turn"
    assert [(b.type, getattr(b, "text", None)) for b in message.content] == [
        ("text", "Echo: " + NOTE)
    ]
    assert message.usage.output_tokens == -(-len("Echo: " + NOTE) // 3)  # pieces of 3


def test_anthropic_streaming(claude: anthropic.Anthropic) -> None:
    with claude.messages.stream(
        model="fake-model", max_tokens=50, messages=[{"role": "user", "content": "hi there"}]
    ) as s:
        text = "".join(s.text_stream)
        final = s.get_final_message()
    assert text == "Echo: hi there"
    assert final.stop_reason == "end_turn"
    with claude.messages.stream(
        model="fake-model", max_tokens=99, messages=ANTHROPIC_FAILED[:1], tools=ANTHROPIC_TOOLS
    ) as s:
        final = s.get_final_message()
    assert [(b.type, getattr(b, "input", None)) for b in final.content] == [
        ("tool_use", {"order_id": "ORD-1"})
    ]


def test_anthropic_bad_request(base: str) -> None:
    status, _, body = _post(base + "/v1/messages", {"messages": ANTHROPIC_FAILED})
    assert status == 400
    assert body == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "max_tokens is required"},
    }


def test_stop_sequences_and_length(client: openai.OpenAI) -> None:
    stopped = client.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": "one two three"}], stop=["two"]
    )
    assert (stopped.choices[0].message.content, stopped.choices[0].finish_reason) == (
        "Echo: one",
        "stop",
    )
    chunks = list(
        client.chat.completions.create(
            model="fake-model",
            messages=[{"role": "user", "content": "one two three"}],
            stop=["two"],
            stream=True,
        )
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "Echo: one"
    short = client.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": "abcdef"}], max_tokens=2
    )
    assert (short.choices[0].message.content, short.choices[0].finish_reason) == ("Echo:", "length")


def test_logprobs(client: openai.OpenAI) -> None:
    completion = client.chat.completions.create(
        model="fake-model",
        messages=[{"role": "user", "content": "x"}],
        logprobs=True,
        top_logprobs=2,
    )
    content = completion.choices[0].logprobs.content  # type: ignore[union-attr]
    assert content is not None
    assert [(t.token, t.logprob) for t in content] == [("Ech", -0.25), ("o: ", -0.25), ("x", -0.25)]
    assert [(t.token, t.logprob) for t in content[0].top_logprobs] == [("<", -0.5), ("The", -1.5)]


def test_a_failing_model_gives_a_500_and_the_server_keeps_serving() -> None:
    def broken(prompt: str) -> str:
        if "boom" in prompt:
            raise RuntimeError("decode failed")
        return "fine"

    with running(make_server(ChatEngine(FakeModel(broken)), port=0)) as url:
        status, headers, body = _post(
            url + "/v1/chat/completions", {"messages": [{"role": "user", "content": "boom"}]}
        )
        assert status == 500
        assert headers["X-Tool-Errors"] == "failed=none; form=off; changed=false"
        assert body["error"] == {
            "message": "internal error; see the server log",
            "type": "server_error",
            "param": None,
            "code": None,
        }
        status, _, body = _post(
            url + "/v1/chat/completions", {"messages": [{"role": "user", "content": "ok"}]}
        )
        assert (status, body["choices"][0]["message"]["content"]) == (200, "fine")


def test_streamed_responses_carry_the_header(base: str) -> None:
    body = {"messages": FAILED, "tools": TOOLS, "stream": True, "tool_errors": "c1"}
    request = urllib.request.Request(
        base + "/v1/chat/completions",
        json.dumps(body).encode(),
        {"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request) as response:
        assert response.headers["X-Tool-Errors"] == (
            "failed=2:get_order:transient:generic/paper; form=c1; changed=true"
        )
        assert response.headers["Content-Type"] == "text/event-stream"
        events = response.read().decode().split("\n\n")
    assert events[-2:] == ["data: [DONE]", ""]
    assert json.loads(events[0].removeprefix("data: "))["choices"][0]["delta"] == {
        "role": "assistant",
        "content": "",
    }
