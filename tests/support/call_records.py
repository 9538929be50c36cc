"""The exact shape of the core's call record, for tests that pin an adapter's records.

Every adapter writes :class:`toolmend.integrations.CallRecord` as its
``to_dict()``; a test states the values it expects on top of the keys every
record has, so a key added, dropped or renamed fails every such test.
"""

from __future__ import annotations

from typing import Any

RECORD_KEYS: dict[str, Any] = {
    "tool": None,
    "effect": None,
    "effect_source": None,
    "form": None,
    "failed": None,
    "kind": None,
    "rule": None,
    "source": None,
    "reason": None,
    "guidance": None,
    "note": None,
    "attempts": None,
    "retry_after": None,
    "outcome_unknown": False,
    "stop": None,
    "why_stopped": None,
    "history": [],
    "violations": [],
    "receipt": None,
}


def call_record(**fields: Any) -> dict[str, Any]:
    """The record with every key at its empty value, then ``fields``."""
    return {**RECORD_KEYS, **fields}


def attempt(number: int, error: str, kind: str, reason: str, **fields: Any) -> dict[str, Any]:
    """One failed attempt as a record's ``history`` holds it."""
    return {
        "attempt": number,
        "error": error,
        "kind": kind,
        "reason": reason,
        "retry_after": None,
        "before_dispatch": False,
        "outcome_unknown": False,
        "delay": None,
        "stop": None,
        "why_stopped": None,
        **fields,
    }
