"""Errors in context through the Agents SDK input filter: the model's input only."""

from __future__ import annotations

import copy
from typing import Any

from agents.run_config import ModelInputData
from oa_support import call_item, output_item, user

import toolmend_openai_agents as tm
from toolmend import ContextPolicy, Kind
from toolmend.integrations import GUIDANCE, PILE_UP, runtime_note

ERROR = "Error: 503 Service Unavailable\nupstream: orders-api"
RESOLVED = (
    "[Earlier failure of get_order, resolved by a later successful call: "
    "Error: 503 Service Unavailable]"
)
REPEATED = (
    "[get_order failed again with the same error as its earlier call above: "
    "Error: 503 Service Unavailable]"
)
DEV = "Error: 403 Forbidden: plan limit reached. Upgrade your plan at https://example.com/billing."
MARKER = "[a step for the developer was omitted]"


def _items(*outputs: str) -> list[Any]:
    items: list[Any] = [user("Where is order 7?")]
    for n, output in enumerate(outputs, 1):
        items += [call_item("get_order", {"id": n}, f"call_{n}"), output_item(f"call_{n}", output)]
    return items


def _apply(items: list[Any], context: ContextPolicy | None = None) -> list[Any]:
    before = copy.deepcopy(items)
    data = ModelInputData(input=items, instructions=None)
    out = tm.input_filter("c3", context=context).apply(data)
    assert items == before  # the run's items are never touched
    return list(out.input)


def test_a_resolved_failure_collapses_in_the_model_input() -> None:
    items = _items(ERROR, '{"status": "shipped"}')
    out = _apply(items, ContextPolicy(collapse_resolved=True))
    assert out == [*items[:2], output_item("call_1", RESOLVED), *items[3:]]
    assert [a is b for a, b in zip(out, items, strict=True)] == [True, True, False, True, True]
    assert _apply(items) == items


def test_identical_errors_collapse_and_the_third_gets_the_pile_up_note() -> None:
    items = _items(ERROR, ERROR, ERROR)
    out = _apply(items, ContextPolicy(collapse_resolved=True))
    piled = PILE_UP.format(count=3, tool="get_order", error_class="503")
    assert out == [
        *items[:4],
        output_item("call_2", REPEATED),
        *items[5:],
        user(runtime_note("get_order", {"id": 3}, ERROR, piled)),
    ]


def test_the_note_omits_the_developer_step() -> None:
    out = _apply(_items(DEV))
    shown = "Error: 403 Forbidden: plan limit reached. " + MARKER
    assert out[-1] == user(
        runtime_note("get_order", {"id": 1}, shown, GUIDANCE[Kind.UNRECOVERABLE])
    )
    full = _apply(_items(DEV), ContextPolicy(filter_steps=False))
    assert full[-1] == user(runtime_note("get_order", {"id": 1}, DEV, GUIDANCE[Kind.UNRECOVERABLE]))
