"""``toolmend-engine serve`` as a newcomer meets it: names, help, logs, headers, tool_choice.

The model names: by default ``serve`` answers to the file's name, ``local`` and any
other name, so the examples (``--model local``) and clients' default model names work
unchanged; ``--model-name``, repeatable, names the aliases and turns the 404 back on.
"""

from __future__ import annotations

import re
import urllib.request
from typing import Any

import anthropic
import openai
import pytest
from engine_fakes import ANTHROPIC_FAILED, ANTHROPIC_TOOLS, FAILED, TOOLS, FakeModel, running

from toolmend_engine import ChatEngine, make_server
from toolmend_engine.cli import main
from tools.engine_process import engine_process

NAME = "SmolLM2-135M-Instruct.Q4_1"
QUESTION: list[Any] = [{"role": "user", "content": "Name three colours."}]


def _client(base: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=base + "/v1", api_key="unused", max_retries=0, _strict_response_validation=True
    )


def _help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit):
        main(argv)
    return " ".join(capsys.readouterr().out.split())


# -- names, on a fake model --------------------------------------------------------------


def test_aliases_are_listed_accepted_and_replies_carry_the_first_name() -> None:
    engine = ChatEngine(FakeModel(lambda _: "ok"), name="main", aliases=["local", "main", "x"])
    assert engine.aliases == ("local", "x")
    with running(make_server(engine, port=0)) as url:
        client = _client(url)
        assert [m.id for m in client.models.list()] == ["main", "local", "x"]
        assert client.models.retrieve("x").id == "x"
        reply = client.chat.completions.create(model="local", messages=QUESTION)
        assert (reply.model, reply.choices[0].message.content) == ("main", "ok")
        with pytest.raises(openai.NotFoundError) as info:
            client.chat.completions.create(model="gpt-unknown", messages=QUESTION)
        assert info.value.code == "model_not_found"


def test_the_star_alias_accepts_any_name_and_is_not_listed() -> None:
    engine = ChatEngine(FakeModel(lambda _: "ok"), aliases=["local", "*"])
    with running(make_server(engine, port=0)) as url:
        client = _client(url)
        assert [m.id for m in client.models.list()] == ["fake-model", "local"]
        reply = client.chat.completions.create(model="gpt-5.6-luna", messages=QUESTION)
        assert reply.model == "fake-model"


def test_the_server_header_is_the_name_alone(base: str) -> None:
    with urllib.request.urlopen(base + "/health") as response:
        assert response.headers.get_all("Server") == ["toolmend-engine"]


# -- Anthropic tool_choice: the grammars of OpenAI's required and named function ----------


def test_anthropic_tool_choice_any_and_tool_force_a_call(fake: FakeModel, base: str) -> None:
    claude = anthropic.Anthropic(
        base_url=base, api_key="unused", max_retries=0, _strict_response_validation=True
    )
    question = ANTHROPIC_FAILED[:1]
    for choice in ({"type": "any"}, {"type": "tool", "name": "get_order"}):
        message = claude.messages.create(
            model="fake-model",
            max_tokens=100,
            messages=question,
            tools=ANTHROPIC_TOOLS,
            tool_choice=choice,  # type: ignore[arg-type]
        )
        assert message.stop_reason == "tool_use"
    # the grammars OpenAI's chat route builds for the same tool, forced and named
    client = _client(base)
    chat_tools: Any = [
        {"type": "function", "function": {"name": "get_order", "parameters": {"type": "object"}}}
    ]
    for openai_choice in ("required", {"type": "function", "function": {"name": "get_order"}}):
        client.chat.completions.create(
            model="fake-model",
            messages=QUESTION,
            tools=chat_tools,
            tool_choice=openai_choice,  # type: ignore[arg-type]
        )
    assert fake.grammars[0] is not None
    assert fake.grammars[:2] == fake.grammars[2:]
    claude.messages.create(
        model="fake-model",
        max_tokens=100,
        messages=question,
        tools=ANTHROPIC_TOOLS,
        tool_choice={"type": "auto"},
    )
    assert fake.grammars[-1] is None


@pytest.mark.parametrize(
    ("tools", "choice", "message"),
    [
        ([], {"type": "any"}, "tool_choice of type 'any' needs at least one tool"),
        (
            ANTHROPIC_TOOLS,
            {"type": "tool", "name": "nope"},
            "tool_choice names 'nope', which is not among the tools",
        ),
        (
            ANTHROPIC_TOOLS,
            {"type": "tool"},
            "tool_choice of type 'tool' must name it: {'type': 'tool', 'name': ...}",
        ),
        (
            ANTHROPIC_TOOLS,
            {"type": "sometimes"},
            "tool_choice must be an object of type 'auto', 'any', 'tool' or 'none'",
        ),
    ],
)
def test_anthropic_tool_choice_it_cannot_honour_is_a_400(
    base: str, tools: list[Any], choice: Any, message: str
) -> None:
    claude = anthropic.Anthropic(base_url=base, api_key="unused", max_retries=0)
    with pytest.raises(anthropic.BadRequestError) as info:
        claude.messages.create(
            model="fake-model",
            max_tokens=10,
            messages=ANTHROPIC_FAILED[:1],
            tools=tools,
            tool_choice=choice,
        )
    assert info.value.body == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": message},
    }


# -- the command line --------------------------------------------------------------------


def test_help_shows_every_default(capsys: pytest.CaptureFixture[str]) -> None:
    serve = _help(["serve", "--help"], capsys)
    assert "--host HOST address to listen on (127.0.0.1)" in serve
    assert "--port PORT port, 0 for any free one (8080)" in serve
    assert (
        "--model-name NAME a name requests may give for the model; repeat for aliases, the "
        "first is the one replies carry, '*' accepts any name, other names get a 404 "
        "(default: the file name, 'local' and '*', so clients' default model names work)"
    ) in serve
    proxy = _help(["proxy", "--help"], capsys)
    assert "--tool-errors TOOL_ERRORS default form: off, c0, c1, c2, c3, c4 (off)" in proxy
    assert "--port PORT port, 0 for any free one (8081)" in proxy
    assert "--timeout TIMEOUT seconds to wait for the upstream (600)" in proxy
    ev = _help(["eval", "--help"], capsys)
    assert (
        "--forms FORMS comma-separated delivery forms to compare, of off, c0, c1, c2, c3, c4 "
        "(off,c1,c2,c3,c4)"
    ) in ev
    assert (
        "--kinds KINDS comma-separated kinds of failed call to score: transient, fixable, "
        "unrecoverable (all three)"
    ) in ev
    top = _help(["--help"], capsys)
    assert (
        "-v, --verbose log detections and requests; -vv adds llama.cpp's own loading and "
        "timing output"
    ) in top


@pytest.mark.engine
def test_serve_answers_to_the_examples_and_the_clients_default_names() -> None:
    pytest.importorskip("llama_cpp")
    with engine_process("serve") as served:
        client = _client(served.url)
        assert [m.id for m in client.models.list()] == [NAME, "local"]
        for name in ("local", NAME, "gpt-3.5-turbo"):
            reply = client.chat.completions.create(model=name, messages=QUESTION, max_tokens=2)
            assert reply.model == NAME
    assert served.log[0] == (
        f"toolmend-engine: serving {NAME} on {served.url}/v1 (tool errors: off)\n"
    )


@pytest.mark.engine
def test_named_aliases_turn_the_404_on_and_logs_have_one_prefix() -> None:
    pytest.importorskip("llama_cpp")
    with engine_process("serve", "--model-name", "a", "--model-name", "b") as served:
        client = _client(served.url)
        assert [m.id for m in client.models.list()] == ["a", "b"]
        with pytest.raises(openai.NotFoundError):
            client.chat.completions.create(model="local", messages=QUESTION, max_tokens=2)
        client.chat.completions.create(model="b", messages=FAILED, max_tokens=2, tools=TOOLS)
    assert served.log[1:] == [
        "toolmend: failed tool result at 2 (get_order): kind=transient rule=generic "
        "reason=Service Unavailable\n",
        "toolmend: failed=2:get_order:transient:generic; form=off; changed=false; skipped=[]\n",
        "toolmend-engine: failed=2:get_order:transient:generic/paper; form=off; changed=false\n",
    ]


@pytest.mark.engine
@pytest.mark.parametrize(("flag", "loader"), [("-v", False), ("-vv", True)])
def test_llama_cpp_loader_output_only_with_vv(flag: str, loader: bool) -> None:
    pytest.importorskip("llama_cpp")
    with engine_process(flag, "serve") as served:
        _client(served.url).models.list()
    # the loader prints before the line that says where the server listens
    assert any(re.match(r"llama_model_loader: ", line) for line in served.log) is loader
    assert (len(served.log) > 100) is loader
