"""Decide what kind of failure an error text describes.

The paper's procedure: words in the first 4 KB, unrecoverable before transient
before fixable, everything else ambiguous; a command's own timeout stays
ambiguous, since repeating the command may time out again.  Beyond it, when no
word decides, a database code printed where its system prints it counts, then
a missing thing the caller named ("Tool 'x' not found") or a value of the wrong
type ("must be str"), then an HTTP status
carried in the text, then broad wording ("invalid ..."), then
an explicit "retry after N".

Words count only where they describe the failure.  A Python traceback is judged
by its exception lines, not its source frames (a frame can quote any word: a
function called ``rate_limit``, ``timeout=5`` in a call), and its last exception
counts even when the traceback is longer than 4 KB.  Texts a framework echoes
from the call (a tool name, the arguments, a rejected input value, a JSON
schema) are removed first: the model's own query must not decide the kind.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .._bounds import glance
from .._types import Kind
from . import _words as words
from ._arguments import read_argument, read_missing_path
from ._codes import system_of
from ._envelope import read_envelope
from ._printed import read_printed

__all__ = ["HEAD", "Classification", "classify_strictly", "classify_text"]

HEAD = 4096
_TRACEBACK = "Traceback (most recent call last):"
_CHAIN = (
    "During handling of the above exception",
    "The above exception was the direct cause",
)
# Framework wrappers whose text names the tool or echoes the arguments: LangGraph's
# ToolNode (its invocation error means the arguments failed validation), the MCP
# SDK and LangChain's ToolRetryMiddleware.
_WRAPPER = re.compile(
    r"Error executing tool '[^'\n]*' with kwargs [^\n]*? with error:\n"
    r"|(?P<invoking>Error invoking tool '[^'\n]*' with kwargs [^\n]*? with error:\n)"
    r"|Error executing tool [^\s:]*:?"
    r"|Tool '[^'\n]*' failed after \d+ attempts? with "
)
_WRAPPED = ("Error executing tool", "Error invoking tool", "Tool '")
# The OpenAI Agents SDK's text for a tool that exceeded its own timeout.
_TOOL_TIMEOUT = re.compile(r"Tool '[^'\n]*' timed out after ")
_KWARGS = re.compile(r" with kwargs \{.*?\} with error:")
_INPUT_VALUE = re.compile(r"input_value=.*?, input_type=")
_SCHEMA_DUMP = "\n\nFailed validating '"


@dataclass(frozen=True, slots=True)
class Classification:
    """A kind, the evidence that decided it (``None`` when nothing did) and its rule.

    ``reason`` is the span of text or the code that decided; ``basis`` names the
    rule that read it: ``paper`` (Appendix A's words), ``word`` (wider wording),
    ``code:<system>`` (a published code table), ``http`` (a status code),
    ``envelope`` (a structured error body), ``retry-hint``, ``timeout`` (a
    command's own, which stays ambiguous), ``ambiguous`` (a text that keeps the
    result ambiguous, such as "already exists"), ``missing`` (a tool, entity,
    index or model the caller named does not exist), ``type`` (a value of the
    wrong type), ``user`` (a user rule) or ``none``.

    Attributes:
        kind: What the error means for the next action.
        reason: The span of text or the code that decided.
        basis: The rule that read it.
    """

    kind: Kind
    reason: str | None
    basis: str = field(default="none", compare=False)


def _basis(word: str) -> str:
    if word in words.COMMON or word in words.WIDE:
        return "paper"
    if word in words.OWN_TIMEOUT:
        return "timeout"
    if word in words.STAYS_AMBIGUOUS:
        return "ambiguous"
    if word in words.OVERRIDE:
        system = system_of(word)
        return f"code:{system}" if system else "override"
    if word in words.EXTRA or word in words.WORDING:
        return "word"
    system = system_of(word)
    return f"code:{system}" if system else "word"


def _found(entry: tuple[Kind, str]) -> Classification:
    return Classification(entry[0], entry[1], _basis(entry[1]))


# One shared instance per outcome: results are frozen, and building one costs more
# than finding the word.
AMBIGUOUS = Classification(Kind.AMBIGUOUS, None)
_TOOL_TIMEOUT_FOUND = Classification(Kind.AMBIGUOUS, "tool timeout", "timeout")
_RETRY_FOUND = Classification(Kind.TRANSIENT, "retry hint", "retry-hint")
_WIDE_FOUND = tuple(_found(entry) for entry in words.WIDE_MATCHER.entries)
_COMMON_FOUND = tuple(_found(entry) for entry in words.COMMON_MATCHER.entries)
_WEAK_FOUND = tuple(
    AMBIGUOUS if k is Kind.AMBIGUOUS else Classification(k, w, "word")
    for k, w in words.WEAK_MATCHER.entries
)
# Bound once: classify_text runs on every failed result.
_wide_find = words.WIDE_MATCHER.find
_common_find = words.COMMON_MATCHER.find
_HTTP_FOUND = {
    code: Classification(kind, f"HTTP {code}", "http") for code, kind in words.HTTP_KIND.items()
}


_PRINTED_FOUND: dict[tuple[Kind, str, str], Classification] = {}


def _printed_found(kind: Kind, code: str, system: str) -> Classification:
    key = (kind, code, system)
    found = _PRINTED_FOUND.get(key)
    if found is None:
        found = Classification(kind, code, f"code:{system}")
        if len(_PRINTED_FOUND) < 4096:
            _PRINTED_FOUND[key] = found
    return found


def _exception_lines(text: str, in_frames: bool) -> list[str]:
    """Lines of a traceback text that are not source frames or chain separators."""
    kept: list[str] = []
    for line in text.split("\n"):
        if line.startswith(_TRACEBACK):
            in_frames = True
            continue
        if in_frames:
            if not line or line[0] == " ":
                continue
            in_frames = False
        if not line.startswith(_CHAIN):
            kept.append(line)
    return kept


def _region(text: str) -> str:
    """The part of the text that decides: the first 4 KB, or a traceback's exceptions."""
    if len(text) <= 2 * HEAD:
        if _TRACEBACK not in text:
            return text if len(text) <= HEAD else text[:HEAD]
        return "\n".join(_exception_lines(text, False))
    head, tail = text[:HEAD], text[-HEAD:]
    if _TRACEBACK not in head and _TRACEBACK not in tail:
        return head
    # The tail starts mid-line, most likely inside the frames.
    tail = tail.split("\n", 1)[-1]
    return "\n".join(_exception_lines(head, False) + _exception_lines(tail, True))


def _scrub(region: str) -> str:
    """Remove what is echoed from the call: arguments, a rejected value, a JSON schema.

    jsonschema's text keeps its message and the name of the failed check.
    """
    if _SCHEMA_DUMP in region:
        head, _, tail = region.partition(_SCHEMA_DUMP)
        check = tail.split("'", 1)[0]
        region = f"{head}{_SCHEMA_DUMP}{check}'"
    if "input_value=" in region:
        region = _INPUT_VALUE.sub("input_type=", region)
    if " with kwargs " in region:
        region = _KWARGS.sub(" with error:", region)
    return region


_ENVELOPE_FOUND: dict[tuple[int, int | None], Classification] = {}


def _from_envelope(text: str, status: int | None) -> Classification:
    """The envelope's codes and messages decide; its status code when they do not."""
    found = classify_text(text, wide=True)
    if (
        status is not None
        and status in _HTTP_FOUND
        and (found.kind is Kind.AMBIGUOUS or found.reason in words.YIELDS_TO_STATUS)
    ):
        found = _HTTP_FOUND[status]
    if found.reason is None:
        return found
    key = (id(found), status)
    made = _ENVELOPE_FOUND.get(key)
    if made is None:
        made = Classification(found.kind, found.reason, f"envelope/{found.basis}")
        if len(_ENVELOPE_FOUND) < 4096:
            _ENVELOPE_FOUND[key] = made
    return made


def _printed_or_argument(region: str) -> Classification | None:
    """A code printed by its own system, or the argument the error names: both readings."""
    printed = read_printed(region)
    if printed is not None:
        return _printed_found(*printed)
    argument = read_argument(region)
    if argument is not None:
        return Classification(Kind.FIXABLE, argument[1], argument[0])
    return None


def classify_text(text: str, *, wide: bool = True) -> Classification:
    """Classify an error text already judged to be a failure.

    ``wide=False`` applies only the common words, as for the coding agents'
    own rules, whose shell output quotes other programs' errors.

    Args:
        text: The error text.
        wide: Apply the wider wording and structured envelopes, not only the common words.
    """
    stripped = glance(text).lstrip()  # the region read is in its head and tail anyway
    if wide and stripped[:1] == "{":
        envelope = read_envelope(stripped)
        if envelope is not None:
            return _from_envelope(envelope.text, envelope.status)
    if stripped.startswith(_WRAPPED):
        if _TOOL_TIMEOUT.match(stripped):
            return _TOOL_TIMEOUT_FOUND
        wrapper = _WRAPPER.match(stripped)
        if wrapper is not None:
            rest = stripped[wrapper.end() :]
            stripped = "ToolInvocationError: " + rest if wrapper["invoking"] else rest
    # Most error texts are short and hold no traceback: then the region is the text.
    if len(stripped) > HEAD or _TRACEBACK in stripped:
        stripped = _region(stripped)
    region = _scrub(stripped)
    if wide:
        path = read_missing_path(region)
        if path is not None:
            return Classification(Kind.AMBIGUOUS, path, "ambiguous")
        index = _wide_find(region)
        if index >= 0:
            found = _WIDE_FOUND[index]
            if found.reason in words.YIELDS_TO_STATUS:
                status = words.http_status(region)
                if status is not None:
                    return _HTTP_FOUND[status]
            return found
        named = _printed_or_argument(region)
        if named is not None:
            return named
        status = words.http_status(region)
        if status is not None:
            return _HTTP_FOUND[status]
        index = words.WEAK_MATCHER.find(region)
        if index >= 0:
            return _WEAK_FOUND[index]
        if words.retry_hint(region):
            return _RETRY_FOUND
        return AMBIGUOUS
    index = _common_find(region)
    return _COMMON_FOUND[index] if index >= 0 else AMBIGUOUS


# Statuses that say only "bad request", "payment required" or "internal error": on the
# real-world test split a bare 400 meant what its kind says 14 times in 19.  Balanced
# reading keeps them; the strict one needs more than that.
_VAGUE_STATUSES = frozenset({400, 402, 500})
_CODE_TOKEN = re.compile(r"[a-z]+(?:_[a-z]+)+|[A-Z]+(?:_[A-Z]+)+")


def classify_strictly(text: str) -> Classification:
    """What the text's codes, statuses and named arguments say, its wording left out.

    The reading of ``precision="strict"``: a printed code, a named argument, an
    HTTP status (not the vague 400, 402 and 500), a code-table name or a retry
    hint; an envelope's status and the strict reading of its message.  Wording
    alone leaves the text ambiguous.

    Args:
        text: The error text.
    """
    stripped = glance(text).lstrip()
    if stripped[:1] == "{":
        envelope = read_envelope(stripped)
        if envelope is not None:
            found = classify_strictly(envelope.text)
            status = envelope.status
            if found.kind is Kind.AMBIGUOUS and status in _HTTP_FOUND:
                found = found if status in _VAGUE_STATUSES else _HTTP_FOUND[status]
            if found.reason is None:
                return found
            return Classification(found.kind, found.reason, f"envelope/{found.basis}")
    if len(stripped) > HEAD or _TRACEBACK in stripped:
        stripped = _region(stripped)
    region = _scrub(stripped)
    named = _printed_or_argument(region)
    if named is not None:
        return named
    status = words.http_status(region)
    if status is not None and status not in _VAGUE_STATUSES:
        return _HTTP_FOUND[status]
    index = _wide_find(region)
    if index >= 0:
        found = _WIDE_FOUND[index]
        if found.basis.startswith(("code:", "override")) or _CODE_TOKEN.fullmatch(
            found.reason or ""
        ):
            return found  # a code name (rate_limit_exceeded, TooManyRequests), not prose
    if words.retry_hint(region):
        return _RETRY_FOUND
    return AMBIGUOUS
