"""An outcome-contract receipt reaching the model through the LangChain adapter, offline.

A ``get_quote`` tool returns plausible JSON.  Contracts are mined from 40 recorded
results; then the tool starts answering with a negative price for the wrong
symbol.  Nothing raised, so a plain agent would pass that on as a success.  With
``ToolMendMiddleware(contracts=...)`` the model's next request holds the receipt:
the raw result, the violated properties, and the recovery tools this agent has.

    pip install toolmend-langchain
    python examples/contracts_langchain.py   # in a clone of the repository: ./dev python
"""

from __future__ import annotations

import json
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool

from toolmend.contracts import mine
from toolmend_langchain import ToolMendMiddleware
from toolmend_langchain.testing import ScriptedChatModel, replies

SYMBOLS = ["ACME", "GLOBX", "INITECH", "UMBRL", "HOOLI"]


def recorded_calls() -> list[dict[str, Any]]:
    """Forty successful results, as a trace store would hold them."""
    calls = []
    for i in range(40):
        symbol = SYMBOLS[i % len(SYMBOLS)]
        price = round(10 + 7.5 * (i % 9) + i / 10, 2)
        result = {"symbol": symbol, "price": price, "currency": "EUR", "market": "open"}
        calls.append({"tool": "get_quote", "arguments": {"symbol": symbol}, "result": result})
    return calls


@tool
def get_quote(symbol: str) -> str:
    """The latest price of a stock symbol."""
    return json.dumps({"symbol": "ACME", "price": -3.2, "currency": "EUR", "market": "open"})


@tool
def get_quote_delayed(symbol: str) -> str:
    """The 15-minute delayed price of a stock symbol."""
    return json.dumps({"symbol": symbol, "price": 41.0, "currency": "EUR", "market": "open"})


def main() -> ToolMessage:
    contracts = mine(recorded_calls(), substitutes={"get_quote": ["get_quote_delayed"]})
    call = {"name": "get_quote", "args": {"symbol": "HOOLI"}, "id": "call_1"}
    model = ScriptedChatModel(script=replies([AIMessage("", tool_calls=[call]), "Done."]))
    middleware = ToolMendMiddleware(
        effects={"get_quote": "read_only", "get_quote_delayed": "read_only"},
        contracts=contracts,
    )
    agent = create_agent(model, [get_quote, get_quote_delayed], middleware=[middleware])
    agent.invoke({"messages": [{"role": "user", "content": "What does HOOLI trade at?"}]})
    seen = model.seen[1][-1]
    assert isinstance(seen, ToolMessage)
    print("The model's next request ends with this tool result:\n")
    print(json.dumps(json.loads(str(seen.content)), indent=2))
    return seen


if __name__ == "__main__":
    main()
