"""Error signatures: one template per error, whatever its specifics.

A deployment sees the same few errors thousands of times, each with other ids,
names, paths and values.  Learning what an error means from what followed it
needs those occurrences counted together, so an error text is normalised to a
signature: the wording and the codes stay, what varies between occurrences is
masked.  The masks, in the order they apply:

=============  ==========================================================  ============
mask           what it replaces                                            example
=============  ==========================================================  ============
``<url>``      a URL with a scheme                                         ``https://x.test/a?b=1``
``<email>``    an e-mail address                                           ``ann@example.com``
``<time>``     an ISO date or time, with its zone                          ``2026-12-01T10:00:00Z``
``<id>``       a UUID, a hex hash of 8+ digits, or a token mixing letters   ``req_8f3a2c9d``
               and digits (8+ characters, not all capitals)
``<path>``     a file path (two or more components, or ``~/``, ``./``; a     ``/srv/data/a.csv``
               relative one with three or more: ``refs/heads/main``)
``'<v>'``      a quoted value: one word (≤ 120 chars) or up to three words  ``'orders_v2'``
               without digits; a key (``'ok':``), a code in snake case
               (``'invalid_auth'``) and a longer sentence are wording and stay
``<n>``        a number (its unit stays: ``<n>ms``), unless it is a code:   ``42``, ``2.5``
               right after ``errno``, ``code``, ``error``, ``status``,
               ``exit`` (``-32602``, ``1146``), or 100-599 near ``status``,
               ``HTTP``, ``code`` or before a reason phrase (``429 Too``)
=============  ==========================================================  ============

A JSON object or list is signed by its structure: keys stay, a string value stays
when it is one word without digits (``"QUOTA"``, ``"rate_limit_exceeded"``: codes
and enums are wording), another single token is ``<v>`` (``"r-17"``), a string
with spaces is signed as text, a number stays under
a key that names a code or status and is ``<n>`` elsewhere, and a list keeps its
first three items.

Codes that mix capitals and digits (``ORA-00942``, ``42P01``, ``E11000``,
``TS2345``) and status numbers stay, so ``status code 503`` and ``status code
404`` never share a signature.  Whitespace collapses.  A text longer than the
head and tail :func:`~toolmend._bounds.glance` reads is signed by those; a
template longer than :data:`SHOWN` characters is cut there and ends with a short
hash of the whole template, so two long errors that differ past the cut still
differ.  Pure and bounded: the same text gives the same signature in every
process and release of this minor version.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from .._bounds import glance

__all__ = ["SHOWN", "error_signature"]

SHOWN = 160
"""Characters of a signature shown before its hash."""

_CODE_WORD = r"(?:status(?:[ _-]?code)?|code|error|err|errno|http|exit|response)"
_PATTERN = re.compile(
    r"(?P<url>\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s'\"<>)\]},]+)"
    r"|(?P<email>\b[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+\b)"
    r"|(?P<time>\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?)?"
    r"(?:Z|[+\-]\d{2}:?\d{2})?\b|\b\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\b)"
    r"|(?P<uuid>\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b)"
    r"|(?P<path>(?<![\w.:/\\-])(?:~|\.{1,2})?/(?:[\w.@%+\-]+/)+[\w.@%+\-]*"
    r"|(?<![\w.:/\\-])(?:~|\.{1,2})/[\w.@%+\-]+"
    r"|(?<![\w.:/\\-])[\w.@%+\-]+(?:/[\w.@%+\-]+){2,}"
    r"|\b[A-Za-z]:\\(?:[\w.@%+\- ]+\\)*[\w.@%+\-]+)"
    r"|(?P<quoted>(?P<q1>'[^'\s]{1,120}'|\"[^\"\s]{1,120}\"|`[^`\s]{1,120}`)"
    r"|'(?:[^'\"\s\d]+ ){1,2}[^'\"\s\d]+'|\"(?:[^'\"\s\d]+ ){1,2}[^'\"\s\d]+\")"
    r"|(?P<token>\b(?=[A-Za-z0-9_\-]*\d)(?=[A-Za-z0-9_\-]*[A-Za-z])[A-Za-z0-9_\-]{8,}\b)"
    r"|(?P<number>(?<![\w.\-])-?\d+(?:[.,]\d+)*)(?=(?:ms|s|m|h|min|kb|mb|gb|KB|MB|GB|%)?(?!\w))"
)
_CODE_BEFORE = re.compile(_CODE_WORD + r"\W{0,3}$", re.IGNORECASE)
_STATUS_BEFORE = re.compile(r"\b(?:status|code|http|error|response)\b", re.IGNORECASE)
_STATUS_AFTER = re.compile(
    r"\W{0,3}(?:response|Too|Not|Service|Internal|Bad|Forbidden|Unauthorized|Gateway|"
    r"Conflict|Payload|Unprocessable|Method|Request|Precondition|Unavailable|Locked)\b"
)
_SPACE = re.compile(r"\s+")
_SNAKE = re.compile(r"[a-z]+(?:_[a-z]+)+")
_KEY_BEFORE = re.compile(r"[{,]\s*$")
_TOKENS = {"url": "<url>", "email": "<email>", "time": "<time>", "uuid": "<id>", "path": "<path>"}


def _mask(match: re.Match[str]) -> str:
    kind = match.lastgroup or ""
    fixed = _TOKENS.get(kind)
    if fixed is not None:
        return fixed
    if kind == "quoted":
        value = match.group()
        inner = value[1:-1]
        key = match.string.startswith(":", match.end()) and _KEY_BEFORE.search(
            match.string, max(0, match.start() - 3), match.start()
        )
        if key or (_SNAKE.fullmatch(inner) and match.group("q1") is not None):
            return value  # a key, or a code in snake case (invalid_auth, not_found)
        return f"{value[0]}<v>{value[0]}"
    value = match.group()
    if kind == "token":
        # codes in capitals (ORA-00942, 42P01, E11000) are wording, not specifics
        return value if value.upper() == value else "<id>"
    text, start = match.string, match.start()
    if _CODE_BEFORE.search(text, max(0, start - 16), start):
        return value  # errno 13, error 1146, code -32602, exit status 128
    if value.isdigit() and 100 <= int(value) <= 599:
        end = match.end()
        if _STATUS_BEFORE.search(text, max(0, start - 24), start) or _STATUS_AFTER.match(text, end):
            return value  # an HTTP status: 503 and 404 are different errors
    return "<n>"


_WORD_VALUE = re.compile(r"[A-Za-z][A-Za-z_.:\-]{0,63}")
_CODE_KEYS = frozenset(
    {"code", "status", "status_code", "statuscode", "errno", "error_code", "errorcode", "type"}
)
_HAS_SPACE = re.compile(r"\s")
_JSON_LIMIT = 64 * 1024
_JSON_DEPTH = 8


def _value(value: Any, key: str | None, depth: int) -> Any:
    if isinstance(value, str):
        if _WORD_VALUE.fullmatch(value):
            return value
        return "<v>" if value and not _HAS_SPACE.search(value) else _template(value)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return value if key is not None and key.lower() in _CODE_KEYS else "<n>"
    if depth >= _JSON_DEPTH:
        return "<...>"
    if isinstance(value, dict):
        return {str(k): _value(v, str(k), depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_value(v, key, depth + 1) for v in value[:3]]
    return "<?>"


def _template(text: str) -> str:
    return _SPACE.sub(" ", _PATTERN.sub(_mask, text)).strip()


def _structured(text: str) -> str | None:
    """The signature of a JSON object or list, or None when ``text`` is not one."""
    stripped = text.strip()
    if stripped[:1] not in ("{", "[") or len(stripped) > _JSON_LIMIT:
        return None
    try:
        obj = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict | list):
        return None
    return json.dumps(_value(obj, None, 0), sort_keys=True, ensure_ascii=False)


def error_signature(text: str) -> str:
    """The template of an error text: its wording and codes, its specifics masked.

    Args:
        text: The error text (any length: a huge text is signed by its head and tail).

    Returns:
        The signature, at most :data:`SHOWN` characters plus ``#`` and 8 hex digits.
    """
    template = _structured(text)
    if template is None:
        template = _template(glance(text))
    if len(template) <= SHOWN:
        return template
    digest = hashlib.sha256(template.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{template[:SHOWN]}#{digest}"
