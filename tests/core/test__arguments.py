"""Errors that name the wrong argument: a missing name (``missing``), a wrong type (``type``).

The texts are corpus rows produced by the real software: the reference memory MCP
server (``@modelcontextprotocol/server-memory``) over stdio, Yarn 1.22.22, Miller,
and meilisearch-python against a loopback server answering with Meilisearch's
documented body; python-slugify 9.2.0, voluptuous 0.16.0 and Pony ORM 0.7.20 as a
Python tool wrapper returns them (``f"{type(exc).__name__}: {exc}"``), and
``@sylphx/pdf-reader-mcp`` 2.4.0 over stdio; the negatives are git's clone of a
missing repository and a peewee lookup that matched no row.
"""

from __future__ import annotations

import pytest

import toolmend
from toolmend.classify._arguments import read_argument

NAMED = [
    ("Entity with name Dave not found", "Entity with name Dave not found"),
    (
        "yarn run v1.22.22\ninfo Visit https://yarnpkg.com/en/docs/cli/run for documentation"
        ' about this command.\nwarning package.json: No license field\nerror Command "lint"'
        " not found.\nExit code: 1",
        'Command "lint" not found',
    ),
    (
        'mlr: verb "summarise" not found. Please use "mlr --help" for a list.\nExit code: 1',
        'verb "summarise" not found',
    ),
    (
        "MeilisearchApiError: MeilisearchApiError. Error code: index_not_found. Error message:"
        " Index `movies_v2` not found.. Hint: It might not be working because you're not up to"
        " date with the Meilisearch version that search call requires.",
        "Index `movies_v2` not found",
    ),
    ("Tool 'read_file' not found", "Tool 'read_file' not found"),
    (
        "ConnectError: [not_found] Not found: Collection 'hybrid_code_chunks_xxx' doesn't exist!",
        "Collection 'hybrid_code_chunks_xxx' doesn't exist",
    ),
]


TYPED = [
    ("Validation error: sources: Expected array", "Expected array"),
    ("TypeError: text must be str, bytes or bytearray, not NoneType", "must be str"),
    ("MultipleInvalid: expected int for dictionary value @ data['port']", "expected int"),
    (
        "ValueError: Value type for attribute Product.price must be int. Got string 'cheap'",
        "must be int",
    ),
]


@pytest.mark.parametrize(
    ("text", "span", "basis"),
    [(text, span, "missing") for text, span in NAMED] + [(t, s, "type") for t, s in TYPED],
)
def test_a_wrong_argument_is_fixable_with_its_rule_and_span(
    text: str, span: str, basis: str
) -> None:
    verdict = toolmend.classify_result(text, is_error=True)
    assert (verdict.failed, verdict.kind, verdict.rule, verdict.basis, verdict.reason) == (
        True,
        toolmend.Kind.FIXABLE,
        "is_error",
        basis,
        span,
    )


UNNAMED = [
    # A repository URL: wrong address, or not created yet.
    "Cloning into 'proj-404'...\nfatal: repository 'http://127.0.0.1:18080/nope/proj.git/'"
    " not found\nExit code: 128",
    # No name beside the kind.
    "localstack_main | 2020-07-22T04:24:11:WARNING:localstack.services.awslambda.lambda_api:"
    " Function not found: arn:aws:lambda:us-east-1:000000000000:function:handler",
    # A row that matched no query, not a name the caller chose.
    "UserDoesNotExist: <Model: User> instance matching query does not exist:\nSQL: SELECT"
    ' "t1"."id" FROM "user" AS "t1" WHERE ("t1"."email" = ?) LIMIT ? OFFSET ?',
    "File not found: /tmp/work/missing.txt",
    # The kind must start a word: "subcommand" is not "command".
    "subcommand lint not found",
]


@pytest.mark.parametrize("text", UNNAMED)
def test_what_stays_ambiguous(text: str) -> None:
    assert read_argument(text) is None
    verdict = toolmend.classify_result(text, is_error=True)
    assert (verdict.kind, verdict.basis, verdict.reason) == (toolmend.Kind.AMBIGUOUS, "none", None)


@pytest.mark.parametrize(
    ("text", "basis", "span"),
    [
        # Words decide before a missing name ...
        (
            "Error code: 404 - The model `gpt-4o` does not exist or you do not have access to it.",
            "override",
            "does not exist or you do not have access",
        ),
        # ... and a missing name before the status.
        (
            '404 Not Found: {"message": "Index `movies_v2` not found.", "code": "not_found"}',
            "missing",
            "Index `movies_v2` not found",
        ),
    ],
)
def test_the_order_of_rules(text: str, basis: str, span: str) -> None:
    verdict = toolmend.classify_result(text, is_error=True)
    assert (verdict.kind, verdict.basis, verdict.reason) == (toolmend.Kind.FIXABLE, basis, span)
