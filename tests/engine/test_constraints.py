"""tool_choice and response formats: validation and the grammars they become."""

from __future__ import annotations

from typing import Any

import pytest
from engine_fakes import TOOLS

from toolmend_engine.http._requests import BadRequest, parse_chat
from toolmend_engine.inference._constraints import (
    ANY_OBJECT,
    ConstraintError,
    Decoding,
    grammar_for,
    parse_response_format,
    parse_tool_choice,
)

pytest.importorskip("llama_cpp")

CALL_RULES = (
    'call ::= "{" space call-name-kv "," space call-arguments-kv "}" space\n'
    'call-arguments ::= "{" space  (call-arguments-order-id-kv )? "}" space\n'
    'call-arguments-kv ::= "\\"arguments\\"" space ":" space call-arguments\n'
    'call-arguments-order-id-kv ::= "\\"order_id\\"" space ":" space string\n'
    'call-name ::= "\\"get_order\\""\n'
    'call-name-kv ::= "\\"name\\"" space ":" space call-name\n'
    'char ::= [^"\\\\] | "\\\\" (["\\\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] '
    "[0-9a-fA-F])\n"
    'space ::= " "?\n'
    'string ::= "\\"" char* "\\"" space\n'
)
SECOND: dict[str, Any] = {
    "type": "function",
    "function": {"name": "ping", "parameters": {"type": "object", "properties": {}}},
}


def test_a_forced_call_is_one_tagged_call_with_the_tools_arguments() -> None:
    forced = parse_tool_choice("required", TOOLS, flat=False)
    assert forced == Decoding(tool_choice="required")
    assert grammar_for(forced, TOOLS) == f'root ::= "<tool_call>" call "</tool_call>"\n{CALL_RULES}'
    named = parse_tool_choice(
        {"type": "function", "name": "get_order"}, [*TOOLS, SECOND], flat=True
    )
    assert named == Decoding(tool_choice="required", function="get_order")
    assert grammar_for(named, [*TOOLS, SECOND]) == grammar_for(forced, TOOLS)


def test_required_with_several_tools_admits_each_and_other_templates_get_bare_json() -> None:
    grammar = grammar_for(Decoding(tool_choice="required"), [*TOOLS, SECOND], '{"name":')
    assert grammar is not None
    assert grammar.startswith("root ::= call\ncall ::= call-0 | call-1\n")
    assert 'call-1-name ::= "\\"ping\\""' in grammar


def test_response_formats() -> None:
    assert parse_response_format(None, "response_format", flat=False) is None
    assert parse_response_format({"type": "text"}, "response_format", flat=False) is None
    assert parse_response_format({"type": "json_object"}, "text.format", flat=True) == ANY_OBJECT
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    chat = {"type": "json_schema", "json_schema": {"name": "n", "schema": schema, "strict": True}}
    assert parse_response_format(chat, "response_format", flat=False) == schema
    flat = {"type": "json_schema", "name": "n", "schema": schema}
    assert parse_response_format(flat, "text.format", flat=True) == schema
    only = grammar_for(Decoding(schema=schema), [])
    assert only is not None
    assert only.startswith("root ::= reply\n")
    assert 'reply ::= "{" space reply-n-kv "}" space\n' in only
    with_tools = grammar_for(Decoding(schema=schema), TOOLS)
    assert with_tools is not None
    assert with_tools.startswith('root ::= "<tool_call>" call "</tool_call>" | reply\n')
    assert grammar_for(Decoding(tool_choice="none", schema=schema), TOOLS) == only
    assert grammar_for(Decoding(), TOOLS) is None
    assert grammar_for(Decoding(tool_choice="none"), TOOLS) is None


@pytest.mark.parametrize(
    ("body", "message", "param"),
    [
        (
            {"tool_choice": "required"},
            "tool_choice 'required' needs at least one tool",
            "tool_choice",
        ),
        (
            {"tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "nope"}}},
            "tool_choice names 'nope', which is not among the tools",
            "tool_choice",
        ),
        (
            {"tools": TOOLS, "tool_choice": {"type": "function", "name": "get_order"}},
            "a named tool_choice must be {'type': 'function', 'function': {'name': ...}}",
            "tool_choice",
        ),
        (
            {"tools": TOOLS, "tool_choice": "sometimes"},
            "tool_choice must be 'auto', 'none', 'required' or a named function",
            "tool_choice",
        ),
        (
            {"response_format": {"type": "xml"}},
            "response_format.type must be 'text', 'json_object' or 'json_schema'",
            "response_format",
        ),
        (
            {"response_format": {"type": "json_schema", "json_schema": {"schema": []}}},
            "the json_schema's schema must be an object",
            "response_format",
        ),
    ],
)
def test_chat_constraints_are_validated(body: dict[str, Any], message: str, param: str) -> None:
    with pytest.raises(BadRequest) as info:
        parse_chat({"messages": [{"role": "user", "content": "x"}], **body})
    assert (info.value.message, info.value.param) == (message, param)


def test_a_schema_the_converter_cannot_express_is_a_constraint_error() -> None:
    with pytest.raises(ConstraintError) as info:
        grammar_for(Decoding(schema={"$ref": "https://example.com/s.json"}), [])
    assert info.value.param == "response_format"
    assert str(info.value).startswith("response_format: cannot turn the schema into a grammar: ")
