"""Errors in context in the engine: serve and proxy apply the server's ContextPolicy;
the evaluation's situations are built and summarised as documented."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from engine_fakes import FAILED, TOOLS, FakeModel, echo_or_call, running

from toolmend import ContextPolicy, Form, Kind
from toolmend.integrations import PILE_UP
from toolmend_engine import ChatEngine, header_value, make_proxy, make_server
from toolmend_engine.eval._evaluate import EvalPlan, feature_policy, summarize_situations
from toolmend_engine.eval._scenarios import SITUATIONS, load_suite, situation_messages
from toolmend_engine.http._requests import parse_chat

ERROR = "Error: 503 Service Unavailable\nupstream: orders-api (pool 3)"
STUB = (
    "[Earlier failure of get_order, resolved by a later successful call: "
    "Error: 503 Service Unavailable]"
)
OK = '{"total": "12.50 EUR"}'
COLLAPSE = ContextPolicy(collapse_resolved=True)


def _resolved() -> list[Any]:
    second = copy.deepcopy(FAILED[1])
    second["tool_calls"][0]["id"] = "c2"
    return [
        FAILED[0],
        FAILED[1],
        {**FAILED[2], "content": ERROR},
        second,
        {"role": "tool", "tool_call_id": "c2", "content": OK},
    ]


def test_serve_collapses_with_the_servers_policy_only() -> None:
    body = {"messages": _resolved(), "tools": TOOLS, "tool_errors": "c3"}
    on = ChatEngine(FakeModel(), context=COLLAPSE).prepare_chat(parse_chat(body))
    assert STUB in on.prompt
    assert "orders-api" not in on.prompt
    assert header_value(on.report) == "failed=none; form=c3; changed=true; collapsed=1"
    off = ChatEngine(FakeModel()).prepare_chat(parse_chat(body))
    assert ERROR in off.prompt
    assert STUB not in off.prompt
    assert header_value(off.report) == "failed=none; form=c3; changed=false"


def test_serve_filters_the_developer_step_in_the_note() -> None:
    dev = "Error: 401 Unauthorized: token expired. Run `gcloud auth login` to log in again."
    messages = [*FAILED[:2], {**FAILED[2], "content": dev}]
    prepared = ChatEngine(FakeModel()).prepare_chat(
        parse_chat({"messages": messages, "tools": TOOLS, "tool_errors": "c4"})
    )
    assert "gcloud" not in prepared.prompt
    assert (
        "failed with: `Error: 401 Unauthorized: token expired. "
        "[a step for the developer was omitted]`"
    ) in prepared.prompt
    assert prepared.report.detections[0].omitted == ("Run `gcloud auth login` to log in again.",)


@pytest.fixture
def proxied() -> Iterator[tuple[openai.OpenAI, FakeModel]]:
    fake = FakeModel(echo_or_call)
    with running(make_server(ChatEngine(fake), port=0)) as upstream:
        proxy = make_proxy(upstream + "/v1", port=0, context=COLLAPSE)
        with running(proxy) as url:
            yield openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0), fake


def test_the_proxy_collapses_before_the_upstream(
    proxied: tuple[openai.OpenAI, FakeModel],
) -> None:
    client, fake = proxied
    raw = client.chat.completions.with_raw_response.create(
        model="fake-model", messages=_resolved(), tools=TOOLS, extra_body={"tool_errors": "c3"}
    )
    assert raw.headers["x-tool-errors"] == "failed=none; form=c3; changed=true; collapsed=1"
    assert STUB in fake.prompts[-1]
    assert "orders-api" not in fake.prompts[-1]


def test_situation_conversations() -> None:
    suite = load_suite()
    scenario = suite.select(1)[0]
    by_name = {s.name: s for s in SITUATIONS}
    resolved, previous = situation_messages(suite, scenario, by_name["resolved"])
    assert [m["role"] for m in resolved] == ["user", "assistant", "tool", "assistant", "tool"]
    assert previous == 3
    assert resolved[2]["content"].startswith(suite.error_text(scenario, Kind.FIXABLE) + "\n")
    assert json.loads(resolved[4]["content"]) == scenario.result
    repeated, previous = situation_messages(suite, scenario, by_name["repeated"])
    assert [m["role"] for m in repeated] == ["user", *(["assistant", "tool"] * 3)]
    assert previous == 5
    assert {m["content"] for m in repeated if m["role"] == "tool"} == {
        suite.error_text(scenario, Kind.TRANSIENT)
    }
    devstep, _ = situation_messages(suite, scenario, by_name["devstep"])
    assert "Run `gcloud auth login`" in devstep[2]["content"]
    assert feature_policy(by_name["resolved"], True) == ContextPolicy(
        collapse_resolved=True, pile_up_after=None, filter_steps=False
    )
    assert feature_policy(by_name["repeated"], False) == ContextPolicy.off()
    assert feature_policy(by_name["repeated"], True).pile_up_after == 3
    cases = EvalPlan(forms=(Form.OFF, Form.C3), limit=1, situation_limit=2).situation_cases(suite)
    assert [(c[1].name, c[2].value, c[3]) for c in cases[:6]] == [
        ("resolved", "off", False), ("resolved", "c3", False), ("resolved", "c3", True),
    ] * 2  # fmt: skip
    assert len(cases) == 18


def test_summarize_situations() -> None:
    rows = [
        {"situation": "repeated", "form": "c3", "on": on, "correct": ok, "log_odds": lo,
         "calls": calls, "exact_repeats": ex, "canonical_repeats": cn, "recomputed_tokens": rc}
        for on, ok, lo, calls, ex, cn, rc in (
            (False, False, 1.0, 2, 1, 2, 10), (False, True, -1.0, 0, 0, 0, 20),
            (True, True, -2.0, 1, 0, 0, 30),
        )
    ]  # fmt: skip
    assert summarize_situations([{**rows[0], "form": "c0"}, *rows]) == [
        {"situation": "repeated", "form": "c0", "feature": "-", "n": 1, "correct": 0.0,
         "log_odds": 1.0, "calls": 2, "exact_repeat_rate": 0.5, "canonical_repeat_rate": 1.0,
         "recomputed_tokens": 10, "errors": 0},
        {"situation": "repeated", "form": "c3", "feature": "off", "n": 2, "correct": 0.5,
         "log_odds": 0.0, "calls": 2, "exact_repeat_rate": 0.5, "canonical_repeat_rate": 1.0,
         "recomputed_tokens": 15.0, "errors": 0},
        {"situation": "repeated", "form": "c3", "feature": "on", "n": 1, "correct": 1.0,
         "log_odds": -2.0, "calls": 1, "exact_repeat_rate": 0.0, "canonical_repeat_rate": 0.0,
         "recomputed_tokens": 30, "errors": 0},
    ]  # fmt: skip


def test_serve_notes_the_pile_up_after_three_identical_failures() -> None:
    messages: list[Any] = [FAILED[0]]
    for n in (1, 2, 3):
        turn = copy.deepcopy(FAILED[1])
        turn["tool_calls"][0]["id"] = f"c{n}"
        messages += [turn, {**FAILED[2], "tool_call_id": f"c{n}"}]
    body = {"messages": messages, "tools": TOOLS, "tool_errors": "c3"}
    prepared = ChatEngine(FakeModel()).prepare_chat(parse_chat(body))
    piled = PILE_UP.format(count=3, tool="get_order", error_class="503")
    assert prepared.prompt.endswith(f"{piled}<|im_end|>\n<|im_start|>assistant\n")
    off = ChatEngine(FakeModel(), context=ContextPolicy(pile_up_after=None)).prepare_chat(
        parse_chat(body)
    )
    assert off.prompt.endswith(
        "Retrying the same call is expected to succeed.<|im_end|>\n<|im_start|>assistant\n"
    )
