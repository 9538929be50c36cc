"""Decide whether a tool result is a failure, and which rule says so.

Three sources of evidence, in the paper's order (Appendix A): explicit client
flags for every client, rules recorded from four coding agents chosen by their
User-Agent, and standard error start texts for everyone else.  Error words in
the middle of a result are never enough: a log with ERROR lines, a source file
or a test's output quoting a ``TypeError`` is a successful call.

The kind's wider word lists apply where the text is itself an error message (the
generic rule's texts, MCP results, a one-line flagged error), not to a flagged
command's output, which quotes other programs' errors; for the coding agents
only the common words apply, as in the paper.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .._bounds import TEXT_LIMIT, glance, parts_read
from .._types import Kind, Source
from ._call import read_call
from ._codes import table_named
from ._envelope import may_report_failure, read_envelope
from ._history import Earlier, read_history
from ._rules import BALANCED, PRECISIONS, STRICT, Rules, current_rules
from ._signatures import error_signature
from ._text import AMBIGUOUS, Classification, classify_strictly, classify_text

__all__ = ["AGENTS", "Verdict", "agent_of", "classify_result", "is_error_text", "text_of"]

log = logging.getLogger("toolmend")

_JSON_LIMIT = 256 * 1024
_TEXT_PART_TYPES = frozenset({"text", "input_text", "output_text"})
_ONE_LINE = 500


@dataclass(frozen=True, slots=True)
class Verdict:
    """The outcome of classifying one tool result (see :func:`classify_result`).

    Attributes:
        failed: Whether the result is a failure.
        kind: The failure's kind.
        rule: The rule that judged it.
        source: Where the failure was seen.
        reason: The evidence.
    """

    failed: bool
    kind: Kind | None = None
    rule: str | None = None
    source: Source | None = None
    reason: str | None = None
    guidance: str | None = None
    """Overrides the kind's sentence, e.g. verify-first for a write that may have landed."""
    basis: str | None = field(default=None, compare=False)
    """Which classification rule read ``reason`` (see ``Classification.basis``)."""
    signature: str | None = field(default=None, compare=False)
    """The failure's error signature, when it was asked for or a learned rule read it."""


CLEAN = Verdict(False)
# Enum members are looked up once: an attribute access on an Enum class is slow.
_FLAG, _AGENT, _GENERIC = Source.FLAG, Source.AGENT, Source.GENERIC
_MADE: dict[tuple[int, str], tuple[Classification, Verdict]] = {}


def _failed(found: Classification, rule: str, source: Source) -> Verdict:
    """One shared verdict per outcome: verdicts are frozen and the set is small.

    Keyed by the classification's identity (classify_text returns shared
    instances), which is cheaper than hashing its enum.
    """
    made = _MADE.get((id(found), rule))
    if made is None or made[0] is not found:
        made = (found, Verdict(True, found.kind, rule, source, found.reason, None, found.basis))
        if len(_MADE) < 4096:
            _MADE[(id(found), rule)] = made
    return made[1]


def text_of(content: Any) -> str | None:
    """The text of a message's content; ``None`` when it holds no text we can read.

    Lists of parts keep only their text parts (images and other blocks are not
    the error), read up to :data:`toolmend._bounds.PARTS` of them (the first and
    the last: a million parts cost no more than a thousand); anything else is
    not understood and is left alone.

    Args:
        content: A message's content (a text or a list of parts).
    """
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence) and not isinstance(content, bytes | bytearray):
        texts: list[str] = []
        for part in parts_read(content):
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, Mapping):
                kind = part.get("type", "text")
                text = part.get("text")
                if isinstance(kind, str) and kind in _TEXT_PART_TYPES and isinstance(text, str):
                    texts.append(text)
        return "\n".join(texts) if texts else (None if content else "")
    return None


# Agent rules (Appendix A, rules 4-13), keyed by User-Agent prefix.
_QWEN_EXIT = re.compile(r"^Exit Code: *(.*)$", re.M)
_QWEN_ERROR_LINE = re.compile(r"^Error: *(.*)$", re.M)
_CODEX_EXITED = re.compile(r"Process exited with code (-?\d+)")
_CODEX_EXIT_CODE = re.compile(r"Exit code: *(-?\d+)")
_OPENCODE_EXIT = re.compile(r"Exited with code (-?\d+)")

AGENTS = {"qwencode/": "qwen", "codex": "codex", "kilo-code/": "kilo", "opencode/": "opencode"}


# An agent sends the same User-Agent with every result: its reading is remembered.
_AGENT_OF: dict[str, str | None] = {}
_AGENT_MEMO = 256


def agent_of(client: str | None) -> str | None:
    """Which recorded coding agent a User-Agent names, if any."""
    if not client:
        return None
    if client in _AGENT_OF:
        return _AGENT_OF[client]
    lowered = client.strip().lower()
    found = next((agent for prefix, agent in AGENTS.items() if lowered.startswith(prefix)), None)
    if len(_AGENT_OF) < _AGENT_MEMO:
        _AGENT_OF[client] = found
    return found


def _nonzero(value: str) -> bool:
    try:
        return int(value.strip()) != 0
    except ValueError:
        return False


def _agent_rule(agent: str, text: str) -> str | None:
    """Rules 4-13 on the raw text: no leading white space is ignored here."""
    if agent == "qwen":
        if text.startswith("File not found:"):
            return "qwen-notfound"
        if text.startswith("Command:"):
            codes = _QWEN_EXIT.findall(text)
            errors = _QWEN_ERROR_LINE.findall(text)
            if (codes and _nonzero(codes[-1])) or (errors and errors[-1].strip() != "(none)"):
                return "qwen-exit"
            return None
        if text.startswith("Error") or (text.startswith("File") and "has not been read" in text):
            return "qwen-error"
    elif agent == "codex":
        exited = _CODEX_EXITED.search(text)
        if exited and _nonzero(exited.group(1)):
            return "codex-exit"
        if text.startswith("Exit code:"):
            code = _CODEX_EXIT_CODE.match(text)
            if code and _nonzero(code.group(1)):
                return "codex-exit"
        if "command timed out" in text:
            return "codex-timeout"
        if "apply_patch verification failed" in text:
            return "codex-patch"
    elif agent == "kilo":
        if text.startswith("File not found:"):
            return "kilo-notfound"
        if text.startswith("Unknown: FileSystem."):
            return "kilo-fs"
        if text.startswith("oldString"):
            return "kilo-usage"
    elif agent == "opencode":
        last = text.rstrip().rsplit("\n", 1)[-1]
        exited = _OPENCODE_EXIT.fullmatch(last.strip())
        if exited and _nonzero(exited.group(1)):
            return "opencode-exit"
    return None


# Generic start texts (Table 5), then the other standard forms of an error text:
# the SDKs' "Error code: N", LangGraph's, LangChain's and the Agents SDK's
# wrappers, OSError, urllib3, urllib, pydantic, jsonschema and argument errors.
_GENERIC_PREFIXES = (
    "Error:",
    "ERROR:",
    "error:",
    "Error executing tool",
    "MCP error ",
    "Database error:",
    "Parse error near line ",
    "fatal: ",
    "An error occurred while running the tool",
    "An error occurred (",
    "Traceback (most recent call last):",
    "HTTP Error",
    "HTTP 4",
    "HTTP 5",
    "Client error '",
    "Server error '",
    "Error invoking tool '",
    "Unknown tool: ",
    "Invalid arguments",
    "Validation failed: ",
    "<urlopen error ",
    "HTTPConnectionPool(host=",
    "HTTPSConnectionPool(host=",
    "('Connection aborted.', ",
)
# Forms that start with a name: exception names (``TypeError:``, ``httpx.ReadTimeout:``,
# ``ConnectionResetError(``), the SDKs' status text, framework wrappers naming the
# tool, and Python's argument errors naming the function.
_NAMED_START = re.compile(
    r"(?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*)?(?:Error|Exception)[:(]"
    r"|(?:[A-Za-z_]\w*\.)*[A-Z]\w*Timeout[:(]"
    r"|(?:[A-Za-z_]\w*\.)+[Tt]imeout[:(]"
    r"|Error code: \d{3}\b"
    r"|Tool '[^'\n]*' (?:failed after \d+ attempts? with |timed out after "
    r"|does not exist\. |was not run: )"
    r"|[\w.<>]+\(\) (?:got an unexpected keyword|missing \d+ required|takes \d+ positional"
    r"|takes from \d+ to \d+ positional|got multiple values|got some positional-only)"
)
# Forms that start with a number or a bracket: requests, pydantic, OSError, and a
# failing HTTP status with its reason phrase: "403 - Forbidden - ...", or the whole text
# "429 Too Many Requests" or "429 RESOURCE_EXHAUSTED" (a table of statuses is not a
# failure).
_REASONS = (
    "(?:Bad Request|Unauthorized|Payment Required|Forbidden|Not Found|Method Not Allowed"
    "|Request Timeout|Conflict|Gone|Payload Too Large|Unprocessable Entity|Too Many Requests"
    "|Internal Server Error|Bad Gateway|Service Unavailable|Gateway Timeout)"
)
_NUMBERED_START = re.compile(
    r"\d{3} (?:Client|Server) Error:|\d+ validation errors? for |\[Errno -?\d+\] "
    rf"|[45]\d\d - {_REASONS}\b|[45]\d\d {_REASONS}[ \t]*(?:\n|\Z)|[45]\d\d [A-Z][A-Z_]{{4,}}\s*\Z"
)
# A Redis error reply starts with its code ("WRONGTYPE ...", "ERR ..."), as listed in
# the Redis code table.
_REDIS_CODES = sorted({code.split()[0] for code in table_named("redis").codes})
# A program's own error line ("psql: error: ...", "curl: (7) ..."), psql's "ERROR:  "
# at a line start, the MySQL/MariaDB client's "ERROR 1146 (42S02)", a Redis error reply
# (redis-cli's "(error) " before it), a typed error line ("Catalog Error: ", DuckDB's
# and others' form, "Validation failed: ", "Invalid DateTime: ", "Security violation: ",
# "Error adding to memory: "), a client's "Failed after 3 attempts. Last error: ", an
# AWS authorisation message ("User: arn:aws:... is not authorized"), libcurl's error
# as PHP's clients print it ("cURL error 28: "), PHP's "Fatal error: ", axios's
# "Request failed with status code 401", a build tool's
# "[ERROR] " (esbuild, wrangler), an MCP client's request timeout, an HTTP status line
# of a failure, an XML error body (S3, STS, EC2, Azure Storage).  An HTML page stays
# clean even when its title is a status: a fetched page is content.
_PROGRAM_START = re.compile(
    r"[\w.-]{1,32}: (?:error|ERROR|fatal|FATAL)[: ]|[\w.-]{1,32}: \(\d+\) |npm (?:error|ERR!) "
    r"|ERROR \d{4} \([0-9A-Z]{5}\)|(?:\(error\) )?(?:" + "|".join(_REDIS_CODES) + r") \S"
    r"|(?:[A-Z][A-Za-z]+ ){1,3}(?:Error|[Ff]ailed|[Vv]iolation): "
    r"|[A-Z][a-z]+(?: [a-z]+){1,2} failed: |Error [a-z]+ing [^:\n]{1,60}: "
    r"|Failed after \d+ attempts?\. Last error: |User: arn:aws:|cURL error \d+: "
    r"|(?:PHP )?Fatal error: |Request failed with status code \d{3}\b"
    r"|Invalid [A-Za-z]+(?: [A-Za-z]+)?: |No such [a-z]+|grpc\._channel\._\w+: "
    r"|(?:✘ )?\[ERROR\] "
    r"|Request '[\w/]+' timed out|HTTP/\d(?:\.\d)? [45]\d\d "
    r"|(?:<\?xml[^>]*\?>\s*)?<(?:ErrorResponse|Error)[\s>]|(?:<\?xml[^>]*\?>\s*)?<Response>\s*<Errors>"
)
_PSQL_ERROR = re.compile(r"^(?:psql:[^\n]*?: )?ERROR:  ", re.M)
# An error body as JSON, or as the Python dict a tool printed (``{'error': '...'}``).
_JSON_ERROR = re.compile(r'\{\s*(?:"error"\s*:\s*(?:\{|"[^"])|\'error\'\s*:\s*(?:\{|\'[^\']))')
_BARE_EXCEPTION = re.compile(r"(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)\s*")
# jsonschema's ValidationError: a one-line message, then the failed check.
_SCHEMA_MARK = "\n\nFailed validating '"
_SCHEMA_ERROR = re.compile(r"[^\n]+\n\nFailed validating '[^'\n]+' in ")
_START_WINDOW = 512


def _json_object(text: str) -> dict[str, Any] | None:
    if len(text) > _JSON_LIMIT:
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _jsonrpc_error(stripped: str) -> bool:
    """A JSON-RPC 2.0 error response: its ``error`` member is there only on failure."""
    if '"jsonrpc"' not in stripped[:200]:
        return False
    obj = _json_object(stripped)
    return (
        obj is not None
        and obj.get("jsonrpc") == "2.0"
        and isinstance(obj.get("error"), Mapping)
        and "code" in obj["error"]
    )


def is_error_text(text: str) -> bool:
    """Whether the generic rule (rule 15) recognises the text as an error message.

    Cheap tests on the start of the text come first: most results are clean,
    and a clean result should cost as little as possible.
    """
    stripped = text.lstrip()
    if not stripped:
        return False
    if stripped.startswith(_GENERIC_PREFIXES):
        return True
    first = stripped[0]
    if first == "{":
        return _JSON_ERROR.match(stripped) is not None or _jsonrpc_error(stripped)
    head = stripped[:_START_WINDOW]
    if _PROGRAM_START.match(head) or ("ERROR:  " in stripped and _PSQL_ERROR.search(stripped)):
        return True
    if first.isdigit() or first == "[":
        if _NUMBERED_START.match(head):
            return True
    elif (
        "Error" in head
        or "Exception" in head
        or "imeout" in head
        or "() " in head
        or (first == "T" and head.startswith("Tool '"))
    ):
        if _NAMED_START.match(head):
            return True
        if len(stripped) < 128 and _BARE_EXCEPTION.fullmatch(stripped):
            return True
    return head.find(_SCHEMA_MARK) > 0 and _SCHEMA_ERROR.match(stripped) is not None


# The clean fast path (:func:`_plainly_clean`): what a text must show for any rule of
# the generic path to read it as an error.  A text that starts with one of these
# prefixes (looked up by its first character), or whose head holds one of these words,
# takes the full path.
_SUSPECT_PREFIXES: dict[str, tuple[str, ...]] = {}
for _prefix in (
    *_GENERIC_PREFIXES,
    "HTTP", "Tool '", "npm ", "ERROR ", "Failed", "User: ", "cURL", "PHP ", "Fatal",
    "Request", "Invalid", "No such", "grpc.", "[Errno ", "[ERROR] ", "✘ ", "(error) ", "Error ",
    "<?xml", "<Error", "<Response>", *(f"{code} " for code in _REDIS_CODES),
):  # fmt: skip
    _SUSPECT_PREFIXES[_prefix[0]] = (*_SUSPECT_PREFIXES.get(_prefix[0], ()), _prefix)
del _prefix
# Each holds a colon or a parenthesis: a head with neither needs no further look.
_SUSPECT_WORDS = (
    "Error:", "Error(", "Exception:", "Exception(", "Timeout:", "Timeout(", ".timeout:",
    ".timeout(", "() ", "ailed: ", "iolation: ",
)  # fmt: skip
_EXCEPTION_ENDS = ("Error", "Exception")
_WORD_COLON = re.compile(r"[\w.-]{1,32}: ")
_PROGRAM_WORDS = ("error", "ERROR", "fatal", "FATAL", "(")


def _suspect_word_in(head: str) -> bool:
    """Whether ``head`` holds one of :data:`_SUSPECT_WORDS` (a test checks the two agree)."""
    return (
        ("Error" in head and ("Error:" in head or "Error(" in head))
        or ("Exception" in head and ("Exception:" in head or "Exception(" in head))
        or (
            "imeout" in head
            and (
                "Timeout:" in head
                or "Timeout(" in head
                or ".timeout:" in head
                or ".timeout(" in head
            )
        )
        or "() " in head
        or "ailed: " in head
        or "iolation: " in head
    )


def _plainly_clean(text: str) -> bool:
    """Whether a text, unflagged and from no recorded agent, is clean on one cheap pass.

    Most tool results are successes, so this runs before any rule table or JSON
    parse: prefix and substring tests that every error form of the generic path
    needs (its start texts, a program's ``name: error`` line, an exception's
    name, a status at the start, psql's ``ERROR:  ``, a schema error's mark, an
    envelope's failure field).  ``True`` means the full path would find nothing;
    ``False`` only that it has to look.
    """
    if len(text) > TEXT_LIMIT:
        return False
    stripped = text.lstrip()
    if not stripped:
        return True
    first = stripped[0]
    if first == "{":
        return not (
            stripped.startswith(('{"query":', "{'"))
            or '"isError"' in stripped
            or '"jsonrpc"' in stripped[:200]
            or _JSON_ERROR.match(stripped) is not None
            or may_report_failure(stripped)
        )
    head = stripped[:_START_WINDOW]
    if first.isdigit():
        # "403 Forbidden", "500 Server Error: ...": a status and a space; pydantic's count.
        if stripped[3:4] == " " or " validation error" in head:
            return False
    elif first in _SUSPECT_PREFIXES and stripped.startswith(_SUSPECT_PREFIXES[first]):
        return False
    # The suspect words, each holding a colon or a parenthesis, grouped by a common part
    # so that a clean head is scanned six times rather than once per word.
    colon = ":" in head
    if (colon or "(" in head) and _suspect_word_in(head):
        return False
    # psql's "ERROR:  " may stand past the head; within it, it needs a colon there.
    if (colon or len(stripped) > _START_WINDOW) and "ERROR:  " in stripped:
        return False
    if _SCHEMA_MARK in head:
        return False
    # A bare exception name ends with its class name: the pattern runs only then.
    if (
        len(stripped) < 128
        and stripped.rstrip().endswith(_EXCEPTION_ENDS)
        and _BARE_EXCEPTION.fullmatch(stripped) is not None
    ):
        return False
    if not colon:
        return True
    # "curl: (7) ...", "psql: error: ...": a program's name, then its error.
    named = _WORD_COLON.match(stripped) if stripped.find(": ", 1, 34) > 0 else None
    return named is None or not stripped.startswith(_PROGRAM_WORDS, named.end())


def _mcp_text(obj: Mapping[str, Any], text: str) -> str:
    """The text parts of a CallToolResult: the JSON around them is not the error."""
    parts = obj.get("content")
    found = text_of(parts) if isinstance(parts, list) else None
    return found if found else text


# A flagged command's output whose first line is the error: a program's own prefix
# ("curl: (7) ...", "fatal: ...", "npm error code E404"), with at most an exit-code line
# after the message; a test run or build log that quotes other errors is not one.
_PROGRAM_ERROR = re.compile(
    r"(?:[\w.-]{1,32}: (?:\(\d+\) |\*\*\* |[Ee]rror|fatal|FATAL)|fatal: |npm (?:error|ERR!) )"
)
_EXIT_LINE = re.compile(r"(?:Exit code:? -?\d+|Process exited with code -?\d+)\s*")


_SHORT_REPORT = 15
# Node's report of an uncaught exception: the throwing line, a caret, then the error,
# its frames and any properties it carries (a TLS error dumps the whole certificate).
_NODE_CRASH = re.compile(
    r"(?:node:[\w/]+|[^\n]+\.[cm]?[jt]s):\d+\n[^\n]*\n *\^+\n\n(?:[A-Z]\w*)?Error\b"
)
# What a test or build run prints: pytest's "FAILED ", "PASSED", "N passed", "N failed" and
# "=====" rules, unittest's "Ran N tests", TAP's "ok 1", pytest's "E   " lines, a leading
# exit code.  Each is a substring test first (most texts hold none), then, where the
# substring alone is not enough, its pattern: one search over the whole text for all of
# them at once tries every position and costs more than the rest of the detection.
_RUN_MARKS: tuple[tuple[str, re.Pattern[str] | None], ...] = (
    ("FAILED ", None),
    ("PASSED", None),
    (" passed", None),
    (" failed", re.compile(r"\d failed")),
    ("=====", None),
    ("Ran ", re.compile(r"Ran \d+ tests?")),
    ("ok ", re.compile(r"^ok \d", re.M)),
    ("E   ", re.compile(r"^E   ", re.M)),
    ("Exit ", re.compile(r"\AExit [Cc]ode:? -?\d")),
)


def _error_shaped(text: str) -> bool:
    """Whether a flagged text is itself an error message, so the wider words apply.

    A one-line message, a program's own error line, or a short report (a trace, a
    wrapped error) that is not a test or build run quoting other errors.
    """
    body = text.strip()
    cut = body.rfind("\n")
    if cut >= 0 and _EXIT_LINE.fullmatch(body, cut + 1):
        body = body[:cut]
    if len(body) <= _ONE_LINE and "\n" not in body:
        return True
    if _PROGRAM_ERROR.match(body) is not None or _NODE_CRASH.match(body) is not None:
        return True
    # A stack's frames (Node's "    at f (file:1:2)", Java's tab-indented ones) belong
    # to the one error they trace, so they do not make a report long.
    lines = body.count("\n")
    if lines >= _SHORT_REPORT:
        frames = body.count("\n    at ") + body.count("\n\tat ")
        if lines - frames >= _SHORT_REPORT:
            return False
    # A loop, not any() over a generator: this runs on most flagged results.
    for mark, pattern in _RUN_MARKS:
        if mark in body and (pattern is None or pattern.search(body) is not None):
            return False
    return True


# A success status line before a JSON body ("HTTP 200 OK" then the body, as an HTTP
# tool prints a response): GraphQL and some APIs answer 200 with an error body.
_SUCCESS_LINE = re.compile(
    r"HTTP(?:/\d(?:\.\d)?)? 2\d\d(?: [A-Za-z ]{1,40})?(?::[ \t]*|[ \t]*\r?\n)"
)


def _after_success_line(stripped: str) -> str | None:
    line = _SUCCESS_LINE.match(stripped)
    if line is None:
        return None
    body = stripped[line.end() :].lstrip()
    return body if body[:1] == "{" else None


def _flagged(text: str, rule: str, agent: str | None) -> Verdict:
    wide = agent is None and (_error_shaped(text) or is_error_text(text))
    found = classify_text(text, wide=wide)
    if not wide and agent is None and found.kind is Kind.AMBIGUOUS:
        first = text.strip().split("\n", 1)[0]
        if len(first) <= _ONE_LINE:
            head = classify_text(first, wide=True)
            if head.kind is not Kind.AMBIGUOUS:
                found = head
    return _failed(found, rule, _FLAG)


def _json_flag(text: str, stripped: str) -> Verdict | None:
    """Rules 2, 3 and 14: Cline, OpenCode and MCP results that carry their own flag.

    Cline's and OpenCode's are matched on the raw text, as recorded; an MCP result
    is any JSON object with ``"isError": true``.
    """
    if text.startswith('{"error":{"type":"tool.execution"'):
        found = classify_text(text, wide=False)
        return _failed(found, "opencode", _FLAG)
    if text.startswith('{"query":'):
        obj = _json_object(text)
        if obj is not None and obj.get("success") is False:
            rest = json.dumps({k: v for k, v in obj.items() if k != "query"}, ensure_ascii=False)
            found = classify_text(rest, wide=False)
            return _failed(found, "cline", _FLAG)
    if '"isError"' in stripped:
        obj = _json_object(stripped)
        if obj is not None and obj.get("isError") is True:
            found = classify_text(_mcp_text(obj, stripped), wide=True)
            return _failed(found, "mcp-iserror", _FLAG)
    return None


def classify_result(
    content: Any,
    *,
    is_error: bool | None = None,
    status: str | None = None,
    client: str | None = None,
    tool: str | None = None,
    rules: Rules | None = None,
    precision: str | None = None,
    signature: bool = False,
    arguments: Mapping[str, Any] | None = None,
    schema: Mapping[str, Any] | None = None,
    roots: Sequence[str] | None = None,
    history: Sequence[Earlier | Mapping[str, Any]] | None = None,
) -> Verdict:
    """Judge one tool result.  Never raises: unreadable content is not a failure.

    Args:
        content: The result as the framework holds it: a string, content blocks,
            a provider message or a structured value.
        is_error: The framework's error flag, when it has one; trusted above any text.
        status: A LangChain ``ToolMessage.status`` (``error`` is a flag).
        client: The User-Agent of the agent, which selects its own rules.
        tool: The tool that produced the result, for user rules scoped to a tool.
        rules: User rules checked first (default: those installed with ``set_rules``);
            their learned rules are read after the built-in ones.
        precision: ``balanced`` or ``strict`` (default: the rules' own, else
            ``balanced``); under ``strict`` a kind read from wording alone is
            ambiguous: no guidance.
        signature: Whether to set the verdict's error ``signature`` for a failure
            (it costs a regular-expression pass over the text; a learned rule
            lookup computes it anyway).
        arguments: The call's arguments, when the caller has them: an argument
            the tool could never have accepted (a URL it cannot fetch, a value
            outside its schema, a path outside its roots) makes a failure fixable,
            unless a code or a status says otherwise.
        schema: The tool's input schema (JSON Schema), read with ``arguments``.
        roots: The directories the tool's server declared, read with ``arguments``.
        history: The run's earlier calls (``CallRecord`` objects, oldest first), read
            with ``tool`` and ``arguments``: an unclear failure of a call that
            succeeded earlier in the run, and has not failed like this since, is
            temporary.

    Returns:
        The verdict: failed or not, and for a failure its kind, rule and guidance.
    """
    try:
        chosen = rules if rules is not None else current_rules()
        # ``has_phrases`` re-reads a rules file that refreshes; without a file it is the
        # phrased rules' tuple, read without the property's call (this runs on every result).
        phrased = chosen.has_phrases if chosen._loader is not None else bool(chosen._phrased)
        if (
            is_error is not True
            and status != "error"
            and not client
            and not phrased
            and _plainly_clean(content if type(content) is str else text_of(content) or "")
        ):
            return CLEAN
        if phrased:
            verdict = _user_rule(content, is_error, status, chosen, tool)
            if verdict is not None:
                return _signed(verdict, content) if signature else verdict
        verdict = _inspect(content, is_error, status, client)
        if not verdict.failed:
            return verdict
        wanted = precision or chosen.precision
        if chosen._learned or signature:  # ``has_learned`` without the property's call
            verdict = _learned(verdict, content, chosen, tool)
        if arguments is not None:
            verdict = _called(verdict, content, arguments, schema, roots)
        if history:
            verdict = _in_run(verdict, content, tool, arguments, history)
        if wanted != BALANCED:
            verdict = _strict(verdict, content, wanted)
        return verdict
    except Exception:
        log.warning("toolmend: tool result not understood; left alone", exc_info=True)
        if is_error is True or status == "error":
            return _failed(AMBIGUOUS, "is_error" if is_error is True else "status", _FLAG)
        return CLEAN


# What reads a code, a status or the caller's own argument: evidence a learned rule
# does not override unless its outcomes contradicted it strongly, and what ``strict``
# keeps.  Wording (``paper``, ``word``) is neither.
_STRONG = frozenset({"http", "override", "retry-hint"})
_STRICT_KEEPS = _STRONG | {"value", "type", "missing"}
_VAGUE = frozenset({"HTTP 400", "HTTP 402", "HTTP 500"})  # see classify_strictly


def _last(basis: str | None) -> str:
    return (basis or "").rpartition("/")[2]


def _strict(verdict: Verdict, content: Any, precision: str) -> Verdict:
    """Under ``strict``, a kind read from wording is read again without it."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}; got {precision!r}")
    if precision != STRICT or verdict.kind is Kind.AMBIGUOUS or verdict.kind is None:
        return verdict
    basis = verdict.basis or ""
    last = _last(basis)
    vague = last == "http" and verdict.reason in _VAGUE
    if not vague and (
        last in _STRICT_KEEPS or last.startswith(("code:", "user:", "learned:", "call:"))
    ):
        return verdict
    text = _text_for_signature(content)
    found = classify_strictly(text) if text is not None else AMBIGUOUS
    if found.kind is Kind.AMBIGUOUS:
        return replace(verdict, kind=Kind.AMBIGUOUS, guidance=None)
    return replace(verdict, kind=found.kind, reason=found.reason, guidance=None, basis=found.basis)


def _called(
    verdict: Verdict,
    content: Any,
    arguments: Mapping[str, Any],
    schema: Mapping[str, Any] | None,
    roots: Sequence[str] | None,
) -> Verdict:
    """A temporary or unclear failure made fixable by an argument the tool cannot accept.

    Only a reading from wording, or none, gives way: a status or code that says
    temporary stays, and so does any stop (an unrecoverable failure).
    """
    if verdict.kind not in (Kind.TRANSIENT, Kind.AMBIGUOUS):
        return verdict  # fixable already, or a stop the call's arguments do not undo
    found = read_call(arguments, schema, roots)
    if found is None:
        return verdict
    text = _text_for_signature(content)
    if text is not None and classify_strictly(text).kind is Kind.TRANSIENT:
        return verdict  # a status or code says temporary: the arguments did not cause it
    return replace(verdict, kind=found.kind, reason=found.reason, guidance=None, basis=found.basis)


def _in_run(
    verdict: Verdict,
    content: Any,
    tool: str | None,
    arguments: Mapping[str, Any] | None,
    history: Sequence[Earlier | Mapping[str, Any]],
) -> Verdict:
    """An unclear failure of a call that succeeded earlier in the run is temporary."""
    if verdict.kind is not Kind.AMBIGUOUS:
        return verdict
    text = _text_for_signature(content)
    signature = verdict.signature or (error_signature(text) if text is not None else None)
    found = read_history(
        verdict.kind, tool=tool, arguments=arguments, signature=signature, history=history
    )
    if found is None:
        return verdict
    return replace(verdict, kind=found.kind, reason=found.reason, guidance=None, basis=found.basis)


def _text_for_signature(content: Any) -> str | None:
    return content if type(content) is str else text_of(content)


def _signed(verdict: Verdict, content: Any) -> Verdict:
    text = _text_for_signature(content)
    return verdict if text is None else replace(verdict, signature=error_signature(text))


def _learned(verdict: Verdict, content: Any, rules: Rules, tool: str | None) -> Verdict:
    """The verdict, signed, with the kind a learned rule gives its signature."""
    text = _text_for_signature(content)
    if text is None:
        return verdict
    signed = replace(verdict, signature=error_signature(text))
    if not rules.has_learned or signed.signature is None:
        return signed
    rule = rules.learned(signed.signature, tool)
    if rule is None:
        return signed
    if not rule.overrides and classify_strictly(text).kind is not Kind.AMBIGUOUS:
        return signed  # a code or a status said something: outcomes did not overrule it
    kind = None if rule.kind == "clean" else Kind(rule.kind)
    if kind is None:
        return signed  # a learned rule never says a detected failure did not fail
    return replace(signed, kind=kind, guidance=None, basis=f"learned:{signed.signature}")


def _user_rule(
    content: Any, is_error: Any, status: Any, rules: Rules, tool: str | None
) -> Verdict | None:
    text = content if type(content) is str else text_of(content)
    if text is None:
        return None
    text = glance(text)
    found = rules.match(text, tool)
    if found is None:
        return None
    if found.kind is None:
        return CLEAN
    flag = "is_error" if is_error is True else "status" if status == "error" else None
    return Verdict(
        True,
        found.kind,
        flag or "user",
        _FLAG if flag else _GENERIC,
        found.span,
        None,
        f"user:{found.name}",
    )


def _inspect(content: Any, is_error: Any, status: Any, client: Any) -> Verdict:
    text = content if type(content) is str else text_of(content)
    flag = "is_error" if is_error is True else "status" if status == "error" else None
    if text is None:
        if flag is not None:
            return _failed(AMBIGUOUS, flag, _FLAG)
        return CLEAN
    text = glance(text)  # a huge text is judged by its head and tail
    agent = agent_of(client) if client else None
    if flag is not None:
        return _flagged(text, flag, agent)
    stripped = text.lstrip()
    if stripped[:1] == "{":
        flagged = _json_flag(text, stripped)
        if flagged is not None:
            return flagged
        if not is_error_text(stripped) and read_envelope(stripped) is not None:
            return _failed(classify_text(text, wide=True), "envelope", _GENERIC)
    if stripped[:4] == "HTTP":
        body = _after_success_line(stripped)
        if body is not None and read_envelope(body) is not None:
            return _failed(classify_text(body, wide=True), "envelope", _GENERIC)
    if agent is not None:
        rule = _agent_rule(agent, text)
        if rule is None:
            return CLEAN
        found = classify_text(text, wide=False)
        return _failed(found, rule, _AGENT)
    if is_error_text(stripped):
        found = classify_text(text, wide=True)
        return _failed(found, "generic", _GENERIC)
    return CLEAN
