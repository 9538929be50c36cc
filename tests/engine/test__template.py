"""The rendered prompt: the fallback for templates without tools, exactly."""

from __future__ import annotations

import pytest
from engine_fakes import FAILED

from toolmend_engine.inference._template import (
    CHATML,
    ChatTemplate,
    RenderError,
    format_call,
    tools_block,
)

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_order",
            "description": "Look up an order.",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
        },
    }
]
TOOL_LINE = (
    '{"type": "function", "function": {"name": "get_order", "description": "Look up an order.", '
    '"parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}}}}'
)
CONVERSATION = FAILED

DEFAULT_SYSTEM = (
    "{% for m in messages %}{% if loop.first and m['role'] != 'system' %}"
    "{{ '<s>system\\nDefault persona</s>\\n' }}{% endif %}"
    "{{ '<s>' + m['role'] + '\\n' + m['content'] + '</s>\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<s>assistant\\n' }}{% endif %}"
)


def test_tools_block_text() -> None:
    assert tools_block(TOOLS) == (
        "You can call tools. Their definitions, one JSON object per line:\n"
        f"<tools>\n{TOOL_LINE}\n</tools>\n"
        'To call a tool, reply with <tool_call>{"name": "tool name", "arguments": {...}}'
        "</tool_call>. Otherwise, reply to the user in plain text."
    )


def test_format_call_parses_string_arguments() -> None:
    assert format_call("get_order", '{"order_id": "ORD-1"}') == (
        '<tool_call>{"name": "get_order", "arguments": {"order_id": "ORD-1"}}</tool_call>'
    )
    assert (
        format_call("f", "not json")
        == '<tool_call>{"name": "f", "arguments": "not json"}</tool_call>'
    )
    assert format_call("f", None) == '<tool_call>{"name": "f", "arguments": {}}</tool_call>'


def test_fallback_renders_tools_calls_and_results_in_chatml() -> None:
    template = ChatTemplate.for_model(None)
    assert template.source == CHATML
    assert not template.native_tools
    assert template.render(CONVERSATION, TOOLS) == (
        f"<|im_start|>system\n{tools_block(TOOLS)}<|im_end|>\n"
        "<|im_start|>user\nTotal of ORD-1?<|im_end|>\n"
        '<|im_start|>assistant\n<tool_call>{"name": "get_order", '
        '"arguments": {"order_id": "ORD-1"}}'
        "</tool_call><|im_end|>\n"
        "<|im_start|>tool\nError: 503 Service Unavailable<|im_end|>\n"
        "<|im_start|>assistant\n"
    )


def test_fallback_joins_the_client_system_message_and_keeps_assistant_text() -> None:
    template = ChatTemplate.for_model(DEFAULT_SYSTEM)
    messages = [
        {"role": "developer", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
        {**CONVERSATION[1], "content": "Checking."},
    ]
    assert template.render(messages, TOOLS, add_generation_prompt=False) == (
        f"<s>system\nBe brief.\n\n{tools_block(TOOLS)}</s>\n"
        "<s>user\na\nb</s>\n"
        '<s>assistant\nChecking.\n<tool_call>{"name": "get_order", '
        '"arguments": {"order_id": "ORD-1"}}'
        "</tool_call></s>\n"
    )


def test_without_tools_the_gguf_template_renders_the_plain_conversation() -> None:
    template = ChatTemplate.for_model(DEFAULT_SYSTEM)
    assert template.render([{"role": "user", "content": "hi"}]) == (
        "<s>system\nDefault persona</s>\n<s>user\nhi</s>\n<s>assistant\n"
    )


def test_a_template_with_tools_is_used_natively() -> None:
    source = (
        "{% if tools %}{{ 'TOOLS:' + (tools | map(attribute='function') "
        "| map(attribute='name') | join(',')) + '\\n' }}"
        "{% endif %}{% for m in messages %}{{ m['role'] }}:{{ m['content'] }}"
        "{% for c in m.get('tool_calls', []) %}"
        "[{{ c.function.name }} {{ c.function.arguments | tojson }}]"
        "{% endfor %}{{ '\\n' }}{% endfor %}"
    )
    template = ChatTemplate.for_model(source)
    assert template.native_tools
    assert template.render(CONVERSATION, TOOLS, add_generation_prompt=False) == (
        "TOOLS:get_order\nuser:Total of ORD-1?\n"
        'assistant:[get_order {"order_id": "ORD-1"}]\n'
        "tool:Error: 503 Service Unavailable\n"
    )


@pytest.mark.parametrize(
    ("messages", "message"),
    [
        (
            [{"role": "user", "content": [{"type": "image_url"}]}],
            "messages[0]: content part of type 'image_url' is not supported",
        ),
        (["text"], "messages[0] must be an object"),
        (
            [{"role": "user", "content": 5}],
            "messages[0]: content must be a string or a list of text parts",
        ),
        (
            [{"role": "assistant", "tool_calls": [{"function": {}}]}],
            "messages[0].tool_calls[0].function.name must be a string",
        ),
    ],
)
def test_render_errors_name_the_message(messages: list[object], message: str) -> None:
    with pytest.raises(RenderError) as info:
        ChatTemplate.for_model(None).render(messages)
    assert str(info.value) == message


def test_template_errors_become_render_errors() -> None:
    template = ChatTemplate.for_model("{{ raise_exception('no system messages') }}")
    with pytest.raises(RenderError) as info:
        template.render([{"role": "user", "content": "x"}])
    assert str(info.value) == "chat template: no system messages"
