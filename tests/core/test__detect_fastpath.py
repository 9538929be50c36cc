"""The clean fast path of ``classify/_detect.py`` never says clean where the full path would not.

``_plainly_clean`` answers before any rule table or JSON parse runs; it may send a
clean text on to the full path, but a text it calls clean must be clean by every
rule.  Checked on every text of every corpus and on generated texts built from the
very fragments the rules look for.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from toolmend.classify import _detect as detect
from tools import split

ROOT = Path(__file__).resolve().parents[2]


def _corpus_texts() -> list[str]:
    texts = [str(row["content"]) for row in split.rows()]
    for path in sorted((ROOT / "tests" / "core" / "corpus").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            content = json.loads(line).get("content")
            text = detect.text_of(content)
            if text is not None:
                texts.append(text)
    return texts


TEXTS = _corpus_texts()


def _full_path(text: str) -> bool:
    return detect._inspect(text, None, None, None) is detect.CLEAN


def test_every_corpus_text_called_clean_is_clean_by_every_rule() -> None:
    fast = [t for t in TEXTS if detect._plainly_clean(t)]
    assert len(TEXTS) > 7000
    assert len(fast) > 900  # the fast path is taken, not only passed through
    assert [t[:80] for t in fast if not _full_path(t)] == []


def test_the_corpus_verdicts_are_those_of_the_full_path() -> None:
    full = detect._inspect
    assert [t[:80] for t in TEXTS if detect.classify_result(t) != full(t, None, None, None)] == []


FRAGMENTS = [
    *(p for prefixes in detect._SUSPECT_PREFIXES.values() for p in prefixes),
    *detect._SUSPECT_WORDS,
    *detect._GENERIC_PREFIXES,
    "Error", "Exception", "timeout", "Timeout", "psql", "curl", ": ", ": (7) ", "error: ",
    "ERROR:  ", "FATAL", "fatal", "\n", " ", "  ", "{", "}", '"error": ', '"error": "x"', "[",
    "403", "429 ", "500 ", "503 Service Unavailable", "404 - Not Found", "ValueError",
    "x.", "()", "got an unexpected keyword", " validation error for ", "<", "Failed ",
    '"ok": false', '"isError": true', '"jsonrpc"', "WRONGTYPE ", "a", "Z", "7", "٣",
    "\n\nFailed validating 'type' in ", "httpx.ReadTimeout: ", "✘ [ERROR] ", "HTTP/1.1 503 ",
]  # fmt: skip


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=8).map("".join))
@example("psql: error: connection refused")
@example("٣04 Forbidden")
@example("ValueError")
@example("x.y.Timeout: read")
@example("Error code: 503")
@example("curl: (7) Failed to connect")
def test_generated_texts_called_clean_are_clean(text: str) -> None:
    if detect._plainly_clean(text):
        assert _full_path(text), text


@pytest.mark.parametrize(
    "text",
    ["OK", "12 C, light rain", "Forecast for Oslo: 12 C", "connect_timeout: 5",
     '{"order": "A-17", "status": "shipped"}', "[1, 2, 3]", "<!DOCTYPE html><p>hi</p>", ""],
)  # fmt: skip
def test_ordinary_results_take_the_fast_path(text: str) -> None:
    assert detect._plainly_clean(text)
