r"""Quote untrusted tool text before it is promoted into a user turn.

A tool result is written by whoever controls the tool's data: a web page, a
ticket, an attacker.  The runtime note restates it in the user role, which
models trust more than the tool role, so the restated text must not be able to
pass for the runtime's own framing (its note header and guidance sentences), for
a turn boundary (role markers, chat-template special tokens, Anthropic-style
tags) or hide what it says (ANSI escapes, control, bidi and invisible
characters).

Two layers, two defences.

- **The reading layer is defended by structure, not by a list.**  A list of
  known phrases cannot be complete: a Cyrillic ``о`` in ``Note``, ``**Assistant**:``,
  a role word in another language or a reworded guidance sentence passes any
  list.  So tool text never gets a line of its own and never stands bare in our
  sentences: on a line of our framing it is a code span (:func:`span`) whose
  fence is one backtick longer than any run of backticks in it, so nothing in it
  can close the span; text of more than one line goes in a block where *every*
  line is behind ``> ``, a prefix our own framing lines never carry.  A tool
  name, or a value such as an error class, is shown bare only when it is a plain
  identifier (no spaces, no punctuation beyond ``_.-/``), which can hold one
  word at most and never a sentence (:func:`literal`).  Every line break a
  reader may honour other than ``\n`` (``\r``, ``\v``, ``\f``, ``\x1c``-``\x1e``,
  ``\x85``, ``\u2028``, ``\u2029``) is shown as a picture or code point first, so
  the quoting sees every line the reader sees.  The rule holds for any text,
  however it is spelled, which is why it is structural: what the tool says stays
  readable (backticks and ``> `` add nothing to it) and can only ever be read as
  quoted.  A per-request marker was the alternative, but it would make every
  note differ from request to request, breaking exact tests and prompt caches.
- **The template layer is defended by neutralising.**  A chat template parses
  special tokens wherever they are, quotation or not, so those are still made
  inert: a special token keeps its name with its brackets swapped for
  look-alikes (``<|im_end|>`` becomes ``‹|im_end|›``), a control character
  becomes its printable picture (``␛``) or its code point (``<U+202E>``).  Our
  exact framing phrases also gain a marker after their first word (``Note
  (quoted) from the tool runtime``), and role markers and instruction-like text
  are reported: these are signals for the report, not the defence.

Neutralising is deterministic and visible; benign text comes back unchanged,
byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "Quoted",
    "bounded",
    "cut",
    "inert",
    "literal",
    "neutralise",
    "one_line",
    "reasons_of",
    "span",
]

CONTROL = "control characters"
BIDI = "bidirectional controls"
INVISIBLE = "invisible characters"
SURROGATE = "lone surrogates"
SPECIAL_TOKEN = "chat-template tokens"
TAG = "chat tags"
FRAMING = "runtime framing"
ROLE_MARKER = "role markers"
INSTRUCTION = "instruction-like text"

_ORDER = (
    FRAMING,
    SPECIAL_TOKEN,
    TAG,
    ROLE_MARKER,
    INSTRUCTION,
    CONTROL,
    BIDI,
    INVISIBLE,
    SURROGATE,
)

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_INVISIBLE = (
    "\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200d\u2028\u2029"
    "\u2060-\u2064\u3164\ufeff\uffa0\U000e0000-\U000e007f"
)
_CHARS = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f" + _BIDI + _INVISIBLE + "\ud800-\udfff]|\r(?!\n)"
)

# Special-token strings of the common template families: ChatML, Llama 3, Phi,
# Qwen, GPT-OSS (``<|...|>``), DeepSeek (full-width bars), Llama 2 and Mistral
# (``[INST]``, ``<<SYS>>``, ``[TOOL_CALLS]``...), Gemma (``<start_of_turn>``),
# SentencePiece markers (``<s>``) and the Hermes/Qwen tool tags.
_SPECIAL = re.compile(
    r"<\|[^|<>\n]{1,48}\|>"
    r"|<｜[^｜<>\n]{1,48}｜>"
    r"|\[/?(?:INST|SYSTEM_PROMPT|AVAILABLE_TOOLS|TOOL_CALLS|TOOL_RESULTS|TOOL_CONTENT|THINK"
    r"|CALL_ID|ARGS)\]"
    r"|<</?SYS>>"
    r"|<(?:start|end)_of_(?:turn|image)>"
    r"|</?(?:s|unk|pad|bos|eos|mask)>"
    r"|</?(?:tool_call|tool_response|tools|think)>"
)
# Anthropic-style structure tags and role tags written as XML.
_TAG = re.compile(
    r"</?(?:antml:[A-Za-z_]+|function_calls|function_results|invoke|parameter|system"
    r"|system-reminder|user|assistant|human|tool_result|tool_use|instructions)"
    r"(?=[\s/>])[^<>\n]{0,200}>"
)
_ROLE = re.compile(
    r"^[ \t>#*_-]*(?:system|user|assistant|tool|developer|human|ai|model|function"
    r"|instruction|response)[ \t]*:",
    re.IGNORECASE | re.MULTILINE,
)
_FRAMING = re.compile(
    r"(?P<first>note)(?=\s+from\s+the\s+tool\s+runtime)"
    r"|(?P<this>this)(?=\s+(?:is\s+a\s+temporary\s+failure|call\s+cannot\s+succeed\s+as\s+written"
    r"|cannot\s+be\s+fixed\s+by\s+retrying|call\s+may\s+already\s+have\s+taken\s+effect))"
    r"|(?P<service>the)(?=\s+service\s+asked\s+for\s+a\s+wait)"
    r"|(?P<all>all)(?=\s+\d+\s+attempts\s+failed\s+with\s+a\s+temporary\s+error)"
    r"|(?P<auto>automatic)(?=\s+retries\s+of\s)"
    r"|(?P<check>a)(?=\s+check\s+after\s+the\s+error\s+found)"
    r"|(?P<later>continue)(?=\s+with\s+other\s+steps\s+and\s+call\s+it\s+again\s+later)"
    r"|(?P<stop>stop)(?=\s+using\s+\S+\s+for\s+this\s+task)"
    r"|(?P<earlier>more)(?=\s+failed\s+calls\s+at\s+this\s+step)",
    re.IGNORECASE,
)
_INSTRUCTION = re.compile(
    r"\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+)?"
    r"(?:previous|prior|above|earlier|preceding)\s+(?:instructions|messages|prompts?|rules)"
    r"|\bnew\s+instructions\s*:|\byou\s+are\s+now\s+(?:in\s+)?(?:developer|admin|god)\b"
    r"|\bsystem\s+prompt\s*:",
    re.IGNORECASE,
)
_SWAP = str.maketrans({"<": "‹", ">": "›", "[": "⁅", "]": "⁆"})
_BREAKS = str.maketrans({"\r": "\u240d", "\n": "\u240a"})
_TICKS = re.compile("`+")
_PLAIN = re.compile(r"[A-Za-z0-9_./-]+")


@dataclass(frozen=True, slots=True)
class Quoted:
    """Text made safe to restate, and why it had to change (empty when it did not)."""

    text: str
    reasons: tuple[str, ...] = ()


def _char(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char[0])
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    return f"<U+{code:04X}>"


def _char_reason(char: str) -> str:
    code = ord(char[0])
    if code < 0xA0:
        return CONTROL
    if 0xD800 <= code <= 0xDFFF:
        return SURROGATE
    if char in "\u061c\u200e\u200f" or 0x202A <= code <= 0x202E or 0x2066 <= code <= 0x2069:
        return BIDI
    return INVISIBLE


def _sub(
    pattern: re.Pattern[str], text: str, repl: Callable[[re.Match[str]], str], found: set[str],
    reason: str | Callable[[str], str],
) -> str:  # fmt: skip
    def counted(match: re.Match[str]) -> str:
        found.add(reason if isinstance(reason, str) else reason(match.group()))
        return repl(match)

    return pattern.sub(counted, text)


def _swap(match: re.Match[str]) -> str:
    return match.group().translate(_SWAP)


def _mark(match: re.Match[str]) -> str:
    return match.group() + " (quoted)"


def inert(text: str, found: set[str]) -> str:
    """Characters and tokens made inert, framing phrases left alone (for our own sentences)."""
    out = text
    if _CHARS.search(out):
        out = _sub(_CHARS, out, _char, found, _char_reason)
    if "<" in out or "[" in out:
        out = _sub(_SPECIAL, out, _swap, found, SPECIAL_TOKEN)
        out = _sub(_TAG, out, _swap, found, TAG)
    return out


def neutralise(text: str) -> Quoted:
    """``text`` with everything that could pass for framing or control text made inert.

    Role markers and instruction-like phrases are reported but left as written:
    the note's quotation (a code span, or each line behind ``> ``) is what keeps
    them from starting a line of their own.
    """
    found: set[str] = set()
    out = _sub(_FRAMING, inert(text, found), _mark, found, FRAMING)
    if _ROLE.search(out):
        found.add(ROLE_MARKER)
    if _INSTRUCTION.search(out):
        found.add(INSTRUCTION)
    return Quoted(out, reasons_of(found))


def reasons_of(found: set[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Reasons in a fixed order, so reports are deterministic."""
    return tuple(r for r in _ORDER if r in found)


def cut(head: str, tail: str, omitted: int) -> str:
    """Head and tail of a long text around one line that counts what was left out."""
    return f"{head}\n[... {omitted} characters omitted ...]\n{tail}"


def bounded(text: str, limit: int, head: int, tail: int) -> Quoted:
    """Strip, neutralise and cap ``text``: at most ``limit`` characters plus the cut's line.

    Only the parts that are shown are neutralised, so a megabyte costs no more
    than a page; for benign text the result equals the plain cap.
    """
    text = text.strip()
    if len(text) <= limit:
        quoted = neutralise(text)
        if len(quoted.text) <= limit:
            return quoted
        shown = quoted.text
        return Quoted(cut(shown[:head], shown[-tail:], len(shown) - head - tail), quoted.reasons)
    first = neutralise(text[:head])
    last = neutralise(text[-tail:])
    joined = cut(first.text[:head], last.text[-tail:], len(text) - head - tail)
    found = set(first.reasons) | set(last.reasons)
    if _ROLE.search(joined):
        found.add(ROLE_MARKER)
    return Quoted(joined, reasons_of(found))


def span(text: str) -> str:
    """``text`` as one inline code span, so that nothing in it can close the span.

    The fence is one backtick longer than the longest run of backticks in the
    text: by CommonMark's rule only a run of exactly the fence's length closes
    it.  A text that starts or ends with a backtick or a space is padded with
    one space each side, which CommonMark strips, so that the fence stays the
    run it is and the text is read as written (an empty text is one space).
    The caller keeps line breaks out (:func:`one_line`, or a block behind
    ``> ``): a span is one line.

    Args:
        text: The text to quote, without line breaks.
    """
    fence = "`" * (max(map(len, _TICKS.findall(text)), default=0) + 1)
    if not text:
        return f"{fence} {fence}"
    pad = " " if text[0] in "` " or text[-1] in "` " else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def one_line(text: str) -> str:
    r"""``text`` with its remaining line breaks (``\r``, ``\n``) shown as pictures (``␍``, ``␊``).

    After :func:`inert` these are the only line breaks left; a value shown
    inside one of our sentences must not have any.
    """
    return text.translate(_BREAKS)


def literal(text: str, found: set[str] | None = None) -> str:
    """A tool-controlled value (a tool name, an error class) as our own sentences may show it.

    A plain identifier (letters, digits and ``_.-/``) is shown bare: it cannot
    hold a space, so it cannot hold a sentence or a role marker.  Anything else
    is made inert, kept on one line and shown as a code span (:func:`span`).

    Args:
        text: The value.
        found: Collects why the value had to be neutralised, when given.
    """
    if _PLAIN.fullmatch(text):
        return text
    return span(one_line(inert(text, found if found is not None else set())))
