"""User rules: typed, scoped to tools, checked before the built-in rules, from a file too."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

import toolmend
from toolmend import Kind, Rule, Rules
from toolmend.cli import main

QUOTA = '{"reason": "QUOTA", "detail": "billing window full"}'
BILLING = Rules([Rule("transient", field="reason", equals="QUOTA", tool="billing_*", name="quota")])


def test_a_field_rule_makes_an_unflagged_body_a_transient_failure() -> None:
    assert toolmend.classify_result(QUOTA, tool="billing_charge").failed is False  # built-in: clean
    found = toolmend.classify_result(QUOTA, tool="billing_charge", rules=BILLING)
    assert (found.failed, found.kind, found.rule, found.basis, found.reason) == (
        True, Kind.TRANSIENT, "user", "user:quota", 'reason="QUOTA"',
    )  # fmt: skip


def test_rules_are_scoped_to_their_tools() -> None:
    assert toolmend.classify_result(QUOTA, tool="search", rules=BILLING).failed is False
    assert toolmend.classify_result(QUOTA, rules=BILLING).failed is False


def test_user_rules_come_before_the_built_in_ones() -> None:
    text = "Error: 403 Forbidden: ACME_SOFT_LOCK held by another job"
    assert toolmend.classify_result(text).kind is Kind.UNRECOVERABLE
    rules = Rules([Rule(Kind.TRANSIENT, code="ACME_SOFT_LOCK", name="soft-lock")])
    found = toolmend.classify_result(text, rules=rules)
    assert (found.kind, found.rule, found.basis, found.reason) == (
        Kind.TRANSIENT, "user", "user:soft-lock", "ACME_SOFT_LOCK",
    )  # fmt: skip
    flagged = toolmend.classify_result(text, is_error=True, rules=rules)
    assert (flagged.kind, flagged.rule) == (Kind.TRANSIENT, "is_error")


def test_a_code_rule_needs_a_whole_token_and_the_first_rule_wins() -> None:
    rules = Rules([Rule("fixable", code="E42"), Rule("unrecoverable", phrase="E42")])
    assert toolmend.classify_result("Error: E42 bad date", rules=rules).kind is Kind.FIXABLE
    assert toolmend.classify_result("Error: XE421 bad date", rules=rules).kind is Kind.UNRECOVERABLE


def test_a_clean_rule_silences_a_false_alarm() -> None:
    text = "Error: none, all 3 shards answered"
    assert toolmend.classify_result(text).failed is True
    rules = Rules([Rule("clean", phrase="all 3 shards answered")])
    assert toolmend.classify_result(text, rules=rules).failed is False


def test_installed_rules_reach_rewrite() -> None:
    messages = [
        {"role": "user", "content": "Charge order 7"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function",
            "function": {"name": "billing_charge", "arguments": '{"order": 7}'}}]},
        {"role": "tool", "tool_call_id": "c", "content": QUOTA},
    ]  # fmt: skip
    assert toolmend.rewrite(messages, "c3").report.detections == ()
    old = toolmend.set_rules(BILLING)
    try:
        result = toolmend.rewrite(messages, "c3")
    finally:
        toolmend.set_rules(old)
    (d,) = result.report.detections
    assert (d.kind, d.rule, d.basis, d.reason) == (
        Kind.TRANSIENT, "user", "user:quota", 'reason="QUOTA"',
    )  # fmt: skip
    assert result.messages[-1]["content"].endswith(toolmend.integrations.GUIDANCE[Kind.TRANSIENT])
    assert d.to_dict()["basis"] == "user:quota"


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ({"kind": "sometimes", "phrase": "x"}, "rule kind must be one of"),
        ({"kind": "transient"}, "exactly one non-empty phrase, code, field or signature"),
        ({"kind": "transient", "phrase": "a", "code": "b"}, "exactly one"),
        ({"kind": "transient", "field": "reason"}, "a field rule needs equals"),
    ],
)
def test_bad_rules_are_refused(rule: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Rules([rule])


def test_cli_rules_file(tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    path.write_text(json.dumps({"rules": [
        {"kind": "transient", "field": "reason", "equals": "QUOTA", "tool": "billing_*",
         "name": "quota"}]}))  # fmt: skip
    lines = [
        {"content": QUOTA, "tool": "billing_charge"},
        {"content": QUOTA, "tool": "search"},
    ]
    out = io.StringIO()
    code = main(
        ["classify", "--rules", str(path)],
        io.StringIO("\n".join(json.dumps(x) for x in lines) + "\n"),
        out,
        io.StringIO(),
    )
    assert code == 0
    assert [json.loads(x) for x in out.getvalue().splitlines()] == [
        {"failed": True, "kind": "transient", "rule": "user",
         "evidence": {"basis": "user:quota", "span": 'reason="QUOTA"'},
         "signature": '{"detail": "billing window full", "reason": "QUOTA"}'},
        {"failed": False, "kind": None, "rule": None},
    ]  # fmt: skip
    err = io.StringIO()
    assert main(["classify", "--rules", str(tmp_path / "nope.json")], io.StringIO(), out, err) == 2
    assert err.getvalue().startswith("toolmend classify: cannot use the rules file:")
