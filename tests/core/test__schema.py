"""Declared contracts: MCP outputSchema, JSON Schema, pydantic return types (schema_violation)."""

from __future__ import annotations

import logging
import sys
from typing import Any

import mcp.types
import pytest
from pydantic import BaseModel, ConfigDict

from toolmend.contracts import (
    Code,
    Contracts,
    Violation,
    check,
    declared,
    from_mcp_tools,
    mine,
    return_schema,
    review,
    schema_of,
)
from toolmend.contracts import _schema as schema_module
from toolmend.contracts._schema import validate


class Item(BaseModel):
    model_config = ConfigDict(extra="forbid")
    sku: str
    qty: int


class Order(BaseModel):
    id: str
    items: list[Item]
    total: float


def get_order(order_id: str) -> Order:
    raise NotImplementedError


def untyped(order_id):  # type: ignore[no-untyped-def]
    return order_id


BAD_ORDER = {"items": [{"qty": 1, "note": "gift"}, {"sku": "B-2", "qty": "2"}], "total": "n/a"}


def sv(path: str, expected: Any, observed: Any, detail: str, tool: str = "get_order") -> Violation:
    return Violation(Code.SCHEMA_VIOLATION, path, expected, observed, detail, tool)


EXPECTED = (
    sv("id", "present", "absent", "'id' is a required property"),
    sv("items[0].note", "absent", "gift", "additional property 'note' is not allowed"),
    sv("items[0].sku", "present", "absent", "'sku' is a required property"),
    sv("items[1].qty", {"type": "integer"}, "2", "'2' is not of type 'integer'"),
    sv("total", {"type": "number"}, "n/a", "'n/a' is not of type 'number'"),
)


def test_pydantic_return_type_declares_a_contract() -> None:
    schema = return_schema(get_order)
    assert schema == schema_of(Order)
    contracts = declared({"get_order": schema})
    assert check(contracts, "get_order", {"order_id": "1"}, BAD_ORDER) == EXPECTED
    good = {"id": "1", "items": [{"sku": "A", "qty": 1}], "total": 9.5}
    assert check(contracts, "get_order", {}, good) == ()


def test_functions_without_a_useful_return_type_declare_nothing() -> None:
    def returns_none() -> None:
        return None

    assert return_schema(untyped) is None
    assert return_schema(returns_none) is None


def test_the_builtin_validator_agrees_with_jsonschema() -> None:
    schema = schema_of(Order)
    assert validate(schema, BAD_ORDER, "get_order", lite=True) == list(EXPECTED)
    keywords = {
        "type": "object",
        "properties": {
            "price": {"type": "number", "exclusiveMinimum": 0},
            "status": {"enum": ["open", "closed"]},
            "count": {"type": "integer", "minimum": 1, "maximum": 9},
            "tag": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
    }
    value = {"price": 0, "status": "lost", "count": 12, "tag": None}
    assert validate(keywords, value, "t", lite=True) == validate(keywords, value, "t")
    assert [v.detail for v in validate(keywords, value, "t")] == [
        "12 is greater than the maximum of 9",
        "0 is less than or equal to the minimum of 0",
        "'lost' is not one of ['open', 'closed']",
    ]


def test_without_jsonschema_the_builtin_validator_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jsonschema", None)
    monkeypatch.setattr(schema_module, "_cache", {})
    contracts = declared({"get_order": schema_of(Order)})
    assert check(contracts, "get_order", {}, BAD_ORDER) == EXPECTED


def test_mcp_output_schema_declares_a_contract() -> None:
    tools = [
        mcp.types.Tool(
            name="get_weather",
            input_schema={"type": "object"},
            output_schema={
                "type": "object",
                "properties": {
                    "temperature": {"type": "number"},
                    "conditions": {"type": "string", "enum": ["sunny", "cloudy", "rain"]},
                },
                "required": ["temperature", "conditions"],
            },
        ),
        mcp.types.Tool(name="no_schema", input_schema={"type": "object"}),
        {"name": "as_dict", "outputSchema": {"type": "array"}},
    ]
    contracts = from_mcp_tools(tools)
    assert sorted(contracts.tools) == ["as_dict", "get_weather"]
    found = check(contracts, "get_weather", {}, '{"temperature": "22C", "conditions": "hail"}')
    assert found == (
        sv(
            "conditions",
            {"enum": ["sunny", "cloudy", "rain"]},
            "hail",
            "'hail' is not one of ['sunny', 'cloudy', 'rain']",
            "get_weather",
        ),
        sv(
            "temperature", {"type": "number"}, "22C", "'22C' is not of type 'number'", "get_weather"
        ),
    )
    assert check(contracts, "as_dict", {}, {"a": 1}) == (
        sv("$", {"type": "array"}, {"a": 1}, "{'a': 1} is not of type 'array'", "as_dict"),
    )


def test_an_invalid_schema_checks_nothing_and_warns(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="toolmend.contracts")
    contracts = declared({"t": {"type": "no-such-type"}})
    assert check(contracts, "t", {}, {"a": 1}) == ()
    assert [r.levelname for r in caplog.records] == ["WARNING"]
    assert caplog.records[0].getMessage().startswith("toolmend.contracts: schema for t is invalid")


def test_declared_and_mined_contracts_combine_and_survive_a_round_trip() -> None:
    calls = [
        {
            "tool": "get_order",
            "arguments": {},
            "result": {"id": str(i), "items": [], "total": i + 1},
        }
        for i in range(30)
    ]
    mined = mine(calls)
    both = mined.merge(declared({"get_order": schema_of(Order)}))
    contract = both.tools["get_order"]
    assert contract.samples == 30
    assert contract.schema == schema_of(Order)
    assert Contracts.loads(both.dumps()) == both
    found = check(both, "get_order", {}, {"id": "x", "items": [], "total": -2})
    assert found == (
        Violation(
            Code.NONPOSITIVE_VALUE,
            "total",
            "> 0",
            -2,
            "nominally positive field total is not positive",
            "get_order",
        ),
    )
    found = check(both, "get_order", {}, {"id": "x", "items": [], "total": "free"})
    assert [v.code for v in found] == [Code.SCHEMA_VIOLATION, Code.LEARNED_TYPE_MISMATCH]


def test_a_schema_receipt_reaches_the_text() -> None:
    contracts = declared({"get_order": schema_of(Order)}).with_substitutes(
        {"get_order": ["get_order_v2"]}
    )
    outcome = review(
        contracts,
        "get_order",
        {},
        {"id": "1", "items": [], "total": "n/a"},
        available_tools=["get_order_v2"],
    )
    assert outcome.text == (
        '{"tool_result": {"id": "1", "items": [], "total": "n/a"}, "outcome_contract": '
        '{"status": "inconsistent", "violations": [{"code": "schema_violation", "path": "total", '
        '"expected": {"type": "number"}, "observed": "n/a", '
        "\"detail\": \"'n/a' is not of type 'number'\"}], "
        '"admissible_recovery_tools": ["get_order_v2"]}}'
    )
