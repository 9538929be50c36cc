"""The rules adapters used to decide themselves, now the core's: each asserted exactly."""

from __future__ import annotations

import inspect
from contextvars import ContextVar
from types import SimpleNamespace

import pytest

from toolmend import Effect, Form, Kind, RetryPolicy, ToolFailure, Verdict
from toolmend.integrations import (
    CallRecord,
    Delegating,
    Recovery,
    ToolSignature,
    is_async,
    pending_verdict,
    scoped,
)

FAILED = Verdict(True, Kind.FIXABLE, "r", None, "why", "Fix the argument.")


def test_pending_verdict_is_clean_only_when_c1_already_shows_the_guidance() -> None:
    shown = "boom\nFix the argument."
    assert pending_verdict(FAILED, Form.C1, shown) == Verdict(False)
    assert pending_verdict(FAILED, "c1", True) == Verdict(False)
    assert pending_verdict(FAILED, Form.C1, "boom") is FAILED
    assert pending_verdict(FAILED, Form.C3, shown) is FAILED
    assert pending_verdict(FAILED, "not-a-form", True) is FAILED
    assert pending_verdict(FAILED, None, True) is FAILED
    clean = Verdict(False)
    assert pending_verdict(clean, Form.C1, True) is clean


def test_recovery_parses_once_and_a_declaration_beats_a_trusted_hint() -> None:
    recovery = Recovery.of(effects={"a": "Read-Only", "b": "typo"}, retry=None, form="c1")
    assert recovery.effects == {"a": Effect.READ_ONLY, "b": Effect.UNKNOWN}
    assert recovery.policy == RetryPolicy.none()
    assert recovery.form is Form.C1
    assert Recovery.of().policy == RetryPolicy()
    hinted = {"readOnlyHint": True}
    assert recovery.effect("a", annotations={"destructiveHint": True}) == (
        Effect.READ_ONLY,
        "declared",
    )
    assert recovery.effect("x", annotations=hinted) == (Effect.UNKNOWN, "default")
    trusting = Recovery.of(effects={"shown": "write"}, trust_annotations=True)
    assert trusting.effect("x", annotations=hinted) == (Effect.READ_ONLY, "annotations")
    assert trusting.effect("x", "shown", annotations=hinted) == (Effect.WRITE, "declared")
    assert trusting.effect("x", annotations={"title": "t"}) == (Effect.UNKNOWN, "default")
    with pytest.raises(ValueError):
        Recovery.of(form="c9")


def test_call_record_takes_every_decision_from_the_failure() -> None:
    failure = ToolFailure.invalid_arguments("pay", {"amount": -1}, "amount: must be > 0")
    record = CallRecord.of_failure(
        failure, effect="write", effect_source="declared", form="c3", rule="r", source="flag"
    )
    assert record.to_dict() == {
        "tool": "pay",
        "effect": "write",
        "effect_source": "declared",
        "form": "c3",
        "failed": True,
        "kind": "fixable",
        "rule": "r",
        "source": "flag",
        "reason": "argument validation",
        "guidance": failure.guidance,
        "note": None,
        "attempts": 0,
        "retry_after": None,
        "outcome_unknown": False,
        "stop": None,
        "why_stopped": None,
        "history": [],
        "violations": [],
        "receipt": None,
        "arguments": {"amount": -1},
        "cause": "Tool 'pay' was not run: invalid arguments. amount: must be > 0",
    }


def test_tool_signature_hides_the_key_and_refuses_one_not_passable_by_keyword() -> None:
    def pay(amount: int, /, key: str, *, note: str = "") -> str:
        return note

    shape = ToolSignature.of(pay, "key")
    assert list(shape.public_signature().parameters) == ["amount", "note"]
    assert shape.public_annotations() == {"amount": int, "note": str, "return": str}
    with pytest.raises(TypeError, match=r"^pay has no parameter 'amount' for the idempotency "):
        ToolSignature.of(pay, "amount")
    with pytest.raises(TypeError, match=r"^charge has no parameter 'nope' for the .* key$"):
        ToolSignature.of(pay, "nope", name="charge")

    class Tool:
        async def __call__(self, city: str) -> str:
            return city

    assert is_async(Tool())
    assert not is_async(pay)
    assert ToolSignature.of(Tool()).hints == {"city": str, "return": str}
    assert list(inspect.signature(Tool()).parameters) == ["city"]


def test_scoped_sets_the_value_for_the_block_only() -> None:
    var: ContextVar[list[int] | None] = ContextVar("test_scoped", default=None)
    with scoped(var, [1]) as inside:
        assert var.get() is inside
        assert inside == [1]
    assert var.get() is None


def test_delegating_forwards_what_the_wrapper_lacks_but_no_dunder() -> None:
    class Wrapper(Delegating):
        def __init__(self, wrapped: object) -> None:
            self.wrapped = wrapped

    wrapper = Wrapper(SimpleNamespace(name="server", __secret__=1))
    assert wrapper.name == "server"
    with pytest.raises(AttributeError):
        _ = wrapper.__secret__
