"""Saved contracts (versioned JSON) and a checker that never raises on odd input."""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolmend.contracts import (
    FORMAT,
    VERSION,
    Affine,
    Code,
    Contracts,
    Echo,
    ObjectRule,
    ToolContract,
    Violation,
    check,
    review,
)

FULL = ToolContract(
    tool="get_quote",
    samples=40,
    objects={"$": ObjectRule(frozenset({"price", "tags"}), None, 40)},
    types={
        "$": frozenset({"object"}),
        "price": frozenset({"number"}),
        "tags": frozenset({"array"}),
        "tags[]": frozenset({"string"}),
    },
    domains={"tags[]": frozenset({"a", "b"})},
    positive=frozenset({"price"}),
    echoes=(Echo("symbol", "symbol", True, 40),),
    affine=(Affine("price", (("bid", 1.0), ("spread", 0.5)), 0.25, 40),),
    error_free=True,
    schema={"type": "object"},
    support={"price": 40},
)
CONTRACTS = Contracts({"get_quote": FULL}, substitutes={"get_quote": ("backup_quote",)})


def test_round_trip_through_a_file(tmp_path: Path) -> None:
    path = tmp_path / "contracts.json"
    CONTRACTS.save(path)
    assert Contracts.load(path) == CONTRACTS
    data = json.loads(path.read_text(encoding="utf-8"))
    assert (data["format"], data["version"], data["tolerance"]) == (FORMAT, VERSION, 1e-5)
    assert data["tools"]["get_quote"]["affine"] == [
        {
            "target": "price",
            "terms": [["bid", 1.0], ["spread", 0.5]],
            "intercept": 0.25,
            "support": 40,
        }
    ]
    assert data["substitutes"] == {"get_quote": ["backup_quote"]}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "contracts must be a JSON object"),
        ({"format": "other"}, "not a contracts file: format is 'other'"),
        ({"format": FORMAT, "version": 2}, "unsupported contracts version 2 (this reads 1)"),
        ({"format": FORMAT, "version": 1, "tools": []}, "tools and substitutes must be objects"),
        (
            {"format": FORMAT, "version": 1, "substitutes": {"t": "x"}},
            "contracts are malformed: substitutes must be lists of tool names, not 'x'",
        ),
        (
            {"format": FORMAT, "version": 1, "tools": {"t": {"echoes": [{"path": "a"}]}}},
            "contract for tool 't' is malformed: 'argument'",
        ),
    ],
)
def test_loading_rejects_what_it_cannot_read(data: Any, message: str) -> None:
    with pytest.raises(ValueError) as raised:
        Contracts.from_dict(data)
    assert str(raised.value) == message


def test_loading_text_that_is_not_json() -> None:
    with pytest.raises(ValueError, match=r"^contracts are not JSON: "):
        Contracts.loads("{")


def test_substitutes_and_declarations_build_new_sets() -> None:
    base = Contracts()
    more = base.with_substitutes({"a": ["b", "c", "b"]}).declare("a", {"type": "array"})
    assert base == Contracts()
    assert more.substitutes == {"a": ("b", "c")}
    assert more.tools["a"] == ToolContract("a", schema={"type": "array"})


def test_the_checker_uses_every_kind_of_invariant() -> None:
    result = {"price": -1, "tags": ["a", "z"], "symbol": "msft", "bid": 1, "spread": 2, "x": 1}
    found = check(CONTRACTS, "get_quote", {"symbol": "AAPL"}, result)
    assert [(v.code, v.path) for v in found] == [
        (Code.UNSEEN_CATEGORY, "tags[1]"),
        (Code.NONPOSITIVE_VALUE, "price"),
        (Code.LEARNED_ECHO_MISMATCH, "symbol"),
        (Code.AFFINE_RELATION_BROKEN, "price"),
    ]
    assert found[-1] == Violation(
        Code.AFFINE_RELATION_BROKEN,
        "price",
        2.25,
        -1,
        "fields price, bid, spread violate a nominal relation (price = bid + 0.5*spread + 0.25)",
        "get_quote",
    )


def test_affine_tolerance_is_relative() -> None:
    result = {"price": 2.25 * (1 + 5e-6), "tags": [], "bid": 1, "spread": 2}
    assert check(CONTRACTS, "get_quote", {}, result) == ()
    result["price"] = 2.25 * (1 + 5e-5)
    assert [v.code for v in check(CONTRACTS, "get_quote", {}, result)] == [
        Code.AFFINE_RELATION_BROKEN
    ]


ODD: list[Any] = [
    None,
    "",
    "   ",
    "{",
    "[" * 5000 + "]" * 5000,
    b"bytes",
    float("nan"),
    math.inf,
    {"price": float("nan"), "bid": math.inf, "spread": 1, "tags": None},
    {1: 2, None: "x"},
    [[[[[]]]]],
    {"tags": list(range(10_000))},
    object(),
]


@pytest.mark.parametrize("result", ODD, ids=range(len(ODD)))
def test_odd_results_never_raise(result: Any, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="toolmend.contracts")
    found = check(CONTRACTS, "get_quote", {"symbol": object()}, result)
    assert isinstance(found, tuple)
    assert all(isinstance(v, Violation) for v in found)
    outcome = review(CONTRACTS, "get_quote", ["not", "a", "mapping"], result, available_tools=[])
    assert isinstance(outcome.text, str)
    assert caplog.records == []


def test_a_nan_price_is_not_positive() -> None:
    found = check(CONTRACTS, "get_quote", {}, {"price": float("nan"), "tags": []})
    assert [(v.code, v.observed) for v in found] == [(Code.NONPOSITIVE_VALUE, "nan")]


def test_deep_nesting_is_bounded() -> None:
    deep: Any = "leaf"
    for _ in range(3000):
        deep = {"a": deep}
    assert check(CONTRACTS, "get_quote", {}, deep) == (
        Violation(
            Code.MISSING_LEARNED_FIELD,
            "price",
            "present",
            "absent",
            "missing nominal field price",
            "get_quote",
        ),
        Violation(
            Code.MISSING_LEARNED_FIELD,
            "tags",
            "present",
            "absent",
            "missing nominal field tags",
            "get_quote",
        ),
    )


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5)
    ),
    max_leaves=30,
)


@settings(max_examples=150, deadline=None)
@given(result=JSON, arguments=JSON)
def test_any_json_checks_deterministically_without_raising(result: Any, arguments: Any) -> None:
    first = check(CONTRACTS, "get_quote", arguments, result)
    assert check(CONTRACTS, "get_quote", arguments, result) == first
    assert all(isinstance(v, Violation) for v in first)
    if isinstance(result, dict | list):
        as_text = check(CONTRACTS, "get_quote", arguments, json.dumps(result))
        assert [(v.code, v.path) for v in as_text] == [(v.code, v.path) for v in first]
