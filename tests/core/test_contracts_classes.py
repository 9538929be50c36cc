"""Each invariant class: mined from 40 nominal results, fired by its fault, silent on clean ones."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from toolmend.contracts import (
    Affine,
    Code,
    Contracts,
    Echo,
    Miner,
    MiningOptions,
    ObjectRule,
    Violation,
    check,
    mine,
)

SYMBOLS = ["AAPL", "MSFT", "SAP", "SHEL", "NVDA", "KO", "BMW", "V"]
CURRENCY = {
    "AAPL": "USD",
    "MSFT": "USD",
    "NVDA": "USD",
    "KO": "USD",
    "V": "USD",
    "SAP": "EUR",
    "BMW": "EUR",
    "SHEL": "GBP",
}


def quote(i: int) -> dict[str, Any]:
    rng = random.Random(i)
    symbol = SYMBOLS[i % len(SYMBOLS)]
    prev = round(rng.uniform(10, 500), 2)
    price = round(prev * rng.uniform(0.95, 1.05), 2)
    return {
        "tool": "get_quote",
        "arguments": {"symbol": symbol},
        "result": {
            "symbol": symbol,
            "price": price,
            "previous_close": prev,
            "change": round(price - prev, 2),
            "currency": CURRENCY[symbol],
            "volume": rng.randint(1000, 10**7),
            "as_of": f"2026-05-{i % 28 + 1:02d}T16:00:00Z",
            "meta": {"source": "feed", "delayed": i % 3 == 0},
        },
    }


TRAIN = [quote(i) for i in range(40)]
HELD = [quote(i) for i in range(1000, 1020)]


@pytest.fixture(scope="module")
def contracts() -> Contracts:
    return mine(TRAIN)


def faulted(change: Any) -> dict[str, Any]:
    call = copy.deepcopy(HELD[0])
    change(call["result"])
    return call


def run(contracts: Contracts, call: dict[str, Any]) -> tuple[Violation, ...]:
    return check(contracts, call["tool"], call["arguments"], call["result"])


def v(code: Code, path: str, expected: Any, observed: Any, detail: str) -> Violation:
    return Violation(code, path, expected, observed, detail, "get_quote")


def test_held_out_clean_results_are_silent(contracts: Contracts) -> None:
    assert [run(contracts, call) for call in HELD] == [()] * len(HELD)


def test_the_mined_contract(contracts: Contracts) -> None:
    c = contracts.tools["get_quote"]
    assert c.samples == 40
    keys = {"symbol", "price", "previous_close", "change", "currency", "volume", "as_of", "meta"}
    assert c.objects == {
        "$": ObjectRule(frozenset(keys), frozenset(keys), 40),
        "meta": ObjectRule(frozenset({"source", "delayed"}), frozenset({"source", "delayed"}), 40),
    }
    assert c.types == {
        "$": frozenset({"object"}),
        "symbol": frozenset({"string"}),
        "price": frozenset({"number"}),
        "previous_close": frozenset({"number"}),
        "change": frozenset({"number"}),
        "currency": frozenset({"string"}),
        "volume": frozenset({"integer"}),
        "as_of": frozenset({"string"}),
        "meta": frozenset({"object"}),
        "meta.source": frozenset({"string"}),
        "meta.delayed": frozenset({"boolean"}),
    }
    assert c.domains == {
        "currency": frozenset({"USD", "EUR", "GBP"}),
        "meta.source": frozenset({"feed"}),
    }
    assert c.positive == frozenset({"price", "previous_close", "volume"})
    assert c.echoes == (Echo("symbol", "symbol", False, 40),)
    assert c.affine == (Affine("price", (("change", 1.0), ("previous_close", 1.0)), 0.0, 40),)
    assert c.error_free is True


def test_missing_learned_field(contracts: Contracts) -> None:
    call = faulted(lambda r: r.pop("currency"))
    assert run(contracts, call) == (
        v(
            Code.MISSING_LEARNED_FIELD,
            "currency",
            "present",
            "absent",
            "missing nominal field currency",
        ),
    )


def test_unexpected_field(contracts: Contracts) -> None:
    call = faulted(lambda r: r["meta"].update(node={"id": 7}))
    assert run(contracts, call) == (
        v(
            Code.UNEXPECTED_FIELD,
            "meta.node",
            "absent",
            {"id": 7},
            "field absent from nominal traces: meta.node",
        ),
    )


def test_learned_type_mismatch(contracts: Contracts) -> None:
    call = faulted(lambda r: r.update(volume="1200"))
    assert run(contracts, call) == (
        v(
            Code.LEARNED_TYPE_MISMATCH,
            "volume",
            ["integer"],
            "string",
            "field volume has unexpected type",
        ),
    )


def test_whole_floats_and_integers_are_not_type_mismatches(contracts: Contracts) -> None:
    call = faulted(lambda r: r.update(volume=float(r["volume"])))
    assert run(contracts, call) == ()
    price = HELD[0]["result"]["price"]
    call = faulted(lambda r: r.update(price=int(price), change=int(price) - r["previous_close"]))
    assert run(contracts, call) == ()


def test_unseen_category(contracts: Contracts) -> None:
    call = faulted(lambda r: r.update(currency="XAU"))
    assert run(contracts, call) == (
        v(
            Code.UNSEEN_CATEGORY,
            "currency",
            ["EUR", "GBP", "USD"],
            "XAU",
            "field currency has unseen categorical value",
        ),
    )


def test_nonpositive_value(contracts: Contracts) -> None:
    call = faulted(lambda r: r.update(volume=0))
    assert run(contracts, call) == (
        v(
            Code.NONPOSITIVE_VALUE,
            "volume",
            "> 0",
            0,
            "nominally positive field volume is not positive",
        ),
    )


def test_learned_echo_mismatch(contracts: Contracts) -> None:
    assert HELD[0]["arguments"] == {"symbol": "AAPL"}
    call = faulted(lambda r: r.update(symbol="MSFT"))
    assert run(contracts, call) == (
        v(
            Code.LEARNED_ECHO_MISMATCH,
            "symbol",
            "AAPL",
            "MSFT",
            "field symbol differs from call argument symbol",
        ),
    )


def test_affine_relation_broken(contracts: Contracts) -> None:
    result = HELD[0]["result"]
    call = faulted(lambda r: r.update(change=round(r["change"] + 1.0, 2)))
    predicted = round(call["result"]["change"] + result["previous_close"], 10)
    assert run(contracts, call) == (
        v(
            Code.AFFINE_RELATION_BROKEN,
            "price",
            predicted,
            result["price"],
            "fields price, change, previous_close violate a nominal relation "
            "(price = change + previous_close)",
        ),
    )


def test_explicit_error(contracts: Contracts) -> None:
    call = faulted(lambda r: r.update(error="quota exceeded"))
    assert run(contracts, call) == (
        v(
            Code.EXPLICIT_ERROR,
            "error",
            "absent or empty",
            "quota exceeded",
            "error-bearing field(s): error",
        ),
        v(
            Code.UNEXPECTED_FIELD,
            "error",
            "absent",
            "quota exceeded",
            "field absent from nominal traces: error",
        ),
    )


def test_an_error_object_in_place_of_the_result() -> None:
    contracts = mine(TRAIN)
    found = check(contracts, "get_quote", {"symbol": "AAPL"}, {"Error": "invalid ident"})
    assert [(x.code, x.path) for x in found] == [
        (Code.EXPLICIT_ERROR, "Error"),
        *[(Code.MISSING_LEARNED_FIELD, k) for k in sorted(TRAIN[0]["result"])],
        (Code.UNEXPECTED_FIELD, "Error"),
    ]


def test_a_text_result_in_place_of_json_is_a_type_mismatch_and_an_error_page() -> None:
    page = "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
    found = check(mine(TRAIN), "get_quote", {"symbol": "AAPL"}, page)
    assert found == (
        v(
            Code.EXPLICIT_ERROR,
            "$",
            "a result without an error",
            page,
            "the result text is an error message or error page",
        ),
        v(Code.LEARNED_TYPE_MISMATCH, "$", ["object"], "string", "field $ has unexpected type"),
    )


# -- text tools --


def page(i: int) -> dict[str, Any]:
    words = [
        "the",
        "report",
        "shows",
        "totals",
        "by",
        "region",
        "and",
        "month",
        "while",
        "archives",
        "keep",
        "records",
    ]
    rng = random.Random(i)
    body = " ".join(rng.choice(words) for _ in range(30))
    return {"tool": "fetch_page", "arguments": {"url": f"/p/{i}"}, "result": f"# Page {i}\n{body}"}


def test_text_tools_learn_only_their_type_and_error_freedom() -> None:
    contracts = mine([page(i) for i in range(40)])
    c = contracts.tools["fetch_page"]
    assert (c.types, c.objects, c.domains, c.echoes, c.error_free) == (
        {"$": frozenset({"string"})},
        {},
        {},
        (),
        True,
    )
    assert [check(contracts, "fetch_page", {}, page(i)["result"]) for i in range(100, 120)] == [
        ()
    ] * 20
    assert check(contracts, "fetch_page", {}, "Error: upstream timed out") == (
        Violation(
            Code.EXPLICIT_ERROR,
            "$",
            "a result without an error",
            "Error: upstream timed out",
            "the result text is an error message or error page",
            "fetch_page",
        ),
    )


# -- conservative admission --


def test_below_minimum_support_nothing_is_admitted() -> None:
    contracts = mine(TRAIN[:19])
    c = contracts.tools["get_quote"]
    assert (c.samples, c.objects, c.types, c.domains, c.positive, c.echoes, c.affine) == (
        19,
        {},
        {},
        {},
        frozenset(),
        (),
        (),
    )
    assert c.error_free is False
    assert check(contracts, "get_quote", {"symbol": "AAPL"}, {"Error": "bad"}) == ()


def test_an_invariant_broken_once_in_training_is_not_admitted() -> None:
    calls = copy.deepcopy(TRAIN)
    calls[7]["result"]["volume"] = 0
    calls[8]["result"]["currency"] = "CHF"
    calls[9]["result"]["meta"]["delayed"] = "yes"
    c = mine(calls).tools["get_quote"]
    assert "volume" not in c.positive
    assert "meta.delayed" in c.types
    assert c.types["meta.delayed"] == frozenset({"boolean", "string"})
    assert "currency" not in c.domains


def test_singleton_values_keep_a_domain_open() -> None:
    calls = copy.deepcopy(TRAIN)
    for i, call in enumerate(calls):
        call["result"]["meta"]["source"] = f"feed-{i % 25}"
    c = mine(calls).tools["get_quote"]
    assert "meta.source" not in c.domains


def test_map_like_objects_are_not_closed() -> None:
    calls = copy.deepcopy(TRAIN)
    for i, call in enumerate(calls):
        call["result"]["meta"][f"tag_{i}"] = True
    c = mine(calls).tools["get_quote"]
    assert c.objects["meta"] == ObjectRule(frozenset({"source", "delayed"}), None, 40)


def test_failed_results_are_left_out_of_mining() -> None:
    miner = Miner()
    assert miner.add("get_quote", {}, {"error": "rate limited"}) is False
    assert miner.add("get_quote", {}, '{"Error": "invalid ident"}') is False
    assert miner.add("get_quote", {}, {"success": False, "message": "busy"}) is False
    assert miner.add("get_quote", {}, {"price": 1, "errors": []}) is True
    assert miner.add("get_quote", {}, "Error: upstream timed out") is False
    assert miner.add("get_quote", {}, {"price": 1}, is_error=True) is False
    for call in TRAIN:
        assert miner.add(call["tool"], call["arguments"], call["result"]) is True
    assert miner.contracts().tools["get_quote"].samples == 41


def test_a_nested_error_field_in_training_disables_error_checks() -> None:
    calls = copy.deepcopy(TRAIN)
    calls[3]["result"]["meta"]["error"] = "partial data"
    contracts = mine(calls)
    assert contracts.tools["get_quote"].error_free is False


def test_echoes_need_varied_arguments() -> None:
    calls = [c for c in TRAIN if c["arguments"]["symbol"] in ("AAPL", "MSFT")]
    calls = (calls * 3)[:40]
    c = mine(calls, options=MiningOptions(min_echo_values=3)).tools["get_quote"]
    assert c.echoes == ()


def test_case_folded_echo() -> None:
    calls = copy.deepcopy(TRAIN)
    for call in calls[::2]:
        call["arguments"]["symbol"] = call["arguments"]["symbol"].lower()
    contracts = mine(calls)
    assert contracts.tools["get_quote"].echoes == (Echo("symbol", "symbol", True, 40),)
    assert check(contracts, "get_quote", {"symbol": "aapl"}, HELD[0]["result"]) == ()


def test_mining_is_deterministic_and_independent_of_order() -> None:
    first = mine(TRAIN).dumps()
    assert mine(TRAIN).dumps() == first
    shuffled = list(TRAIN)
    random.Random(5).shuffle(shuffled)
    assert mine(shuffled).dumps() == first
