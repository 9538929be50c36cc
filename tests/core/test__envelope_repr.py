"""Error bodies printed as a Python dict: read as literals only, never run, never raising."""

from __future__ import annotations

import pytest

import toolmend
from toolmend.classify._envelope import Envelope, read_envelope


def test_a_dict_repr_is_read_like_its_json() -> None:
    text = "{'error': {'code': 429, 'message': 'Rate limit reached for requests'}}"
    assert read_envelope(text) == Envelope(429, "429\nRate limit reached for requests")
    assert read_envelope(text.replace("'", '"')) == read_envelope(text)


@pytest.mark.parametrize(
    "text",
    [
        # Not a literal: nothing is evaluated.
        "{'error': __import__('os').system('touch /tmp/toolmend-pwned')}",
        # Nesting far beyond what the parser takes.
        "{'error': " + "[" * 5000 + "]" * 5000 + "}",
        # Larger than the 64 KB a repr is read up to.
        "{'error': '" + "x" * 70_000 + "'}",
        # Broken repr.
        "{'error': 'unterminated",
        # A success.
        "{'error': None, 'data': [1, 2]}",
    ],
    ids=["call", "deep", "large", "broken", "success"],
)
def test_what_is_not_a_plain_error_dict_is_no_envelope(text: str) -> None:
    assert read_envelope(text) is None
    toolmend.classify_result(text, is_error=None)
    toolmend.classify_result(text, is_error=True)


def test_an_aws_sdk_v3_error_reports_its_name_and_status() -> None:
    """The AWS SDK for JavaScript v3 serialises a ServiceException as name, $fault, $metadata."""
    text = (
        '{"name": "AccessDeniedException", "$fault": "client", "$metadata": {"httpStatusCode":'
        ' 403, "requestId": "r-1", "attempts": 1}, "message": "User is not authorized"}'
    )
    assert read_envelope(text) == Envelope(403, "AccessDeniedException\nUser is not authorized")
    verdict = toolmend.classify_result(text)
    assert (verdict.kind, verdict.rule, verdict.reason) == (
        toolmend.Kind.UNRECOVERABLE,
        "envelope",
        "AccessDenied",
    )


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "x", "$fault": "client"}',
        '{"name": "x", "$fault": "maybe", "$metadata": {}}',
        '{"$metadata": {"httpStatusCode": 200}, "Items": []}',
    ],
)
def test_a_fault_without_the_sdks_shape_is_no_envelope(text: str) -> None:
    assert read_envelope(text) is None
