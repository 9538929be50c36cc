"""``RecoveringServer``: MCP tools retried under the core's policy, over a real stdio server.

The server (``oa_mcp_server.py``) appends a line per execution to a file in
``tmp_path``, so every test counts what ran on the server's side exactly.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, Runner
from agents.mcp import MCPServerStdio, MCPToolCustomDataContext, MCPToolMetaContext
from agents.testing import ScriptedModel, assistant_message, function_call
from oa_support import (
    FIXABLE,
    UNRECOVERABLE,
    VERIFY_FIRST,
    call_item,
    config,
    note,
    output_item,
    runtime_note,
    script,
    user,
)

import toolmend_openai_agents as tm
from call_records import attempt, call_record
from toolmend import Kind, Verdict
from toolmend.contracts import Contracts
from toolmend.integrations import EXHAUSTED, LATER, SleepLog, Source, Stop, verdict_from_record

SERVER = str(Path(__file__).with_name("oa_mcp_server.py"))
UNAVAILABLE = "Error executing tool {tool}: 503 Service Unavailable"
STOCK = "A1: 12 in stock"


def _stdio(counts: Path | None = None, **options: Any) -> MCPServerStdio:
    args = [SERVER] if counts is None else [SERVER, str(counts)]
    return MCPServerStdio(
        {"command": sys.executable, "args": args}, client_session_timeout_seconds=30, **options
    )


def runs(counts: Path, tool: str) -> list[dict[str, Any]]:
    """The arguments of every execution of ``tool`` on the server, in order."""
    log = counts / tool
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def text(value: str) -> list[dict[str, str]]:
    """An MCP tool output as the SDK hands it to the model: one text block."""
    return [{"type": "input_text", "text": value}]


async def run_one(
    server: tm.RecoveringServer, name: str, arguments: dict[str, Any], **settings: Any
) -> tuple[ScriptedModel, tm.Captured]:
    model = script(name, arguments, "c1", "done")
    async with server:
        agent = Agent(name="shop", model=model, mcp_servers=[server])
        with tm.capture() as captured:
            await Runner.run(agent, "go", run_config=config(**settings))
    return model, captured


async def test_a_read_only_tool_failing_twice_is_retried_and_the_model_sees_the_success(
    tmp_path: Path, sleeps: SleepLog
) -> None:
    server = tm.RecoveringServer(_stdio(tmp_path), effects={"stock": "read_only"})
    model, captured = await run_one(server, "stock", {"sku": "A1"})

    assert runs(tmp_path, "stock") == [{"sku": "A1"}] * 3
    assert model.calls[1].input == [
        user("go"),
        call_item("stock", {"sku": "A1"}, "c1"),
        output_item("c1", text(STOCK)),
    ]
    assert (captured.failures, captured.rewrites, captured.contracts) == ((), (), ())
    (retried,) = captured.retries
    error = "toolmend.ResultFailed: " + UNAVAILABLE.format(tool="stock")
    assert (retried.call_id, retried.tool, dict(retried.arguments), retried.attempts) == (
        "c1",
        "stock",
        {"sku": "A1"},
        3,
    )
    assert retried.to_dict() == call_record(
        tool="stock",
        failed=False,
        attempts=3,
        history=[
            attempt(n, error, "transient", "returned failure: Service Unavailable", delay=delay)
            for n, delay in enumerate(sleeps.sleeps, 1)
        ],
        call_id="c1",
        arguments={"sku": "A1"},
    )
    assert len(sleeps.sleeps) == 2
    assert captured.to_dict()["retries"][0]["attempts"] == 3


async def test_an_idempotent_tool_is_retried(tmp_path: Path) -> None:
    resolved: list[tuple[str, dict[str, Any] | None]] = []

    def resolver(context: MCPToolMetaContext) -> dict[str, Any] | None:
        resolved.append((context.tool_name, context.arguments))
        return None

    inner = _stdio(tmp_path, tool_meta_resolver=resolver)
    server = tm.RecoveringServer(inner, effects={"set_price": "idempotent"})
    model, captured = await run_one(server, "set_price", {"sku": "A1", "price": 2.5})

    assert runs(tmp_path, "set_price") == [{"sku": "A1", "price": 2.5}] * 3
    # The wrapped server's own meta resolver still runs, once per call.
    assert resolved == [("set_price", {"sku": "A1", "price": 2.5})]
    assert model.calls[1].input[2:] == [output_item("c1", text("A1 now costs 2.5"))]
    assert [r.attempts for r in captured.retries] == [3]
    assert captured.failures == ()


@pytest.mark.parametrize("effects", [{"set_price": "write"}, {}])
async def test_a_write_or_undeclared_tool_runs_once_and_the_model_is_asked_to_verify(
    tmp_path: Path, sleeps: SleepLog, effects: dict[str, str]
) -> None:
    server = tm.RecoveringServer(_stdio(tmp_path), effects=effects)
    model, captured = await run_one(server, "set_price", {"sku": "A1", "price": 2.5})

    assert runs(tmp_path, "set_price") == [{"sku": "A1", "price": 2.5}]
    assert sleeps.sleeps == []
    failed = UNAVAILABLE.format(tool="set_price")
    assert model.calls[1].input == [
        user("go"),
        call_item("set_price", {"sku": "A1", "price": 2.5}, "c1"),
        output_item("c1", text(failed)),
        note(runtime_note("set_price", "sku=A1, price=2.5", failed, VERIFY_FIRST)),
    ]
    (record,) = captured.failures
    assert (record.call_id, record.shown) == ("c1", failed)
    assert (record.kind, record.rule, record.attempts, record.outcome_unknown) == (
        "transient",
        "is_error",
        1,
        True,
    )
    assert (record.cause, record.guidance, record.stop) == (failed, VERIFY_FIRST, Stop.UNSAFE)
    assert verdict_from_record(record.to_dict()) == Verdict(
        True, Kind.TRANSIENT, "is_error", Source.FLAG, "Service Unavailable", VERIFY_FIRST
    )
    assert captured.retries == ()


async def test_a_read_only_tool_that_stays_down_stops_after_its_attempts(
    tmp_path: Path,
) -> None:
    server = tm.RecoveringServer(_stdio(tmp_path), effects={"always_down": "read_only"})
    model, captured = await run_one(server, "always_down", {"sku": "A1"})

    assert len(runs(tmp_path, "always_down")) == 3
    failed = UNAVAILABLE.format(tool="always_down")
    exhausted = EXHAUSTED.format(attempts=3)
    assert exhausted.endswith(LATER)
    assert model.calls[1].input[2:] == [
        output_item("c1", text(failed)),
        note(runtime_note("always_down", "sku=A1", failed, exhausted)),
    ]
    (record,) = captured.failures
    assert (record.shown, record.attempts, record.stop) == (
        failed,
        3,
        record.history[-1]["stop"],
    )
    assert record.to_dict()["stop"] == "attempts"
    assert [h["attempt"] for h in record.history] == [1, 2, 3]


async def test_a_raised_transient_error_of_a_read_only_tool_is_retried(tmp_path: Path) -> None:
    server = tm.RecoveringServer(_stdio(tmp_path), effects={"stock_raising": "read_only"})
    model, captured = await run_one(server, "stock_raising", {"sku": "A1"})

    assert len(runs(tmp_path, "stock_raising")) == 2
    assert model.calls[1].input[2:] == [output_item("c1", text(STOCK))]
    assert [(r.attempts, r.history[0]["error"]) for r in captured.retries] == [
        (2, "mcp.MCPError: upstream request timed out")
    ]


async def test_a_raised_transient_error_of_an_undeclared_tool_is_shown_by_the_failure_function(
    tmp_path: Path,
) -> None:
    server = tm.RecoveringServer(_stdio(tmp_path))
    model, captured = await run_one(server, "stock_raising", {"sku": "A1"})

    assert len(runs(tmp_path, "stock_raising")) == 1
    raised = (
        "Tool 'stock_raising' failed after 1 attempt with mcp.MCPError: upstream request timed out"
    )
    assert model.calls[1].input[2:] == [
        output_item("c1", raised),
        note(runtime_note("stock_raising", "sku=A1", raised, VERIFY_FIRST)),
    ]
    assert [(f.shown, f.attempts, f.rule) for f in captured.failures] == [(raised, 1, "exception")]


@pytest.mark.parametrize(("trust", "executions"), [(True, 3), (False, 1)])
async def test_annotations_decide_only_when_trusted(
    tmp_path: Path, trust: bool, executions: int
) -> None:
    server = tm.RecoveringServer(_stdio(tmp_path), trust_annotations=trust)
    model, _ = await run_one(server, "shelf", {"sku": "A1"})

    assert len(runs(tmp_path, "shelf")) == executions
    output = model.calls[1].input[2]["output"]
    assert output == text("A1: shelf 4" if trust else UNAVAILABLE.format(tool="shelf"))
    assert server.effect("shelf") == ("read_only" if trust else "unknown")


async def test_a_declared_effect_wins_over_the_annotations(tmp_path: Path) -> None:
    server = tm.RecoveringServer(
        _stdio(tmp_path), effects={"shelf": "write"}, trust_annotations=True
    )
    await run_one(server, "shelf", {"sku": "A1"})
    assert len(runs(tmp_path, "shelf")) == 1


async def test_failures_that_are_not_retried_read_as_without_the_wrapper(tmp_path: Path) -> None:
    """The scenario of test_oa_mcp.py, through the wrapper instead of the server options."""
    seen: list[tuple[str, bool | None]] = []

    def mine(context: MCPToolCustomDataContext) -> Mapping[str, Any] | None:
        seen.append((context.tool_name, context.is_error))
        return None

    turns = [
        [
            function_call("read_secret", {"path": "/etc/shadow"}, call_id="c1"),
            function_call("lookup", {"key": "KEY"}, call_id="c2"),
            function_call("echo", {"text": "all good"}, call_id="c3"),
        ],
        [assistant_message("done")],
    ]
    found = []
    for server in (
        _stdio(tmp_path, **tm.mcp_server_options(then=mine)),
        tm.RecoveringServer(_stdio(tmp_path, custom_data_extractor=mine)),
    ):
        model = ScriptedModel(turns)
        async with server:
            agent = Agent(name="mcp", model=model, mcp_servers=[server])
            with tm.capture() as captured:
                result = await Runner.run(agent, "go", run_config=config())
        found.append((model.calls[1].input, result.to_input_list(), captured))

    (plain_input, plain_history, plain), (ours_input, ours_history, ours) = found
    refused = "Error executing tool read_secret: Permission denied: /etc/shadow"
    raised = "Tool 'lookup' failed after 1 attempt with mcp.MCPError: key must be lowercase: KEY"
    notes = "\n\n".join(
        [
            runtime_note("read_secret", "path=/etc/shadow", refused, UNRECOVERABLE),
            runtime_note("lookup", "key=KEY", raised, FIXABLE),
        ]
    )
    assert ours_input == plain_input
    assert ours_input[-1] == note(notes)
    assert ours_history == plain_history
    assert sorted(seen) == [("echo", False)] * 2 + [("read_secret", True)] * 2
    # The records say the same, and also why the core did not retry.
    decided = ("stop", "why_stopped", "history")

    def said(captured: tm.Captured) -> list[tuple[Any, ...]]:
        # The calls of one turn run concurrently: their failures are recorded in any order.
        return sorted(
            (
                (
                    f.call_id,
                    f.shown,
                    {k: v for k, v in f.to_dict().items() if k not in decided},
                )
                for f in captured.failures
            ),
            key=lambda entry: str(entry[0]),
        )

    assert said(ours) == said(plain)
    assert [(f.stop, len(f.history)) for f in ours.failures] == [
        (Stop.KIND, 1),
        (Stop.KIND, 1),
    ]
    assert sorted((f.call_id, f.kind, f.rule) for f in ours.failures) == [
        ("c1", "unrecoverable", "is_error"),
        ("c2", "fixable", "exception"),
    ]
    assert len(runs(tmp_path, "read_secret")) == 2  # once per server


async def test_the_runs_loop_guard_refuses_an_exact_repeat_of_an_unrecoverable_mcp_call(
    tmp_path: Path,
) -> None:
    model = ScriptedModel(
        [
            [function_call("read_secret", {"path": "/etc/shadow"}, call_id="c1")],
            [function_call("read_secret", {"path": "/etc/shadow"}, call_id="c2")],
            [assistant_message("I cannot read it.")],
        ]
    )
    async with tm.RecoveringServer(_stdio(tmp_path)) as server:
        agent = Agent(name="mcp", model=model, mcp_servers=[server])
        with tm.capture() as captured:
            await Runner.run(agent, "go", run_config=config())

    assert len(runs(tmp_path, "read_secret")) == 1
    error = "Error executing tool read_secret: Permission denied: /etc/shadow"
    repeated = (
        "Tool 'read_secret' was not run: this exact call already failed in this task. "
        f"The earlier error: {error}"
    )
    assert model.calls[2].input == [
        user("go"),
        call_item("read_secret", {"path": "/etc/shadow"}, "c1"),
        output_item("c1", text(error)),
        call_item("read_secret", {"path": "/etc/shadow"}, "c2"),
        output_item("c2", repeated),
        note(runtime_note("read_secret", "path=/etc/shadow", repeated, UNRECOVERABLE)),
    ]
    assert [(f.call_id, f.rule, f.attempts) for f in captured.failures] == [
        ("c1", "is_error", 1),
        ("c2", "loop-repeat", 0),
    ]


SCHEMA = {"type": "object", "properties": {"price": {"type": "number"}}, "required": ["price"]}
VIOLATION = {
    "code": "schema_violation",
    "path": "price",
    "expected": {"type": "number"},
    "observed": "n/a",
    "detail": "'n/a' is not of type 'number'",
}


@pytest.mark.parametrize("where", ["run", "server", "structured"])
async def test_a_result_that_breaks_its_contract_reaches_the_model_as_the_receipt(
    tmp_path: Path, where: str
) -> None:
    contracts = Contracts().declare("quote", SCHEMA)
    if where == "run":
        server = tm.RecoveringServer(_stdio(tmp_path))
        model, captured = await run_one(server, "quote", {"symbol": "ACME"}, contracts=contracts)
    else:
        # "structured": the model reads the structured content, and so does the contract.
        inner = _stdio(tmp_path, use_structured_content=where == "structured")
        server = tm.RecoveringServer(inner, contracts=contracts)
        model, captured = await run_one(server, "quote", {"symbol": "ACME"})

    assert runs(tmp_path, "quote") == [{"symbol": "ACME"}]
    receipt = {
        "tool_result": {"symbol": "ACME", "price": "n/a"},
        "outcome_contract": {
            "status": "inconsistent",
            "violations": [VIOLATION],
            "admissible_recovery_tools": [],
        },
    }
    assert model.calls[1].input[2:] == [output_item("c1", text(json.dumps(receipt)))]
    (record,) = captured.contracts
    assert record.to_dict() == call_record(
        tool="quote",
        failed=False,
        attempts=1,
        source="contract",
        violations=[VIOLATION],
        receipt=receipt["outcome_contract"],
        call_id="c1",
        arguments={"symbol": "ACME"},
        shown=json.dumps(receipt),
    )
    assert (captured.failures, captured.rewrites) == ((), ())


async def test_a_result_that_keeps_its_contract_is_untouched(tmp_path: Path) -> None:
    contracts = Contracts().declare("stock", {"type": "string", "pattern": "in stock$"})
    server = tm.RecoveringServer(_stdio(tmp_path), effects={"stock": "read_only"})
    model, captured = await run_one(server, "stock", {"sku": "A1"}, contracts=contracts)
    assert model.calls[1].input[2:] == [output_item("c1", text(STOCK))]
    assert captured.contracts == ()


async def test_everything_else_is_the_wrapped_servers(tmp_path: Path) -> None:
    inner = _stdio(tmp_path, cache_tools_list=True)
    server = tm.RecoveringServer(inner, retry=None, effects={"stock": "read_only"})
    async with server:
        tools = await server.list_tools()
        assert server.name == inner.name
        assert server.cache_tools_list is True
        assert server.session is inner.session
        assert [t.name for t in server.cached_tools or []] == [t.name for t in tools]
        result = await server.call_tool("stock", {"sku": "B2"})  # no run: no tool context
    # retry=None: one attempt, and the failed result is returned as the server sent it.
    assert runs(tmp_path, "stock") == [{"sku": "B2"}]
    assert result.is_error is True
    assert result.content[0].model_dump()["text"] == UNAVAILABLE.format(tool="stock")
