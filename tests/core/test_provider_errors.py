"""Error bodies copied from each provider's documentation: the kind, and whose code it is.

A body is attributed to a code table only where the code is that provider's own:
OpenAI's ``rate_limit_exceeded`` was once read as Stripe's ``rate_limit``
(``envelope/code:stripe``), since a code inside a longer snake_case one counted.
Where a provider's code is also in the general word lists the basis is ``word``.
"""

from __future__ import annotations

import json

import pytest

from toolmend import classify_result

T, F, U = "transient", "fixable", "unrecoverable"
PROVIDERS = ("openai", "anthropic", "gcp", "stripe", "aws", "github")

# (provider, body as the documentation shows it, kind, basis, span)
BODIES = [
    # https://platform.openai.com/docs/guides/error-codes
    (
        "openai",
        {
            "error": {
                "message": "Rate limit reached for gpt-4o in organization org-abc on tokens per "
                "min (TPM): Limit 30000, Used 30000, Requested 1200. Please try again in 2.4s.",
                "type": "tokens",
                "param": None,
                "code": "rate_limit_exceeded",
            }
        },
        T,
        "envelope/word",
        "rate_limit_exceeded",
    ),
    (
        "openai",
        {
            "error": {
                "message": "You exceeded your current quota, please check your plan and billing "
                "details.",
                "type": "insufficient_quota",
                "param": None,
                "code": "insufficient_quota",
            }
        },
        U,
        "envelope/word",
        "insufficient_quota",
    ),
    (
        "openai",
        {
            "error": {
                "message": "Incorrect API key provided: sk-abc.",
                "type": "invalid_request_error",
                "param": None,
                "code": "invalid_api_key",
            }
        },
        U,
        "envelope/word",
        "invalid_api_key",
    ),
    # https://docs.anthropic.com/en/api/errors
    (
        "anthropic",
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        T,
        "envelope/word",
        "overloaded_error",
    ),
    (
        "anthropic",
        {
            "type": "error",
            "error": {
                "type": "rate_limit_error",
                "message": "Number of request tokens has exceeded your per-minute rate limit",
            },
        },
        T,
        "envelope/word",
        "rate_limit_error",
    ),
    # https://cloud.google.com/apis/design/errors
    (
        "gcp",
        {
            "error": {
                "code": 429,
                "message": "Resource has been exhausted (e.g. check quota).",
                "status": "RESOURCE_EXHAUSTED",
            }
        },
        T,
        "envelope/paper",
        "RESOURCE_EXHAUSTED",
    ),
    (
        "gcp",
        {
            "error": {
                "code": 400,
                "message": 'Invalid JSON payload received. Unknown name "foo": Cannot find field.',
                "status": "INVALID_ARGUMENT",
            }
        },
        F,
        "envelope/paper",
        "INVALID_ARGUMENT",
    ),
    (
        "gcp",
        {
            "error": {
                "code": 403,
                "message": "The caller does not have permission",
                "status": "PERMISSION_DENIED",
            }
        },
        U,
        "envelope/paper",
        "PERMISSION_DENIED",
    ),
    # https://docs.stripe.com/error-codes, https://docs.stripe.com/api/errors
    (
        "stripe",
        {
            "error": {
                "code": "rate_limit",
                "doc_url": "https://stripe.com/docs/error-codes/rate-limit",
                "message": "Too many requests hit the API too quickly.",
                "type": "invalid_request_error",
            }
        },
        T,
        "envelope/code:stripe",
        "rate_limit",
    ),
    (
        "stripe",
        {
            "error": {
                "code": "card_declined",
                "decline_code": "generic_decline",
                "doc_url": "https://stripe.com/docs/error-codes/card-declined",
                "message": "Your card was declined.",
                "type": "card_error",
            }
        },
        U,
        "envelope/code:stripe",
        "card_declined",
    ),
    (
        "stripe",
        {
            "error": {
                "code": "parameter_missing",
                "doc_url": "https://stripe.com/docs/error-codes/parameter-missing",
                "message": "Missing required param: amount.",
                "param": "amount",
                "type": "invalid_request_error",
            }
        },
        F,
        "envelope/code:stripe",
        "parameter_missing",
    ),
    # https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html and the JSON
    # protocol's errors (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/)
    (
        "aws",
        '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code><Message>Please '
        "reduce your request rate.</Message><RequestId>4442587FB7D0A2F9</RequestId></Error>",
        T,
        "word",
        "SlowDown",
    ),
    (
        "aws",
        '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access '
        "Denied</Message><RequestId>4442587FB7D0A2F9</RequestId></Error>",
        U,
        "word",
        "AccessDenied",
    ),
    (
        "aws",
        {"__type": "ThrottlingException", "message": "Rate exceeded"},
        T,
        "envelope/word",
        "ThrottlingException",
    ),
    (
        "aws",
        {
            "__type": "ValidationException",
            "message": "1 validation error detected: Value null at 'tableName' failed to satisfy "
            "constraint: Member must not be null",
        },
        F,
        "envelope/word",
        "ValidationException",
    ),
    # https://docs.github.com/en/rest/using-the-rest-api/troubleshooting-the-rest-api
    (
        "github",
        {
            "message": "API rate limit exceeded for 192.0.2.1. (But here's the good news: "
            "Authenticated requests get a higher rate limit. Check out the documentation for "
            "more details.)",
            "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
        },
        T,
        "envelope/override",
        "API rate limit exceeded",
    ),
    (
        "github",
        {
            "message": "Validation Failed",
            "errors": [{"resource": "Issue", "field": "title", "code": "missing_field"}],
            "documentation_url": "https://docs.github.com/rest/issues/issues#create-an-issue",
        },
        F,
        "envelope/code:github",
        "Validation Failed",
    ),
    (
        "github",
        {
            "message": "Bad credentials",
            "documentation_url": "https://docs.github.com/rest",
            "status": "401",
        },
        U,
        "envelope/word",
        "Bad credentials",
    ),
]


@pytest.mark.parametrize(
    ("provider", "body", "kind", "basis", "span"),
    BODIES,
    ids=[f"{b[0]}-{b[4]}" for b in BODIES],
)
def test_provider_error_body_kind_and_attribution(
    provider: str, body: object, kind: str, basis: str, span: str
) -> None:
    content = body if isinstance(body, str) else json.dumps(body)
    verdict = classify_result(content, status="error")
    assert verdict.failed
    assert (verdict.kind and verdict.kind.value, verdict.basis, verdict.reason) == (
        kind,
        basis,
        span,
    )
    others = [p for p in PROVIDERS if p != provider]
    assert not any(f"code:{other}" in (verdict.basis or "") for other in others)


def test_every_provider_is_covered() -> None:
    assert sorted({b[0] for b in BODIES}) == sorted(PROVIDERS)
