"""What followed each failed tool result, recorded by ``serve`` and the proxy from the requests.

A client plays one conversation over loopback as an agent would: each request
carries the whole conversation so far, and each is sent twice (a client's
retry).  The scripted model calls a tool whose first answer is a 503 and then
succeeds as it was called, a lookup that succeeds with another table, and a
payment declined twice before its final answer.  Each failure is settled
exactly once, in the conversation's run, whichever of the two layers saw it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
from engine_fakes import FakeModel, running

from outcome_rows import Rows, recording
from toolmend.integrations import recording_outcomes
from toolmend_engine import ChatEngine, make_proxy, make_server

MODEL = "fake-model"
SCRIPT: list[tuple[str, dict[str, str], str]] = [
    ("get_order", {"order_id": "ORD-1"}, "Error: 503 Service Unavailable"),
    ("get_order", {"order_id": "ORD-1"}, '{"order_id": "ORD-1", "total": 42}'),
    ("lookup", {"table": "ordrs"}, "Error: no such table: ordrs"),
    ("lookup", {"table": "orders"}, '{"rows": 3}'),
    ("pay", {"invoice": "8"}, "Error: card declined"),
    ("pay", {"invoice": "8"}, "Error: card declined"),
]
"""Each turn: the call the model makes, and what the tool answers."""
TOOLS: list[Any] = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
    for name in ("get_order", "lookup", "pay")
]
QUESTION = "Total of ORD-1, then pay invoice 8."


def scripted(prompt: str) -> str:
    """The next turn's call, counted by the tool results the prompt holds; then an answer."""
    step = prompt.count("<|im_start|>tool\n")
    if step >= len(SCRIPT):
        return "I could not pay invoice 8."
    name, arguments, _ = SCRIPT[step]
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


def ask(client: openai.OpenAI, messages: list[Any], stream: bool) -> list[Any]:
    """The model's tool calls for ``messages`` (none: it answered), read whole or streamed."""
    if not stream:
        reply = client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)
        return [c.model_dump() for c in reply.choices[0].message.tool_calls or []]
    calls: dict[int, dict[str, Any]] = {}
    for chunk in client.chat.completions.create(
        model=MODEL, messages=messages, tools=TOOLS, stream=True
    ):
        for delta in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            call = calls.setdefault(
                delta.index,
                {"id": "", "type": "function", "function": {"name": "", "arguments": ""}},
            )
            call["id"] += delta.id or ""
            call["function"]["name"] += (delta.function.name or "") if delta.function else ""
            call["function"]["arguments"] += (
                (delta.function.arguments or "") if delta.function else ""
            )
    return [calls[i] for i in sorted(calls)]


def client_of(base: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=base + "/v1", api_key="unused", max_retries=0)


def converse(base: str, stream: bool) -> list[list[Any]]:
    """The conversation, every request sent twice (a client's retry); the requests, in order."""
    client = client_of(base)
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    sent: list[list[Any]] = []
    while True:
        calls = ask(client, messages, stream)
        again = ask(client, messages, stream)
        assert [c["function"] for c in again] == [c["function"] for c in calls]
        sent.append(list(messages))
        if not calls:
            return sent
        [call] = calls
        _, _, answer = SCRIPT[len(sent) - 1]
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": call["id"], "content": answer})


RUN = "conversation-" + hashlib.sha256(json.dumps([None, QUESTION, None]).encode()).hexdigest()[:16]
EXPECTED = [
    ("get_order", "Error: 503 Service Unavailable", {"order_id": "ORD-1"}, "retry_succeeded", RUN),
    ("lookup", "Error: no such table: ordrs", {"table": "ordrs"}, "changed_arguments_succeeded",
     RUN),
    ("pay", "Error: card declined", {"invoice": "8"}, "failed_again", RUN),
    ("pay", "Error: card declined", {"invoice": "8"}, "stopped", RUN),
]  # fmt: skip


@pytest.fixture
def rows() -> Iterator[Rows]:
    with recording() as sink:
        yield sink


@pytest.fixture(params=["serve", "proxy"])
def base(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """``serve`` on the scripted model, or the proxy in front of one that records nothing."""
    server = make_server(ChatEngine(FakeModel(scripted)), port=0)
    with running(server) as url:
        if request.param == "serve":
            yield url
            return
        monkeypatch.setattr(server.outcomes, "observe", lambda *args: None)
        with running(make_proxy(url + "/v1", port=0)) as proxied:
            yield proxied


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_each_failure_is_settled_once_in_its_conversation(
    base: str, stream: bool, rows: Rows
) -> None:
    assert len(converse(base, stream)) == len(SCRIPT) + 1
    assert rows.brief() == EXPECTED


def test_requests_re_sent_after_the_answer_add_nothing(base: str, rows: Rows) -> None:
    sent = converse(base, stream=False)
    client = client_of(base)
    for messages in sent:  # each request again, as a client replaying its log would
        ask(client, messages, stream=False)
    assert rows.brief() == EXPECTED


def test_another_run_of_the_same_task_is_followed_again(base: str, rows: Rows) -> None:
    converse(base, stream=False)
    converse(base, stream=False)  # new calls (new ids) in a conversation that opens alike
    assert rows.brief() == EXPECTED + EXPECTED


def test_a_user_field_tells_conversations_apart(base: str, rows: Rows) -> None:
    client = client_of(base)
    failed = [
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "pay", "arguments": '{"invoice": "8"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "Error: card declined"},
    ]  # fmt: skip
    for user in ("ann", "bob"):
        client.chat.completions.create(model=MODEL, messages=failed, tools=TOOLS, user=user)
    runs = [
        "conversation-"
        + hashlib.sha256(json.dumps([None, QUESTION, user]).encode()).hexdigest()[:16]
        for user in ("ann", "bob")
    ]
    recorder = recording_outcomes()
    assert recorder is not None
    recorder.close()
    assert rows.brief() == [
        ("pay", "Error: card declined", {"invoice": "8"}, "stopped", run) for run in runs
    ]


def test_nothing_is_observed_without_a_recorder(base: str) -> None:
    assert recording_outcomes() is None
    assert len(converse(base, stream=False)) == len(SCRIPT) + 1


def anthropic_turn(n: int, answer: str) -> list[Any]:
    call = {"type": "tool_use", "id": f"tu{n}", "name": "get_order", "input": {"order_id": "ORD-1"}}
    result = {"type": "tool_result", "tool_use_id": f"tu{n}", "content": answer}
    return [{"role": "assistant", "content": [call]}, {"role": "user", "content": [result]}]


def responses_turn(n: int, answer: str) -> list[Any]:
    return [
        {"type": "function_call", "call_id": f"c{n}", "name": "get_order",
         "arguments": '{"order_id": "ORD-1"}'},
        {"type": "function_call_output", "call_id": f"c{n}", "output": answer},
    ]  # fmt: skip


FORMATS: dict[str, Any] = {
    "anthropic": ("/v1/messages", "messages", anthropic_turn,
                  {"max_tokens": 64, "tools": [{"name": "get_order", "input_schema": {}}]}),
    "responses": ("/v1/responses", "input", responses_turn,
                  {"tools": [{"type": "function", "name": "get_order", "parameters": {}}]}),
}  # fmt: skip


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_messages_and_responses_conversations_are_followed(base: str, fmt: str, rows: Rows) -> None:
    path, field, turn, extra = FORMATS[fmt]
    conversation: list[Any] = [{"role": "user", "content": QUESTION}]
    for n, answer in enumerate(["Error: 503 Service Unavailable", '{"total": 42}'], 1):
        conversation += turn(n, answer)
        for _ in range(2):  # each request sent twice
            body = {"model": MODEL, field: conversation, **extra}
            assert httpx.post(base + path, json=body).status_code == 200
    assert rows.brief() == [EXPECTED[0]]
