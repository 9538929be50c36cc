"""Structured error bodies: what a JSON result says about its own success.

Many tools pass an API's body through as a normal result, so the error is in
the envelope rather than in a flag: Slack's ``{"ok": false, "error":
"ratelimited"}``, GraphQL's ``errors`` with ``data: null``, RFC 9457
problem+json, Google's ``error.status``, FastAPI's ``detail`` list, GitHub's
``message`` with ``documentation_url``, the AWS SDK for JavaScript's ``$fault`` and
``$metadata``.  The envelope decides whether the
result failed (only where its own fields say so: ``"error": null``,
``"errors": []`` and ``"ok": true`` are successes) and which of its fields carry
the codes and the message that classification reads, codes first.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Envelope", "may_report_failure", "read_envelope"]

_LIMIT = 256 * 1024
_PY_LIMIT = 64 * 1024
# Parse only bodies whose start shows a failure field: most JSON results are clean.
_HINT = re.compile(
    r'"errors"\s*:\s*true|"type"\s*:\s*"error"|"(?:ok|success)"\s*:\s*false|"status"\s*:\s*"(?:error|fail|ERROR|FAIL)|"errors"\s*:\s*\['
    r'|"error"\s*:\s*[{"]|"__type"|"documentation_url"|"detail"\s*:\s*\[|"\$?fault"'
    r'|"(?:status|statusCode|status_code|code|httpStatus)"\s*:\s*"?[45]\d\d\b'
)
_CODE_KEYS = ("code", "type", "status", "reason", "error_code", "errorCode", "__type", "title")
# A field that says when to try again: classification reads it as "retry after N".
_RETRY_KEYS = ("retry_after", "retryAfter", "retry_in_seconds")
_TEXT_KEYS = ("message", "error_description", "detail", "msg", "description", "error_message")
_ERROR_KEYS = frozenset(
    {"error", "errors", "message", "code", "status", "statusCode", "status_code", "ok", "type",
     "title", "detail", "error_description", "error_code", "errorCode", "request_id", "requestId",
     "documentation_url", "details", "reason", "timestamp", "path", "instance", "success",
     "warning", "warnings", "response_metadata", "needed", "provided", "retry_after",
     "retryAfter", "estimated_time"}
)  # fmt: skip
_OK_STATUS = frozenset({"ok", "OK", "success", "succeeded", "SUCCESS", "UP", 200, 201, 202, 204})
_FAILED_STATUS = frozenset({"error", "fail", "failed", "failure", "ERROR", "FAILED", "FAILURE"})


@dataclass(frozen=True, slots=True)
class Envelope:
    """A JSON body that reports a failure: its status code and the text to classify."""

    status: int | None
    text: str


def _status(value: Any) -> int | None:
    """A failing HTTP status in a field: an int, or a text of ASCII digits (no other type)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and 400 <= value <= 599:
        return value
    # isdigit() alone takes "²" and Arabic digits, and int() of 5,000 digits raises.
    if isinstance(value, str) and len(value) <= 16 and value.isascii() and value.isdigit():
        number = int(value)
        return number if 400 <= number <= 599 else None
    return None


def _scalar(value: Any) -> Any:
    """``value`` when it can be looked up in a set of statuses, else ``None``.

    A field may hold any JSON value (a DynamoDB item writes ``{"S": "paid"}``);
    only a text or a number can be a status.
    """
    return value if isinstance(value, str | int | float) else None


def _item_status(items: Any) -> int | None:
    """The first failing status of a bulk response's items (Elasticsearch's ``_bulk``)."""
    if not isinstance(items, list):
        return None
    for item in items[:1000]:
        if isinstance(item, Mapping):
            for action in item.values():
                if isinstance(action, Mapping) and _status(action.get("status")) is not None:
                    return _status(action.get("status"))
    return None


def _signals(value: Any, out: list[str], depth: int = 0) -> None:
    """Codes, then messages, of an error value (a string, an object or a list of them)."""
    if depth > 3 or len(out) > 24:
        return
    if isinstance(value, str):
        out.append(value[:500])
    elif isinstance(value, Mapping):
        for key in _CODE_KEYS:
            item = value.get(key)
            if isinstance(item, str | int) and not isinstance(item, bool):
                out.append(str(item))
        for key in _RETRY_KEYS:
            item = value.get(key)
            if isinstance(item, int | float) and not isinstance(item, bool) and item > 0:
                out.append(f"retry after {item}")
        for key in ("extensions", "error", "errors", "details", "fault"):
            if key in value:
                _signals(value[key], out, depth + 1)
        for key in _TEXT_KEYS:
            item = value.get(key)
            if isinstance(item, str):
                out.append(item[:500])
            elif isinstance(item, list | Mapping):
                _signals(item, out, depth + 1)
    elif isinstance(value, list):
        for item in value[:8]:
            _signals(item, out, depth + 1)


def _aws_v3(obj: Mapping[str, Any]) -> bool:
    """An AWS SDK for JavaScript v3 error as it serialises: ``name``, ``$fault``, ``$metadata``."""
    return obj.get("$fault") in ("client", "server") and isinstance(obj.get("$metadata"), Mapping)


def _failed(obj: Mapping[str, Any]) -> bool:
    status = _scalar(obj.get("status"))
    if obj.get("ok") is True or obj.get("success") is True or status in _OK_STATUS:
        return False
    if obj.get("errors") is True and isinstance(obj.get("items"), list):
        return True
    if obj.get("ok") is False or obj.get("success") is False:
        return any(k in obj for k in ("error", "errors", "message", "code", "reason", "detail"))
    if isinstance(status, str) and status in _FAILED_STATUS:
        return True
    errors = obj.get("errors")
    if isinstance(errors, list) and errors and all(isinstance(e, Mapping | str) for e in errors):
        return obj.get("data", None) is None or "message" in str(errors[0])
    error = obj.get("error")
    if (
        error not in (None, False, "", {}, [])
        and isinstance(error, str | Mapping)
        and (set(obj) <= _ERROR_KEYS or obj.get("type") == "error")
    ):
        return True
    if isinstance(obj.get("fault"), Mapping) or "__type" in obj or _aws_v3(obj):
        return True
    if "documentation_url" in obj and isinstance(obj.get("message"), str):
        return True
    for key in ("status", "statusCode", "status_code", "code"):
        if _status(obj.get(key)) is not None and any(
            k in obj for k in ("message", "title", "detail", "error")
        ):
            return True
    detail = obj.get("detail")
    return isinstance(detail, list) and any(isinstance(d, Mapping) and "msg" in d for d in detail)


def _parsed(stripped: str) -> Any:
    """The JSON object, or the Python dict a tool printed with ``repr`` (``{'error': ...}``).

    A dict's repr is read with ``ast.literal_eval``, which builds only literals, on
    at most 64 KB; anything it cannot read is not an envelope.
    """
    if stripped.startswith("{'"):
        if len(stripped) > _PY_LIMIT or _HINT.search(stripped[:4096].replace("'", '"')) is None:
            return None
        try:
            return ast.literal_eval(stripped)
        except Exception:
            return None
    if not may_report_failure(stripped):
        return None
    try:
        return json.loads(stripped)
    except (ValueError, RecursionError):
        return None


def may_report_failure(text: str) -> bool:
    """Whether a JSON text's first 4 KB show a failure field, which every envelope needs.

    The cheap test before any parse: most JSON results are clean, and those
    that show no such field are never parsed.

    Args:
        text: The JSON text, without leading white space.
    """
    return _HINT.search(text, 0, 4096) is not None


def read_envelope(text: str) -> Envelope | None:
    """The failure a JSON object reports about itself, or ``None`` (not JSON, or a success)."""
    stripped = text.strip()
    if not stripped.startswith("{") or len(stripped) > _LIMIT:
        return None
    obj = _parsed(stripped)
    if not isinstance(obj, Mapping) or not _failed(obj):
        return None
    status = None
    for key in ("status", "statusCode", "status_code", "code", "httpStatus"):
        status = status or _status(obj.get(key))
    error = obj.get("error")
    if isinstance(error, Mapping):
        status = status or _status(error.get("code")) or _status(error.get("status"))
    if status is None and obj.get("errors") is True:
        status = _item_status(obj.get("items"))
    out: list[str] = []
    if _aws_v3(obj):
        status = status or _status(obj["$metadata"].get("httpStatusCode"))
        if isinstance(obj.get("name"), str):
            out.append(obj["name"])
    _signals(obj, out)
    return Envelope(status, "\n".join(dict.fromkeys(s for s in out if s)))
