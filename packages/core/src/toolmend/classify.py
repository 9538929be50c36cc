"""Decide what kind of failure an error text describes.

The paper's procedure: words in the first 4 KB, unrecoverable before transient
before fixable, everything else ambiguous.  Beyond it, HTTP status codes carried
in the text count as words, and a Python traceback is judged by its exception
lines rather than by its source frames (a frame can quote any word: a function
called ``rate_limit``, ``timeout=5`` in a call), even when the trace is long.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import words
from .model import Kind

__all__ = ["Classification", "classify_text"]

HEAD = 4096
_TRACEBACK = "Traceback (most recent call last):"
_CHAIN_LINES = (
    _TRACEBACK,
    "During handling of the above exception",
    "The above exception was the direct cause",
)
_PRIORITY = {Kind.UNRECOVERABLE: 0, Kind.TRANSIENT: 1, Kind.FIXABLE: 2}


@dataclass(frozen=True, slots=True)
class Classification:
    """A kind and the evidence that decided it (``None`` when nothing did)."""

    kind: Kind
    reason: str | None


AMBIGUOUS = Classification(Kind.AMBIGUOUS, None)


def _exception_lines(text: str) -> str:
    """The unindented lines of a traceback: the exception and its message."""
    kept = [
        line
        for line in text.splitlines()
        if line and not line[0].isspace() and not line.startswith(_CHAIN_LINES)
    ]
    return "\n".join(kept)


def _region(text: str) -> str:
    if _TRACEBACK not in text[:HEAD] and _TRACEBACK not in text[-HEAD:]:
        return text[:HEAD]
    if len(text) > 2 * HEAD:
        text = text[:HEAD] + "\n" + text[-HEAD:]
    return _exception_lines(text)


def classify_text(text: str, *, wide: bool = True) -> Classification:
    """Classify an error text already judged to be a failure.

    ``wide=False`` applies only the common words, as for the coding agents'
    own rules, whose shell output quotes other programs' errors.
    """
    region = _region(text)
    best: Classification | None = None
    veto = False
    if wide:
        table, pattern = words.WIDE_TABLE, words.WIDE_RE
    else:
        table, pattern = words.COMMON, words.COMMON_RE
    for match in pattern.finditer(region):
        word = match.group()
        kind = table[word]
        if kind is Kind.AMBIGUOUS:
            veto = True
            continue
        if best is None or _PRIORITY[kind] < _PRIORITY[best.kind]:
            best = Classification(kind, word)
            if kind is Kind.UNRECOVERABLE:
                return best
    if wide:
        for match in words.HTTP_STATUS.finditer(region):
            code = int(next(g for g in match.groups() if g is not None))
            kind = words.HTTP_KIND.get(code)
            if kind is None:
                continue
            if best is None or _PRIORITY[kind] < _PRIORITY[best.kind]:
                best = Classification(kind, f"HTTP {code}")
        if best is None and not veto and words.RETRY_HINT.search(region):
            best = Classification(Kind.TRANSIENT, "retry hint")
    return best if best is not None else AMBIGUOUS
