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

Only the template's own scaffolding may become special tokens.  Every piece of
content (message text, names and ids, tool-call arguments, tool schemas) enters
the template as an opaque marker and is put back after rendering as a
:class:`Part` marked ``content``, which the engine tokenizes as plain text: a
tool result holding ``<|im_end|>`` cannot open a turn.  Templates that trim
content still trim it (a marker carries the content's outer white space);
templates that inspect content (``'</think>' in content``) see the marker, not
the text.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import jinja2
import jinja2.sandbox

__all__ = [
    "CALL_CLOSE",
    "CALL_OPEN",
    "CHATML",
    "ROLES",
    "ChatTemplate",
    "Part",
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


ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function", "ipython"})
"""Roles a template may print: a role is scaffolding, so it must be one of these."""

_MARK = re.compile("\ue000(\\d+)\ue001")
_SCHEMA_TYPES = frozenset(
    {"string", "number", "integer", "boolean", "object", "array", "null", "function"}
)
_NAMED_MAPS = frozenset({"properties", "$defs", "definitions", "patternProperties"})


class RenderError(ValueError):
    """The conversation cannot be rendered (bad shape or unsupported content)."""


@dataclass(frozen=True, slots=True)
class Part:
    """A run of prompt text: scaffolding from the template, or content (plain text only)."""

    text: str
    content: bool


@dataclass(slots=True)
class _Marks:
    """Content replaced by markers before rendering, and put back after."""

    texts: list[str] = field(default_factory=list)

    def text(self, value: str) -> str:
        """A marker for message text; its outer white space stays outside for ``trim``."""
        core = value.strip()
        if not core:
            return value
        start = value.index(core[0])
        self.texts.append(core)
        return f"{value[:start]}\ue000{len(self.texts) - 1}\ue001{value[start + len(core) :]}"

    def json_string(self, value: str) -> str:
        """A marker for a string inside JSON a template prints with ``tojson``."""
        if not value:
            return value
        self.texts.append(json.dumps(value, ensure_ascii=False)[1:-1])
        return f"\ue000{len(self.texts) - 1}\ue001"

    def data(self, value: Any) -> Any:
        """Arguments: every string and key is content."""
        if isinstance(value, str):
            return self.json_string(value)
        if isinstance(value, Mapping):
            return {self.json_string(str(k)): self.data(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.data(v) for v in value]
        return value

    def schema(self, value: Any, key: str | None = None) -> Any:
        """Tool definitions: structure keys and schema types stay; names and text are content."""
        if isinstance(value, str):
            if key == "type" and value in _SCHEMA_TYPES:
                return value
            return self.json_string(value)
        if isinstance(value, Mapping):
            named = key in _NAMED_MAPS
            return {
                (self.json_string(str(k)) if named or not _plain_key(k) else k): self.schema(
                    v, None if named else str(k)
                )
                for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            return [self.schema(v, key) for v in value]
        return value

    def parts(self, rendered: str) -> tuple[Part, ...]:
        out: list[Part] = []
        at = 0
        for match in _MARK.finditer(rendered):
            index = int(match.group(1))
            if index >= len(self.texts):
                raise RenderError("chat template: content markers were altered")
            _add(out, rendered[at : match.start()], False)
            _add(out, self.texts[index], True)
            at = match.end()
        _add(out, rendered[at:], False)
        return tuple(out)


def _plain_key(key: object) -> bool:
    return (
        isinstance(key, str) and key.replace("_", "").replace("$", "").isalnum() and len(key) < 40
    )


def _add(parts: list[Part], text: str, content: bool) -> None:
    if not text:
        return
    if parts and parts[-1].content == content:
        parts[-1] = Part(parts[-1].text + text, content)
    else:
        parts.append(Part(text, content))


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


def _role(message: Mapping[str, Any], where: str) -> str:
    role = message.get("role")
    if not isinstance(role, str) or role not in ROLES:
        raise RenderError(f"{where}.role must be one of {', '.join(sorted(ROLES))}")
    return role


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
        """The template for a model: its own chat template, else ChatML."""
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
        parts = self.render_parts(messages, tools, add_generation_prompt=add_generation_prompt)
        return "".join(part.text for part in parts)

    def render_parts(
        self,
        messages: Sequence[Any],
        tools: Sequence[Any] | None = None,
        *,
        add_generation_prompt: bool = True,
    ) -> tuple[Part, ...]:
        """The prompt as scaffolding and content parts (see the module doc)."""
        marks = _Marks()
        if self.native_tools:
            prepared = self._native(messages, marks)
            shown_tools = [marks.schema(tool) for tool in tools] if tools else None
        else:
            prepared = self._fallback(messages, tools or (), marks)
            shown_tools = None
        try:
            rendered = _compile(self.source).render(
                messages=prepared,
                tools=shown_tools,
                add_generation_prompt=add_generation_prompt,
                bos_token=self.bos_text,
                eos_token=self.eos_text,
            )
        except jinja2.TemplateError as exc:
            raise RenderError(f"chat template: {exc}") from exc
        return marks.parts(rendered)

    def _native(self, messages: Sequence[Any], marks: _Marks) -> list[dict[str, Any]]:
        out = []
        for i, message in enumerate(messages):
            where = f"messages[{i}]"
            if not isinstance(message, Mapping):
                raise RenderError(f"{where} must be an object")
            new: dict[str, Any] = {
                key: marks.text(value) if isinstance(value, str) else value
                for key, value in message.items()
                if key not in ("role", "tool_calls")
            }
            new["role"] = _role(message, where)
            new["content"] = marks.text(content_text(message.get("content"), where))
            calls = _calls_of(message, where)
            if calls:
                new["tool_calls"] = [
                    {
                        "id": None if cid is None else marks.json_string(cid),
                        "type": "function",
                        "function": {
                            "name": marks.json_string(name),
                            "arguments": marks.data(_arguments(args)),
                        },
                    }
                    for name, args, cid in calls
                ]
            out.append(new)
        return out

    def _fallback(
        self, messages: Sequence[Any], tools: Sequence[Any], marks: _Marks
    ) -> list[dict[str, str]]:
        out: list[dict[str, str]] = []
        for i, message in enumerate(messages):
            where = f"messages[{i}]"
            if not isinstance(message, Mapping):
                raise RenderError(f"{where} must be an object")
            role = _role(message, where)
            text = content_text(message.get("content"), where)
            if role == "developer":
                role = "system"
            if role == "assistant":
                calls = "\n".join(format_call(n, a) for n, a, _ in _calls_of(message, where))
                text = f"{text}\n{calls}" if text and calls else text or calls
            out.append({"role": role, "content": text})
        if tools:
            block = tools_block(tools)
            if out and out[0]["role"] == "system":
                out[0] = {"role": "system", "content": f"{out[0]['content']}\n\n{block}"}
            else:
                out.insert(0, {"role": "system", "content": block})
        return [{"role": m["role"], "content": marks.text(m["content"])} for m in out]
