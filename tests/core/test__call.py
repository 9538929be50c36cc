"""The call's own arguments as evidence (``classify/_call.py``), alone and in a verdict."""

from __future__ import annotations

from typing import Any

import pytest

from toolmend import Kind, classify_result
from toolmend.classify._call import read_call

CONNECTION = "Failed to fetch robots.txt {url} due to a connection issue"
LIMIT = {"properties": {"limit": {"type": "integer", "minimum": 1, "maximum": 100}}}


@pytest.mark.parametrize(
    ("arguments", "schema", "roots", "found"),
    [
        (
            {"url": "htp://example.com/a"},
            None,
            None,
            ("url: scheme 'htp' is not http or https", "call:url"),
        ),
        (
            {"url": "ftp://example.com/a"},
            None,
            None,
            ("url: scheme 'ftp' is not http or https", "call:url"),
        ),
        (
            {"url": "https://shop.invalid/a"},
            None,
            None,
            ("url: host 'shop.invalid' is under a reserved test domain", "call:url"),
        ),
        (
            {"link": "https://bad_host!.com"},
            None,
            None,
            ("link: host 'bad_host!.com' is not a valid name", "call:url"),
        ),
        ({"url": "https:///nohost"}, None, None, ("url: no host", "call:url")),
        ({"url": "https://example.com/a"}, None, None, None),
        (
            {"url": "example.com/a"},
            None,
            None,
            ("url: no scheme (http:// or https://)", "call:url"),
        ),
        (
            {"url": "127.0.0.1:8080/x"},
            None,
            None,
            ("url: no scheme (http:// or https://)", "call:url"),
        ),
        ({"url": "not a url"}, None, None, None),
        ({"query": "example.com/a"}, None, None, None),
        ({"url": "http://127.0.0.1:8080/x"}, None, None, None),
        ({"url": "http://localhost/x"}, None, None, None),
        ({"note": "see https://example.com"}, None, None, None),
        ({"limit": 500}, LIMIT, None, ("limit: above the maximum 100", "call:schema")),
        ({"limit": 0}, LIMIT, None, ("limit: below the minimum 1", "call:schema")),
        ({"limit": "10"}, LIMIT, None, ("limit: expected integer, got str", "call:schema")),
        ({"limit": True}, LIMIT, None, ("limit: expected integer, got bool", "call:schema")),
        ({"limit": 10}, LIMIT, None, None),
        (
            {"tz": "Mars/Base"},
            {"properties": {"tz": {"enum": ["UTC", "Europe/Oslo"]}}},
            None,
            ("tz: not one of the allowed values", "call:schema"),
        ),
        (
            {"id": "x1"},
            {"properties": {"id": {"pattern": "^[0-9]+$"}}},
            None,
            ("id: does not match the pattern", "call:schema"),
        ),
        ({"id": "x1"}, {"properties": {"id": {"pattern": "(["}}}, None, None),
        ({}, {"required": ["path"]}, None, ("path: required, missing or empty", "call:schema")),
        (
            {"path": ""},
            {"required": ["path"]},
            None,
            ("path: required, missing or empty", "call:schema"),
        ),
        (
            {"path": "/etc/shadow"},
            None,
            ["/tmp/a", "/srv"],
            ("path: outside the allowed directories", "call:roots"),
        ),
        ({"path": "/srv/data/x.csv"}, None, ["/tmp/a", "/srv"], None),
        ({"path": "relative/x"}, None, ["/srv"], None),
        (None, LIMIT, None, None),
    ],
)
def test_each_reader_names_the_argument(
    arguments: Any, schema: Any, roots: Any, found: tuple[str, str] | None
) -> None:
    reading = read_call(arguments, schema, roots)
    if found is None:
        assert reading is None
    else:
        assert reading is not None
        assert (reading.kind, reading.reason, reading.basis) == (Kind.FIXABLE, *found)


def test_a_bad_url_makes_the_fetch_servers_connection_error_fixable() -> None:
    """The reference fetch server's own text, identical whatever the URL was."""
    for url in ("htp://example.com/", "ftp://example.com/", "https://shop.invalid/"):
        text = CONNECTION.format(url=url + "robots.txt")
        assert classify_result(text, is_error=True).kind is Kind.TRANSIENT
        verdict = classify_result(text, is_error=True, arguments={"url": url})
        assert (verdict.kind, verdict.basis) == (Kind.FIXABLE, "call:url")
    good = CONNECTION.format(url="https://example.com/robots.txt")
    verdict = classify_result(good, is_error=True, arguments={"url": "https://example.com/"})
    assert verdict.kind is Kind.TRANSIENT


def test_a_temporary_status_and_a_stop_outrank_the_call() -> None:
    for text, kind in (
        ("HTTP 503 Service Unavailable", Kind.TRANSIENT),
        ("401 Unauthorized", Kind.UNRECOVERABLE),
    ):
        verdict = classify_result(text, is_error=True, arguments={"limit": 500}, schema=LIMIT)
        assert verdict.kind is kind
    vague = classify_result("Error: it failed", arguments={"limit": 500}, schema=LIMIT)
    assert (vague.kind, vague.reason) == (Kind.FIXABLE, "limit: above the maximum 100")


def test_the_call_is_read_under_strict_precision_and_never_on_success() -> None:
    text = CONNECTION.format(url="htp://x/robots.txt")
    verdict = classify_result(text, is_error=True, arguments={"url": "htp://x"}, precision="strict")
    assert verdict.kind is Kind.FIXABLE
    assert not classify_result("ok", arguments={"url": "htp://x"}).failed


def test_hostile_arguments_never_raise() -> None:
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    huge = {f"a{i}": "x" * 10_000 for i in range(200)}
    for arguments in (cyclic, huge, {"url": "http://[::1"}, {1: b"\xff"}):
        verdict = classify_result("Error: failed", arguments=arguments, schema={"properties": 7})
        assert verdict.failed
