"""Receipts: the JSON envelope, the appended text block, and only callable recovery tools."""

from __future__ import annotations

import json
import logging

import pytest

from toolmend.contracts import (
    Code,
    Contracts,
    ObjectRule,
    Receipt,
    ToolContract,
    Violation,
    receipt,
    recovery_tools,
    review,
)
from toolmend.contracts._receipt import NONBINDING

CONTRACT = ToolContract(
    tool="get_order",
    samples=40,
    objects={"$": ObjectRule(frozenset({"status", "total"}), frozenset({"status", "total"}), 40)},
    types={"total": frozenset({"number"}), "status": frozenset({"string"})},
    domains={"status": frozenset({"pending", "shipped"})},
    positive=frozenset({"total"}),
    error_free=True,
)
CONTRACTS = Contracts(
    {"get_order": CONTRACT},
    substitutes={"get_order": ("get_order_history", "get_order", "refund_order")},
)
LOST = Violation(
    Code.UNSEEN_CATEGORY,
    "status",
    ["pending", "shipped"],
    "lost",
    "field status has unseen categorical value",
    "get_order",
)
ZERO = Violation(
    Code.NONPOSITIVE_VALUE,
    "total",
    "> 0",
    0,
    "nominally positive field total is not positive",
    "get_order",
)


def test_recovery_tools_are_declared_substitutes_the_agent_has_in_declared_order() -> None:
    subs = {"get_order": ["refund_order", "get_order_history", "get_order", "get_order_history"]}
    available = ["get_order", "get_order_history", "list_orders"]
    assert recovery_tools("get_order", subs, available) == ("get_order_history", "get_order")
    assert recovery_tools("get_order", subs, None) == ()
    assert recovery_tools("get_order", None, available) == ()
    assert recovery_tools("other", subs, available) == ()


def test_a_clean_result_gets_no_receipt() -> None:
    assert receipt("get_order", {"status": "pending"}, (), available_tools=["x"]) is None


def test_json_result_envelope() -> None:
    made = receipt(
        "get_order",
        {"status": "lost", "total": 0},
        [LOST, ZERO],
        available_tools=["get_order", "get_order_history"],
        substitutes=CONTRACTS.substitutes,
    )
    assert made == Receipt(
        "get_order",
        {"status": "lost", "total": 0},
        (LOST, ZERO),
        ("get_order_history", "get_order"),
    )
    assert json.loads(made.render()) == {
        "tool_result": {"status": "lost", "total": 0},
        "outcome_contract": {
            "status": "inconsistent",
            "violations": [
                {
                    "code": "unseen_category",
                    "path": "status",
                    "expected": ["pending", "shipped"],
                    "observed": "lost",
                    "detail": "field status has unseen categorical value",
                },
                {
                    "code": "nonpositive_value",
                    "path": "total",
                    "expected": "> 0",
                    "observed": 0,
                    "detail": "nominally positive field total is not positive",
                },
            ],
            "admissible_recovery_tools": ["get_order_history", "get_order"],
        },
    }


def test_a_text_holding_json_gets_the_envelope_with_its_value() -> None:
    raw = '{"status": "lost", "total": 3}'
    made = receipt("get_order", raw, [LOST])
    assert made is not None
    assert made.is_json
    assert json.loads(made.render()) == {
        "tool_result": {"status": "lost", "total": 3},
        "outcome_contract": {
            "status": "inconsistent",
            "violations": [LOST.to_dict()],
            "admissible_recovery_tools": [],
        },
    }


def test_text_result_gets_the_block_appended_and_keeps_the_raw_text() -> None:
    error = Violation(
        Code.EXPLICIT_ERROR,
        "$",
        "a result without an error",
        "Error: quota exceeded",
        "the result text is an error message or error page",
        "get_order",
    )
    made = receipt(
        "get_order",
        "Error: quota exceeded",
        [error],
        available_tools=["get_order_history"],
        substitutes=CONTRACTS.substitutes,
    )
    assert made is not None
    assert not made.is_json
    assert made.render() == (
        "Error: quota exceeded\n\n"
        "[OUTCOME CONTRACT ADVISORY] The result from `get_order` is inconsistent with a known "
        "invariant of its outcome contract.\n"
        'Violation: explicit_error at `$`; expected "a result without an error", '
        'observed "Error: quota exceeded".\n'
        "Admissible recovery tools: get_order_history.\n"
        "This advisory is nonbinding. Treat the result as unreliable and verify or recover "
        "using the available tools and task context before relying on it. "
        "All actions remain available."
    )
    assert made.render().endswith(NONBINDING)


def test_a_text_block_without_recovery_tools_has_no_tools_line() -> None:
    made = receipt("get_order", "lost", [LOST])
    assert made is not None
    assert "Admissible recovery tools" not in made.render()


def test_long_violation_lists_are_capped_and_counted() -> None:
    many = [LOST] * 13
    made = receipt("get_order", {"status": "lost"}, many)
    assert made is not None
    body = json.loads(made.render())["outcome_contract"]
    assert (len(body["violations"]), body["more_violations"]) == (10, 3)
    text = receipt("get_order", "plain", many)
    assert text is not None
    assert text.render().count("Violation: ") == 10
    assert "(3 more violations not listed.)" in text.render()


def test_review_leaves_a_clean_result_unchanged() -> None:
    outcome = review(CONTRACTS, "get_order", {}, '{"status": "shipped", "total": 12.5}')
    assert (outcome.text, outcome.violations, outcome.receipt, outcome.changed) == (
        '{"status": "shipped", "total": 12.5}',
        (),
        None,
        False,
    )
    value = review(CONTRACTS, "get_order", {}, {"status": "shipped", "total": 12.5})
    assert (value.text, value.changed) == ('{"status": "shipped", "total": 12.5}', False)


def test_review_receipts_a_violation_and_logs_each_firing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="toolmend.contracts")
    outcome = review(
        CONTRACTS,
        "get_order",
        {"order_id": "#W1"},
        {"status": "lost", "total": 0},
        available_tools=["get_order", "refund_order", "list_orders"],
    )
    assert outcome.changed
    assert outcome.violations == (LOST, ZERO)
    assert outcome.receipt is not None
    assert outcome.text == outcome.receipt.render()
    assert outcome.to_dict() == {
        "violations": [LOST.to_dict(), ZERO.to_dict()],
        "recovery_tools": ["get_order", "refund_order"],
        "changed": True,
    }
    assert [(r.name, r.getMessage()) for r in caplog.records] == [
        (
            "toolmend.contracts",
            "toolmend.contracts: get_order violated unseen_category at status: "
            "field status has unseen categorical value",
        ),
        (
            "toolmend.contracts",
            "toolmend.contracts: get_order violated nonpositive_value at total: "
            "nominally positive field total is not positive",
        ),
        (
            "toolmend.contracts",
            "toolmend.contracts: receipt for get_order: unseen_category, nonpositive_value; "
            "recovery tools ['get_order', 'refund_order']",
        ),
    ]


@pytest.mark.parametrize(
    "result",
    ["Error: order service unavailable", {"error": "order service unavailable"}],
    ids=["text", "json"],
)
def test_review_leaves_a_failure_to_be_handled_as_one(result: object) -> None:
    outcome = review(CONTRACTS, "get_order", {}, result)
    text = result if isinstance(result, str) else '{"error": "order service unavailable"}'
    assert (outcome.text, outcome.violations, outcome.receipt) == (text, (), None)
    told = review(CONTRACTS, "get_order", {}, {"status": "lost", "total": 0}, failed=True)
    assert (told.violations, told.changed) == ((), False)
    checked = review(CONTRACTS, "get_order", {}, result, failed=False)
    assert checked.changed is True


def test_review_of_an_unknown_tool_or_without_contracts_changes_nothing() -> None:
    assert review(CONTRACTS, "other_tool", {}, "anything").changed is False
    assert review(None, "get_order", {}, {"status": "lost"}).text == '{"status": "lost"}'


def test_review_of_a_result_json_cannot_write_still_answers() -> None:
    class Opaque:
        def __repr__(self) -> str:
            return "<opaque>"

    outcome = review(CONTRACTS, "get_order", {}, {"status": "lost", "total": Opaque()})
    assert [(v.code, v.path, v.observed) for v in outcome.violations] == [
        (Code.LEARNED_TYPE_MISMATCH, "total", "unknown"),
        (Code.UNSEEN_CATEGORY, "status", "lost"),
    ]
    assert json.loads(outcome.text)["tool_result"] == {"status": "lost", "total": "<opaque>"}
