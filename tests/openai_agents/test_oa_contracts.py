"""Outcome contracts on ``function_tool`` results: exact receipts, reports, and when not."""

from __future__ import annotations

import json
import logging
from typing import Any

import agents
import pytest
from agents import Agent, Runner
from oa_support import UNRECOVERABLE, config, note, output_item, runtime_note, script

import toolmend_openai_agents as tm
from call_records import call_record
from toolmend.contracts import Contracts

SCHEMA = {"type": "object", "properties": {"price": {"type": "number"}}, "required": ["price"]}
CONTRACTS = Contracts(substitutes={"get_quote": ("get_quote_backup", "ask_broker")}).declare(
    "get_quote", SCHEMA
)
VIOLATION = {
    "code": "schema_violation",
    "path": "price",
    "expected": {"type": "number"},
    "observed": "n/a",
    "detail": "'n/a' is not of type 'number'",
}
NONBINDING = (
    "This advisory is nonbinding. Treat the result as unreliable and verify or recover "
    "using the available tools and task context before relying on it. "
    "All actions remain available."
)


def quote_tool(result: Any, **options: Any) -> agents.FunctionTool:
    def get_quote(symbol: str) -> Any:
        """Quote a stock."""
        return result

    return tm.function_tool(get_quote, effect="read_only", **options)


@tm.function_tool(effect="read_only")
def get_quote_backup(symbol: str) -> dict[str, Any]:
    """Quote a stock from the backup feed."""
    return {"symbol": symbol, "price": 1.0}


async def run(tools: list[Any], **settings: Any) -> tuple[list[Any], tm.Captured]:
    model = script("get_quote", {"symbol": "ACME"}, "call_q", "ok")
    agent = Agent(name="quotes", model=model, tools=tools)
    with tm.capture() as captured:
        await Runner.run(agent, "Quote ACME", run_config=config(**settings))
    return model.calls[1].input[2:], captured


async def test_a_json_result_that_breaks_its_contract_reaches_the_model_as_the_receipt(
    caplog: pytest.LogCaptureFixture,
) -> None:
    tool = quote_tool({"symbol": "ACME", "price": "n/a"}, contracts=CONTRACTS)
    caplog.set_level(logging.INFO, logger="toolmend.openai_agents")
    sent, captured = await run([tool, get_quote_backup])

    receipt = {
        "tool_result": {"symbol": "ACME", "price": "n/a"},
        "outcome_contract": {
            "status": "inconsistent",
            "violations": [VIOLATION],
            "admissible_recovery_tools": ["get_quote_backup"],
        },
    }
    assert sent == [output_item("call_q", json.dumps(receipt))]
    (record,) = captured.contracts
    assert record.to_dict() == call_record(
        tool="get_quote",
        failed=False,
        attempts=1,
        source="contract",
        violations=[VIOLATION],
        receipt=receipt["outcome_contract"],
        call_id="call_q",
        arguments={"symbol": "ACME"},
        shown=json.dumps(receipt),
    )
    assert (captured.failures, captured.rewrites) == ((), ())
    assert caplog.messages == [
        "toolmend: get_quote result violates its contract (call call_q): schema_violation"
    ]


async def test_run_config_contracts_cover_tools_without_their_own() -> None:
    text_contracts = Contracts().declare("get_quote", SCHEMA)
    tool = quote_tool('{"symbol": "ACME", "price": "n/a"}')
    sent, captured = await run([tool], contracts=text_contracts)

    receipt = {
        "tool_result": {"symbol": "ACME", "price": "n/a"},
        "outcome_contract": {
            "status": "inconsistent",
            "violations": [VIOLATION],
            "admissible_recovery_tools": [],
        },
    }
    assert sent == [output_item("call_q", json.dumps(receipt))]
    assert [r.call_id for r in captured.contracts] == ["call_q"]


async def test_a_text_result_keeps_its_text_and_gets_the_advisory_block() -> None:
    declared = Contracts.from_dict(
        {
            "format": "toolmend.contracts",
            "version": 1,
            "tools": {"get_quote": {"schema": {"type": "string", "pattern": "^price "}}},
        }
    )
    tool = quote_tool("no quote today", contracts=declared)
    sent, captured = await run([tool])

    advisory = (
        "[OUTCOME CONTRACT ADVISORY] The result from `get_quote` is inconsistent with a known "
        "invariant of its outcome contract.\n"
        'Violation: schema_violation at `$`; expected {"pattern": "^price "}, '
        'observed "no quote today".\n' + NONBINDING
    )
    assert sent == [output_item("call_q", f"no quote today\n\n{advisory}")]
    assert len(captured.contracts) == 1


async def test_a_tools_own_contracts_win_over_the_runs() -> None:
    lenient = Contracts().declare("get_quote", {"type": "object"})
    tool = quote_tool({"symbol": "ACME", "price": "n/a"}, contracts=lenient)
    sent, captured = await run([tool], contracts=CONTRACTS)

    assert sent == [output_item("call_q", "{'symbol': 'ACME', 'price': 'n/a'}")]
    assert captured.contracts == ()


async def test_a_clean_result_is_left_exactly_as_the_tool_returned_it() -> None:
    tool = quote_tool({"symbol": "ACME", "price": 12.5}, contracts=CONTRACTS)
    sent, captured = await run([tool])

    assert sent == [output_item("call_q", "{'symbol': 'ACME', 'price': 12.5}")]
    assert captured.contracts == ()


async def test_a_result_that_reads_as_a_failure_is_handled_as_one_not_receipted() -> None:
    text = "Error: permission denied for the quote feed"
    strict = Contracts().declare("get_quote", {"type": "object"})
    tool = quote_tool(text, contracts=strict)
    sent, captured = await run([tool])

    assert sent == [
        output_item("call_q", text),
        note(runtime_note("get_quote", "symbol=ACME", text, UNRECOVERABLE)),
    ]
    assert captured.contracts == ()
    assert len(captured.rewrites) == 1
