"""Errors that say which argument the caller got wrong: a missing name, a wrong type.

"Tool 'read_file' not found", "Entity with name Carol not found", "Index
`movies_v2` not found", "Command "lint" not found": the text names the kind of
thing and the name the model passed, so the next call can pick an existing one
(the labelling guide's 404 rule: a missing thing the model can fix by naming
another is ``fixable``).  Only kinds a model chooses by name count, and only with
the name beside them: "Function not found", "File not found" and a missing URL or
repository stay ambiguous (wrong name, or not created yet).

"text must be str", "expected int for dictionary value", "Expected array": a
value of the wrong type, which the next call can correct.
"""

from __future__ import annotations

import re

__all__ = ["read_argument"]

_KIND_NAMES = (
    "tool", "function", "command", "verb", "extension", "plugin", "helper",
    "entity", "index", "collection", "model", "script",
)  # fmt: skip
# Each kind in both capitalisations, and not inside a longer name or path: the
# character before it is checked after it, so that the pattern starts with the
# kinds' letters and a search skips every position that holds none of them.
_KINDS = "|".join(
    f"{kind}(?<![\\w./-]{kind})" for name in _KIND_NAMES for kind in (name.capitalize(), name)
)
_NAME = "'[^'\n]{1,100}'|\"[^\"\n]{1,100}\"|`[^`\n]{1,100}`|[A-Za-z_][\\w.:/-]{0,99}"
_MISSING = re.compile(
    rf"(?:{_KINDS})(?: with name| named)? (?:{_NAME}) (?:was |is )?"
    r"(?:not found|does not exist|doesn't exist|could not be found)"
)
_TYPES = (
    "str|string|int|integer|number|bool|boolean|list|array|dict|dictionary|object|float"
    "|mapping|sequence|tuple|bytes"
)
_VERB_NAMES = ("must be", "should be", "Expected", "expected", "Expecting", "expecting", "expects")
# The word boundary before each verb is checked after it, as for _MISSING.
_VERBS = "|".join(f"{verb}(?<!\\w{verb})" for verb in _VERB_NAMES)
_WRONG_TYPE = re.compile(rf"(?:{_VERBS})(?: an?| type)? ['\"`]?(?:{_TYPES})\b")


def read_argument(text: str) -> tuple[str, str] | None:
    """The rule (``missing`` or ``type``) and the span that names a wrong argument.

    Args:
        text: The deciding region of an error text.
    """
    if "not found" in text or "exist" in text or "be found" in text:
        match = _MISSING.search(text)
        if match is not None:
            return "missing", match.group(0)
    if "xpect" in text or " be " in text:
        match = _WRONG_TYPE.search(text)
        if match is not None:
            return "type", match.group(0)
    return None
