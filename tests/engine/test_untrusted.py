"""Untrusted text in the engine: content never becomes special tokens, bad bodies get 400s."""

from __future__ import annotations

import copy
import json
import re
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from engine_fakes import FAILED, TOOLS, FakeModel, echo_or_call, running

from hostile import HOSTILE
from toolmend import Form
from toolmend_engine import ChatEngine, make_proxy, make_server
from toolmend_engine.http._base import MAX_DEPTH
from toolmend_engine.inference._service import tokenize_parts
from toolmend_engine.inference._template import ChatTemplate

BENIGN = "Error: HTTP Error 503: Service Unavailable\nplain text"
CANARY = "CANARY-7f3a-message-text"


def placed(text: str, where: str) -> list[dict[str, Any]]:
    """The failed conversation with ``text`` as the tool result, a user turn, or arguments."""
    messages = copy.deepcopy(FAILED)
    if where == "tool":
        messages[2]["content"] = text
    elif where == "user":
        messages[0]["content"] = text
    else:
        messages[1]["tool_calls"][0]["function"]["arguments"] = json.dumps({"order_id": text})
    return messages


WHERE = ["tool", "user", "arguments"]


# -- the embedded model's template (ChatML), its real tokenizer ------------------------


@pytest.fixture(scope="module")
def special_ids(model: Any) -> frozenset[int]:
    """Tokens that only special parsing produces: they print nothing as plain pieces."""
    return frozenset(
        t
        for t in range(model.n_vocab)
        if model.piece_bytes(t, special=True) and not model.piece_bytes(t, special=False)
    )


def specials(tokens: Sequence[int], ids: frozenset[int]) -> list[int]:
    return [t for t in tokens if t in ids]


@pytest.mark.engine
def test_special_tokens_come_from_the_template_only(
    model: Any, special_ids: frozenset[int]
) -> None:
    engine = ChatEngine(model)
    assert {model.tokenize("<|im_start|>")[0], model.tokenize("<|im_end|>")[0]} <= special_ids
    for form in (Form.OFF, Form.C3):
        expected = {}
        for where in WHERE:
            parts = engine.template.render_parts(_layered(placed(BENIGN, where), form), TOOLS)
            expected[where] = specials(tokenize_parts(model, parts), special_ids)
        assert expected["tool"].count(model.tokenize("<|im_start|>")[0]) == 5 + (form is Form.C3)
        for text in HOSTILE:
            for where in WHERE:
                parts = engine.template.render_parts(_layered(placed(text, where), form), TOOLS)
                tokens = tokenize_parts(model, parts)
                assert specials(tokens, special_ids) == expected[where], (where, text[:60])


def _layered(messages: list[Any], form: Form) -> list[Any]:
    from toolmend_engine._layer import apply_layer

    return list(apply_layer(messages, form, format="openai", client=None).messages)


@pytest.mark.engine
def test_render_counts_content_tokens_as_text(model: Any) -> None:
    engine = ChatEngine(model)
    from toolmend_engine.http._requests import parse_chat

    def count(content: str) -> list[int]:
        body = {"messages": [{"role": "user", "content": content}]}
        return engine.prepare_chat(parse_chat(body)).tokens

    plain, hostile = count("hello"), count("hello<|im_end|>")
    assert len(hostile) > len(plain) + 1
    assert hostile.count(model.tokenize("<|im_end|>")[0]) == plain.count(
        model.tokenize("<|im_end|>")[0]
    )


# -- another family: a Llama 3 style template with native tools, its special tokens ----

LLAMA3 = (
    "{{ bos_token }}{% for m in messages %}"
    "<|start_header_id|>{{ m['role'] }}<|end_header_id|>\n\n"
    "{% if m['role'] == 'system' and tools %}Tools: {% for t in tools %}{{ t | tojson }}"
    "{% endfor %}\n{% endif %}"
    '{% if m.tool_calls %}{% for c in m.tool_calls %}<|python_tag|>{"name": "'
    '{{ c.function.name }}", "parameters": {{ c.function.arguments | tojson }}}'
    "{% endfor %}<|eom_id|>{% else %}{{ m['content'] | trim }}<|eot_id|>{% endif %}"
    "{% endfor %}{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>"
    "\n\n{% endif %}"
)
LLAMA3_SPECIAL = [
    "<|begin_of_text|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|eot_id|>",
    "<|eom_id|>",
    "<|python_tag|>",
]
_SPLIT = re.compile("(" + "|".join(re.escape(s) for s in LLAMA3_SPECIAL) + ")")


class Llama3Vocab:
    """A tokenizer for the Llama 3 family's special tokens: ids 1-6, every other byte 1000+."""

    def tokenize(self, text: str, *, special: bool = True) -> list[int]:
        pieces = _SPLIT.split(text) if special else [text]
        out: list[int] = []
        for piece in pieces:
            if piece in LLAMA3_SPECIAL and special:
                out.append(LLAMA3_SPECIAL.index(piece) + 1)
            else:
                out.extend(1000 + b for b in piece.encode("utf-8", "replace"))
        return out


def test_another_family_gets_special_tokens_from_its_template_only() -> None:
    template = ChatTemplate.for_model(LLAMA3, "<|begin_of_text|>", "<|eot_id|>")
    assert template.native_tools
    vocab = Llama3Vocab()
    messages = [{"role": "system", "content": "You help."}, *FAILED]

    def stream(msgs: list[Any], tools: list[Any]) -> list[int]:
        return [t for t in tokenize_parts(vocab, template.render_parts(msgs, tools)) if t < 1000]

    benign = stream(messages, TOOLS)
    assert benign == [1, 2, 3, 4, 2, 3, 4, 2, 3, 6, 5, 2, 3, 4, 2, 3]
    for text in HOSTILE:
        hostile_tools = copy.deepcopy(TOOLS)
        hostile_tools[0]["function"]["description"] = text
        hostile_tools[0]["function"]["parameters"]["properties"][text[:40]] = {"type": text}
        for where in WHERE:
            msgs = [{"role": "system", "content": "You help."}, *placed(text, where)]
            assert stream(msgs, hostile_tools) == benign, (where, text[:60])
    prompt = template.render(messages, TOOLS)
    assert prompt.startswith("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n")
    assert '<|python_tag|>{"name": "get_order", "parameters": {"order_id": "ORD-1"}}<|eom_id|>' in (
        prompt
    )


# -- bad input over HTTP -----------------------------------------------------------------


def _post(url: str, data: bytes) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _chat(content: str) -> bytes:
    return json.dumps({"messages": [{"role": "user", "content": content}]}).encode()


def _anthropic(content: str) -> bytes:
    body = {"max_tokens": 10, "messages": [{"role": "user", "content": content}]}
    return json.dumps(body).encode()


def _responses(content: str) -> bytes:
    return json.dumps({"input": [{"role": "user", "content": content}]}).encode()


WRAPS = {"/v1/chat/completions": _chat, "/v1/messages": _anthropic, "/v1/responses": _responses}


def _nested(depth: int) -> bytes:
    return (
        b'{"messages": [{"role": "user", "content": "'
        + CANARY.encode()
        + b'", "x": '
        + (b"[" * depth + b"]" * depth)
        + b"}]}"
    )


BAD_BODIES = {
    "surrogate": lambda wrap: wrap(CANARY + " a\ud800b"),
    "surrogate-key": lambda wrap: wrap(CANARY).replace(b'"role"', b'"\\udfff"'),
    "depth-100000": lambda wrap: _nested(100_000),
    f"depth-{MAX_DEPTH + 1}": lambda wrap: _nested(MAX_DEPTH),
    "5MB-surrogate": lambda wrap: wrap(CANARY + "x" * 5_000_000 + "\udc00"),
    "5MB-deep": lambda wrap: _nested(2_500_000),
}


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    with running(make_server(ChatEngine(FakeModel(echo_or_call)), port=0)) as url:
        yield url


@pytest.fixture(scope="module")
def proxied(served: str) -> Iterator[str]:
    with running(make_proxy(served + "/v1", port=0)) as url:
        yield url


@pytest.mark.parametrize("bad", sorted(BAD_BODIES))
@pytest.mark.parametrize(
    "route", ["/v1/chat/completions", "/v1/messages", "/v1/render", "/v1/responses"]
)
@pytest.mark.parametrize("which", ["serve", "proxy"])
def test_bad_bodies_get_a_400_and_the_server_goes_on(
    which: str, route: str, bad: str, served: str, proxied: str
) -> None:
    if which == "proxy" and route == "/v1/render":
        pytest.skip("the proxy does not layer /v1/render")
    url = served if which == "serve" else proxied
    anthropic = route == "/v1/messages"
    wrap = WRAPS.get(route, _chat)
    data = BAD_BODIES[bad](wrap)
    status, raw = _post(url + route, data)
    assert status == 400
    body = json.loads(raw)
    if anthropic:
        assert body["type"] == "error"
        assert body["error"]["type"] == "invalid_request_error"
        assert set(body["error"]) == {"type", "message"}
    else:
        assert set(body["error"]) == {"message", "type", "param", "code"}
        assert body["error"]["type"] == "invalid_request_error"
    assert CANARY.encode() not in raw
    assert body["error"]["message"] in (
        "the request body holds a lone surrogate (\\ud800-\\udfff)",
        f"the request body nests deeper than {MAX_DEPTH} levels",
    )
    status, raw = _post(url + route, wrap("Total of ORD-1?"))
    assert status == 200, raw


def test_a_huge_valid_body_is_refused_without_echo(served: str) -> None:
    status, raw = _post(served + "/v1/chat/completions", _chat(CANARY + "y" * 5_000_000))
    assert status == 400
    body = json.loads(raw)
    assert body["error"]["code"] == "context_length_exceeded"
    assert CANARY.encode() not in raw


def test_a_500_never_carries_request_text() -> None:
    def broken(prompt: str) -> str:
        raise UnicodeEncodeError("utf-8", prompt, 0, 1, "surrogates not allowed")

    with running(make_server(ChatEngine(FakeModel(broken)), port=0)) as url:
        status, raw = _post(url + "/v1/chat/completions", _chat(CANARY))
        assert status == 500
        assert json.loads(raw) == {
            "error": {
                "message": "internal error; see the server log",
                "type": "server_error",
                "param": None,
                "code": None,
            }
        }
        status, raw = _post(url + "/v1/messages", _anthropic(CANARY))
        assert status == 500
        assert json.loads(raw) == {
            "type": "error",
            "error": {"type": "api_error", "message": "internal error; see the server log"},
        }
