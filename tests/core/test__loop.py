"""LoopGuard: exact repeats, the consecutive-failure budget, and superseded stubs."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from toolmend import Kind, LoopGuard, ToolFailure, Verdict, testing
from toolmend.integrations import (
    REMEMBERED,
    CallContext,
    Observation,
    Source,
    execute,
    stub_superseded_failures,
)
from toolmend.run._loop import canonical

FIXABLE = (
    "This call cannot succeed as written. The error says what to change; "
    "call the tool again with the corrected value."
)
UNRECOVERABLE = (
    "This cannot be fixed by retrying or by changing the arguments. Tell the user what happened."
)


class Tool:
    """A scripted tool: raises the scripted exceptions in order, then returns "ok"."""

    def __init__(self, *errors: BaseException) -> None:
        self.errors = list(errors)
        self.calls = 0

    def __call__(self, ctx: CallContext) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


def run(loop: LoopGuard, tool: Tool, name: str = "edit", **arguments: Any) -> Any:
    with testing():
        return execute(tool, tool=name, arguments=arguments, effect="read_only", loop=loop)


def test_exact_repeat_of_a_fixable_failure_is_not_run() -> None:
    loop = LoopGuard()
    tool = Tool(ValueError("Invalid arguments: line must be positive"))
    first = run(loop, tool, path="a.py", line=-1)
    second = run(loop, tool, line=-1, path="a.py")
    assert isinstance(first, ToolFailure)
    assert isinstance(second, ToolFailure)
    assert tool.calls == 1
    assert str(second) == (
        "Tool 'edit' was not run: this exact call already failed in this task. "
        "The earlier error: Tool 'edit' failed after 1 attempt with ValueError: "
        "Invalid arguments: line must be positive\n"
        f"Where: test__loop.py:{Tool.__call__.__code__.co_firstlineno + 3} in __call__\n" + FIXABLE
    )
    assert (second.kind, second.attempts, second.rule) == (Kind.FIXABLE, 0, "loop-repeat")
    assert loop.blocked == [second]


def test_changed_arguments_run_again() -> None:
    loop = LoopGuard()
    tool = Tool(ValueError("Invalid arguments: line must be positive"))
    run(loop, tool, path="a.py", line=-1)
    assert run(loop, tool, path="a.py", line=3) == "ok"
    assert tool.calls == 2


def test_unrecoverable_repeat_is_not_run() -> None:
    loop = LoopGuard()
    tool = Tool(PermissionError(13, "Permission denied"))
    run(loop, tool, path="/etc/shadow")
    blocked = run(loop, tool, path="/etc/shadow")
    assert tool.calls == 1
    assert blocked.guidance == UNRECOVERABLE


def test_transient_and_ambiguous_failures_may_be_repeated() -> None:
    loop = LoopGuard()
    tool = Tool(*[TimeoutError("timed out")] * 3, KeyError("x"))
    run(loop, tool, q="a")
    assert tool.calls == 3
    run(loop, tool, q="a")
    assert tool.calls == 4
    assert run(loop, tool, q="a") == "ok"


def test_repeat_blocking_can_be_switched_off() -> None:
    loop = LoopGuard(block_exact_repeats=False)
    tool = Tool(ValueError("Invalid arguments"), ValueError("Invalid arguments"))
    run(loop, tool, x=1)
    run(loop, tool, x=1)
    assert tool.calls == 2


def test_consecutive_failure_budget_with_the_hard_stop() -> None:
    loop = LoopGuard(max_consecutive_failures=3, hard_stop=True)
    tool = Tool(*[KeyError(str(i)) for i in range(5)])
    for i in range(3):
        assert isinstance(run(loop, tool, "fetch", n=i), ToolFailure)
    stopped = run(loop, tool, "fetch", n=99)
    assert tool.calls == 3
    assert str(stopped) == (
        "Tool 'fetch' was not run: its last 3 calls failed.\n"
        "Stop using fetch for this task and tell the user what failed."
    )
    assert stopped.rule == "loop-budget"
    assert loop.consecutive_failures("fetch") == 3
    tool.errors = []
    assert run(loop, tool, "other") == "ok"


def test_success_resets_the_count() -> None:
    loop = LoopGuard(max_consecutive_failures=2, hard_stop=True)
    tool = Tool(KeyError("a"), KeyError("b"))
    run(loop, tool, "fetch", n=1)
    tool.errors = []
    run(loop, tool, "fetch", n=2)
    assert loop.consecutive_failures("fetch") == 0
    tool.errors = [KeyError("c"), KeyError("d")]
    run(loop, tool, "fetch", n=3)
    run(loop, tool, "fetch", n=4)
    assert isinstance(run(loop, tool, "fetch", n=5), ToolFailure)
    assert tool.calls == 4


def test_record_for_failures_seen_only_as_text() -> None:
    loop = LoopGuard()
    loop.record("edit", {"path": "a"}, Kind.FIXABLE, "Error: old_string not unique")
    blocked = loop.before("edit", {"path": "a"})
    assert blocked is not None
    assert str(blocked) == (
        "Tool 'edit' was not run: this exact call already failed in this task. "
        "The earlier error: Error: old_string not unique\n" + FIXABLE
    )
    loop.record("edit", {"path": "b"}, None)
    assert loop.consecutive_failures("edit") == 0
    assert loop.before("edit", {"path": "b"}) is None


def test_a_refused_call_is_no_failure() -> None:
    loop = LoopGuard(max_consecutive_failures=2, hard_stop=True)
    loop.record("edit", {"path": "a"}, Kind.FIXABLE, "bad", refused=True)
    assert loop.consecutive_failures("edit") == 0
    assert loop.before("edit", {"path": "a"}) is None
    loop.record("edit", {"path": "b"}, Kind.AMBIGUOUS)
    loop.record("edit", {"path": "c"}, Kind.AMBIGUOUS)
    blocked = loop.before("edit", {"path": "d"})
    assert blocked is not None
    assert blocked.rule == "loop-budget"
    assert loop.consecutive_failures("edit") == 2


def test_replay_rebuilds_a_run_from_its_finished_calls() -> None:
    bad = Verdict(True, Kind.FIXABLE, "status", Source.FLAG, None, "Use a relative path.")
    repeat = Verdict(True, Kind.FIXABLE, "loop-repeat", Source.EXCEPTION)
    loop = LoopGuard(max_consecutive_failures=3)
    loop.replay(
        [
            Observation("edit", {"path": "/a"}, bad, "Error: absolute path"),
            Observation("edit", {"path": "/a"}, repeat, "Tool 'edit' was not run"),
        ]
    )
    assert loop.consecutive_failures("edit") == 1
    blocked = loop.before("edit", {"path": "/a"})
    assert blocked is not None
    assert str(blocked) == (
        "Tool 'edit' was not run: this exact call already failed in this task. "
        "The earlier error: Error: absolute path\nUse a relative path."
    )
    loop.replay([Observation("edit", {"path": "b"}, Verdict(False))])
    assert loop.consecutive_failures("edit") == 0


def test_after_quotes_the_text_the_model_was_shown() -> None:
    loop = LoopGuard()
    failure = ToolFailure("add", {"a": "x"}, Kind.FIXABLE, 1, "Tool 'add' failed", FIXABLE)
    loop.after("add", {"a": "x"}, failure, error="a: Input should be a valid integer")
    blocked = loop.before("add", {"a": "x"})
    assert blocked is not None
    assert blocked.cause == (
        "Tool 'add' was not run: this exact call already failed in this task. "
        "The earlier error: a: Input should be a valid integer"
    )
    loop.after("add", {"a": "x"}, blocked, error="ignored")
    assert loop.consecutive_failures("add") == 1


def test_reset() -> None:
    loop = LoopGuard()
    loop.record("edit", {"path": "a"}, Kind.UNRECOVERABLE, "denied")
    loop.reset("edit")
    assert loop.before("edit", {"path": "a"}) is None


def test_invalid_budget() -> None:
    with pytest.raises(ValueError, match="max_consecutive_failures must be >= 1"):
        LoopGuard(max_consecutive_failures=0)


def sizes(loop: LoopGuard) -> dict[str, int]:
    """How much the guard holds: its failed calls, its tools' counts, its refusals."""
    return {
        "failed": len(loop._failed),
        "tools": max(len(loop._last), len(loop._consecutive), len(loop._refused)),
        "streaks": len(loop._streaks._last),
        "blocked": len(loop.blocked),
    }


def test_a_guard_remembers_at_most_its_bound_of_failed_calls_and_refusals() -> None:
    """A session's guard sees thousands of distinct failures: it keeps the newest."""
    loop = LoopGuard()
    calls = 3 * REMEMBERED
    for n in range(calls):
        loop.record("edit", {"line": n}, Kind.FIXABLE, f"Error: no line {n}")
        refused = loop.before("edit", {"line": n})
        assert refused is not None
        assert refused.rule == "loop-repeat"
    assert sizes(loop) == {"failed": REMEMBERED, "tools": 1, "streaks": 1, "blocked": REMEMBERED}
    assert [f.arguments for f in loop.blocked[-2:]] == [{"line": calls - 2}, {"line": calls - 1}]
    assert loop.before("edit", {"line": 0}) is None  # the oldest is forgotten: it runs
    kept = loop.before("edit", {"line": calls - REMEMBERED})  # the oldest still remembered
    assert kept is not None
    assert kept.rule == "loop-repeat"
    assert loop.consecutive_failures("edit") == calls


def test_a_guard_remembers_at_most_its_bound_of_tools() -> None:
    loop = LoopGuard(hard_stop=True, max_consecutive_failures=1)
    tools = 3 * REMEMBERED
    for n in range(tools):
        loop.record(f"tool{n}", {}, Kind.TRANSIENT, "Error: HTTP Error 503")
        loop.record(f"tool{n}", {}, None, refused=True)
    assert sizes(loop) == {"failed": 0, "tools": REMEMBERED, "streaks": REMEMBERED, "blocked": 0}
    assert loop.consecutive_failures("tool0") == 0  # forgotten, oldest first
    assert loop.before("tool0", {}) is None
    newest = loop.before(f"tool{tools - 1}", {})
    assert newest is not None
    assert newest.rule == "loop-budget"


def test_a_failure_recorded_again_is_remembered_as_new() -> None:
    loop = LoopGuard(remember=3)
    for n in (1, 2, 3, 1, 4):  # 1 again: 2 is now the oldest, and goes for 4
        loop.record("edit", {"line": n}, Kind.FIXABLE, f"Error: no line {n}")
    assert [loop.before("edit", {"line": n}) is not None for n in (1, 2, 3, 4)] == [
        True,
        False,
        True,
        True,
    ]
    assert loop.settings()["remember"] == 3


def test_old_failures_are_forgotten_oldest_first() -> None:
    clock = {"t": 0.0}
    loop = LoopGuard(forget_after=10.0, clock=lambda: clock["t"])
    for n in range(500):
        clock["t"] = n / 100
        loop.record("edit", {"line": n}, Kind.FIXABLE, "Error: bad line")
    clock["t"] = 14.0  # the first 400 are older than 10 seconds
    assert loop.before("edit", {"line": 399}) is None
    assert sizes(loop)["failed"] == 100
    assert loop.before("edit", {"line": 400}) is not None
    assert loop.consecutive_failures("edit") == 500


@pytest.mark.parametrize(
    ("a", "b"),
    [({"x": 1, "y": [1, 2]}, {"y": [1, 2], "x": 1}), ('{"b": 1, "a": 2}', {"a": 2, "b": 1}),
     (None, {})],
)  # fmt: skip
def test_canonical(a: Any, b: Any) -> None:
    assert canonical(a) == canonical(b)


def test_canonical_distinguishes_values() -> None:
    assert canonical({"x": 1}) != canonical({"x": "1"})
    assert canonical("not json") == "not json"


# -- stubs of superseded failures ---------------------------------------------------------


def _openai_call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
        ],
    }


def test_stub_superseded_openai() -> None:
    messages = [
        {"role": "user", "content": "weather in Oslo?"},
        _openai_call("c1", "weather", {"city": "Olso"}),
        {"role": "tool", "tool_call_id": "c1", "content": "Error: unknown city 'Olso'\nhint"},
        _openai_call("c2", "weather", {"city": "Oslo"}),
        {"role": "tool", "tool_call_id": "c2", "content": "4 degrees"},
        _openai_call("c3", "search", {"q": "x"}),
        {"role": "tool", "tool_call_id": "c3", "content": "Error: timed out"},
    ]
    out = stub_superseded_failures(messages, format="openai")
    assert out[2] == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "[Earlier failure of weather, resolved by a later successful call: "
        "Error: unknown city 'Olso']",
    }
    assert messages[2]["content"] == "Error: unknown city 'Olso'\nhint"
    assert all(out[i] is messages[i] for i in (0, 1, 3, 4, 5, 6))


def test_stub_superseded_anthropic() -> None:
    def use(call_id: str) -> dict[str, Any]:
        block = {"type": "tool_use", "id": call_id, "name": "read", "input": {}}
        return {"role": "assistant", "content": [block]}

    failed = {"type": "tool_result", "tool_use_id": "t1", "is_error": True, "content": "locked"}
    ok = {"type": "tool_result", "tool_use_id": "t2", "content": "data"}
    messages = [
        use("t1"),
        {"role": "user", "content": [failed]},
        use("t2"),
        {"role": "user", "content": [ok]},
    ]
    out = stub_superseded_failures(messages, format="anthropic")
    assert out[1] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "t1",
                "is_error": True,
                "content": "[Earlier failure of read, resolved by a later successful call: locked]",
            }
        ],
    }
    assert out[3] is messages[3]


def test_stub_superseded_responses() -> None:
    items = [
        {"type": "function_call", "call_id": "f1", "name": "fetch", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "f1", "output": "HTTP Error 503: down"},
        {"type": "function_call", "call_id": "f2", "name": "fetch", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "f2", "output": "page"},
    ]
    out = stub_superseded_failures(items, format="responses")
    assert out[1]["output"] == (
        "[Earlier failure of fetch, resolved by a later successful call: HTTP Error 503: down]"
    )


def test_stub_superseded_langchain_messages() -> None:
    messages = [
        HumanMessage("go"),
        AIMessage("", tool_calls=[{"id": "a", "name": "lookup", "args": {}}]),
        ToolMessage("lookup broke", tool_call_id="a", status="error"),
        AIMessage("", tool_calls=[{"id": "b", "name": "lookup", "args": {}}]),
        ToolMessage("found", tool_call_id="b"),
    ]
    out = stub_superseded_failures(messages, format="openai")
    assert out[2].content == (
        "[Earlier failure of lookup, resolved by a later successful call: lookup broke]"
    )
    assert messages[2].content == "lookup broke"
    assert out[4] is messages[4]


def test_stub_uses_recorded_verdicts_and_keeps_unresolved_failures() -> None:
    failure = run(LoopGuard(), Tool(KeyError("k")), "lookup")
    messages = [
        _openai_call("c1", "lookup", {}),
        {"role": "tool", "tool_call_id": "c1", "content": "no such key"},
        _openai_call("c2", "lookup", {}),
        {"role": "tool", "tool_call_id": "c2", "content": "Error: still failing"},
    ]
    assert stub_superseded_failures(messages) == messages
    later = [
        *messages[:2],
        _openai_call("c3", "lookup", {}),
        {"role": "tool", "tool_call_id": "c3", "content": "ok"},
    ]
    out = stub_superseded_failures(later, recorded={"c1": failure.verdict()})
    assert out[1]["content"] == (
        "[Earlier failure of lookup, resolved by a later successful call: no such key]"
    )


def test_stub_never_raises_on_junk() -> None:
    assert stub_superseded_failures([1, None, "x"], format="openai") == [1, None, "x"]
    assert stub_superseded_failures([{"role": "tool"}], format="bogus") == [{"role": "tool"}]  # type: ignore[arg-type]


def test_a_copy_decides_as_the_guard_and_goes_on_apart() -> None:
    loop = LoopGuard(max_consecutive_failures=2)
    loop.record("edit", {"path": "/x"}, Kind.FIXABLE, "no such line")
    loop.record("fetch", {"url": "u"}, Kind.TRANSIENT, "503")
    twin = loop.copy()

    assert twin.settings() == loop.settings()
    refused = twin.before("edit", {"path": "/x"})
    assert refused is not None
    assert refused.rule == "loop-repeat"
    assert twin.blocked == [refused]
    assert loop.blocked == []

    twin.record("fetch", {"url": "u"}, Kind.TRANSIENT, "503")
    twin.record("edit", {"path": "/x"}, None)
    assert (twin.consecutive_failures("fetch"), loop.consecutive_failures("fetch")) == (2, 1)
    assert twin.piled_up("fetch") is None
    assert twin.advice("fetch") is not None
    assert loop.advice("fetch") is None
    assert loop.before("edit", {"path": "/x"}) is not None
    assert twin.before("edit", {"path": "/y"}) is None
    assert LoopGuard().copy().settings() == LoopGuard().settings()
