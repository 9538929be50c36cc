"""Word lists and patterns that decide a failure's kind.

The ``COMMON`` and ``WIDE`` lists are the paper's Appendix A, verbatim: words are
case-sensitive substrings, and some omit their first letter so that both
capitalisations match.  ``EXTRA`` widens coverage to texts the paper's rules
missed (cloud SDK codes, database drivers, Python exception names); every entry
there names a condition whose correct next action is not in doubt, because wrong
guidance costs more than none.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from .model import Kind

U, T, F, A = Kind.UNRECOVERABLE, Kind.TRANSIENT, Kind.FIXABLE, Kind.AMBIGUOUS

COMMON: Mapping[str, Kind] = {
    **dict.fromkeys(
        ["EACCES", "EPERM", "ermission denied", "Access is denied", "ead-only",
         "Unable to write", "Forbidden"], U),
    **dict.fromkeys(
        ["ECONNRESET", "ECONNREFUSED", "ETIMEDOUT", "EAI_AGAIN", "Too Many Requests",
         "ate limit", "Service Unavailable", "Gateway Timeout", "emporarily unavailable"], T),
    **dict.fromkeys(
        ["must not be empty", "cannot be empty", "has not been read",
         "No replacement performed", "Invalid insert_line", "was omitted", "did not match",
         "not unique", "verification failed", "Invalid arguments", "Invalid parameters"], F),
}  # fmt: skip

WIDE: Mapping[str, Kind] = {
    # A command's own timeout may recur on a repeat: matched first, so that the
    # transient "timed out" inside it does not fire.
    **dict.fromkeys(["ommand timed out", "ommand timeout", "xecution timed out"], A),
    **dict.fromkeys(
        ["Unauthorized", "PERMISSION_DENIED", "UNAUTHENTICATED", "ccess denied",
         "ot authorized to", "ncorrect API key", "nvalid API key"], U),
    **dict.fromkeys(
        ["timed out", "TimeoutError", "ReadTimeout", "ConnectTimeout", "WriteTimeout",
         "PoolTimeout", "socket.timeout", "Request Timeout", "DEADLINE_EXCEEDED",
         "UNAVAILABLE", "RESOURCE_EXHAUSTED", "onnection reset", "onnection refused",
         "onnection aborted", "Bad Gateway", "Internal Server Error", "socket hang up",
         "fetch failed", "Max retries exceeded"], T),
    **dict.fromkeys(
        ["unexpected keyword argument", "required positional argument",
         "positional arguments but", "nvalid params", "INVALID_ARGUMENT", "Bad Request",
         "Unprocessable", "validation error", "is a required property", "is not of type",
         "dditional properties are not allowed", "is not a valid tool", "nknown tool",
         "ethod not found", "-32601", "-32602"], F),
}  # fmt: skip

EXTRA: Mapping[str, Kind] = {
    **dict.fromkeys(
        ["PermissionError", "AccessDenied", "UnauthorizedOperation", "InvalidClientTokenId",
         "AuthFailure", "AuthenticationError", "PermissionDeniedError", "authentication_error",
         "permission_error", "invalid_api_key", "insufficient_quota",
         "exceeded your current quota", "credit balance is too low", "readonly database",
         "ENOSPC", "EROFS", "No space left on device", "Disk quota exceeded",
         "Operation not permitted", "Payment Required"], U),
    **dict.fromkeys(
        ["ConnectionResetError", "ConnectionRefusedError", "ConnectionAbortedError",
         "BrokenPipeError", "RemoteDisconnected", "APIConnectionError", "RateLimitError",
         "InternalServerError", "ServiceUnavailable", "ThrottlingException",
         "TooManyRequestsException", "RequestLimitExceeded", "ProvisionedThroughputExceeded",
         "SlowDown", "overloaded_error", "Overloaded", "database is locked",
         "database table is locked", "deadlock detected", "Deadlock found",
         "Lock wait timeout exceeded", "emporary failure in name resolution",
         "ry again later", "EAGAIN"], T),
    **dict.fromkeys(
        ["positional argument but", "required keyword-only argument",
         "ValidationException", "InvalidParameterValue", "MissingParameter",
         "BadRequestError", "UnprocessableEntityError"], F),
}  # fmt: skip

# HTTP statuses whose next action is clear; 404, 409, 410 and the rest stay ambiguous.
HTTP_KIND: Mapping[int, Kind] = {
    400: F, 401: U, 402: U, 403: U, 407: U, 408: T, 422: F,
    429: T, 500: T, 502: T, 503: T, 504: T, 529: T,
}  # fmt: skip

HTTP_STATUS = re.compile(
    r"HTTP Error (\d{3})"
    r"|\b(\d{3}) (?:Client|Server) Error\b"
    r"|(?:Client|Server) error '(\d{3}) "
    r"|Error code: (\d{3})\b"
    r"|\bHTTP(?:/\d(?:\.\d)?)? (\d{3})\b"
    r"|\b[Ss]tatus(?:[ _][Cc]ode)?[=:] ?(\d{3})\b"
    r"|[\"']status(?:_?[Cc]ode)?[\"']\s*:\s*[\"']?(\d{3})\b"
    r"|[\"']code[\"']\s*:\s*[\"']?([45]\d\d)\b"
)

RETRY_HINT = re.compile(r"[Rr]etry(?:ing)? (?:in|after) \d")


def _alternation(words: list[str]) -> re.Pattern[str]:
    ordered = sorted(words, key=len, reverse=True)
    return re.compile("|".join(re.escape(w) for w in ordered))


COMMON_RE = _alternation(list(COMMON))
WIDE_TABLE: Mapping[str, Kind] = {**COMMON, **WIDE, **EXTRA}
WIDE_RE = _alternation(list(WIDE_TABLE))
