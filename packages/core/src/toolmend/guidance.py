"""The exact texts the model reads: guidance sentences, the capped error and the note.

The sentences are byte-for-byte those the studies measured; changing one word
changes what was measured, so they live here once and nowhere else.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .model import Kind

__all__ = [
    "GUIDANCE",
    "VERIFY_FIRST",
    "cap_error",
    "format_arguments",
    "guidance_for",
    "runtime_note",
]

GUIDANCE: Mapping[Kind, str] = {
    Kind.TRANSIENT: "This is a temporary failure. Retrying the same call is expected to succeed.",
    Kind.FIXABLE: (
        "This call cannot succeed as written. The error says what to change; "
        "call the tool again with the corrected value."
    ),
    Kind.UNRECOVERABLE: (
        "This cannot be fixed by retrying or by changing the arguments. "
        "Tell the user what happened."
    ),
}

VERIFY_FIRST = (
    "This call may already have taken effect. Check whether it did before calling it again."
)

CAP_LIMIT = 2000
CAP_HEAD = 1500
CAP_TAIL = 400


def guidance_for(kind: Kind) -> str | None:
    """The sentence for a kind; ambiguous failures get none, by design."""
    return GUIDANCE.get(kind)


def cap_error(text: str) -> str:
    """Strip and cap an error so that a huge trace cannot flood the context.

    The head carries the exception, the tail carries the final line of a trace;
    the count of what was omitted keeps the cut visible to the model.
    """
    text = text.strip()
    if len(text) <= CAP_LIMIT:
        return text
    omitted = len(text) - (CAP_HEAD + CAP_TAIL)
    return f"{text[:CAP_HEAD]}\n[... {omitted} characters omitted ...]\n{text[-CAP_TAIL:]}"


def _value_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return repr(value)


def format_arguments(arguments: Any) -> str:
    """``key=value`` pairs in the call's order; a non-mapping is shown as compact JSON."""
    if isinstance(arguments, Mapping):
        return ", ".join(f"{key}={_value_text(value)}" for key, value in arguments.items())
    if arguments is None:
        return ""
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments)
        except ValueError:
            return arguments
        if isinstance(parsed, Mapping):
            return format_arguments(parsed)
        return arguments
    return _value_text(arguments)


def runtime_note(name: str | None, arguments: Any, error: str, guidance: str) -> str:
    """The note of forms C2-C4, verbatim from the studies."""
    return (
        f"Note from the tool runtime: the last attempt called {name or 'the tool'} with "
        f"{format_arguments(arguments)} and it failed with: {cap_error(error)}\n\n{guidance}"
    )
