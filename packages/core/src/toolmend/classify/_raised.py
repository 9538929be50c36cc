"""Classify a raised exception by its type and attributes before its text.

An exception carries better evidence than any text: an HTTP status, a
``Retry-After`` header, an ``errno``, or the fact that a connection was never
established.  Libraries are recognised by class names in the MRO and by duck
typing, so none of them is a dependency; what is not recognised falls back to
:func:`toolmend.classify_text` on ``Type: message``.
"""

from __future__ import annotations

import errno as errno_codes
import math
import re
import socket
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

from .._types import Kind
from ._text import classify_text
from ._words import HTTP_KIND

__all__ = [
    "CONTROL_FLOW",
    "MCP_CODES",
    "URL_ELICITATION_REQUIRED",
    "ExceptionInfo",
    "ResultFailed",
    "classify_exception",
    "describe_exception",
    "mcp_code",
    "parse_duration",
    "parse_retry_after",
    "passes_through",
    "retry_after_in_text",
]

T, F, U, A = Kind.TRANSIENT, Kind.FIXABLE, Kind.UNRECOVERABLE, Kind.AMBIGUOUS


@dataclass(frozen=True, slots=True)
class ExceptionInfo:
    """What an exception means for the next action.

    ``before_dispatch`` is true only when the request demonstrably never left
    the client (connection refused, DNS failure, no pooled connection), which
    makes a repeat safe whatever the tool does.

    Attributes:
        kind: What the exception means for the next action.
        reason: The evidence that decided it.
        retry_after: Seconds the exception asked to wait.
        before_dispatch: Whether the request never left the client.
        status: The HTTP status the exception carries, if any.
    """

    kind: Kind
    reason: str
    retry_after: float | None = None
    before_dispatch: bool = False
    status: int | None = None


_ERRNO_KIND: Mapping[int, Kind] = {
    errno_codes.EACCES: U,
    errno_codes.EPERM: U,
    errno_codes.EROFS: U,
    errno_codes.ENOSPC: U,
    errno_codes.EDQUOT: U,
    errno_codes.ECONNRESET: T,
    errno_codes.ECONNREFUSED: T,
    errno_codes.ECONNABORTED: T,
    errno_codes.ETIMEDOUT: T,
    errno_codes.EAGAIN: T,
    errno_codes.EPIPE: T,
    errno_codes.ENETUNREACH: T,
    errno_codes.EHOSTUNREACH: T,
    errno_codes.ENOENT: A,
}
_ERRNO_BEFORE_DISPATCH = frozenset(
    {errno_codes.ECONNREFUSED, errno_codes.ENETUNREACH, errno_codes.EHOSTUNREACH}
)

# Connection never established: the request was not sent.
_BEFORE_DISPATCH_TYPES = frozenset(
    {
        "httpx.ConnectError",
        "httpx.ConnectTimeout",
        "httpx.PoolTimeout",
        "httpcore.ConnectError",
        "httpcore.ConnectTimeout",
        "httpcore.PoolTimeout",
        "requests.ConnectTimeout",
        "urllib3.NewConnectionError",
        "urllib3.NameResolutionError",
        "urllib3.ConnectTimeoutError",
        "aiohttp.ClientConnectorError",
        "aiohttp.ConnectionTimeoutError",
    }
)
_TRANSIENT_TYPES = frozenset(
    {
        "httpx.TimeoutException",
        "httpx.NetworkError",
        "httpx.RemoteProtocolError",
        "httpcore.TimeoutException",
        "httpcore.NetworkError",
        "httpcore.RemoteProtocolError",
        "requests.Timeout",
        "requests.ConnectionError",
        "requests.ChunkedEncodingError",
        "urllib3.ProtocolError",
        "urllib3.TimeoutError",
        "aiohttp.ServerDisconnectedError",
        "aiohttp.ServerTimeoutError",
        "aiohttp.ClientConnectionError",
        "openai.APIConnectionError",
        "openai.APITimeoutError",
        "anthropic.APIConnectionError",
        "anthropic.APITimeoutError",
    }
)
_FIXABLE_TYPES = frozenset(
    {
        "httpx.InvalidURL",
        "httpx.UnsupportedProtocol",
        "requests.InvalidURL",
        "requests.MissingSchema",
        "requests.InvalidSchema",
        "aiohttp.InvalidURL",
    }
)
_VALIDATION_TYPES = frozenset({"pydantic_core.ValidationError", "pydantic.ValidationError"})
# The Agents SDK raises this for a tool call it could not parse or validate, before the body.
_MODEL_BEHAVIOR = "agents.ModelBehaviorError"

MCP_CODES: Mapping[int, tuple[Kind, str]] = {
    -32602: (F, "invalid params"),
    -32601: (F, "method not found"),
    -32600: (F, "invalid request"),
    -32001: (T, "request timeout"),
    408: (T, "request timeout"),
    -32603: (A, "internal error"),
}
"""JSON-RPC error codes of an MCP error whose next action is known; others go by their text.

A request timeout is transient but not before dispatch: the server may still run
the call, so a write that timed out counts as possibly landed.  The Python SDK's
2.x line raises its client-side read timeout as ``-32001``; its 1.x line as
``408`` (``httpx.codes.REQUEST_TIMEOUT``), with the text "Timed out while waiting
for response to ...".
"""
URL_ELICITATION_REQUIRED = -32042
"""The MCP code that asks the host to send the user to a URL: control flow, not a failure."""
_MCP_TYPES = frozenset({"MCPError", "McpError"})

_BOTO_CODES: Mapping[str, Kind] = {
    **dict.fromkeys(
        ["Throttling", "ThrottlingException", "ThrottledException", "TooManyRequestsException",
         "RequestLimitExceeded", "ProvisionedThroughputExceededException", "SlowDown",
         "ServiceUnavailable", "ServiceUnavailableException", "InternalError",
         "InternalFailure", "InternalServerError", "RequestTimeout", "RequestTimeoutException",
         "PriorRequestNotComplete", "TransactionInProgressException", "EC2ThrottledException",
         "BandwidthLimitExceeded", "LimitExceededException"], T),
    **dict.fromkeys(
        ["AccessDenied", "AccessDeniedException", "UnauthorizedOperation",
         "UnrecognizedClientException", "InvalidClientTokenId", "AuthFailure",
         "SignatureDoesNotMatch", "ExpiredToken", "ExpiredTokenException",
         "InvalidAccessKeyId", "MissingAuthenticationToken", "OptInRequired"], U),
    **dict.fromkeys(
        ["ValidationException", "ValidationError", "InvalidParameterValue",
         "InvalidParameterValueException", "InvalidParameter", "InvalidParameterException",
         "InvalidParameterCombination", "MissingParameter", "MalformedQueryString",
         "InvalidRequest", "InvalidArgument", "SerializationException"], F),
}  # fmt: skip

_ARGUMENT_TYPEERROR = re.compile(
    r"unexpected keyword argument|required (?:positional|keyword-only) argument"
    r"|positional arguments? but \d+ (?:were|was) given|multiple values for argument"
)
_DURATION_PART = re.compile(
    r"(\d+(?:\.\d+)?)\s*(milliseconds?|ms|seconds?|secs?|s|minutes?|mins?|m|hours?|h)?(?![a-z])",
    re.IGNORECASE,
)
_RETRY_TEXT = re.compile(
    r"(?:retry|try again)(?:ing)?\s+(?:in|after)\s+"
    r"((?:\d+(?:\.\d+)?\s*(?:milliseconds?|ms|seconds?|secs?|s|minutes?|mins?|m|hours?|h)?"
    r"(?![a-zA-Z])\s*){1,3})",
    re.IGNORECASE,
)
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_HTTPX_HINT = re.compile(r"\n?For more information check: \S+\s*$")
_MAX_DEPTH = 8


def parse_duration(text: str) -> float | None:
    """Seconds in ``5``, ``5s``, ``1.5 seconds``, ``250ms``, ``2 minutes`` or ``1m30s``."""
    total = 0.0
    found = False
    position = 0
    text = text.strip()
    while position < len(text):
        match = _DURATION_PART.match(text, position)
        if match is None:
            break
        unit = (match.group(2) or "s").lower()
        key = "ms" if unit.startswith("milli") or unit == "ms" else unit[0]
        total += float(match.group(1)) * _UNIT_SECONDS[key]
        found = True
        position = match.end()
        while position < len(text) and text[position].isspace():
            position += 1
    if not found or position < len(text):
        return None
    return total


def parse_retry_after(value: Any, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` value: delay-seconds or an HTTP date.

    A date in the past means "now" (0); an unreadable value means no hint.
    """
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
        return max(0.0, seconds) if math.isfinite(seconds) else None
    text = str(value).strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if math.isfinite(seconds) else None
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def retry_after_in_text(text: str) -> float | None:
    """A wait named in prose: ``retry in 5s``, ``try again in 1m30s``, ``retry after 2 minutes``."""
    match = _RETRY_TEXT.search(text[:4096])
    if match is None:
        return None
    return parse_duration(match.group(1))


_VENDORED = {"httpx2": "httpx", "httpcore2": "httpcore"}


def _mro_names(exc: BaseException) -> tuple[str, ...]:
    """``package.Class`` for every class in the MRO, most specific first."""
    names = []
    for cls in type(exc).__mro__:
        package = cls.__module__.split(".", 1)[0]
        names.append(f"{_VENDORED.get(package, package)}.{cls.__name__}")
    return tuple(names)


def _type_names(exc: BaseException) -> frozenset[str]:
    """The MRO names as a set (``httpx2`` counts as ``httpx``)."""
    return frozenset(_mro_names(exc))


def _first(exc: BaseException, table: frozenset[str]) -> str | None:
    """The most specific class of ``exc`` named in ``table``."""
    return next((name for name in _mro_names(exc) if name in table), None)


def describe_exception(exc: BaseException) -> str:
    """``package.Type: message``, the line a model reads (builtins keep their bare name).

    Args:
        exc: The exception.
    """
    cls = type(exc)
    package = cls.__module__.split(".", 1)[0]
    name = cls.__name__ if package in ("builtins", "__main__") else f"{package}.{cls.__name__}"
    try:
        message = str(exc)
    except Exception:
        message = ""
    message = _HTTPX_HINT.sub("", message).strip()
    return f"{name}: {message}" if message else name


def _linked(exc: BaseException) -> Iterator[BaseException]:
    """The exceptions an exception wraps: explicit cause, ``reason``, a wrapped first arg.

    The implicit ``__context__`` is not followed: it can be an unrelated earlier
    error that was being handled, and reading "never dispatched" from it could
    repeat a write that landed.
    """
    cause = exc.__cause__
    if cause is not None:
        yield cause
    reason = getattr(exc, "reason", None)
    if isinstance(reason, BaseException):
        yield reason
    args = getattr(exc, "args", ())
    if args and isinstance(args[0], BaseException):
        yield args[0]


def _walk(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and everything it wraps, breadth-first, bounded and cycle-safe."""
    seen: set[int] = set()
    queue = [(exc, 0)]
    while queue:
        current, depth = queue.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        if depth < _MAX_DEPTH:
            queue.extend((nxt, depth + 1) for nxt in _linked(current))


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def mcp_code(exc: BaseException) -> int | None:
    """The JSON-RPC code of an MCP SDK error (``MCPError``, older ``McpError``), by duck typing.

    Read from ``exc.error.code`` (the SDK's ``ErrorData``), else ``exc.code``;
    ``None`` for any other exception.
    """
    if not any(cls.__name__ in _MCP_TYPES for cls in type(exc).__mro__):
        return None
    try:
        code = _int(getattr(getattr(exc, "error", None), "code", None))
        return code if code is not None else _int(getattr(exc, "code", None))
    except Exception:
        return None


CONTROL_FLOW = frozenset(
    {
        "langgraph.GraphBubbleUp",
        "agents.MaxTurnsExceeded",
        "agents.InputGuardrailTripwireTriggered",
        "agents.OutputGuardrailTripwireTriggered",
        "agents.ToolInputGuardrailTripwireTriggered",
        "agents.ToolOutputGuardrailTripwireTriggered",
    }
)
"""Framework control-flow exceptions (``package.Class`` in the MRO) that always pass through."""


def passes_through(exc: BaseException, passthrough: tuple[type[BaseException], ...] = ()) -> bool:
    """Whether ``exc`` must propagate: not an ``Exception``, listed, or framework control flow.

    An MCP server's URL elicitation request is control flow too: the host must
    send the user to the URL, as without toolmend.
    """
    if not isinstance(exc, Exception):
        return True
    if passthrough and isinstance(exc, passthrough):
        return True
    return bool(_type_names(exc) & CONTROL_FLOW) or mcp_code(exc) == URL_ELICITATION_REQUIRED


def _mcp(exc: BaseException) -> ExceptionInfo | None:
    code = mcp_code(exc)
    if code is None or code not in MCP_CODES:
        return None
    kind, meaning = MCP_CODES[code]
    return ExceptionInfo(kind, f"MCP error {code} ({meaning})")


def _status_of(obj: Any) -> int | None:
    for attribute in ("status_code", "status"):
        value = getattr(obj, attribute, None)
        if isinstance(value, int) and not isinstance(value, bool) and 400 <= value <= 599:
            return value
    return None


def _header(headers: Any, name: str) -> Any:
    if headers is None:
        return None
    try:
        getter = headers.get
    except AttributeError:
        return None
    try:
        value = getter(name)
        if value is None and isinstance(headers, Mapping):
            lowered = name.lower()
            value = next((v for k, v in headers.items() if str(k).lower() == lowered), None)
    except Exception:
        return None
    return value


def _retry_after_headers(headers: Any) -> float | None:
    milliseconds = _header(headers, "retry-after-ms")
    if milliseconds is not None:
        try:
            value = float(milliseconds) / 1000.0
        except (TypeError, ValueError):
            value = math.nan
        if math.isfinite(value):
            return max(0.0, value)
    return parse_retry_after(_header(headers, "retry-after"))


def _http(exc: BaseException, names: frozenset[str]) -> tuple[int, Any] | None:
    """An HTTP error status and its headers, from the exception or its ``response``."""
    response = getattr(exc, "response", None)
    status = _status_of(exc)
    if status is None and "urllib.HTTPError" in names:
        code = getattr(exc, "code", None)
        status = code if isinstance(code, int) and 400 <= code <= 599 else None
    if status is None and response is not None and not isinstance(response, Mapping):
        status = _status_of(response)
    if status is None:
        return None
    headers = getattr(exc, "headers", None)
    if headers is None and response is not None:
        headers = getattr(response, "headers", None)
    return status, headers


def _botocore(exc: BaseException, names: frozenset[str]) -> ExceptionInfo | None:
    if "botocore.ClientError" not in names:
        return None
    response = getattr(exc, "response", None)
    if not isinstance(response, Mapping):
        return None
    error = response.get("Error")
    code = error.get("Code") if isinstance(error, Mapping) else None
    metadata = response.get("ResponseMetadata")
    status = metadata.get("HTTPStatusCode") if isinstance(metadata, Mapping) else None
    status = status if isinstance(status, int) and 400 <= status <= 599 else None
    headers = metadata.get("HTTPHeaders") if isinstance(metadata, Mapping) else None
    retry_after = _retry_after_headers(headers)
    if isinstance(code, str) and code in _BOTO_CODES:
        return ExceptionInfo(_BOTO_CODES[code], f"error code {code}", retry_after, False, status)
    if status is not None:
        kind = HTTP_KIND.get(status, A)
        return ExceptionInfo(kind, f"HTTP {status}", retry_after, False, status)
    return None


def _errno_info(exc: OSError) -> ExceptionInfo | None:
    number = exc.errno
    if isinstance(exc, socket.gaierror):
        transient = number == getattr(socket, "EAI_AGAIN", None)
        return ExceptionInfo(T if transient else A, "name resolution failed", None, True)
    if isinstance(number, int) and number in _ERRNO_KIND:
        name = errno_codes.errorcode.get(number, str(number))
        before = number in _ERRNO_BEFORE_DISPATCH
        return ExceptionInfo(_ERRNO_KIND[number], f"errno {name}", None, before)
    if isinstance(exc, TimeoutError):
        return ExceptionInfo(T, "TimeoutError")
    return None


def _root_os_error(exc: BaseException) -> ExceptionInfo | None:
    for linked in _walk(exc):
        if isinstance(linked, OSError):
            found = _errno_info(linked)
            if found is not None:
                return found
    return None


def _transport(exc: BaseException, names: frozenset[str]) -> ExceptionInfo | None:
    """Client library transport errors: the type says transient, the chain says where."""
    fixable = _first(exc, _FIXABLE_TYPES)
    if fixable is not None:
        return ExceptionInfo(F, fixable, None, True)
    before_type = next(
        (found for linked in _walk(exc) if (found := _first(linked, _BEFORE_DISPATCH_TYPES))),
        None,
    )
    transient_type = _first(exc, _TRANSIENT_TYPES)
    if before_type is None and transient_type is None:
        return None
    root = _root_os_error(exc)
    if before_type is not None:
        if root is not None and root.reason == "name resolution failed":
            return ExceptionInfo(root.kind, f"{before_type}: name resolution failed", None, True)
        kind = root.kind if root is not None and root.kind is not A else T
        return ExceptionInfo(kind, before_type, None, True)
    reason = str(transient_type)
    if root is not None and root.kind is not T:
        return ExceptionInfo(root.kind, f"{reason}: {root.reason}", None, root.before_dispatch)
    return ExceptionInfo(T, reason, None, bool(root and root.before_dispatch))


def _own(exc: BaseException, names: frozenset[str], message: str) -> ExceptionInfo | None:
    """Evidence from this exception alone, strongest first."""
    mcp = _mcp(exc)
    if mcp is not None:
        return mcp
    if _MODEL_BEHAVIOR in names:
        return ExceptionInfo(F, "invalid tool arguments")
    http = _http(exc, names)
    if http is not None:
        status, headers = http
        retry_after = _retry_after_headers(headers)
        if retry_after is None:
            retry_after = retry_after_in_text(message)
        return ExceptionInfo(HTTP_KIND.get(status, A), f"HTTP {status}", retry_after, False, status)
    boto = _botocore(exc, names)
    if boto is not None:
        return boto
    if names & _VALIDATION_TYPES:
        return ExceptionInfo(F, "validation error")
    transport = _transport(exc, names)
    if transport is not None:
        return transport
    if isinstance(exc, OSError):
        found = _root_os_error(exc)
        if found is not None:
            return found
    if "sqlite3.OperationalError" in names and "is locked" in message:
        return ExceptionInfo(T, "database is locked")
    if isinstance(exc, TypeError) and _ARGUMENT_TYPEERROR.search(message):
        return ExceptionInfo(F, "argument TypeError")
    return None


def _classify(exc: BaseException, depth: int) -> ExceptionInfo:
    names = _type_names(exc)
    description = describe_exception(exc)
    message = description.partition(": ")[2]
    found = _own(exc, names, message)
    if found is not None:
        return found
    cause = exc.__cause__
    if cause is not None and depth < _MAX_DEPTH:
        inner = _classify(cause, depth + 1)
        if inner.kind is not A or inner.before_dispatch or inner.status is not None:
            return ExceptionInfo(
                inner.kind,
                f"cause: {inner.reason}",
                inner.retry_after,
                inner.before_dispatch,
                inner.status,
            )
    text = classify_text(description)
    retry_after = retry_after_in_text(message)
    if text.reason is None:
        return ExceptionInfo(text.kind, "no rule matched", retry_after)
    status = int(text.reason[5:]) if text.basis.endswith("http") else None
    return ExceptionInfo(text.kind, f"text {text.reason!r}", retry_after, False, status)


class ResultFailed(Exception):
    """A failed *result* raised inside an attempt, so the retry policy can act on it.

    Frameworks hand some failures back as results (LangChain's error
    ``ToolMessage``, an MCP ``isError`` result) rather than raising them; an
    adapter raises this with the result's text, its verdict and the result, and
    gets the result back from the failure when no retry followed.

    Args:
        text: The result's text, the error of the attempt.
        kind: The verdict's kind.
        reason: The verdict's reason.
        result: The result itself, handed back when no retry followed.
    """

    def __init__(self, text: str, kind: Kind | None, reason: str | None, result: Any) -> None:
        super().__init__(text)
        self.text = text
        self.kind = kind
        self.reason = reason
        self.result = result


def classify_exception(exc: BaseException) -> ExceptionInfo:
    """Kind, reason, retry-after hint and dispatch state of a raised exception.

    Never raises: an exception whose attributes cannot even be read is ambiguous.

    Args:
        exc: The exception a tool call raised (its chain and attributes are read).

    Returns:
        What the exception means for the next action.
    """
    if isinstance(exc, ResultFailed):
        return ExceptionInfo(
            exc.kind or A, f"returned failure: {exc.reason}", retry_after_in_text(exc.text)
        )
    try:
        return _classify(exc, 0)
    except Exception:
        return ExceptionInfo(A, "unreadable exception")
