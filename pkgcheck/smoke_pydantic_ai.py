"""Smoke test of the installed ``toolmend-pydantic-ai`` wheel: under a scripted
``FunctionModel``, a read-only tool that drops its connection once is retried inside the
call, and a write that times out is reported with the verify-first step, not repeated."""

from __future__ import annotations

from typing import Any

from pydantic_ai import Agent, FunctionToolset
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import FunctionModel

from toolmend import RetryPolicy
from toolmend_pydantic_ai import RecoveringToolset

tools: FunctionToolset[None] = FunctionToolset()
reads: list[str] = []
payments: list[str] = []
seen: dict[str, tuple[str, str]] = {}


@tools.tool_plain
def stock(sku: str) -> str:
    """Units in stock."""
    reads.append(sku)
    if len(reads) == 1:
        raise ConnectionError("connection reset by peer")
    return f"{sku}: 12"


@tools.tool_plain
def pay(invoice: str) -> str:
    """Pay an invoice."""
    payments.append(invoice)
    raise TimeoutError("the bank did not answer")


def model(messages: list[Any], info: Any) -> ModelResponse:
    if len(messages) == 1:
        calls = [ToolCallPart("stock", {"sku": "A1"}), ToolCallPart("pay", {"invoice": "7"})]
        return ModelResponse(parts=calls)
    for part in messages[-1].parts:
        if isinstance(part, ToolReturnPart):
            seen[part.tool_name] = (part.outcome, str(part.content))
    return ModelResponse(parts=[TextPart("done")])


policy = RetryPolicy(attempts=3, base=0.01, cap=0.02)
toolset = RecoveringToolset(tools, effects={"stock": "read_only", "pay": "write"}, retry=policy)
Agent(FunctionModel(model), toolsets=[toolset]).run_sync("go")
assert reads == ["A1", "A1"], reads
assert payments == ["7"], payments
assert seen["stock"] == ("success", "A1: 12"), seen
assert seen["pay"][0] == "failed", seen
assert seen["pay"][1].endswith("Check whether it did before calling it again."), seen
print("toolmend-pydantic-ai:", seen["stock"][1], "/", seen["pay"][0])
