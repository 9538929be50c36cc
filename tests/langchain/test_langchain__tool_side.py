"""The tool side in detail: returned failures, forms, loop guard, hooks, control flow."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command, interrupt
from lc_support import ai, call, notes, shape, tool_messages

from call_records import attempt, call_record
from toolmend import Kind, LoopGuard, Verdict
from toolmend.contracts import declared
from toolmend.integrations import (
    GUIDANCE,
    LOOP_BUDGET,
    STOPPED,
    Source,
    runtime_note,
    verdict_from_record,
)
from toolmend_langchain import ToolMendMiddleware, reports
from toolmend_langchain._tool_side import configure
from toolmend_langchain.testing import ScriptedChatModel, replies

GO = {"messages": [HumanMessage("go")]}


@tool
def weather(city: str) -> str:
    """Weather of a city."""
    return f"sunny in {city}"


async def test_without_malformed_calls_toolnodes_unknown_tool_text_is_recorded_as_fixable() -> None:
    model = ScriptedChatModel(script=replies([ai(call("forecast", {"city": "Oslo"}, "u1")), "ok"]))
    agent = create_agent(model, [weather], middleware=[ToolMendMiddleware(malformed_calls=False)])
    out = await agent.ainvoke(GO)

    (result,) = tool_messages(out["messages"])
    text = "Error: forecast is not a valid tool, try one of [weather]."
    assert (result.status, result.content) == ("error", text)
    record = result.response_metadata["toolmend"]
    assert (record["kind"], record["rule"], record["source"]) == ("fixable", "status", "flag")
    assert shape(model.seen[1][-1:]) == [
        ("human", runtime_note("forecast", {"city": "Oslo"}, text, GUIDANCE[Kind.FIXABLE]))
    ]


def test_without_malformed_calls_toolnodes_bad_arguments_text_is_recorded_as_fixable() -> None:
    model = ScriptedChatModel(script=replies([ai(call("weather", {"town": "Oslo"}, "b1")), "ok"]))
    agent = create_agent(model, [weather], middleware=[ToolMendMiddleware(malformed_calls=False)])
    out = agent.invoke(GO)

    (result,) = tool_messages(out["messages"])
    assert result.status == "error"
    assert result.content.startswith("Error invoking tool 'weather' with kwargs {'town': 'Oslo'}")
    record = result.response_metadata["toolmend"]
    assert (record["kind"], record["rule"]) == ("fixable", "status")
    assert shape(model.seen[1][-1:]) == [
        ("human", runtime_note("weather", {"town": "Oslo"}, result.content, GUIDANCE[Kind.FIXABLE]))
    ]


def test_error_shaped_success_is_recorded_and_left_as_it_is() -> None:
    text = "Error: permission denied for /var/log/secure"

    @tool
    def tail_log(path: str) -> str:
        """Tail a log."""
        return text

    model = ScriptedChatModel(script=replies([ai(call("tail_log", {"path": "/var"}, "t1")), "ok"]))
    agent = create_agent(model, [tail_log], middleware=[ToolMendMiddleware()])
    out = agent.invoke(GO)

    (result,) = tool_messages(out["messages"])
    assert (result.status, result.content) == ("success", text)
    record = result.response_metadata["toolmend"]
    assert (record["kind"], record["rule"], record["source"]) == (
        "unrecoverable",
        "generic",
        "generic",
    )
    assert shape(model.seen[1][-1:]) == [
        ("human", runtime_note("tail_log", {"path": "/var"}, text, GUIDANCE[Kind.UNRECOVERABLE]))
    ]


def test_a_log_that_mentions_errors_is_a_success() -> None:
    @tool
    def tail_log(path: str) -> str:
        """Tail a log."""
        return "12:00 ERROR disk full\n12:01 recovered"

    model = ScriptedChatModel(script=replies([ai(call("tail_log", {"path": "/var"}, "t1")), "ok"]))
    agent = create_agent(model, [tail_log], middleware=[ToolMendMiddleware()])
    out = agent.invoke(GO)

    assert reports(out["messages"]) == []
    assert notes(model.seen[1]) == []


def test_form_c1_puts_guidance_in_the_result_once() -> None:
    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        raise PermissionError("access denied")

    model = ScriptedChatModel(script=replies([ai(call("read_file", {"path": "/x"}, "r1")), "ok"]))
    agent = create_agent(model, [read_file], middleware=[ToolMendMiddleware(form="c1")])
    out = agent.invoke(GO)

    (result,) = tool_messages(out["messages"])
    line = next(n for n, text in enumerate(Path(__file__).read_text().splitlines(), 1)
                if 'raise PermissionError("access denied")' in text)  # fmt: skip
    cause = (
        "Tool 'read_file' failed after 1 attempt with PermissionError: access denied\n"
        f"Where: test_langchain__tool_side.py:{line} in read_file"
    )
    assert result.content == cause + "\n" + GUIDANCE[Kind.UNRECOVERABLE]
    why = "Not retried: the failure is not temporary, so the same call would fail again."
    error = "PermissionError: access denied"
    reason = "text 'PermissionError'"
    assert result.response_metadata["toolmend"] == call_record(
        tool="read_file",
        effect="unknown",
        effect_source="default",
        form="c1",
        failed=True,
        kind="unrecoverable",
        rule="exception",
        source="exception",
        reason=reason,
        guidance=GUIDANCE[Kind.UNRECOVERABLE],
        attempts=1,
        stop="kind",
        why_stopped=why,
        history=[
            attempt(
                1,
                error,
                "unrecoverable",
                reason,
                stop="kind",
                why_stopped=why,
                outcome_unknown=True,
            )
        ],
        cause=cause,
        exception=error,
        arguments={"path": "/x"},
        guidance_in_content=True,
        outcome_unknown=True,  # an undeclared tool may have done anything before it raised
    )
    assert verdict_from_record(result.response_metadata["toolmend"]) == Verdict(
        True,
        Kind.UNRECOVERABLE,
        "exception",
        Source.EXCEPTION,
        reason,
        GUIDANCE[Kind.UNRECOVERABLE],
    )
    assert shape(model.seen[1]) == shape(out["messages"][:3])


def test_form_c1_appends_guidance_to_a_returned_failure_in_the_request_only() -> None:
    model = ScriptedChatModel(script=replies([ai(call("forecast", {}, "u1")), "ok"]))
    middleware = ToolMendMiddleware(form="c1", malformed_calls=False)
    agent = create_agent(model, [weather], middleware=[middleware])
    out = agent.invoke(GO)

    text = "Error: forecast is not a valid tool, try one of [weather]."
    assert tool_messages(out["messages"])[0].content == text
    assert tool_messages(model.seen[1])[0].content == text + "\n" + GUIDANCE[Kind.FIXABLE]


def test_form_off_records_but_changes_nothing() -> None:
    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        raise PermissionError("access denied")

    model = ScriptedChatModel(script=replies([ai(call("read_file", {"path": "/x"}, "r1")), "ok"]))
    agent = create_agent(model, [read_file], middleware=[ToolMendMiddleware(form="off")])
    out = agent.invoke(GO)

    (result,) = tool_messages(out["messages"])
    assert result.content == result.response_metadata["toolmend"]["cause"]
    assert shape(model.seen[1]) == shape(out["messages"][:3])
    rewrite = reports(out["messages"])[-1]["rewrite"]
    assert (rewrite["form"], rewrite["changed"], len(rewrite["detections"])) == ("off", False, 1)


def test_loop_budget_stops_a_tool_that_keeps_failing_with_the_hard_stop() -> None:
    runs: list[str] = []

    @tool
    def flaky(n: int) -> str:
        """Sometimes works."""
        runs.append(str(n))
        raise RuntimeError(f"boom {n}")

    script = replies([ai(call("flaky", {"n": i}, f"f{i}")) for i in range(4)] + ["gave up"])
    model = ScriptedChatModel(script=script)
    agent = create_agent(
        model, [flaky], middleware=[ToolMendMiddleware(loop_guard=LoopGuard(hard_stop=True))]
    )
    out = agent.invoke(GO)

    assert runs == ["0", "1", "2"]
    last = tool_messages(out["messages"])[-1]
    assert last.content == STOPPED.format(tool="flaky", count=3)
    assert last.response_metadata["toolmend"]["rule"] == "loop-budget"
    assert model.seen[4][-1].content == runtime_note(
        "flaky", {"n": 3}, last.content, LOOP_BUDGET.format(tool="flaky", count=3)
    )


def test_loop_guard_template_and_off() -> None:
    runs: list[int] = []

    @tool
    def flaky(n: int) -> str:
        """Sometimes works."""
        runs.append(n)
        raise RuntimeError("boom")

    def agent_with(guard: Any) -> Any:
        script = replies([ai(call("flaky", {"n": i}, f"f{i}")) for i in range(3)] + ["stop"])
        model = ScriptedChatModel(script=script)
        return create_agent(model, [flaky], middleware=[ToolMendMiddleware(loop_guard=guard)])

    agent_with(LoopGuard(max_consecutive_failures=1, hard_stop=True)).invoke(GO)
    assert runs == [0]
    runs.clear()
    agent_with(None).invoke(GO)
    assert runs == [0, 1, 2]
    with pytest.raises(TypeError, match="loop_guard"):
        ToolMendMiddleware(loop_guard=3)  # type: ignore[arg-type]


def test_a_new_user_turn_starts_a_fresh_loop_guard() -> None:
    runs: list[str] = []

    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        runs.append(path)
        raise PermissionError("access denied")

    model = ScriptedChatModel(
        script=replies(
            [
                ai(call("read_file", {"path": "/x"}, "r1")),
                ai(call("read_file", {"path": "/x"}, "r2")),
                "no access",
                ai(call("read_file", {"path": "/x"}, "r3")),
                "still no access",
            ]
        )
    )
    agent = create_agent(
        model, [read_file], middleware=[ToolMendMiddleware()], checkpointer=InMemorySaver()
    )
    config: RunnableConfig = {"configurable": {"thread_id": "t"}}
    agent.invoke(GO, config)
    assert runs == ["/x"]
    agent.invoke({"messages": [HumanMessage("I fixed the permission, try again")]}, config)
    assert runs == ["/x", "/x"]


def test_verify_hook_makes_a_write_retryable() -> None:
    attempts: list[int] = []

    @tool
    def transfer(amount: int) -> str:
        """Transfer money."""
        attempts.append(amount)
        if len(attempts) == 1:
            raise TimeoutError("gateway timeout")
        return "transferred"

    checked: list[tuple[str, int]] = []

    def did_it_land(ctx: Any, exc: BaseException) -> bool:
        checked.append((ctx.tool, ctx.attempt))
        return False

    model = ScriptedChatModel(script=replies([ai(call("transfer", {"amount": 3}, "x1")), "ok"]))
    middleware = ToolMendMiddleware(effects={"transfer": "write"}, verify={"transfer": did_it_land})
    out = create_agent(model, [transfer], middleware=[middleware]).invoke(GO)

    assert attempts == [3, 3]
    assert checked == [("transfer", 1)]
    assert tool_messages(out["messages"])[0].content == "transferred"


async def test_idempotency_key_reaches_the_tool_and_allows_a_retry() -> None:
    keys: list[str | None] = []

    @tool
    async def charge(amount: int, key: str | None = None) -> str:
        """Charge a card."""
        keys.append(key)
        if len(keys) == 1:
            raise TimeoutError("gateway timeout")
        return "charged"

    model = ScriptedChatModel(script=replies([ai(call("charge", {"amount": 9}, "k1")), "ok"]))
    middleware = ToolMendMiddleware(effects={"charge": "write"}, idempotency_keys={"charge": "key"})
    out = await create_agent(model, [charge], middleware=[middleware]).ainvoke(GO)

    first, second = keys
    assert first == second
    assert re.fullmatch("[0-9a-f]{32}", first or "")
    assert tool_messages(out["messages"])[0].content == "charged"
    assert tool_messages(out["messages"])[0].tool_call_id == "k1"


@pytest.mark.parametrize("asynchronous", [False, True])
async def test_interrupt_passes_through(asynchronous: bool) -> None:
    @tool
    def deploy(env: str) -> str:
        """Deploy."""
        answer = interrupt(f"deploy to {env}?")
        return f"deployed: {answer}"

    model = ScriptedChatModel(script=replies([ai(call("deploy", {"env": "prod"}, "d1")), "done"]))
    agent = create_agent(
        model, [deploy], middleware=[ToolMendMiddleware()], checkpointer=InMemorySaver()
    )
    config: RunnableConfig = {"configurable": {"thread_id": "i"}}
    out = await agent.ainvoke(GO, config) if asynchronous else agent.invoke(GO, config)

    assert [i.value for i in out["__interrupt__"]] == ["deploy to prod?"]
    assert tool_messages(out["messages"]) == []
    resumed = Command(resume="yes")
    out = await agent.ainvoke(resumed, config) if asynchronous else agent.invoke(resumed, config)
    assert tool_messages(out["messages"])[0].content == "deployed: yes"


def test_command_results_pass_through() -> None:
    @tool
    def remember(fact: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command[Any]:
        """Remember a fact."""
        return Command(update={"messages": [ToolMessage("noted", tool_call_id=tool_call_id)]})

    model = ScriptedChatModel(script=replies([ai(call("remember", {"fact": "x"}, "m1")), "ok"]))
    out = create_agent(model, [remember], middleware=[ToolMendMiddleware()]).invoke(GO)
    assert [m.content for m in tool_messages(out["messages"])] == ["noted"]


def test_contract_violation_delivers_the_receipt() -> None:
    @tool
    def quote(symbol: str) -> str:
        """Quote."""
        return '{"price": -3}' if symbol == "BAD" else '{"price": 3}'

    contracts = declared(
        {"quote": {"type": "object", "properties": {"price": {"type": "number", "minimum": 0}}}}
    )
    model = ScriptedChatModel(
        script=replies(
            [ai(call("quote", {"symbol": "OK"}, "q1"), call("quote", {"symbol": "BAD"}, "q2")), "x"]
        )
    )
    middleware = ToolMendMiddleware(effects={"quote": "read_only"}, contracts=contracts)
    out = create_agent(model, [quote], middleware=[middleware]).invoke(GO)

    good, bad = tool_messages(out["messages"])
    assert (good.content, good.response_metadata) == ('{"price": 3}', {})
    assert bad.content == (
        '{"tool_result": {"price": -3}, "outcome_contract": {"status": "inconsistent", '
        '"violations": [{"code": "schema_violation", "path": "price", "expected": '
        '{"minimum": 0}, "observed": -3, "detail": "-3 is less than the minimum of 0"}], '
        '"admissible_recovery_tools": []}}'
    )
    violation = {
        "code": "schema_violation",
        "path": "price",
        "expected": {"minimum": 0},
        "observed": -3,
        "detail": "-3 is less than the minimum of 0",
    }
    receipt = {
        "status": "inconsistent",
        "violations": [violation],
        "admissible_recovery_tools": [],
    }
    assert bad.response_metadata["toolmend"] == call_record(
        tool="quote",
        effect="read_only",
        effect_source="declared",
        form="c3",
        failed=False,
        attempts=1,
        source="contract",
        violations=[violation],
        receipt=receipt,
        shown=bad.content,
    )
    assert notes(model.seen[1]) == []


def test_a_result_that_reads_as_a_failure_gets_no_receipt() -> None:
    text = "Error: permission denied for the quote feed"

    @tool
    def quote(symbol: str) -> str:
        """Quote."""
        return text

    contracts = declared({"quote": {"type": "object"}})
    model = ScriptedChatModel(script=replies([ai(call("quote", {"symbol": "X"}, "q1")), "x"]))
    middleware = ToolMendMiddleware(effects={"quote": "read_only"}, contracts=contracts)
    out = create_agent(model, [quote], middleware=[middleware]).invoke(GO)

    (result,) = tool_messages(out["messages"])
    assert (result.status, result.content) == ("success", text)
    record = result.response_metadata["toolmend"]
    assert "contract" not in record
    assert (record["failed"], record["kind"], record["rule"]) == (True, "unrecoverable", "generic")
    assert shape(model.seen[1][-1:]) == [
        ("human", runtime_note("quote", {"symbol": "X"}, text, GUIDANCE[Kind.UNRECOVERABLE]))
    ]


def test_odd_requests_never_raise_from_toolmend() -> None:
    side = configure()
    reply = ToolMessage("fine", tool_call_id="z")
    request = ToolCallRequest(
        tool_call={"name": "ghost", "args": "not a mapping", "id": None},  # type: ignore[typeddict-item]
        tool=None,
        state=object(),
        runtime=None,  # type: ignore[arg-type]
    )
    assert side.call(request, lambda _: reply) is reply


# -- an error ToolMessage returned by the tool (langchain-mcp-adapters, handle_tool_errors) --


def _dropping_fetch(runs: list[str]) -> Any:
    from langchain_core.tools import ToolException

    @tool
    def fetch(url: str) -> str:
        """Fetch a page."""
        runs.append(url)
        if len(runs) == 1:
            raise ToolException("Error: connection reset by peer (ECONNRESET)")
        return "page text"

    fetch.handle_tool_error = True
    return fetch


def test_a_returned_transient_error_is_retried_for_a_read_only_tool() -> None:
    runs: list[str] = []
    fetch = _dropping_fetch(runs)
    model = ScriptedChatModel(script=replies([ai(call("fetch", {"url": "u"}, "f1")), "done"]))
    middleware = ToolMendMiddleware(effects={"fetch": "read_only"})
    out = create_agent(model, [fetch], middleware=[middleware]).invoke(GO)
    assert runs == ["u", "u"]
    (result,) = tool_messages(out["messages"])
    assert (result.status, result.content) == ("success", "page text")
    record = result.response_metadata["toolmend"]
    assert record["attempts"] == 2
    assert [entry["error"] for entry in record["history"]] == [
        "toolmend.ResultFailed: Error: connection reset by peer (ECONNRESET)"
    ]


def test_a_returned_transient_error_of_a_write_is_not_retried() -> None:
    runs: list[str] = []
    fetch = _dropping_fetch(runs)
    model = ScriptedChatModel(script=replies([ai(call("fetch", {"url": "u"}, "f1")), "done"]))
    out = create_agent(model, [fetch], middleware=[ToolMendMiddleware()]).invoke(GO)
    assert runs == ["u"]
    (result,) = tool_messages(out["messages"])
    assert (result.status, result.content) == (
        "error",
        "Error: connection reset by peer (ECONNRESET)",
    )
    assert result.response_metadata["toolmend"]["kind"] == "transient"


def _replays(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any, bool]]:
    """Every observation any loop guard replays: (tool, arguments, failed)."""
    seen: list[tuple[str, Any, bool]] = []
    original = LoopGuard.replay

    def spy(self: LoopGuard, observations: Any) -> None:
        listed = list(observations)
        seen.extend((o.tool, dict(o.arguments), o.verdict.failed) for o in listed)
        original(self, listed)

    monkeypatch.setattr(LoopGuard, "replay", spy)
    return seen


def _step_agent(guard: Any) -> Any:
    @tool
    def step(n: int) -> str:
        """One step of a task."""
        if n in (2, 3):
            raise PermissionError(f"step {n}: access denied")
        return f"done {n}"

    calls = [ai(call("step", {"n": n}, f"s{n}")) for n in (0, 1, 2, 3, 2, 4)]
    model = ScriptedChatModel(script=replies([*calls, "finished"]))
    return create_agent(model, [step], middleware=[ToolMendMiddleware(loop_guard=guard)])


def test_a_growing_run_replays_each_tool_result_once(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _replays(monkeypatch)
    out = _step_agent(True).invoke(GO)

    # Six calls: each replays only the results added since the one before.
    assert seen == [
        ("step", {"n": 0}, False),
        ("step", {"n": 1}, False),
        ("step", {"n": 2}, True),
        ("step", {"n": 3}, True),
        ("step", {"n": 2}, True),
    ]
    # The repeat of the failed n=2 is refused, as with a guard rebuilt for every call.
    rebuilt = _step_agent(lambda: LoopGuard()).invoke(GO)
    assert shape(out["messages"]) == shape(rebuilt["messages"])
    metadata = [m.response_metadata.get("toolmend", {}) for m in tool_messages(out["messages"])]
    assert [m.get("rule") for m in metadata] == [
        None,
        None,
        "exception",
        "exception",
        "loop-repeat",
        None,
    ]
    # The rebuilt guard read the whole run at every call: 0 + 1 + 2 + 3 + 4 + 5 results.
    assert len(seen) == 5 + 15


def test_history_that_does_not_extend_what_was_replayed_is_replayed_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = _replays(monkeypatch)
    ran: list[str] = []

    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        ran.append(path)
        raise PermissionError("access denied")

    side = configure()
    first = HumanMessage("go", id="h")

    def request(messages: list[Any], call_id: str) -> ToolCallRequest:
        tool_call = call("read_file", {"path": "/x"}, call_id)
        return ToolCallRequest(tool_call=tool_call, tool=read_file, state={"messages": messages},  # type: ignore[arg-type]
                               runtime=None)  # type: ignore[arg-type]  # fmt: skip

    def handler(req: ToolCallRequest) -> ToolMessage:
        assert req.tool is not None
        return ToolMessage(req.tool.invoke(req.tool_call["args"]), tool_call_id=req.tool_call["id"])

    def run(messages: list[Any], call_id: str) -> Any:
        return side.call(request(messages, call_id), handler)

    one = [first, ai(call("read_file", {"path": "/x"}, "r1"))]
    failed = run(one, "r1")
    two = [*one, failed, ai(call("read_file", {"path": "/x"}, "r2"))]
    refused = run(two, "r2")
    assert (ran, refused.response_metadata["toolmend"]["rule"]) == (["/x"], "loop-repeat")
    assert seen == [("read_file", {"path": "/x"}, True)]

    # The same run with the failure edited into a success: the list does not extend
    # the one replayed (its last message is another object), so it is read whole.
    success = ToolMessage("contents of /x", tool_call_id="r1", name="read_file")
    edited = [first, ai(call("read_file", {"path": "/x"}, "r1")), success,
              ai(call("read_file", {"path": "/x"}, "r2"))]  # fmt: skip
    run(edited, "r2")
    assert ran == ["/x", "/x"]
    assert seen[1:] == [("read_file", {"path": "/x"}, False)]

    # Cut back to before the failure (a checkpoint resumed): nothing to replay, it runs.
    run(one, "r1")
    assert (ran, len(seen)) == (["/x", "/x", "/x"], 2)
