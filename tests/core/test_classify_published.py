"""Published messages whose meaning the words carry, whatever status wraps them.

Texts triggered here: jsonschema 4.26 (an enum check, as its ``message``),
jsonwebtoken 9 (``jwt.verify`` of an expired token, as ``f"{e.name}: {e.message}"``)
and TypeScript 5.9.3 (``tsc --noEmit`` of a call with a string for a number, as a
shell tool returns it).  Texts quoted from public pages:
Google's API-key check, which comes with a 400 and ``INVALID_ARGUMENT`` around it
(https://github.com/NousResearch/hermes-agent/issues/12168), and OpenAI's server-side
error as the provider's support page titles it
(https://docs.wandb.ai/support/inference/articles/api-error-code-500-the-server-had-an-err).
"""

from __future__ import annotations

import pytest

import toolmend

CASES = [
    ("'x' is not one of ['open', 'closed']", "fixable", "is not one of ["),
    ("TokenExpiredError: jwt expired", "unrecoverable", "jwt expired"),
    (
        "a.ts(2,6): error TS2345: Argument of type 'string' is not assignable to parameter of"
        " type 'number'.\nExit code: 2",
        "fixable",
        "is not assignable to parameter of type",
    ),
    (
        "HTTP 400: Error code: 400 - [{'error': {'code': 400, 'message': 'API key not valid."
        " Please pass a valid API key.', 'status': 'INVALID_ARGUMENT', 'details': [{'@type':"
        " 'type.googleapis.com/google.rpc.ErrorInfo', 'reason': 'API_KEY_INVALID', 'domain':"
        " 'googleapis.com', 'metadata': {'service': 'generativelanguage.googleapis.com'}}",
        "unrecoverable",
        "API key not valid",
    ),
    (
        "API error code 500 - The server had an error while processing your request",
        "transient",
        "had an error while processing your request",
    ),
]


@pytest.mark.parametrize(("text", "kind", "span"), CASES)
def test_published_messages(text: str, kind: str, span: str) -> None:
    verdict = toolmend.classify_result(text, is_error=True)
    assert (verdict.failed, verdict.kind.value if verdict.kind else None) == (True, kind)
    assert (verdict.basis, verdict.reason) == ("word", span)
