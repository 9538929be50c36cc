"""Thin converters between provider message formats and the rewriter's view.

The rewriter (``forms``) plans edits on a neutral view of the decision step; a
codec builds that view from native messages and applies the edits back, so each
untouched message comes back as the very same object.  Views are built from the
end of the conversation only: the work is bounded by the decision step, not by
the length of the history.

The one whole-history reader is here too: :meth:`Codec.results` lists every tool
result with the call it answers, and :meth:`Codec.replace` returns the messages
with some results' text replaced (copies; the rest are the same objects).  They
read plain dicts and message objects alike (a LangChain ``AIMessage`` is
``type="ai"`` with ``tool_calls`` of ``name``/``args``), so that collapsing,
pile-up counting and the loop guard's replay share one reader per format.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

__all__ = [
    "CODECS",
    "Call",
    "Codec",
    "Edits",
    "Entry",
    "NotUnderstood",
    "Result",
    "View",
]


class NotUnderstood(ValueError):
    """The conversation is not in a shape this codec can read; it is left alone."""


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call in a conversation, in any provider's format."""

    id: str | None
    name: str | None
    arguments: Any


@dataclass(frozen=True, slots=True)
class Entry:
    """One message-like unit: a user turn, an assistant turn, a tool result, or other."""

    role: str
    loc: Hashable
    position: int
    calls: tuple[Call, ...] = ()
    has_content: bool = False
    call_id: str | None = None
    name: str | None = None
    content: Any = None
    is_error: bool | None = None
    status: str | None = None


@dataclass(frozen=True, slots=True)
class View:
    """The entries from the last assistant turn to the end, and the entry before it."""

    tail: tuple[Entry, ...]
    before: Entry | None


@dataclass(slots=True)
class Edits:
    """What a rewrite changes, kept apart from the messages until a codec applies it."""

    appends: dict[Hashable, str] = field(default_factory=dict)
    inserts: list[tuple[Entry | None, str]] = field(default_factory=list)
    removed_calls: dict[Hashable, set[str]] = field(default_factory=dict)
    removed: set[Hashable] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.appends or self.inserts or self.removed_calls or self.removed)


@dataclass(frozen=True, slots=True)
class Result:
    """One tool result anywhere in the conversation, with the call it answers.

    ``loc`` is what :meth:`Codec.replace` takes; ``position`` the index of the
    message that holds it.  ``name`` and ``arguments`` come from the call when
    the result does not carry them.  The arguments are kept as the call wrote
    them and parsed only when read: the whole-history readers need names and
    texts, and parsing every earlier call's JSON on every request was most of
    their cost.
    """

    loc: Hashable
    position: int
    call_id: str | None
    name: str | None
    raw_arguments: Any
    content: Any
    is_error: bool | None = None
    status: str | None = None

    @property
    def arguments(self) -> Any:
        """The call's arguments, as a mapping when they are JSON text of one."""
        return parse_arguments(self.raw_arguments)


class Codec(Protocol):
    """Reads one message format into a :class:`View` and writes :class:`Edits` back."""

    def view(self, messages: Any) -> View:
        """The calls and results of ``messages``, in the format's own order."""

    def apply(self, messages: Any, view: View, edits: Edits) -> list[Any]:
        """A new message list with ``edits`` applied; ``messages`` is left as it is."""

    def results(self, messages: Any) -> tuple[Result, ...]:
        """Every tool result of ``messages`` with its call, in the format's own order."""

    def replace(self, messages: Any, texts: Mapping[Hashable, str]) -> list[Any]:
        """A new message list with the results' texts replaced by call id."""


def _get(obj: Any, key: str) -> Any:
    """A field of a dict or an attribute of a message object."""
    if type(obj) is dict or isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


def _with_field(message: Any, key: str, value: Any) -> Any:
    """A copy of a message (dict or object, e.g. a pydantic model) with one field set."""
    if isinstance(message, Mapping):
        return {**message, key: value}
    model_copy = getattr(message, "model_copy", None)
    if callable(model_copy):
        return model_copy(update={key: value})
    new = copy.copy(message)
    setattr(new, key, value)
    return new


def _flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _require_sequence(messages: Any) -> Sequence[Any]:
    if not isinstance(messages, Sequence) or isinstance(messages, str | bytes):
        raise NotUnderstood("messages is not a list")
    return messages


def parse_arguments(raw: Any) -> Any:
    """Tool-call arguments as a mapping when they are JSON text of one, else as given."""
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):  # nested deeper than the parser goes: as written
            return raw
        return value if isinstance(value, Mapping) else raw
    return raw


def _nonempty(content: Any) -> bool:
    if isinstance(content, str):
        return content != ""
    if isinstance(content, Sequence):
        return len(content) > 0
    return content is not None


def append_text(content: Any, text: str, part_type: str = "text") -> Any:
    """Append to string content, or to the last text part of a part list."""
    if content is None:
        return text
    if isinstance(content, str):
        return content + text
    if isinstance(content, list):
        parts = list(content)
        last = parts[-1] if parts else None
        if (
            isinstance(last, Mapping)
            and last.get("type") == part_type
            and isinstance(last.get("text"), str)
        ):
            parts[-1] = {**last, "text": last["text"] + text}
        else:
            parts.append({"type": part_type, "text": text})
        return parts
    raise NotUnderstood(f"content of type {type(content).__name__}")


def _require_list(messages: Any) -> list[Any]:
    if not isinstance(messages, list):
        raise NotUnderstood("messages is not a list")
    return messages


def _rebuilt(messages: list[Any], start: int, tail: list[Any]) -> list[Any]:
    return messages[:start] + tail


# -- OpenAI Chat Completions --------------------------------------------------------


class OpenAIChat:
    """``{"role": "assistant", "tool_calls": [...]}`` then ``{"role": "tool", ...}``."""

    def _entry(self, message: Any, i: int) -> Entry:
        if not isinstance(message, Mapping):
            return Entry("other", i, i)
        role = message.get("role")
        if role == "assistant":
            calls = []
            raw_calls = message.get("tool_calls") or []
            if not isinstance(raw_calls, list):
                return Entry("other", i, i)
            for call in raw_calls:
                if not isinstance(call, Mapping):
                    return Entry("other", i, i)
                function = call.get("function")
                function = function if isinstance(function, Mapping) else {}
                calls.append(
                    Call(
                        _str_or_none(call.get("id")),
                        _str_or_none(function.get("name")),
                        parse_arguments(function.get("arguments")),
                    )
                )
            return Entry(
                "assistant", i, i, tuple(calls), has_content=_nonempty(message.get("content"))
            )
        if role == "tool":
            return Entry(
                "tool",
                i,
                i,
                call_id=_str_or_none(message.get("tool_call_id")),
                name=_str_or_none(message.get("name")),
                content=message.get("content"),
                is_error=message.get("is_error")
                if isinstance(message.get("is_error"), bool)
                else None,
                status=_str_or_none(message.get("status")),
            )
        if role == "user":
            return Entry("user", i, i, content=message.get("content"))
        if role in ("system", "developer"):
            return Entry("system", i, i)
        return Entry("other", i, i)

    def view(self, messages: Any) -> View:
        messages = _require_list(messages)
        for a in range(len(messages) - 1, -1, -1):
            message = messages[a]
            if isinstance(message, Mapping) and message.get("role") == "assistant":
                tail = tuple(self._entry(messages[i], i) for i in range(a, len(messages)))
                before = self._entry(messages[a - 1], a - 1) if a > 0 else None
                return View(tail, before)
        return View((), None)

    def apply(self, messages: Any, view: View, edits: Edits) -> list[Any]:
        messages = _require_list(messages)
        locs: list[int] = [e.position for e in view.tail]
        if view.before is not None:
            locs.insert(0, view.before.position)
        start = locs[0] if locs else len(messages)
        out: list[Any] = []
        inserts = _inserts_by_loc(edits)
        for i in range(start, len(messages)):
            message = messages[i]
            if i in edits.removed:
                pass
            elif i in edits.removed_calls:
                gone = edits.removed_calls[i]
                kept = [c for c in message.get("tool_calls") or [] if c.get("id") not in gone]
                new = {k: v for k, v in message.items() if k != "tool_calls"}
                if kept:
                    new["tool_calls"] = kept
                if kept or _nonempty(message.get("content")):
                    out.append(new)
            elif i in edits.appends:
                out.append(
                    {**message, "content": append_text(message.get("content"), edits.appends[i])}
                )
            else:
                out.append(message)
            for text in inserts.get(i, ()):
                out.append({"role": "user", "content": text})
        for text in inserts.get(None, ()):
            out.append({"role": "user", "content": text})
        return _rebuilt(messages, start, out)

    def results(self, messages: Any) -> tuple[Result, ...]:
        """Every ``tool`` message, named by its call (LangChain messages read too)."""
        calls: dict[str, tuple[str | None, Any]] = {}
        found: list[Result] = []
        for i, message in enumerate(_require_sequence(messages)):
            role = _get(message, "role") or _LANGCHAIN_ROLES.get(str(_get(message, "type")))
            if role == "assistant":
                raw_calls = _get(message, "tool_calls")
                for call in raw_calls if isinstance(raw_calls, list | tuple) else ():
                    function = _get(call, "function")
                    source = function if function is not None else call
                    arguments = _get(source, "arguments" if function is not None else "args")
                    call_id = _get(call, "id")
                    if isinstance(call_id, str):
                        calls[call_id] = (_str_or_none(_get(source, "name")), arguments)
            elif role == "tool":
                call_id = _str_or_none(_get(message, "tool_call_id"))
                name, arguments = calls.get(call_id, (None, None)) if call_id else (None, None)
                found.append(
                    Result(
                        i, i, call_id, _str_or_none(_get(message, "name")) or name, arguments,
                        _get(message, "content"), _flag(_get(message, "is_error")),
                        _str_or_none(_get(message, "status")),
                    )
                )  # fmt: skip
        return tuple(found)

    def replace(self, messages: Any, texts: Mapping[Hashable, str]) -> list[Any]:
        out = list(_require_sequence(messages))
        for loc, text in texts.items():
            index = cast(int, loc)
            out[index] = _with_field(out[index], "content", text)
        return out


_LANGCHAIN_ROLES = {"ai": "assistant", "tool": "tool"}


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _inserts_by_loc(edits: Edits) -> dict[Hashable, list[str]]:
    found: dict[Hashable, list[str]] = {}
    for entry, text in edits.inserts:
        found.setdefault(None if entry is None else entry.loc, []).append(text)
    return found


# -- OpenAI Responses input items ---------------------------------------------------


def _responses_is_model_item(item: Any) -> bool:
    if not isinstance(item, Mapping):
        return False
    kind = item.get("type")
    if kind == "function_call" or kind == "reasoning":
        return True
    if kind in (None, "message") and item.get("role") == "assistant":
        return True
    return isinstance(kind, str) and kind.endswith("_call")


class OpenAIResponses:
    """``function_call`` / ``function_call_output`` items, as the Agents SDK sends them."""

    def _run_entry(self, items: list[Any], start: int, end: int) -> Entry:
        calls = []
        content = False
        for i in range(start, end):
            item = items[i]
            if item.get("type") == "function_call":
                calls.append(
                    Call(
                        _str_or_none(item.get("call_id")),
                        _str_or_none(item.get("name")),
                        parse_arguments(item.get("arguments")),
                    )
                )
            else:
                content = True
        return Entry("assistant", (start, end), start, tuple(calls), has_content=content)

    def _entry(self, items: list[Any], i: int, calls: Mapping[str, Call]) -> Entry:
        item = items[i]
        if not isinstance(item, Mapping):
            return Entry("other", i, i)
        kind = item.get("type")
        if kind == "function_call_output":
            call_id = _str_or_none(item.get("call_id"))
            call = calls.get(call_id) if call_id else None
            return Entry(
                "tool", i, i, call_id=call_id, name=call.name if call else None,
                content=item.get("output"),
            )  # fmt: skip
        if kind in (None, "message"):
            role = item.get("role")
            if role == "user":
                return Entry("user", i, i, content=item.get("content"))
            if role in ("system", "developer"):
                return Entry("system", i, i)
        return Entry("other", i, i)

    def view(self, messages: Any) -> View:
        items = _require_list(messages)
        end = len(items)
        while end > 0 and not _responses_is_model_item(items[end - 1]):
            end -= 1
        if end == 0:
            return View((), None)
        start = end
        while start > 0 and _responses_is_model_item(items[start - 1]):
            start -= 1
        run = self._run_entry(items, start, end)
        calls = {c.id: c for c in run.calls if c.id}
        tail = (run, *(self._entry(items, i, calls) for i in range(end, len(items))))
        before = self._entry(items, start - 1, {}) if start > 0 else None
        return View(tail, before)

    def apply(self, messages: Any, view: View, edits: Edits) -> list[Any]:
        items = _require_list(messages)
        run = view.tail[0]
        start = view.before.position if view.before is not None else run.position
        inserts = _inserts_by_loc(edits)
        gone = edits.removed_calls.get(run.loc, set())
        run_start, run_end = cast(tuple[int, int], run.loc)
        out: list[Any] = []
        for i in range(start, len(items)):
            item = items[i]
            if run_start <= i < run_end:
                if not (item.get("type") == "function_call" and item.get("call_id") in gone):
                    out.append(item)
                if i == run_end - 1:
                    out.extend({"role": "user", "content": t} for t in inserts.get(run.loc, ()))
                continue
            if i in edits.removed:
                pass
            elif i in edits.appends:
                if item.get("type") == "function_call_output":
                    out.append(
                        {
                            **item,
                            "output": append_text(
                                item.get("output"), edits.appends[i], "input_text"
                            ),
                        }
                    )
                else:
                    out.append(
                        {
                            **item,
                            "content": append_text(
                                item.get("content"), edits.appends[i], "input_text"
                            ),
                        }
                    )
            else:
                out.append(item)
            out.extend({"role": "user", "content": t} for t in inserts.get(i, ()))
        out.extend({"role": "user", "content": t} for t in inserts.get(None, ()))
        return _rebuilt(items, start, out)

    def results(self, messages: Any) -> tuple[Result, ...]:
        """Every ``function_call_output`` item, named by its ``function_call``."""
        calls: dict[str, tuple[str | None, Any]] = {}
        found: list[Result] = []
        for i, item in enumerate(_require_sequence(messages)):
            kind = _get(item, "type")
            if kind == "function_call":
                call_id = _get(item, "call_id")
                if isinstance(call_id, str):
                    calls[call_id] = (_str_or_none(_get(item, "name")), _get(item, "arguments"))
            elif kind == "function_call_output":
                call_id = _str_or_none(_get(item, "call_id"))
                name, arguments = calls.get(call_id, (None, None)) if call_id else (None, None)
                status = _str_or_none(_get(item, "status"))
                found.append(
                    Result(i, i, call_id, name, arguments, _get(item, "output"), None, status)
                )
        return tuple(found)

    def replace(self, messages: Any, texts: Mapping[Hashable, str]) -> list[Any]:
        out = list(_require_sequence(messages))
        for loc, text in texts.items():
            index = cast(int, loc)
            out[index] = _with_field(out[index], "output", text)
        return out


# -- Anthropic Messages -------------------------------------------------------------


class AnthropicMessages:
    """``tool_use`` blocks in the assistant turn; ``tool_result`` blocks in the next user turn."""

    def _entries(self, message: Any, i: int) -> list[Entry]:
        if not isinstance(message, Mapping):
            return [Entry("other", i, i)]
        role, content = message.get("role"), message.get("content")
        if role == "assistant":
            if isinstance(content, str):
                return [Entry("assistant", i, i, has_content=content != "")]
            if not isinstance(content, list):
                return [Entry("other", i, i)]
            calls = tuple(
                Call(_str_or_none(b.get("id")), _str_or_none(b.get("name")), b.get("input"))
                for b in content
                if isinstance(b, Mapping) and b.get("type") == "tool_use"
            )
            rest = len(content) - len(calls)
            return [Entry("assistant", i, i, calls, has_content=rest > 0)]
        if role == "user":
            if isinstance(content, str):
                return [Entry("user", (i, -1), i, content=content)]
            if not isinstance(content, list):
                return [Entry("other", i, i)]
            entries = []
            other = False
            for j, block in enumerate(content):
                if isinstance(block, Mapping) and block.get("type") == "tool_result":
                    flag = block.get("is_error")
                    entries.append(
                        Entry(
                            "tool", (i, j), i,
                            call_id=_str_or_none(block.get("tool_use_id")),
                            content=block.get("content", ""),
                            is_error=flag if isinstance(flag, bool) else None,
                        )
                    )  # fmt: skip
                else:
                    other = True
            if other or not entries:
                entries.append(Entry("user", (i, -1), i, content=content))
            return entries
        return [Entry("other", i, i)]

    def view(self, messages: Any) -> View:
        messages = _require_list(messages)
        for a in range(len(messages) - 1, -1, -1):
            message = messages[a]
            if isinstance(message, Mapping) and message.get("role") == "assistant":
                tail: list[Entry] = []
                for i in range(a, len(messages)):
                    tail.extend(self._entries(messages[i], i))
                names = {c.id: c.name for c in tail[0].calls if c.id}
                tail = [
                    Entry(e.role, e.loc, e.position, call_id=e.call_id,
                          name=names.get(e.call_id) if e.call_id else None,
                          content=e.content, is_error=e.is_error)
                    if e.role == "tool" else e
                    for e in tail
                ]  # fmt: skip
                before = self._entries(messages[a - 1], a - 1)[-1] if a > 0 else None
                return View(tuple(tail), before)
        return View((), None)

    def apply(self, messages: Any, view: View, edits: Edits) -> list[Any]:
        messages = _require_list(messages)
        start = view.before.position if view.before is not None else view.tail[0].position
        inserts = _inserts_by_loc(edits)
        out: list[Any] = []
        for i in range(start, len(messages)):
            message = messages[i]
            content: Any = message.get("content") if isinstance(message, Mapping) else None
            touched = isinstance(content, list) and any(
                (i, j) in edits.removed or (i, j) in edits.appends or (i, j) in inserts
                for j in range(len(content))
            )
            new_message: Any = message
            if i in edits.removed_calls:
                gone = edits.removed_calls[i]
                blocks = [b for b in content if not _is_call_in(b, gone)]
                new_message = {**message, "content": blocks} if blocks else None
            elif touched:
                blocks = []
                block_inserts: list[str] = []
                for j, block in enumerate(content):
                    if (i, j) in edits.removed:
                        continue
                    if (i, j) in edits.appends:
                        block = {
                            **block,
                            "content": append_text(block.get("content", ""), edits.appends[(i, j)]),
                        }
                    blocks.append(block)
                    block_inserts.extend(inserts.get((i, j), ()))
                if (i, -1) in edits.appends:
                    blocks = append_text(blocks, edits.appends[(i, -1)])
                blocks.extend({"type": "text", "text": t} for t in block_inserts)
                new_message = {**message, "content": blocks} if blocks else None
            elif (i, -1) in edits.appends:
                new_message = {**message, "content": append_text(content, edits.appends[(i, -1)])}
            if new_message is not None or message is None:  # keep what we did not touch
                out.append(new_message)
            for loc in (i, (i, -1)):
                out.extend({"role": "user", "content": t} for t in inserts.get(loc, ()))
        out.extend({"role": "user", "content": t} for t in inserts.get(None, ()))
        return _rebuilt(messages, start, out)

    def results(self, messages: Any) -> tuple[Result, ...]:
        """Every ``tool_result`` block, named by its ``tool_use`` block."""
        calls: dict[str, tuple[str | None, Any]] = {}
        found: list[Result] = []
        for i, message in enumerate(_require_sequence(messages)):
            content = _get(message, "content")
            if not isinstance(content, list):
                continue
            for j, block in enumerate(content):
                kind = _get(block, "type")
                if kind == "tool_use":
                    call_id = _get(block, "id")
                    if isinstance(call_id, str):
                        calls[call_id] = (_str_or_none(_get(block, "name")), _get(block, "input"))
                elif kind == "tool_result":
                    call_id = _str_or_none(_get(block, "tool_use_id"))
                    name, arguments = calls.get(call_id, (None, None)) if call_id else (None, None)
                    found.append(
                        Result(
                            (i, j), i, call_id, name, arguments, _get(block, "content"),
                            _flag(_get(block, "is_error")),
                        )
                    )  # fmt: skip
        return tuple(found)

    def replace(self, messages: Any, texts: Mapping[Hashable, str]) -> list[Any]:
        out = list(_require_sequence(messages))
        by_message: dict[int, dict[int, str]] = {}
        for loc, text in texts.items():
            i, j = cast(tuple[int, int], loc)
            by_message.setdefault(i, {})[j] = text
        for i, blocks in by_message.items():
            content = list(_get(out[i], "content"))
            for j, text in blocks.items():
                content[j] = _with_field(content[j], "content", text)
            out[i] = _with_field(out[i], "content", content)
        return out


def _is_call_in(block: Any, ids: set[str]) -> bool:
    return isinstance(block, Mapping) and block.get("type") == "tool_use" and block.get("id") in ids


CODECS: Mapping[str, Codec] = {
    "openai": OpenAIChat(),
    "responses": OpenAIResponses(),
    "anthropic": AnthropicMessages(),
}
