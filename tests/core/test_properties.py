"""Property tests: the rewriter never raises, never mutates, and C3 only adds."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolmend import rewrite

ERRORS = st.sampled_from(
    [
        "Error: HTTP Error 503: Service Unavailable",
        "Error: name must not be empty",
        "403 Client Error: Forbidden for url: http://x",
        "HTTP Error 404: Not Found",
        "all good",
        '{"error": null}',
        '{"isError": true, "content": [{"type": "text", "text": "rate limit"}]}',
        "Traceback (most recent call last):\n  File 'x'\nConnectionResetError: reset",
    ]
)
JUNK = st.one_of(
    st.none(),
    st.integers(),
    st.binary(max_size=8),
    st.text(max_size=20),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)
CONTENT = st.one_of(
    ERRORS,
    st.lists(
        st.one_of(
            st.builds(lambda t: {"type": "text", "text": t}, ERRORS),
            st.builds(lambda t: {"type": "input_text", "text": t}, ERRORS),
            st.just({"type": "image_url", "image_url": {"url": "data:,"}}),
            JUNK,
        ),
        max_size=3,
    ),
    JUNK,
)
IDS = st.sampled_from(["a", "b", "c", None, 5])


def openai_message() -> st.SearchStrategy[Any]:
    call = st.one_of(
        st.builds(
            lambda i, n, a: {"id": i, "type": "function", "function": {"name": n, "arguments": a}},
            IDS,
            st.sampled_from(["f", "g", None]),
            st.sampled_from(['{"x":1}', "{bad", "[]", None]),
        ),
        JUNK,
    )
    return st.one_of(
        st.builds(lambda c: {"role": "user", "content": c}, CONTENT),
        st.builds(lambda c: {"role": "system", "content": c}, CONTENT),
        st.builds(
            lambda c, calls: {"role": "assistant", "content": c, "tool_calls": calls},
            st.one_of(st.none(), CONTENT),
            st.one_of(st.lists(call, max_size=3), JUNK),
        ),
        st.builds(
            lambda i, c, e, s: {
                "role": "tool",
                "tool_call_id": i,
                "content": c,
                "is_error": e,
                "status": s,
            },
            IDS,
            CONTENT,
            st.sampled_from([True, False, None, "yes"]),
            st.sampled_from(["error", "success", None, 3]),
        ),
        JUNK,
    )


def responses_item() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.builds(lambda c: {"role": "user", "content": c}, CONTENT),
        st.builds(
            lambda i, a: {"type": "function_call", "call_id": i, "name": "f", "arguments": a},
            IDS,
            st.sampled_from(['{"x":1}', "{bad", None]),
        ),
        st.builds(
            lambda i, c: {"type": "function_call_output", "call_id": i, "output": c},
            IDS,
            CONTENT,
        ),
        st.builds(lambda c: {"type": "message", "role": "assistant", "content": c}, CONTENT),
        st.just({"type": "reasoning", "summary": []}),
        JUNK,
    )


def anthropic_message() -> st.SearchStrategy[Any]:
    block = st.one_of(
        st.builds(lambda t: {"type": "text", "text": t}, ERRORS),
        st.builds(
            lambda i, c, e: {"type": "tool_result", "tool_use_id": i, "content": c, "is_error": e},
            IDS,
            CONTENT,
            st.sampled_from([True, False, None]),
        ),
        st.builds(lambda i: {"type": "tool_use", "id": i, "name": "f", "input": {"x": 1}}, IDS),
        JUNK,
    )
    return st.one_of(
        st.builds(
            lambda r, c: {"role": r, "content": c},
            st.sampled_from(["user", "assistant", "system", None]),
            st.one_of(st.lists(block, max_size=3), ERRORS, JUNK),
        ),
        JUNK,
    )


STRATEGIES = {
    "openai": openai_message(),
    "responses": responses_item(),
    "anthropic": anthropic_message(),
}
FORMS = st.sampled_from(["off", "c1", "c2", "c3", "c4"])
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def conversations(fmt: str) -> st.SearchStrategy[Any]:
    return st.one_of(st.lists(STRATEGIES[fmt], max_size=7), JUNK)


def _never_raises_never_mutates(fmt: str, messages: Any, form: str) -> None:
    before = copy.deepcopy(messages)
    result = rewrite(messages, form, format=fmt, client=None)
    assert messages == before
    if form == "off":
        assert result.messages is messages
        assert result.report.changed is False
    if not result.report.changed:
        assert result.messages == messages


@SETTINGS
@given(conversations("openai"), FORMS)
def test_openai_never_raises_never_mutates(messages: Any, form: str) -> None:
    _never_raises_never_mutates("openai", messages, form)


@SETTINGS
@given(conversations("responses"), FORMS)
def test_responses_never_raises_never_mutates(messages: Any, form: str) -> None:
    _never_raises_never_mutates("responses", messages, form)


@SETTINGS
@given(conversations("anthropic"), FORMS)
def test_anthropic_never_raises_never_mutates(messages: Any, form: str) -> None:
    _never_raises_never_mutates("anthropic", messages, form)


def _only_added_user_content(before: list[Any], after: list[Any]) -> None:
    if len(after) == len(before) + 1:
        inserted = [
            i
            for i in range(len(after))
            if after[:i] + after[i + 1 :] == before and after[i].get("role") == "user"
        ]
        assert inserted, "one inserted user message, everything else unchanged"
        return
    assert len(after) == len(before)
    changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert len(changed) == 1
    old, new = before[changed[0]], after[changed[0]]
    assert new["role"] == old["role"] == "user"
    assert {k: v for k, v in new.items() if k != "content"} == {
        k: v for k, v in old.items() if k != "content"
    }
    if old["content"] is None:
        assert isinstance(new["content"], str)
    elif isinstance(old["content"], str):
        assert new["content"].startswith(old["content"])
    else:
        old_parts, new_parts = old["content"], new["content"]
        assert len(new_parts) in (len(old_parts), len(old_parts) + 1)
        assert new_parts[: len(old_parts) - 1] == old_parts[: len(old_parts) - 1]


@SETTINGS
@given(st.lists(STRATEGIES["openai"], max_size=7))
def test_c3_only_adds_user_content_openai(messages: list[Any]) -> None:
    result = rewrite(messages, "c3")
    if result.report.changed:
        _only_added_user_content(messages, result.messages)
    else:
        assert result.messages == messages


@SETTINGS
@given(st.lists(STRATEGIES["responses"], max_size=7))
def test_c3_only_adds_user_content_responses(messages: list[Any]) -> None:
    result = rewrite(messages, "c3", format="responses")
    if result.report.changed:
        _only_added_user_content(messages, result.messages)
    else:
        assert result.messages == messages


@SETTINGS
@given(st.lists(STRATEGIES["anthropic"], max_size=7))
def test_c3_only_adds_user_content_anthropic(messages: list[Any]) -> None:
    result = rewrite(messages, "c3", format="anthropic")
    if result.report.changed:
        _only_added_user_content(messages, result.messages)
    else:
        assert result.messages == messages


def test_c3_keeps_a_message_it_does_not_understand_anthropic() -> None:
    """Found by hypothesis: a ``None`` after a failed exchange was dropped by the rewrite."""
    messages: list[Any] = [
        {"role": "user", "content": "go"},
        {"role": "assistant",
         "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                      "content": "Error: HTTP Error 503: Service Unavailable",
                                      "is_error": True}]},
        None,
    ]  # fmt: skip
    result = rewrite(messages, "c3", format="anthropic")
    assert result.report.changed
    _only_added_user_content(messages, result.messages)
    assert len(result.messages) == 4
    assert result.messages[3] is None


def _no_internal_error(result: Any) -> None:
    bugs = [s for s in result.report.skipped if s.startswith("not understood: ") and "(" in s]
    assert bugs == [], "an internal error, not a shape the codec declined"


@SETTINGS
@given(st.sampled_from(sorted(STRATEGIES)), st.data(), FORMS)
def test_odd_shapes_are_declined_not_crashed_on(fmt: str, data: st.DataObject, form: str) -> None:
    messages = data.draw(st.lists(STRATEGIES[fmt], max_size=7))
    _no_internal_error(rewrite(messages, form, format=fmt))


@st.composite
def plausible(draw: st.DrawFn, fmt: str) -> list[Any]:
    """A decision step that usually holds failures, after a random (odd) history."""
    history = draw(st.lists(STRATEGIES[fmt], max_size=3))
    n = draw(st.integers(1, 3))
    ids = [f"id{i}" for i in range(n)]
    texts = [draw(ERRORS) for _ in ids]
    later = draw(st.lists(st.builds(lambda c: {"role": "user", "content": c}, CONTENT), max_size=2))
    user = {"role": "user", "content": draw(CONTENT)}
    if fmt == "openai":
        calls = [
            {"id": i, "type": "function", "function": {"name": "f", "arguments": '{"q":1}'}}
            for i in ids
        ]
        step: list[Any] = [{"role": "assistant", "content": None, "tool_calls": calls}]
        step += [
            {"role": "tool", "tool_call_id": i, "content": t}
            for i, t in zip(ids, texts, strict=True)
        ]
    elif fmt == "responses":
        step = [
            {"type": "function_call", "call_id": i, "name": "f", "arguments": "{}"} for i in ids
        ]
        step += [
            {"type": "function_call_output", "call_id": i, "output": t}
            for i, t in zip(ids, texts, strict=True)
        ]
    else:
        uses = [{"type": "tool_use", "id": i, "name": "f", "input": {"q": 1}} for i in ids]
        results = [
            {"type": "tool_result", "tool_use_id": i, "content": t}
            for i, t in zip(ids, texts, strict=True)
        ]
        step = [{"role": "assistant", "content": uses}, {"role": "user", "content": results}]
    return [*history, user, *step, *later]


@SETTINGS
@given(st.sampled_from(sorted(STRATEGIES)), st.data(), FORMS)
def test_plausible_conversations_never_mutated(fmt: str, data: st.DataObject, form: str) -> None:
    messages = data.draw(plausible(fmt))
    _never_raises_never_mutates(fmt, messages, form)
    _no_internal_error(rewrite(messages, form, format=fmt))


@SETTINGS
@given(st.sampled_from(sorted(STRATEGIES)), st.data())
def test_c3_only_adds_user_content_on_plausible_conversations(
    fmt: str, data: st.DataObject
) -> None:
    messages = data.draw(plausible(fmt))
    result = rewrite(messages, "c3", format=fmt)
    if result.report.changed:
        _only_added_user_content(messages, result.messages)
    else:
        assert result.messages == messages
