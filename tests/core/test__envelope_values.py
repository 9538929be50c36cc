"""JSON results whose fields hold any JSON value: the readers never raise, never log an error.

A DynamoDB item writes every value as an object (``{"S": "paid"}``), and any
API may put a list, a number or a boolean where an envelope usually holds a
string.  The readers of a result (the envelope, codes, printed numbers, the
words) must judge such a result like any other: where its fields say nothing
of a failure it is clean, and nothing is logged as not understood.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import toolmend
from toolmend import Kind, Verdict
from toolmend.classify._envelope import read_envelope
from toolmend.integrations import classify_text


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def warnings_logged() -> Iterator[list[logging.LogRecord]]:
    """What toolmend logs at WARNING or above meanwhile (a result not understood)."""
    handler = _Records()
    logger = logging.getLogger("toolmend")
    logger.addHandler(handler)
    try:
        yield handler.records
    finally:
        logger.removeHandler(handler)


DYNAMODB = '{"order_id": {"S": "o-1"}, "status": {"S": "paid"}, "error": {"NULL": true}}'


def test_a_dynamodb_item_is_a_clean_result() -> None:
    with warnings_logged() as logged:
        verdict = toolmend.classify_result(DYNAMODB)
        flagged = toolmend.classify_result(DYNAMODB, is_error=True)
    assert verdict == Verdict(False)
    assert (flagged.failed, flagged.rule) == (True, "is_error")
    assert logged == []


A, T, U = Kind.AMBIGUOUS, Kind.TRANSIENT, Kind.UNRECOVERABLE


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A status that is no scalar says nothing: the other fields decide.
        ('{"status": {"S": "failed"}, "error": "rate limit exceeded"}', (T, "envelope")),
        ('{"status": ["ok"], "error": {"message": "Forbidden"}}', (U, "envelope")),
        ('{"status": [], "error": null}', None),
        ('{"status": {"code": 200}}', None),
        ('{"status": true, "error": "x"}', (A, "envelope")),
        ('{"status": 200.0, "error": "x"}', None),
        ("{'status': {1, 2}, 'error': 'Not Found'}", (A, "envelope")),
        ("{'status': (1, 2), 'error': b'x', 'code': 1j}", None),
        # A status code written with digits int() does not read, or too many of them.
        ('{"error": {"code": "\u00b2\u00b9\u2070", "message": "oops"}}', (A, "generic")),
        ('{"error": {"status": "' + "4" * 5000 + '"}, "message": "oops"}', (A, "generic")),
        ('{"status": "error", "statusCode": 4' + "0" * 4000 + "}", (A, "envelope")),
        # Retry hints, codes and messages of every JSON type.
        ('{"error": {"message": "slow down", "retry_after": {"s": 5}}}', (A, "generic")),
        ('{"error": {"message": "slow down", "retry_after": 1e400}}', (A, "generic")),
        ('{"error": {"code": [429], "message": {"text": "x"}, "type": null}}', (A, "generic")),
        ('{"ok": false, "error": [{"code": {"S": "x"}}], "errors": {"a": 1}}', (A, "envelope")),
    ],
)
def test_a_field_of_any_json_type_is_judged_without_an_error(
    text: str, expected: tuple[Kind, str] | None
) -> None:
    with warnings_logged() as logged:
        verdict = toolmend.classify_result(text)
        toolmend.classify_result(text, is_error=True)
        read_envelope(text)
        classify_text(text)
    assert logged == []
    assert (verdict.kind, verdict.rule) == (expected or (None, None))
    assert verdict.failed is (expected is not None)


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**30, max_value=10**60),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.text(alphabet="0123456789\u00b2\u0664", min_size=1, max_size=8),
    st.sampled_from(["error", "failed", "ok", "OK", "404", "429", "client", "Not Found"]),
)
_KEYS = st.one_of(
    st.sampled_from(
        [
            "status", "error", "errors", "ok", "success", "code", "message", "type", "detail",
            "data", "items", "fault", "__type", "$fault", "$metadata", "documentation_url",
            "retry_after", "name", "httpStatus", "statusCode", "status_code", "reason",
            "title", "extensions", "details", "isError", "content", "query", "jsonrpc", "text",
        ]
    ),
    st.text(max_size=6),
)  # fmt: skip
JSON: st.SearchStrategy[Any] = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_KEYS, inner, max_size=5)),
    max_leaves=24,
)


def _texts(value: Any) -> list[str]:
    """The value as JSON, as a Python repr, and behind a success status line."""
    encoded = json.dumps(value)
    return [encoded, repr(value), "HTTP 200 OK\n" + encoded]


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.dictionaries(_KEYS, JSON, min_size=1, max_size=8), JSON))
@example({"order_id": {"S": "o-1"}, "status": {"S": "paid"}, "error": {"NULL": True}})
@example({"status": [1], "error": "x"})
@example({"error": {"code": "\u00b2"}, "message": "x"})
@example([{"type": []}])  # a content part whose type is a list
def test_no_json_result_makes_a_reader_raise(value: Any) -> None:
    """Any JSON value, as text or as the content itself, with and without an error flag."""
    with warnings_logged() as logged:
        for content in (*_texts(value), value):
            for flag in (None, True):
                toolmend.classify_result(content, is_error=flag)
                toolmend.classify_result(content, is_error=flag, client="codex_cli_rs/0.1")
        for text in _texts(value):
            read_envelope(text)
            classify_text(text)
            classify_text(text, wide=False)
    assert logged == []
