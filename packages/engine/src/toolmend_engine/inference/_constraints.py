"""Constrained decoding: ``tool_choice`` and response formats as llama.cpp grammars.

A request that forces a call (``tool_choice: "required"`` or a named function)
gets a grammar that admits exactly one well-formed call to an offered tool, in
the form the engine reads back (``<tool_call>{"name": ..., "arguments": ...}
</tool_call>`` under the fallback template, the bare JSON object otherwise),
with arguments that match the tool's ``parameters`` schema as far as llama.cpp's
JSON-schema-to-GBNF converter expresses it.  A JSON response format
(``json_object``, ``json_schema``) gets the schema's grammar; under
``tool_choice: "auto"`` with tools, a call is the other admitted reply, so the
model can still call a tool.  ``tool_choice: "none"`` needs no grammar: the tools
are not rendered and the reply is read as text only.

The grammar text comes from llama.cpp's own converter (``llama_cpp.llama_grammar``,
imported only when a request needs it), so the decoder parses what it produced.
Decoding stays greedy: the chosen token is the most probable one the grammar
admits, so the same request still yields the same tokens.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._template import CALL_CLOSE, CALL_OPEN

__all__ = [
    "FREE",
    "ConstraintError",
    "Decoding",
    "grammar_for",
    "parse_anthropic_tool_choice",
    "parse_response_format",
    "parse_tool_choice",
    "tool_name",
]

ANY_OBJECT: Mapping[str, Any] = {"type": "object"}


class ConstraintError(ValueError):
    """A ``tool_choice`` or response format the engine cannot honour; ``param`` names the field."""

    def __init__(self, message: str, param: str) -> None:
        super().__init__(message)
        self.param = param


@dataclass(frozen=True, slots=True)
class Decoding:
    """What the reply may be: the request's ``tool_choice`` and response format."""

    tool_choice: str = "auto"
    """``auto``, ``none`` or ``required``."""
    function: str | None = None
    """The one function a named ``tool_choice`` forces."""
    schema: Mapping[str, Any] | None = None
    """The JSON schema of a JSON response format (``{"type": "object"}`` for ``json_object``)."""

    @property
    def calls(self) -> bool:
        """Whether the reply may hold calls (not under ``tool_choice: "none"``)."""
        return self.tool_choice != "none"

    @property
    def forced(self) -> bool:
        """Whether the request forces a tool call (a named function, or ``required``)."""
        return self.function is not None or self.tool_choice == "required"


FREE = Decoding()
"""No constraint: ``tool_choice: "auto"`` and plain text."""


def tool_name(tool: Any) -> str | None:
    """The function name of a chat-format tool (``{"type": "function", "function": {...}}``)."""
    function = tool.get("function") if isinstance(tool, Mapping) else None
    name = function.get("name") if isinstance(function, Mapping) else None
    return name if isinstance(name, str) else None


def parse_tool_choice(value: Any, tools: Sequence[Any], *, flat: bool) -> Decoding:
    """``tool_choice`` of a chat request, or of a Responses request when ``flat``.

    A named choice is ``{"type": "function", "function": {"name": ...}}`` in chat
    and ``{"type": "function", "name": ...}`` in Responses.
    """
    names = [tool_name(t) for t in tools]
    if value is None or value == "auto":
        return Decoding()
    if value in ("none", "required"):
        if value == "required" and not tools:
            raise ConstraintError("tool_choice 'required' needs at least one tool", "tool_choice")
        return Decoding(tool_choice=value)
    if isinstance(value, Mapping) and value.get("type") == "function":
        holder = value if flat else value.get("function")
        name = holder.get("name") if isinstance(holder, Mapping) else None
        if not isinstance(name, str):
            shape = "{'type': 'function', 'name': ...}"
            if not flat:
                shape = "{'type': 'function', 'function': {'name': ...}}"
            raise ConstraintError(f"a named tool_choice must be {shape}", "tool_choice")
        if name not in names:
            raise ConstraintError(
                f"tool_choice names {name!r}, which is not among the tools", "tool_choice"
            )
        return Decoding(tool_choice="required", function=name)
    raise ConstraintError(
        "tool_choice must be 'auto', 'none', 'required' or a named function", "tool_choice"
    )


def parse_anthropic_tool_choice(value: Any, tools: Sequence[Any]) -> Decoding:
    """``tool_choice`` of an Anthropic Messages request, on the same grammars as chat's.

    ``{"type": "any"}`` is chat's ``required`` and ``{"type": "tool", "name": ...}`` a
    named function; ``auto`` (or none given) admits text or a call, and ``none`` is
    handled by leaving the tools out.  ``tools`` are already in chat format.
    ``disable_parallel_tool_use`` is accepted: the engine's replies hold one call.
    """
    if value is None:
        return Decoding()
    kind = value.get("type") if isinstance(value, Mapping) else None
    if kind in ("auto", "none"):
        return Decoding()
    if kind == "any":
        if not tools:
            raise ConstraintError(
                "tool_choice of type 'any' needs at least one tool", "tool_choice"
            )
        return Decoding(tool_choice="required")
    if kind == "tool":
        assert isinstance(value, Mapping)
        name = value.get("name")
        if not isinstance(name, str):
            raise ConstraintError(
                "tool_choice of type 'tool' must name it: {'type': 'tool', 'name': ...}",
                "tool_choice.name",
            )
        if name not in [tool_name(t) for t in tools]:
            raise ConstraintError(
                f"tool_choice names {name!r}, which is not among the tools", "tool_choice.name"
            )
        return Decoding(tool_choice="required", function=name)
    raise ConstraintError(
        "tool_choice must be an object of type 'auto', 'any', 'tool' or 'none'", "tool_choice"
    )


def parse_response_format(value: Any, param: str, *, flat: bool) -> Mapping[str, Any] | None:
    """The JSON schema a response format asks for; ``None`` for plain text.

    Chat puts the schema under ``json_schema.schema``; Responses (``text.format``,
    ``flat``) puts ``name`` and ``schema`` on the format itself.
    """
    if value is None:
        return None
    kind = value.get("type") if isinstance(value, Mapping) else None
    if kind == "text":
        return None
    if kind == "json_object":
        return ANY_OBJECT
    if kind == "json_schema":
        holder = value if flat else value.get("json_schema")
        schema = holder.get("schema") if isinstance(holder, Mapping) else None
        if schema is None:
            return ANY_OBJECT
        if not isinstance(schema, Mapping):
            raise ConstraintError("the json_schema's schema must be an object", param)
        return schema
    raise ConstraintError(f"{param}.type must be 'text', 'json_object' or 'json_schema'", param)


def _converter() -> Any:
    grammar = importlib.import_module("llama_cpp.llama_grammar")
    return grammar.SchemaConverter(
        prop_order={"name": 0, "arguments": 1},
        allow_fetch=False,
        dotall=False,
        raw_pattern=False,
    )


def _call_schema(tool: Any) -> dict[str, Any]:
    function = tool["function"]
    parameters = function.get("parameters")
    if not isinstance(parameters, Mapping) or not parameters:
        parameters = ANY_OBJECT
    return {
        "type": "object",
        "properties": {"name": {"const": function["name"]}, "arguments": parameters},
        "required": ["name", "arguments"],
        "additionalProperties": False,
    }


def _visit(converter: Any, schema: Mapping[str, Any], rule: str, param: str) -> str:
    try:
        resolved = converter.resolve_refs(json.loads(json.dumps(schema)), "request")
        return str(converter.visit(resolved, rule))
    except Exception as exc:  # the converter raises bare exceptions for unsupported schemas
        message = f"{param}: cannot turn the schema into a grammar: {exc}"
        raise ConstraintError(message, param) from None


def grammar_for(
    decoding: Decoding,
    tools: Sequence[Any],
    opening: str = CALL_OPEN,
    *,
    format_param: str = "response_format",
) -> str | None:
    """The GBNF grammar that constrains the reply, or ``None`` when nothing does.

    ``opening`` is the template's call opening: the fallback's ``<tool_call>``
    wraps the call in its tags; other templates get the bare JSON call, which
    the engine reads as a call when it names an offered tool.
    """
    if not decoding.calls:
        tools = ()
    offered = [t for t in tools if tool_name(t) is not None]
    if decoding.function is not None:
        offered = [t for t in offered if tool_name(t) == decoding.function]
    if not decoding.forced and decoding.schema is None:
        return None
    converter = _converter()
    alternatives = []
    if offered and (decoding.forced or decoding.tool_choice == "auto"):
        call_schema = (
            _call_schema(offered[0])
            if len(offered) == 1
            else {"anyOf": [_call_schema(t) for t in offered]}
        )
        call = _visit(converter, call_schema, "call", "tools")
        tagged = opening == CALL_OPEN
        alternatives.append(
            f"{json.dumps(CALL_OPEN)} {call} {json.dumps(CALL_CLOSE)}" if tagged else call
        )
    if not decoding.forced and decoding.schema is not None:
        alternatives.append(_visit(converter, decoding.schema, "reply", format_param))
    if not alternatives:
        return None
    rules = str(converter.format_grammar())
    return f"root ::= {' | '.join(alternatives)}\n{rules}\n"
