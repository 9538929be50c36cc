"""Errors that say which argument the caller got wrong: a name, a type, a value.

"Tool 'read_file' not found", "Entity with name Carol not found", "Index
`movies_v2` not found", "Command "lint" not found": the text names the kind of
thing and the name the model passed, so the next call can pick an existing one
(the labelling guide's 404 rule: a missing thing the model can fix by naming
another is ``fixable``).  Only kinds a model chooses by name count, and only with
the name beside them: "Function not found", "File not found" and a missing URL or
repository stay ambiguous (wrong name, or not created yet).

"Unknown dialect 'postgre'" and "Unknown geometry type: 'polygone'" name what the
caller passed in the same way.

"text must be str", "expected int for dictionary value", "Expected array": a
value of the wrong type, which the next call can correct.

"must be at least 1", "cannot be longer than 72 bytes", "token, missing or empty",
"Supported dialects: ...", "Available methods: get", "Valid strategies are ...": a
value outside what the call accepts, and often the bounds or the accepted values
themselves.
"""

from __future__ import annotations

import re

__all__ = ["read_argument", "read_missing_path"]

_KIND_NAMES = (
    "tool", "function", "command", "verb", "extension", "plugin", "helper",
    "entity", "index", "collection", "table", "model", "script",
)  # fmt: skip
_NAME = (
    "'[^'\n]{1,100}'|\"[^\"\n]{1,100}\"|`[^`\n]{1,100}`|\\[[^\\]\n]{1,100}\\]"
    "|[A-Za-z_][\\w.:/-]{0,99}"
)
_AFTER_KIND = (
    rf"(?: with name| named)? (?:{_NAME}) (?:was |is )?"
    r"(?:not found|does not exist|doesn't exist|could not be found)"
)
_AFTER_UNKNOWN = r" [a-z]+(?: [a-z]+)?:? ['\"`][^'\"`\n]{1,100}['\"`]"
# Each kind in both capitalisations, not inside a longer name or path, then the rest;
# then "Unknown X 'name'".  The character before a word is checked after it, so that
# every alternative starts with a letter and a search skips every position that holds
# none of them (a pattern that starts with a lookbehind tries every position).
_MISSING = re.compile(
    "|".join(
        [
            f"{kind}(?<![\\w./-]{kind}){_AFTER_KIND}"
            for name in _KIND_NAMES
            for kind in (name.capitalize(), name)
        ]
        + [f"{word}(?<!\\w{word}){_AFTER_UNKNOWN}" for word in ("Unknown", "unknown")]
    )
)
_TYPES = (
    "str|string|int|integer|number|bool|boolean|list|array|dict|dictionary|object|float"
    "|mapping|sequence|tuple|bytes"
)
_VERB_NAMES = ("must be", "should be", "Expected", "expected", "Expecting", "expecting", "expects")
# The word boundary before each verb is checked after it, as for _MISSING.
_VERBS = "|".join(f"{verb}(?<!\\w{verb})" for verb in _VERB_NAMES)
_WRONG_TYPE = re.compile(rf"(?:{_VERBS})(?: an?| type)? ['\"`]?(?:{_TYPES})\b")

_VALUE = re.compile(
    r"\b(?:must|should|cannot|can't|may not) be (?:greater|less|longer|shorter|larger|smaller"
    r"|more|fewer) than\b|\b(?:must|should) be (?:at least|at most|between|a positive"
    r"|positive|non-negative|negative)\b|\bis too (?:low|high|short|long|large|small|big)\b"
    r"|\bmissing or empty\b|\b[Ss]upported [a-z]+s(?: are)?: |\bAvailable [a-z]+s(?: are)?: "
    r"|\b[Vv]alid [a-z]+s are\b"
)

# A file, path or folder named as missing is ENOENT in words: wrong path, or not made
# yet.  It keeps the result ambiguous whatever else the text says ("Invalid value for
# 'PATH': File 'tasks.json' does not exist.").
_MISSING_PATH = re.compile(
    r"\b(?:[Ff]ile|[Pp]ath|[Dd]irectory|[Ff]older) ['\"`][^'\"`\n]{1,200}['\"`] does not exist"
)


def read_missing_path(text: str) -> str | None:
    """The span that names a missing file or folder, if any.

    Args:
        text: The deciding region of an error text.
    """
    if "does not exist" not in text:
        return None
    match = _MISSING_PATH.search(text)
    return match.group(0) if match is not None else None


def read_argument(text: str) -> tuple[str, str] | None:
    """The rule (``missing``, ``type`` or ``value``) and the span that names a wrong argument.

    Args:
        text: The deciding region of an error text.
    """
    if "not found" in text or "exist" in text or "be found" in text or "nknown " in text:
        match = _MISSING.search(text)
        if match is not None:
            return "missing", match.group(0)
    if "xpect" in text or " be " in text:
        match = _WRONG_TYPE.search(text)
        if match is not None:
            return "type", match.group(0)
    if (
        " be " in text
        or "too " in text
        or "empty" in text
        or "upported " in text
        or "vailable " in text
        or "alid " in text
    ):
        match = _VALUE.search(text)
        if match is not None:
            return "value", match.group(0)
    return None
