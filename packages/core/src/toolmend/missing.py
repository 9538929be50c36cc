"""A named thing the caller chose that does not exist: choose another.

"Tool 'read_file' not found", "Entity with name Carol not found", "Index
`movies_v2` not found", "Command "lint" not found": the text names the kind of
thing and the name the model passed, so the next call can pick an existing one
(the labelling guide's 404 rule: a missing thing the model can fix by naming
another is ``fixable``).  Only kinds a model chooses by name count, and only with
the name beside them: "Function not found", "File not found" and a missing URL or
repository stay ambiguous (wrong name, or not created yet).
"""

from __future__ import annotations

import re

__all__ = ["read_missing"]

_KINDS = (
    "[Tt]ool|[Ff]unction|[Cc]ommand|[Vv]erb|[Ee]xtension|[Pp]lugin|[Hh]elper"
    "|[Ee]ntity|[Ii]ndex|[Cc]ollection|[Mm]odel|[Ss]cript"
)
_NAME = "'[^'\n]{1,100}'|\"[^\"\n]{1,100}\"|`[^`\n]{1,100}`|[A-Za-z_][\\w.:/-]{0,99}"
_MISSING = re.compile(
    rf"(?<![\w./-])(?:{_KINDS})(?: with name| named)? (?:{_NAME}) (?:was |is )?"
    r"(?:not found|does not exist|doesn't exist|could not be found)"
)
_LITERALS = ("not found", "not exist", "n't exist", "be found")


def read_missing(text: str) -> str | None:
    """The span that names a missing tool, function, command, entity, index or model.

    Args:
        text: The deciding region of an error text.
    """
    if not any(literal in text for literal in _LITERALS):
        return None
    match = _MISSING.search(text)
    return match.group(0) if match is not None else None
