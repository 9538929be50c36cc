"""Deep, cyclic and huge values: every walk of a call's arguments is bounded and never raises.

A model can send valid JSON nested 600 levels deep, and a Python caller a
structure that holds itself.  The failure is still delivered: its record, its
note, the loop guard's key and the span's attributes show what lies beyond
the bounds as a marker (``…`` past the depth, ``<cycle>`` for a container met
inside itself) instead of raising ``RecursionError`` into the agent.

A tool can return a 10 MB error or a million text parts: every scan of it
(detection, classification, the pile-up count, the developer-step filter)
reads a bounded head and tail, and the note is the one a whole read gives.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, overload

import pytest

import notes
from hostile import BEYOND, CYCLE, CYCLIC_SHOWN, DEEP_SHOWN, cyclic, nest
from toolmend import (
    ContextPolicy,
    Kind,
    LoopGuard,
    ToolFailure,
    rewrite,
    testing,
)
from toolmend._bounds import PARTS, TEXT_LIMIT
from toolmend.classify import _detect as detect
from toolmend.deliver import _actionable as actionable
from toolmend.deliver import _pileup as pileup
from toolmend.deliver._actionable import WINDOW
from toolmend.integrations import PILE_UP, CallContext, CallRecord, compose_note, execute
from toolmend.run._loop import canonical

GUIDE = "Correct the call."
ERROR = "Invalid arguments: the document is malformed"
DEEP = nest(600, {"x": 1})


def cyclic_list() -> list[Any]:
    value: list[Any] = [1]
    value.append(value)
    return value


CASES = {
    "deep dict": ({"doc": DEEP}, {"doc": DEEP_SHOWN}),
    "deep list": ({"rows": nest(600, 1)["a"]}, {"rows": nest(16, BEYOND)["a"]}),
    "cyclic dict": ({"doc": cyclic()}, {"doc": CYCLIC_SHOWN}),
    "cyclic list": ({"rows": cyclic_list()}, {"rows": [1, CYCLE]}),
    "cyclic arguments": (cyclic(), CYCLIC_SHOWN),
}


def failure_of(arguments: Any) -> ToolFailure:
    return ToolFailure.from_exception(ValueError(ERROR), tool="save", arguments=arguments)


@pytest.mark.parametrize(("arguments", "shown"), CASES.values(), ids=CASES.keys())
def test_the_failure_and_its_record_show_the_arguments_within_the_bounds(
    arguments: Any, shown: Any
) -> None:
    failure = failure_of(arguments)
    assert failure.to_dict()["arguments"] == shown
    assert CallRecord.of_failure(failure).to_dict()["arguments"] == shown
    json.dumps(failure.to_dict())  # JSON-ready, as the adapters send it


@pytest.mark.parametrize(("arguments", "shown"), CASES.values(), ids=CASES.keys())
def test_the_note_restates_the_arguments_within_the_bounds(arguments: Any, shown: Any) -> None:
    note = compose_note("save", arguments, ERROR, GUIDE).text
    assert note == compose_note("save", shown, ERROR, GUIDE).text


def test_the_note_of_a_cyclic_argument_names_the_cycle() -> None:
    note = compose_note("save", {"doc": cyclic()}, ERROR, GUIDE).text
    assert note == notes.note("save", 'doc={"id":7,"self":"<cycle>"}', ERROR, GUIDE)


def test_arguments_within_the_bounds_are_shown_as_they_were() -> None:
    """32 levels, the arguments' own included, are within the bounds."""
    arguments = {"doc": nest(15, [1, 2]), "tags": ("a", "b")}
    failure = failure_of(arguments)
    assert failure.to_dict()["arguments"] == {"doc": nest(15, [1, 2]), "tags": ["a", "b"]}
    note = compose_note("save", arguments, ERROR, GUIDE).text
    assert note.startswith(
        "Note from the tool runtime: the last attempt called save with `doc="
        + '{"a":[' * 15
        + "[1,2]"
        + "]}" * 15
        + ', tags=["a","b"]` and it failed with'
    )
    assert canonical(arguments) == json.dumps(arguments, sort_keys=True, separators=(",", ":"))


@pytest.mark.parametrize(("arguments", "shown"), CASES.values(), ids=CASES.keys())
def test_the_loop_guard_runs_a_call_it_cannot_key_again(arguments: Any, shown: Any) -> None:
    """Beyond the bounds two calls may look alike: the guard runs them rather than refuse."""
    loop = LoopGuard()
    calls = []

    def tool(ctx: CallContext) -> str:
        calls.append(ctx.attempt)
        raise ValueError(ERROR)

    with testing():
        first = execute(tool, tool="save", arguments=arguments, effect="write", loop=loop)
        second = execute(tool, tool="save", arguments=arguments, effect="write", loop=loop)
    assert isinstance(first, ToolFailure)
    assert isinstance(second, ToolFailure)
    assert (first.kind, second.kind, second.rule) == (Kind.FIXABLE, Kind.FIXABLE, "exception")
    assert calls == [1, 1]
    assert loop.blocked == []
    assert canonical(arguments) == json.dumps(shown, sort_keys=True, separators=(",", ":"))


def test_a_repeat_within_the_bounds_is_still_refused() -> None:
    loop = LoopGuard()
    arguments = {"doc": nest(10, {"x": 1})}

    def tool(ctx: CallContext) -> str:
        raise ValueError(ERROR)

    with testing():
        execute(tool, tool="save", arguments=arguments, effect="write", loop=loop)
        second = execute(tool, tool="save", arguments=arguments, effect="write", loop=loop)
    assert isinstance(second, ToolFailure)
    assert second.rule == "loop-repeat"


@pytest.mark.parametrize("codec", ["openai", "responses"])
def test_a_conversation_whose_arguments_are_too_deep_to_parse_gets_its_note(codec: str) -> None:
    """JSON text nested deeper than Python's parser goes is restated as text, capped."""
    text = "[" * 100_000 + "]" * 100_000
    if codec == "openai":
        messages: list[Any] = [
            {"role": "user", "content": "save it"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "save", "arguments": text},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "Error: " + ERROR},
        ]
    else:
        messages = [
            {"role": "user", "content": "save it"},
            {"type": "function_call", "call_id": "c1", "name": "save", "arguments": text},
            {"type": "function_call_output", "call_id": "c1", "output": "Error: " + ERROR},
        ]
    done = rewrite(messages, "c3", format=codec)
    assert done.report.skipped == ()
    assert [d.rule for d in done.report.detections] == ["generic"]
    note = done.messages[-1]["content"]
    shown = "[" * 800 + "\n[... 199050 characters omitted ...]\n" + "]" * 150
    lines = shown.split("\n")
    assert note.startswith(
        notes.HEADER + "save" + notes.QUOTED_BELOW + f"\n> arguments: {lines[0]}"
    )
    assert f"\n> {lines[1]}\n> {lines[2]}\n" in note


# -- huge texts: the work does not grow with the size of one error -------------------

LEAD_SENTENCE = "Error: HTTP Error 503: Service Unavailable. "
STEP = "Run `gcloud auth login` to sign in."
LAST_STEP = "Please contact support@example.com."
FILLER = "The upstream service did not answer in time. "
MARKER = "[a step for the developer was omitted]"
TEXT_BOUND = TEXT_LIMIT + 1  # the head and tail a scan reads of a huge text, and their joint


class Probe:
    """Records the length of every text a scanner is handed, then scans it as before."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.seen: dict[str, int] = {}
        self._monkeypatch = monkeypatch

    def function(self, module: Any, name: str) -> None:
        original = getattr(module, name)

        def probed(text: str, *args: Any, **kwargs: Any) -> Any:
            self._saw(name, text)
            return original(text, *args, **kwargs)

        self._monkeypatch.setattr(module, name, probed)

    def pattern(self, module: Any, name: str) -> None:
        original = getattr(module, name)
        probe = self

        class Probed:
            def search(self, text: str, *args: Any) -> Any:
                probe._saw(name, text)
                return original.search(text, *args)

        self._monkeypatch.setattr(module, name, Probed())

    def _saw(self, name: str, text: str) -> None:
        self.seen[name] = max(self.seen.get(name, 0), len(text))


@pytest.fixture
def probe(monkeypatch: pytest.MonkeyPatch) -> Probe:
    """Every scanner of a result's text: detection, classification, pile-up, the step filter."""
    found = Probe(monkeypatch)
    for name in ("is_error_text", "classify_text", "_error_shaped"):
        found.function(detect, name)
    found.function(actionable, "sentences")
    for name in ("_EXCEPTION", "_STATUS", "_LEADING_STATUS", "_CODE"):
        found.pattern(pileup, name)
    return found


def conversation(content: Any) -> list[dict[str, Any]]:
    call = {"id": "c1", "type": "function", "function": {"name": "fetch", "arguments": "{}"}}
    return [
        {"role": "user", "content": "fetch it"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": content},
    ]


def note_of(done: Any) -> str:
    assert done.report.skipped == ()
    (message,) = [m for m in done.messages[3:] if m["role"] == "user"]
    return str(message["content"])


def test_a_ten_megabyte_error_is_read_by_its_head_and_tail(probe: Probe) -> None:
    """The note is the one a whole read gives; no scanner is handed more than the bounds."""
    filler = FILLER * (10_000_000 // len(FILLER))
    error = f"{LEAD_SENTENCE}{STEP} {filler}{LAST_STEP}"
    done = rewrite(conversation(error), "c3", context=ContextPolicy(pile_up_after=1))

    filtered = f"{LEAD_SENTENCE}{MARKER} {filler}{MARKER}"
    cut = len(filtered) - 1500 - 400
    quoted = f"{filtered[:1500]}\n[... {cut} characters omitted ...]\n{filtered[-400:]}"
    piled = PILE_UP.format(count=1, tool="fetch", error_class="transient")
    assert note_of(done) == notes.note("fetch", None, quoted, piled)
    (detection,) = done.report.detections
    assert (detection.kind, detection.rule, detection.omitted) == (
        Kind.TRANSIENT,
        "generic",
        (STEP, LAST_STEP),
    )
    assert probe.seen["sentences"] == WINDOW
    assert max(probe.seen.values()) <= TEXT_BOUND
    assert set(probe.seen) >= {"is_error_text", "classify_text", "_EXCEPTION", "_STATUS"}


class Parts(Sequence[Any]):
    """A result's content parts that count how many of them were read."""

    def __init__(self, parts: list[Any]) -> None:
        self._parts = parts
        self.read = 0

    def __len__(self) -> int:
        return len(self._parts)

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Any]: ...

    def __getitem__(self, index: int | slice) -> Any:
        found = self._parts[index]
        self.read += len(found) if isinstance(index, slice) else 1
        return found


def test_a_result_of_a_million_parts_is_read_by_its_first_and_last_parts(probe: Probe) -> None:
    rows = [{"type": "text", "text": f"row {n}"} for n in range(1_000_000)]
    parts = Parts([{"type": "text", "text": LEAD_SENTENCE + STEP}, *rows])
    done = rewrite(conversation(parts), "c3", context=ContextPolicy(collapse_resolved=True))

    capped = [*parts._parts[: PARTS - PARTS // 4], *parts._parts[-PARTS // 4 :]]
    assert note_of(done) == note_of(rewrite(conversation(capped), "c3"))
    assert note_of(done).startswith(
        "Note from the tool runtime: the last attempt called fetch with no arguments and it "
        f"failed with:\n> {LEAD_SENTENCE}{MARKER}\n> row 0\n> row 1\n"
    )
    assert "\nrow 748\nrow 999750\n" in "\n".join(d.error for d in done.report.detections)
    assert parts.read <= 10 * PARTS  # each reader reads PARTS of them
    assert max(probe.seen.values()) <= TEXT_BOUND
