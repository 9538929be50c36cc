"""Render a chat conversation to the exact prompt text the model reads.

The GGUF's own chat template is used as is when it can render tools and tool
results (it mentions both ``tools`` and ``tool_calls``).  Otherwise, as for the
embedded SmolLM2, a documented fallback turns tools into plain messages that any
template can render: the tool schemas go into the system message, each call is
written in the assistant turn as
``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``, and each result is
a message in the ``tool`` role.  A GGUF without a template gets ChatML.

One rendering path serves generation, token counts, the ``render`` command and
the ``/v1/render`` endpoint, so what a client inspects is what the model read.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import jinja2
import jinja2.sandbox

__all__ = [
    "CALL_CLOSE",
    "CALL_OPEN",
    "CHATML",
    "ChatTemplate",
    "RenderError",
    "content_text",
    "format_call",
    "tools_block",
]

CALL_OPEN = "<tool_call>"
CALL_CLOSE = "</tool_call>"

CHATML = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)

FIXED_DATE = datetime(2026, 1, 1)
"""Templates that print today's date get a fixed one: the prompt must not change by the day."""


class RenderError(ValueError):
    """The conversation cannot be rendered (bad shape or unsupported content)."""


def content_text(content: Any, where: str) -> str:
    """Text of a message's content: a string, ``None`` or a list of text parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
                texts.append(part["text"])
            else:
                kind = part.get("type") if isinstance(part, Mapping) else type(part).__name__
                raise RenderError(f"{where}: content part of type {kind!r} is not supported")
        return "\n".join(texts)
    raise RenderError(f"{where}: content must be a string or a list of text parts")


def _arguments(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return {} if raw is None else raw


def format_call(name: str, arguments: Any) -> str:
    """One call in the fallback format, as the model is asked to write it."""
    body = json.dumps({"name": name, "arguments": _arguments(arguments)}, ensure_ascii=False)
    return f"{CALL_OPEN}{body}{CALL_CLOSE}"


def tools_block(tools: Sequence[Any]) -> str:
    """The system text that describes the tools in the fallback format."""
    lines = "\n".join(json.dumps(tool, ensure_ascii=False) for tool in tools)
    return (
        "You can call tools. Their definitions, one JSON object per line:\n"
        f"<tools>\n{lines}\n</tools>\n"
        f'To call a tool, reply with {CALL_OPEN}{{"name": "tool name", "arguments": '
        f"{{...}}}}{CALL_CLOSE}. Otherwise, reply to the user in plain text."
    )


def _raise(message: str) -> None:
    raise jinja2.TemplateError(message)


def _tojson(value: Any, indent: int | None = None, **_: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=indent)


@functools.lru_cache(maxsize=8)
def _compile(source: str) -> jinja2.Template:
    env = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = _raise
    env.globals["strftime_now"] = FIXED_DATE.strftime
    env.filters["tojson"] = _tojson
    return env.from_string(source)


def _calls_of(message: Mapping[str, Any], where: str) -> list[tuple[str, Any, str | None]]:
    calls = message.get("tool_calls")
    if calls is None:
        return []
    if not isinstance(calls, list):
        raise RenderError(f"{where}.tool_calls must be a list")
    out = []
    for j, call in enumerate(calls):
        call = call if isinstance(call, Mapping) else {}
        function = call.get("function")
        function = function if isinstance(function, Mapping) else {}
        name = function.get("name")
        if not isinstance(name, str):
            raise RenderError(f"{where}.tool_calls[{j}].function.name must be a string")
        call_id = call.get("id")
        out.append((name, function.get("arguments"), call_id if isinstance(call_id, str) else None))
    return out


@dataclass(frozen=True, slots=True)
class ChatTemplate:
    """A model's chat template with the tool fallback; renders to prompt text."""

    source: str
    bos_text: str = ""
    eos_text: str = ""
    native_tools: bool = False

    @classmethod
    def for_model(
        cls, template: str | None, bos_text: str = "", eos_text: str = ""
    ) -> ChatTemplate:
        source = template or CHATML
        native = "tools" in source and "tool_calls" in source
        return cls(source, bos_text, eos_text, native)

    @property
    def call_opening(self) -> str:
        """The text that starts a tool call under this template (for the decision log-odds)."""
        if not self.native_tools or CALL_OPEN in self.source:
            return CALL_OPEN
        if "[TOOL_CALLS]" in self.source:
            return "[TOOL_CALLS]"
        if "<|python_tag|>" in self.source or '{"name"' in self.source:
            return '{"name":'
        return CALL_OPEN

    def render(
        self,
        messages: Sequence[Any],
        tools: Sequence[Any] | None = None,
        *,
        add_generation_prompt: bool = True,
    ) -> str:
        """The prompt text; raises ``RenderError`` for a conversation it cannot render."""
        if self.native_tools:
            prepared = self._native(messages)
        else:
            prepared = self._fallback(messages, tools or ())
        try:
            return _compile(self.source).render(
                messages=prepared,
                tools=list(tools) if tools and self.native_tools else None,
                add_generation_prompt=add_generation_prompt,
                bos_token=self.bos_text,
                eos_token=self.eos_text,
            )
        except jinja2.TemplateError as exc:
            raise RenderError(f"chat template: {exc}") from exc

    def _native(self, messages: Sequence[Any]) -> list[dict[str, Any]]:
        out = []
        for i, message in enumerate(messages):
            where = f"messages[{i}]"
            if not isinstance(message, Mapping):
                raise RenderError(f"{where} must be an object")
            new = dict(message)
            new["content"] = content_text(message.get("content"), where)
            calls = _calls_of(message, where)
            if calls:
                new["tool_calls"] = [
                    {
                        "id": cid,
                        "type": "function",
                        "function": {"name": name, "arguments": _arguments(args)},
                    }
                    for name, args, cid in calls
                ]
            out.append(new)
        return out

    def _fallback(self, messages: Sequence[Any], tools: Sequence[Any]) -> list[dict[str, str]]:
        out: list[dict[str, str]] = []
        for i, message in enumerate(messages):
            where = f"messages[{i}]"
            if not isinstance(message, Mapping):
                raise RenderError(f"{where} must be an object")
            role = message.get("role")
            text = content_text(message.get("content"), where)
            if role == "developer":
                role = "system"
            if role == "assistant":
                calls = "\n".join(format_call(n, a) for n, a, _ in _calls_of(message, where))
                text = f"{text}\n{calls}" if text and calls else text or calls
            if not isinstance(role, str):
                raise RenderError(f"{where}.role must be a string")
            out.append({"role": role, "content": text})
        if tools:
            block = tools_block(tools)
            if out and out[0]["role"] == "system":
                out[0] = {"role": "system", "content": f"{out[0]['content']}\n\n{block}"}
            else:
                out.insert(0, {"role": "system", "content": block})
        return out
