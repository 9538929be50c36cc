"""The exact texts the model reads: guidance sentences, the capped error and the note.

The sentences are byte-for-byte those the studies measured; changing one word
changes what was measured, so they live here once and nowhere else.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._bounds import prune, safe_repr
from .._types import Kind
from ._actionable import omit_developer_steps
from ._quote import bounded, cut, inert, literal, reasons_of, span

__all__ = [
    "ARGS_LIMIT",
    "GUIDANCE",
    "NAME_LIMIT",
    "STEP_LIMIT",
    "VERIFY_FIRST",
    "Note",
    "cap_error",
    "compose_note",
    "format_arguments",
    "guidance_for",
    "join_notes",
    "notes_left_out",
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
ARGS_LIMIT = 1000
"""Arguments restated in a note: at most this many characters (head 800, tail 150)."""
ARGS_HEAD = 800
ARGS_TAIL = 150
NAME_LIMIT = 200
"""A tool name restated in a note: at most this many characters."""
NO_ARGUMENTS = "no arguments"
"""What the note says for a call without arguments ("called X with no arguments")."""
NO_ERROR = "no error text"
"""What the note says for a failure without text ("and it failed with: no error text")."""
STEP_LIMIT = 16_000
"""One decision step's notes together: the last failures in full while they fit, then a count."""


def guidance_for(kind: Kind) -> str | None:
    """The sentence for a kind; ambiguous failures get none, by design."""
    return GUIDANCE.get(kind)


def cap_error(text: str) -> str:
    """Strip and cap an error so that a huge trace cannot flood the context.

    The head carries the exception, the tail carries the final line of a trace;
    the count of what was omitted keeps the cut visible to the model.

    Args:
        text: The error text.
    """
    text = text.strip()
    if len(text) <= CAP_LIMIT:
        return text
    return cut(text[:CAP_HEAD], text[-CAP_TAIL:], len(text) - (CAP_HEAD + CAP_TAIL))


def _value_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return safe_repr(value)


def format_arguments(arguments: Any) -> str:
    """``key=value`` pairs in the call's order; a non-mapping is shown as compact JSON.

    What lies beyond :mod:`toolmend._bounds`' depth and size, or holds itself, is
    shown as its marker: a model's arguments must not make the note raise.

    Args:
        arguments: The call's arguments (a mapping, a JSON text or any value).
    """
    arguments = prune(arguments)
    if isinstance(arguments, Mapping):
        return ", ".join(f"{key}={_value_text(value)}" for key, value in arguments.items())
    if arguments is None:
        return ""
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments)
        except (ValueError, RecursionError):  # nested deeper than the parser goes: as written
            return arguments
        if isinstance(parsed, Mapping):
            return format_arguments(parsed)
        return arguments
    return _value_text(arguments)


@dataclass(frozen=True, slots=True)
class Note:
    """A runtime note and what had to be neutralised in the tool text it restates.

    Attributes:
        text: The note's text.
        neutralised: Instruction-like phrases of the tool text that were neutralised.
    """

    text: str
    neutralised: tuple[str, ...] = ()
    omitted: tuple[str, ...] = ()
    """Sentences of the error left out as steps for the developer (``omit_steps``)."""


def _quoted(text: str, label: str = "") -> str:
    lines = text.splitlines() or [""]
    return "\n".join([f"> {label}{lines[0]}", *(f"> {line}" for line in lines[1:])])


def _inline(text: str, empty: str) -> str:
    return span(text) if text else empty


def compose_note(
    name: str | None, arguments: Any, error: str, guidance: str, *, omit_steps: bool = False
) -> Note:
    """The note of forms C2-C4, with the tool's text quoted and bounded.

    The tool's text never stands bare (see :mod:`toolmend.deliver._quote`).  When nothing
    in it had to be neutralised and the arguments are one line, the note is the
    studies' sentence with the arguments as a code span, and the error as a code
    span too when it is one line, else on the lines after the sentence, each
    behind ``> ``.  Otherwise the arguments and the error are both quoted line
    by line behind ``> `` under a header that says so and what was marked.  The
    tool's name is shown bare only when it is a plain identifier.  The guidance
    sentence stays the note's last paragraph, outside the quotation.

    Args:
        name: the tool's name.
        arguments: the call's arguments.
        error: the error text as the tool returned it.
        guidance: the sentence the note ends with.
        omit_steps: leave out sentences of ``error`` that ask for a step the
            agent cannot take (:mod:`toolmend.deliver._actionable`), each run replaced
            by a visible marker and listed in the note's ``omitted``.
    """
    omitted: tuple[str, ...] = ()
    if omit_steps:
        filtered = omit_developer_steps(error)
        error, omitted = filtered.text, filtered.omitted
    found: set[str] = set()
    shown_name = literal(name[:NAME_LIMIT], found) if name else "the tool"
    args = bounded(format_arguments(arguments), ARGS_LIMIT, ARGS_HEAD, ARGS_TAIL)
    err = bounded(error, CAP_LIMIT, CAP_HEAD, CAP_TAIL)
    safe_guidance = inert(guidance, set())
    reasons = reasons_of(found | set(args.reasons) | set(err.reasons))
    if not reasons and "\n" not in args.text:
        said = (
            f"Note from the tool runtime: the last attempt called {shown_name} with "
            f"{_inline(args.text, NO_ARGUMENTS)} and it failed with:"
        )
        if "\n" in err.text:
            return Note(f"{said}\n{_quoted(err.text)}\n\n{safe_guidance}", omitted=omitted)
        return Note(f"{said} {_inline(err.text, NO_ERROR)}\n\n{safe_guidance}", omitted=omitted)
    marked = (
        "; text in them that could pass for the runtime's notes or for chat control text "
        f"was marked ({', '.join(reasons)})"
        if reasons
        else ""
    )
    return Note(
        f"Note from the tool runtime: the last attempt called {shown_name} and it failed. "
        f'Its arguments and error are quoted below, each line behind "> "{marked}.\n'
        f"{_quoted(args.text or NO_ARGUMENTS, 'arguments: ')}\n"
        f"{_quoted(err.text or NO_ERROR, 'error: ')}"
        f"\n\n{safe_guidance}",
        reasons,
        omitted,
    )


def runtime_note(name: str | None, arguments: Any, error: str, guidance: str) -> str:
    """The note's text (see :func:`compose_note`).

    Args:
        name: The tool's name.
        arguments: The call's arguments.
        error: The error to quote.
        guidance: The next step.
    """
    return compose_note(name, arguments, error, guidance).text


LEFT_OUT = (
    "{n} more failed calls at this step are not restated here; their results are above, unchanged."
)


def notes_left_out(notes: Sequence[str], limit: int = STEP_LIMIT) -> int:
    """How many of a decision step's first notes to leave out so the rest fit in ``limit``.

    The last notes are kept in full, and the last one always: a single note is
    bounded by its own caps.  What is left out is counted in one line.
    """
    if len("\n\n".join(notes)) <= limit:
        return 0
    budget = limit - len(LEFT_OUT.format(n=len(notes))) - 2
    size = 0
    kept = 0
    for note in reversed(notes):
        extra = len(note) + (2 if kept else 0)
        if kept and size + extra > budget:
            break
        kept += 1
        size += extra
    return len(notes) - kept


def join_notes(notes: Sequence[str], left_out: int = 0) -> str:
    """The notes shown, preceded by the line that counts the ``left_out`` ones before them."""
    shown = list(notes)
    if left_out:
        shown.insert(0, LEFT_OUT.format(n=left_out))
    return "\n\n".join(shown)
