"""The runtime note as the tests expect it, written out by hand from its specification.

With one-line arguments the note is the studies' sentence with the arguments
as a code span, and the error as one too when it is one line, else on the lines
after the sentence, each behind ``> ``; arguments of several lines are quoted
with the error, line by line behind ``> ``, under a header that says so.  Texts
that hold backticks (whose fence grows) are written out where they are tested.
"""

from __future__ import annotations

HEADER = "Note from the tool runtime: the last attempt called "
QUOTED_BELOW = ' and it failed. Its arguments and error are quoted below, each line behind "> ".'


def note(name: str, args: str | None, error: str, guidance: str) -> str:
    """The note for a call of ``name`` with ``args`` (``None``: no arguments) that failed."""
    shown = args if args is not None else ""
    assert "`" not in shown + error, "write a fence for backticks out by hand"
    if "\n" in shown:
        return block(name, shown.split("\n"), error, guidance)
    said = f"{HEADER}{name} with {f'`{args}`' if args is not None else 'no arguments'}"
    if "\n" in error:
        quoted = "\n".join(f"> {line}" for line in error.split("\n"))
        return f"{said} and it failed with:\n{quoted}\n\n{guidance}"
    return f"{said} and it failed with: `{error}`\n\n{guidance}"


def block(name: str, args: list[str] | None, error: str, guidance: str) -> str:
    """The note with arguments (lines; ``None``: no arguments) and error quoted behind ``> ``."""
    shown = args if args is not None else ["no arguments"]
    quoted = [f"> arguments: {shown[0]}", *(f"> {line}" for line in shown[1:])]
    lines = error.split("\n")
    quoted += [f"> error: {lines[0]}", *(f"> {line}" for line in lines[1:])]
    return HEADER + name + QUOTED_BELOW + "\n" + "\n".join(quoted) + f"\n\n{guidance}"


def called(call: str, error: str, guidance: str) -> str:
    """The note for ``call`` (``name with arguments``) that failed with ``error``."""
    name, _, arguments = call.partition(" with ")
    return note(name, arguments, error, guidance)
