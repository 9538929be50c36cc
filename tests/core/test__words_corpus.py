"""Every case of the error corpus, detected and classified exactly as labelled.

The corpus (``corpus/errors.jsonl``) holds error texts raised by the real
libraries and framework wrappers, plus clean results that must not be detected;
``tools/generate_corpus.py`` produced it and labelled each case by hand with the
correct next action.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import toolmend
from toolmend import Kind
from toolmend.classify import _words as words

CORPUS = Path(__file__).parent / "corpus" / "errors.jsonl"
CASES: list[dict[str, Any]] = [
    json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line
]


def _verdict(case: dict[str, Any]) -> dict[str, Any]:
    verdict = toolmend.classify_result(
        case["content"],
        is_error=case.get("is_error"),
        status=case.get("status"),
        client=case.get("client"),
    )
    return {
        "failed": verdict.failed,
        "kind": verdict.kind.value if verdict.kind is not None else None,
        "rule": verdict.rule,
    }


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_corpus_case(case: dict[str, Any]) -> None:
    assert _verdict(case) == case["expect"]


def test_corpus_size_and_spread() -> None:
    kinds = Counter(case["expect"]["kind"] or "clean" for case in CASES)
    assert len(CASES) >= 120
    assert kinds["clean"] >= 40
    assert {kind.value for kind in Kind} <= set(kinds)
    assert len({case["id"] for case in CASES}) == len(CASES)


def test_corpus_covers_every_rule() -> None:
    rules = {case["expect"]["rule"] for case in CASES}
    assert rules >= {
        "is_error", "status", "cline", "opencode", "mcp-iserror", "generic",
        "qwen-notfound", "qwen-exit", "qwen-error", "codex-exit", "codex-timeout",
        "codex-patch", "kilo-notfound", "kilo-fs", "kilo-usage", "opencode-exit",
    }  # fmt: skip


def test_corpus_texts_come_from_the_libraries() -> None:
    origins = " ".join(case["origin"] for case in CASES)
    libraries = "httpx requests urllib openai anthropic langgraph langchain mcp openai-agents"
    for library in (*libraries.split(), "sqlite3", "pydantic", "jsonschema"):
        assert library in origins, library


def test_ambiguous_texts_stay_ambiguous() -> None:
    by_id = {case["id"]: case for case in CASES}
    for case_id in (
        "http/httpx/404", "http/openai/404", "http/requests/409", "generic/not-available",
        "py/filenotfound", "generic/command-timeout", "mcp/crash-text", "agents/tool-timeout",
    ):  # fmt: skip
        assert _verdict(by_id[case_id]) == {
            "failed": True, "kind": "ambiguous", "rule": by_id[case_id]["expect"]["rule"],
        }  # fmt: skip


_ALL_WORDS = sorted({*words.WIDE_TABLE, *words.VETO, *words.OVERRIDE})
_PRIORITY = {Kind.AMBIGUOUS: 0, Kind.UNRECOVERABLE: 1, Kind.TRANSIENT: 2, Kind.FIXABLE: 3}


def _brute_force(
    text: str, table: dict[str, Kind], overrides: dict[str, Kind] | None = None
) -> Kind | None:
    """The paper's definition: every word tested as a substring, the best kind wins.

    A veto (a command's own timeout) wins outright, then an override, then the table.
    A published code counts only as a whole token.
    """

    def occurs(word: str) -> bool:
        if word not in words.WHOLE_CODES:
            return word in text
        pattern = rf"(?<![0-9A-Za-z_]){re.escape(word)}(?![0-9A-Za-z_])"
        return re.search(pattern, text) is not None

    found = [(0.0, Kind.AMBIGUOUS) for word in words.VETO if occurs(word)]
    found += [
        (0.5 + _PRIORITY[kind] / 10, kind)
        for word, kind in (overrides or {}).items()
        if occurs(word)
    ]
    found += [(float(_PRIORITY[kind]), kind) for word, kind in table.items() if occurs(word)]
    return min(found, key=lambda item: item[0])[1] if found else None


_pieces = st.one_of(
    st.sampled_from(_ALL_WORDS),
    st.sampled_from(_ALL_WORDS).flatmap(
        lambda w: st.tuples(st.integers(0, len(w)), st.integers(0, len(w))).map(
            lambda ab: w[min(ab) : max(ab)]
        )
    ),
    st.text(alphabet="aeiou EPRTCmdx-_.:'\n", max_size=6),
)


@given(st.lists(_pieces, max_size=8).map("".join))
def test_anchored_matcher_equals_substring_search(text: str) -> None:
    wide = words.WIDE_MATCHER.best(text)
    common = words.COMMON_MATCHER.best(text)
    assert (wide[0] if wide else None) == _brute_force(
        text, dict(words.WIDE_TABLE), dict(words.OVERRIDE)
    )
    assert (common[0] if common else None) == _brute_force(text, dict(words.COMMON))


def test_a_published_code_counts_only_as_a_whole_token() -> None:
    assert "InvalidRequest" in words.WHOLE_CODES
    assert words.WIDE_MATCHER.best("InvalidRequest: bad bucket") == (
        Kind.FIXABLE,
        "InvalidRequest",
    )
    assert words.WIDE_MATCHER.best("XInvalidRequestY happened") is None
    # nor inside a snake_case one: Stripe's rate_limit is not OpenAI's rate_limit_exceeded
    assert "rate_limit" in words.WHOLE_CODES
    assert words.WIDE_MATCHER.best("code: rate_limit_exceeded") == (
        Kind.TRANSIENT,
        "rate_limit_exceeded",
    )
    assert words.WIDE_MATCHER.best("code: rate_limit") == (Kind.TRANSIENT, "rate_limit")
    # A code the word lists also hold keeps its substring reading.
    assert "ThrottlingException" not in words.WHOLE_CODES
    assert words.WIDE_MATCHER.best("EMR.ThrottlingExceptionX") == (
        Kind.TRANSIENT,
        "ThrottlingException",
    )


def test_matcher_names_the_word_that_outranks_the_first_one_found() -> None:
    U, T, F = Kind.UNRECOVERABLE, Kind.TRANSIENT, Kind.FIXABLE
    matcher = words.Matcher(
        {"timed out": T, "denied": U, "bad value": F, "out of": F}, veto=("no such",)
    )
    assert matcher.pattern.groups == 0
    assert matcher.best("bad value, then denied") == (U, "denied")
    assert matcher.best("denied, then bad value") == (U, "denied")
    assert matcher.best("bad value, timed out, bad value") == (T, "timed out")
    assert matcher.best("bad value and timed out and denied") == (U, "denied")
    assert matcher.best("out of memory, bad value") == (F, "out of")
    assert matcher.best("denied: no such file") == (Kind.AMBIGUOUS, "no such")
    assert matcher.best("all good") is None
    assert matcher.find("all good") == -1
    assert matcher.entries[matcher.find("it timed out")] == (T, "timed out")
