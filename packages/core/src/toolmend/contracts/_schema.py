"""Declared contracts: MCP ``outputSchema``, JSON Schema and pydantic return types.

A declared schema is public, needs no recorded traffic, and is checked with
``jsonschema`` when it is installed; otherwise with a small validator for the
keywords tool schemas use (types, properties, required, enums, bounds, items,
local ``$ref``), so the core does not depend on it.  Any schema violation is
one ``schema_violation`` record with the failing keyword as the expectation.
"""

from __future__ import annotations

import importlib
import inspect as pyinspect
import logging
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .._bounds import prune
from ._contract import Code, Contracts, Violation
from ._values import ROOT, cap, child, is_number, type_name

__all__ = [
    "declared",
    "from_mcp_tools",
    "return_schema",
    "schema_of",
    "validate",
]

log = logging.getLogger("toolmend.contracts")

_MAX_ERRORS = 20
_CHECKED = 1_000_000
"""Values of one value checked at most; a validator recurses with the value's depth."""


def schema_of(tp: Any) -> dict[str, Any]:
    """The JSON Schema of a pydantic model or any type pydantic understands, as results are sent.

    Args:
        tp: A pydantic model or a type pydantic understands.
    """
    from pydantic import TypeAdapter

    schema = TypeAdapter(tp).json_schema(mode="serialization")
    return dict(schema)


def return_schema(fn: Callable[..., Any]) -> dict[str, Any] | None:
    """The schema of a function's return annotation; ``None`` when it has none worth checking.

    Args:
        fn: The function.
    """
    try:
        hints = typing.get_type_hints(fn)
    except Exception:
        return None
    tp = hints.get("return", pyinspect.Signature.empty)
    if tp is pyinspect.Signature.empty or tp is None or tp is type(None) or tp is Any:
        return None
    try:
        return schema_of(tp)
    except Exception:
        log.warning("toolmend.contracts: no schema for the return type of %r", fn, exc_info=True)
        return None


def declared(schemas: Mapping[str, Mapping[str, Any]]) -> Contracts:
    """Contracts declaring one JSON Schema per tool name.

    Args:
        schemas: Tool name -> the JSON Schema of its results.
    """
    contracts = Contracts()
    for tool, schema in sorted(schemas.items()):
        contracts = contracts.declare(tool, schema)
    return contracts


def from_mcp_tools(tools: Iterable[Any]) -> Contracts:
    """Contracts from MCP tool definitions (``Tool`` objects or dicts) with an ``outputSchema``.

    Args:
        tools: MCP ``Tool`` objects or their dicts.
    """
    schemas: dict[str, Mapping[str, Any]] = {}
    for tool in tools:
        if isinstance(tool, Mapping):
            name = tool.get("name")
            schema = tool.get("outputSchema", tool.get("output_schema"))
        else:
            name = getattr(tool, "name", None)
            schema = getattr(tool, "output_schema", None) or getattr(tool, "outputSchema", None)
        if isinstance(name, str) and isinstance(schema, Mapping):
            schemas[name] = schema
    return declared(schemas)


# -- validation --

_cache: dict[int, tuple[Mapping[str, Any], Any]] = {}


def _jsonschema_validator(schema: Mapping[str, Any]) -> Any:
    """A compiled ``jsonschema`` validator, or ``None`` when the library is absent.

    Cached by the schema object's identity; the entry holds the schema itself,
    so the identity cannot be reused while cached.
    """
    entry = _cache.get(id(schema))
    if entry is not None and entry[0] is schema:
        return entry[1]
    try:
        module: Any = importlib.import_module("jsonschema")
    except ImportError:
        validator = None
    else:
        cls = module.validators.validator_for(schema, default=module.Draft202012Validator)
        cls.check_schema(schema)
        validator = cls(schema)
    if len(_cache) > 256:
        _cache.clear()
    _cache[id(schema)] = (schema, validator)
    return validator


def _path_text(parts: Iterable[Any]) -> str:
    path = ROOT
    for part in parts:
        path = f"{path}[{part}]" if isinstance(part, int) else child(path, str(part))
    return path


def validate(
    schema: Mapping[str, Any], value: Any, tool: str | None = None, *, lite: bool = False
) -> list[Violation]:
    """The ``schema_violation`` records of ``value``; ``lite`` forces the built-in validator.

    A value beyond :mod:`toolmend._bounds`' depth, or one that holds itself, is
    not checked (no records): a validator would recurse past Python's limit,
    and what toolmend cannot read it leaves alone.
    """
    if prune(value, nodes=_CHECKED) is not value:
        log.info("toolmend.contracts: a value for %s nests too deeply to check", tool)
        return []
    validator = None
    if not lite:
        try:
            validator = _jsonschema_validator(schema)
        except Exception as exc:
            log.warning("toolmend.contracts: schema for %s is invalid: %s", tool, exc)
            return []
    if validator is None:
        found = _Lite(schema).errors(value)
    else:
        found = []
        for e in validator.iter_errors(value):
            found.extend(_from_jsonschema(e))
    found.sort(key=lambda f: (f[0], f[3]))
    return [
        Violation(Code.SCHEMA_VIOLATION, path, cap(expected), cap(observed), cap(detail), tool)
        for path, expected, observed, detail in found[:_MAX_ERRORS]
    ]


def _missing(path: str, required: Any, instance: Any) -> list[_Error]:
    """One record per missing required property, at the property's own path."""
    if not isinstance(required, list | tuple) or not isinstance(instance, Mapping):
        return []
    return [
        (child(path, str(k)), "present", "absent", f"{str(k)!r} is a required property")
        for k in required
        if k not in instance
    ]


def _extra(path: str, allowed: Mapping[str, Any], instance: Any) -> list[_Error]:
    """One record per property the schema does not allow, at that property's path."""
    if not isinstance(instance, Mapping):
        return []
    return [
        (child(path, str(k)), "absent", v, f"additional property {str(k)!r} is not allowed")
        for k, v in instance.items()
        if str(k) not in allowed
    ]


def _from_jsonschema(error: Any) -> list[_Error]:
    path = _path_text(error.absolute_path)
    keyword = str(error.validator)
    if keyword == "required":
        return _missing(path, error.validator_value, error.instance)
    if keyword == "additionalProperties" and error.validator_value is False:
        props = error.schema.get("properties", {}) if isinstance(error.schema, Mapping) else {}
        return _extra(path, props if isinstance(props, Mapping) else {}, error.instance)
    return [(path, {keyword: error.validator_value}, error.instance, error.message)]


_Error = tuple[str, Any, Any, str]

_TYPES: Mapping[str, Callable[[Any], bool]] = {
    "object": lambda v: type_name(v) == "object",
    "array": lambda v: type_name(v) == "array",
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "number": is_number,
    "integer": lambda v: is_number(v) and float(v).is_integer(),
}


class _Lite:
    """The keywords tool output schemas use, for when ``jsonschema`` is not installed."""

    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root

    def errors(self, value: Any) -> list[_Error]:
        out: list[_Error] = []
        self._check(self.root, value, ROOT, out, 0)
        return out

    def _resolve(self, ref: str) -> Any:
        node: Any = self.root
        if not ref.startswith("#"):
            return {}
        for part in ref[1:].split("/")[1:] if ref != "#" else []:
            part = part.replace("~1", "/").replace("~0", "~")
            node = node.get(part, {}) if isinstance(node, Mapping) else {}
        return node

    def _valid(self, schema: Any, value: Any, depth: int) -> bool:
        probe: list[_Error] = []
        self._check(schema, value, ROOT, probe, depth)
        return not probe

    def _check(self, schema: Any, value: Any, path: str, out: list[_Error], depth: int) -> None:
        if depth > 64 or schema is True or not isinstance(schema, Mapping):
            return
        if "$ref" in schema and isinstance(schema["$ref"], str):
            self._check(self._resolve(schema["$ref"]), value, path, out, depth + 1)
        kind = schema.get("type")
        if kind is not None:
            kinds = [kind] if isinstance(kind, str) else list(kind)
            if not any(_TYPES.get(str(k), lambda _: True)(value) for k in kinds):
                out.append((path, {"type": kind}, value, f"{value!r} is not of type {kind!r}"))
                return
        if "enum" in schema and value not in list(schema["enum"]):
            out.append(
                (
                    path,
                    {"enum": schema["enum"]},
                    value,
                    f"{value!r} is not one of {schema['enum']!r}",
                )
            )
        if "const" in schema and value != schema["const"]:
            expected = schema["const"]
            out.append((path, {"const": expected}, value, f"{expected!r} was expected"))
        for key in ("anyOf", "oneOf"):
            options = schema.get(key)
            if isinstance(options, list) and not any(
                self._valid(o, value, depth + 1) for o in options
            ):
                out.append((path, {key: "…"}, value, f"{value!r} is not valid under any of {key}"))
        for sub in schema.get("allOf", ()) if isinstance(schema.get("allOf"), list) else ():
            self._check(sub, value, path, out, depth + 1)
        if is_number(value):
            self._bounds(schema, value, path, out)
        elif isinstance(value, str):
            if "minLength" in schema and len(value) < schema["minLength"]:
                out.append((path, {"minLength": schema["minLength"]}, value, "string too short"))
            if "maxLength" in schema and len(value) > schema["maxLength"]:
                out.append((path, {"maxLength": schema["maxLength"]}, value, "string too long"))
        elif type_name(value) == "object":
            self._object(schema, value, path, out, depth)
        elif type_name(value) == "array":
            items = schema.get("items")
            if isinstance(items, Mapping):
                for i, item in enumerate(value):
                    self._check(items, item, f"{path}[{i}]", out, depth + 1)
            if "minItems" in schema and len(value) < schema["minItems"]:
                out.append((path, {"minItems": schema["minItems"]}, value, "array too short"))
            if "maxItems" in schema and len(value) > schema["maxItems"]:
                out.append((path, {"maxItems": schema["maxItems"]}, value, "array too long"))

    def _bounds(self, schema: Mapping[str, Any], value: Any, path: str, out: list[_Error]) -> None:
        checks: tuple[tuple[str, Callable[[Any], bool], str], ...] = (
            ("minimum", lambda b: bool(value >= b), "is less than the minimum of"),
            ("maximum", lambda b: bool(value <= b), "is greater than the maximum of"),
            (
                "exclusiveMinimum",
                lambda b: bool(value > b),
                "is less than or equal to the minimum of",
            ),
            (
                "exclusiveMaximum",
                lambda b: bool(value < b),
                "is greater than or equal to the maximum of",
            ),
        )
        for key, ok, words in checks:
            bound = schema.get(key)
            if is_number(bound) and not ok(bound):
                out.append((path, {key: bound}, value, f"{value!r} {words} {bound!r}"))

    def _object(
        self, schema: Mapping[str, Any], value: Mapping[Any, Any], path: str, out: list[_Error],
        depth: int,
    ) -> None:  # fmt: skip
        out.extend(_missing(path, schema.get("required"), value))
        props = schema.get("properties", {})
        props = props if isinstance(props, Mapping) else {}
        extra = schema.get("additionalProperties", True)
        if extra is False:
            out.extend(_extra(path, props, value))
        for key, item in value.items():
            name = str(key)
            if name in props:
                self._check(props[name], item, child(path, name), out, depth + 1)
            elif isinstance(extra, Mapping):
                self._check(extra, item, child(path, name), out, depth + 1)
