"""Read the call, not only the text: arguments the tool could never have accepted.

The reference fetch server answers "Failed to fetch robots.txt … due to a
connection issue" whatever the URL was: ``htp://…`` (a typo), ``ftp://…`` (a
scheme it never fetches), a host under ``.invalid``.  The text reads as
temporary; the call says the argument is the cause, and retrying it unchanged
cannot help.  These readers look only at the call (its arguments, the tool's
input schema, the roots a server declared) and name the argument:

- ``call:url``: a URL argument whose scheme is not ``http``/``https`` or missing
  (``example.com/a`` in an argument named ``url``), or whose host is empty, not a
  valid name, or under a reserved test domain (``.invalid``, ``.test``,
  ``.example``, ``.localhost``; RFC 2606 and 6761);
- ``call:schema``: a value outside the schema's ``enum``, ``pattern``, bounds,
  lengths or type, or a required field missing or empty;
- ``call:roots``: an absolute path argument outside every root the server declared.

Each finding is fixable: change the argument.  It only ever replaces a temporary
reading from wording, or an ambiguous one; a status or code that says temporary
stays, and so does a stop (the caller decides that, :func:`~toolmend.classify_result`).
Bounded: the first 64 arguments, strings up to 2,048 characters, patterns only when
they compile.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from .._types import Kind
from ._text import Classification

__all__ = ["read_call"]

_FETCHED = ("http", "https")
_RESERVED = (".invalid", ".test", ".example", ".localhost")
_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)")
_URL_NAMES = re.compile(r"(?:^|_)(?:url|uri|href|link|endpoint|website)s?$", re.IGNORECASE)
_BARE_HOST = re.compile(r"(?:www\.)?[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?::\d+)?(?:[/?#]|$)")
_URL_START = re.compile(r"\s*[A-Za-z][A-Za-z0-9+.\-]*://")
_ARGUMENTS = 64
_LONGEST = 2048
_TYPES: Mapping[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list, tuple),
    "object": (Mapping,),
}


def _found(name: str, what: str, basis: str) -> Classification:
    return Classification(Kind.FIXABLE, f"{name}: {what}", basis)


def _url_problem(value: str, named: bool) -> str | None:
    if "://" not in value:
        # an argument named for a URL, holding a host and path with no scheme
        return "no scheme (http:// or https://)" if named and _BARE_HOST.match(value) else None
    try:
        parts = urlsplit(value)
    except ValueError:
        return "not a valid URL"
    scheme = parts.scheme.lower()
    if scheme not in _FETCHED:
        return f"scheme {scheme!r} is not http or https"
    host = (parts.hostname or "").rstrip(".").lower()
    if not host:
        return "no host"
    try:
        ipaddress.ip_address(host)
        return None
    except ValueError:
        pass
    if host == "localhost":
        return None
    if not all(_LABEL.fullmatch(label) for label in host.split(".")):
        return f"host {host!r} is not a valid name"
    if "." + host.rpartition(".")[2] in _RESERVED or host.endswith(_RESERVED):
        return f"host {host!r} is under a reserved test domain"
    return None


def _type_ok(value: Any, expected: Any) -> bool:
    names = expected if isinstance(expected, list) else [expected]
    for name in names:
        if name == "null" and value is None:
            return True
        kinds = _TYPES.get(name) if isinstance(name, str) else None
        if kinds is None:
            return True  # a type we do not know: no evidence
        if isinstance(value, bool) and name in ("integer", "number"):
            continue
        if isinstance(value, kinds):
            return True
    return False


def _schema_problem(value: Any, schema: Mapping[str, Any]) -> str | None:
    if "type" in schema and not _type_ok(value, schema["type"]):
        return f"expected {schema['type']}, got {type(value).__name__}"
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and value not in enum:
        return "not one of the allowed values"
    if isinstance(value, str) and len(value) <= _LONGEST:
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            try:
                if re.search(pattern, value) is None:
                    return "does not match the pattern"
            except re.error:
                pass
        if isinstance(schema.get("minLength"), int) and len(value) < schema["minLength"]:
            return "too short"
        if isinstance(schema.get("maxLength"), int) and len(value) > schema["maxLength"]:
            return "too long"
    if isinstance(value, int | float) and not isinstance(value, bool):
        low, high = schema.get("minimum"), schema.get("maximum")
        if isinstance(low, int | float) and value < low:
            return f"below the minimum {low}"
        if isinstance(high, int | float) and value > high:
            return f"above the maximum {high}"
    return None


def _outside(value: str, roots: Iterable[str]) -> bool:
    path = PurePosixPath(value)
    if not path.is_absolute() or ".." in path.parts:
        return False
    return not any(path == PurePosixPath(r) or PurePosixPath(r) in path.parents for r in roots)


def read_call(
    arguments: Mapping[str, Any] | None,
    schema: Mapping[str, Any] | None = None,
    roots: Iterable[str] | None = None,
) -> Classification | None:
    """The argument a call got wrong whatever the tool answered, or None.

    Args:
        arguments: The call's arguments.
        schema: The tool's input schema (JSON Schema), when known.
        roots: The directories a server declared it may touch, when known.

    Returns:
        A fixable classification naming the argument (basis ``call:url``,
        ``call:schema`` or ``call:roots``), or None when the call looks right.
    """
    if not isinstance(arguments, Mapping):
        return None
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    properties = properties if isinstance(properties, Mapping) else {}
    required = schema.get("required") if isinstance(schema, Mapping) else None
    for name in required if isinstance(required, list) else ():
        if isinstance(name, str) and (name not in arguments or arguments[name] in ("", None)):
            return _found(name, "required, missing or empty", "call:schema")
    allowed = [r for r in roots or () if isinstance(r, str) and r.startswith("/")]
    for index, (name, value) in enumerate(arguments.items()):
        if index >= _ARGUMENTS:
            break
        name = str(name)
        spec = properties.get(name)
        if isinstance(spec, Mapping):
            problem = _schema_problem(value, spec)
            if problem is not None:
                return _found(name, problem, "call:schema")
        if not isinstance(value, str) or len(value) > _LONGEST:
            continue
        named = _URL_NAMES.search(name) is not None
        url_like = named or _URL_START.match(value) is not None
        problem = _url_problem(value, named) if url_like else None
        if problem is not None:
            return _found(name, problem, "call:url")
        if allowed and _outside(value, allowed):
            return _found(name, "outside the allowed directories", "call:roots")
    return None
