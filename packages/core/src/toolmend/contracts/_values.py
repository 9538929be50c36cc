"""JSON value helpers shared by the miner and the checker.

Both sides must name paths and types identically, or a mined invariant would
never match the value it is checked against; so the naming lives here once.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "MAX_DEPTH",
    "MAX_ITEMS",
    "ROOT",
    "cap",
    "child",
    "element",
    "error_fields",
    "is_number",
    "json_text",
    "looks_failed",
    "parse_arguments",
    "parse_result",
    "type_name",
]

ROOT = "$"
MAX_DEPTH = 32
"""Nodes deeper than this are neither mined nor checked: a bound on work, the same on both sides."""
MAX_ITEMS = 256
"""Array elements beyond this are neither mined nor checked."""

_CAP_TEXT = 160
_CAP_JSON = 240


def child(path: str, key: str) -> str:
    """``price`` under the root, ``quote.price`` deeper: the paper's field names stay readable."""
    return key if path == ROOT else f"{path}.{key}"


def element(path: str) -> str:
    """The path of every element of the array at ``path``."""
    return f"{path}[]"


def type_name(value: Any) -> str:
    """The JSON type of a value; ``integer`` and ``number`` are told apart as JSON Schema does."""
    kind = type(value)
    if kind is str:
        return "string"
    if kind is bool:
        return "boolean"
    if kind is int:
        return "integer"
    if kind is float:
        return "number"
    if value is None:
        return "null"
    if kind is dict or isinstance(value, Mapping):
        return "object"
    if kind is list or isinstance(value, list | tuple):
        return "array"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "unknown"


def is_number(value: Any) -> bool:
    """Whether ``value`` is a JSON number (``bool`` is not one, though Python says so)."""
    return type(value) in (int, float) or (
        isinstance(value, int | float) and not isinstance(value, bool)
    )


def parse_result(result: Any) -> tuple[Any, bool]:
    """The structured value of a result, and whether it came from a text that was not JSON.

    Tool frameworks often deliver JSON as text; a text holding a JSON object or
    array is the same result as the value itself, so both are checked alike.
    """
    if isinstance(result, str):
        stripped = result.strip()
        if stripped[:1] in ("{", "["):
            try:
                return json.loads(stripped), False
            except (ValueError, RecursionError):
                return result, True
        return result, True
    return result, False


def parse_arguments(arguments: Any) -> Mapping[str, Any]:
    """Call arguments as a mapping; a JSON text is parsed, anything else counts as none."""
    if isinstance(arguments, Mapping):
        return arguments
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments)
        except (ValueError, RecursionError):
            return {}
        if isinstance(parsed, Mapping):
            return parsed
    return {}


def json_text(value: Any, *, indent: int | None = None) -> str:
    """JSON for anything: values JSON cannot hold are written as their text."""
    return json.dumps(value, ensure_ascii=False, indent=indent, default=str, allow_nan=True)


def cap(value: Any) -> Any:
    """A value small enough to show the model; a long one is cut, visibly.

    Args:
        value: The value.
    """
    if isinstance(value, str):
        return value if len(value) <= _CAP_TEXT else value[:_CAP_TEXT] + "…"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, bool | int | float) or value is None:
        return value
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    if len(text) <= _CAP_JSON:
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            return text
    return text[:_CAP_JSON] + "…"


_ERROR_KEYS = frozenset(
    {
        "error",
        "errors",
        "err",
        "errormessage",
        "errormsg",
        "errordescription",
        "errordetail",
        "errordetails",
        "errorcode",
        "exception",
        "fault",
        "faultstring",
    }
)
_FALSE_KEYS = frozenset({"success", "ok"})
_WATCHED = _ERROR_KEYS | _FALSE_KEYS | {"iserror"}
_NORMALISE = re.compile(r"[_\-\s]")


@functools.lru_cache(maxsize=4096)
def _normalised(key: str) -> str:
    return _NORMALISE.sub("", key.lower())


_PLAIN = frozenset({str, int, float, bool, type(None), list})


def _is_mapping(value: Any) -> bool:
    kind = type(value)
    return kind is dict or (kind not in _PLAIN and isinstance(value, Mapping))


def _bears_error(key: str, value: Any) -> bool:
    name = _normalised(key)
    if name not in _WATCHED:
        return False
    if name in _ERROR_KEYS:
        if isinstance(value, str):
            return value.strip() != ""
        if isinstance(value, bool):
            return value
        if is_number(value):
            return bool(value)
        if isinstance(value, Mapping | list | tuple):
            return len(value) > 0
        return value is not None
    if name in _FALSE_KEYS:
        return value is False
    if name == "iserror":
        return value is True
    return False


_FAILED_LINE = re.compile(
    r"(?:Error|ERROR|error)\s*[:\-\[(]"
    r"|Traceback \(most recent call last\)"
    r"|HTTP(?:/\d(?:\.\d)?)?\s+[45]\d\d\b"
    r"|[45]\d\d (?:Client|Server) Error\b"
    r"|[45]\d\d(?: [A-Z][A-Za-z-]*){1,4}\s*$"
    r"|(?i:Internal Server Error|Bad Gateway|Service Unavailable|Gateway Time-?out"
    r"|Too Many Requests|Rate limit exceeded|Access Denied|Forbidden|Not Found)(?:[.:!,]|\s*$)"
    r"|[A-Za-z_][\w.]*(?:Error|Exception):",
)
_HTML_ERROR = re.compile(
    r"<title>\s*(?:[45]\d\d\b|[^<]*(?:error|not found|unavailable|forbidden|bad gateway"
    r"|too many requests|access denied|timed? ?out))[^<]*</title>",
    re.IGNORECASE,
)


def looks_failed(text: str) -> bool:
    """Whether a text result is an error message or an error page rather than content.

    Only the first line counts (and an HTML title): error words later in a
    document are content, as in the core's detection rules; a page titled
    "Error handling" is content too, so a bare word is not enough.
    """
    first = text.lstrip()[:200].split("\n", 1)[0]
    return _FAILED_LINE.match(first) is not None or _HTML_ERROR.search(text[:4096]) is not None


def error_fields(value: Any) -> list[tuple[str, Any]]:
    """Error-bearing fields in the top two levels of an object, outside arrays.

    Deeper or inside arrays an ``error`` field usually describes an item (a log
    line, a failed sub-task in a batch), not the call itself.
    """
    found: list[tuple[str, Any]] = []
    if not _is_mapping(value):
        return found
    for key, item in value.items():
        name = str(key)
        if _bears_error(name, item):
            found.append((name, item))
        elif _is_mapping(item):
            for inner_key, inner in item.items():
                inner_name = str(inner_key)
                if _bears_error(inner_name, inner):
                    found.append((child(name, inner_name), inner))
    return found
