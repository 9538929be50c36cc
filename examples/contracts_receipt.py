"""Outcome contracts end to end, offline: mine, check, and show what the model would read.

A retail ``get_order`` tool returns plausible JSON.  Contracts are mined from 40
recorded successful results; then three results arrive that a transport layer
would call successful: a clean one (delivered unchanged), one whose status is
outside its domain and whose money no longer adds up (wrapped in a receipt that
names the violations and the recovery tools the agent has), and an error page
from a text tool (an advisory block appended).  Finally a pydantic return type
declares a contract with no recorded traffic at all.

    pip install toolmend
    python examples/contracts_receipt.py     # in a clone of the repository: ./dev python

The adapters (LangChain, Agents SDK, MCP) deliver the same receipt in place of
the tool result when given ``contracts=``; this script uses the core API alone.
"""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from toolmend.contracts import Contracts, mine, return_schema, review

AVAILABLE_TOOLS = ["get_order", "get_order_history", "list_orders", "fetch_page"]
SUBSTITUTES = {
    "get_order": ["get_order_history", "get_order", "refund_order"],
    "fetch_page": ["fetch_page_cached", "fetch_page"],
}


class Quote(BaseModel):
    symbol: str
    price: float


def get_quote(symbol: str) -> Quote:
    """A tool whose return type is its declared contract."""
    raise NotImplementedError


def recorded_order(rng: random.Random) -> dict[str, Any]:
    """One recorded successful call, as a trace store would hold it."""
    order_id = f"#W{rng.randint(1_000_000, 9_999_999)}"
    subtotal = round(rng.uniform(10, 900), 2)
    tax = round(subtotal * rng.choice((0.0, 0.04, 0.0725)), 2)
    shipping = rng.choice((0.0, 5.99, 12.99))
    total = round(subtotal + tax + shipping, 2)
    result = {
        "order_id": order_id,
        "status": rng.choice(("pending", "processed", "shipped", "delivered", "cancelled")),
        "subtotal": subtotal,
        "tax": tax,
        "shipping": shipping,
        "total": total,
        "payment": {"method": rng.choice(("credit_card", "paypal", "gift_card")), "amount": total},
    }
    return {"tool": "get_order", "arguments": {"order_id": order_id}, "result": result}


def show(title: str, text: str) -> None:
    print(f"--- {title} ---\n{text}\n")


def main() -> None:
    rng = random.Random(7)
    calls = [recorded_order(rng) for _ in range(40)]
    calls += [
        {"tool": "fetch_page", "arguments": {"url": f"/docs/{i}"}, "result": f"# Doc {i}\n..."}
        for i in range(40)
    ]
    contracts = mine(calls, substitutes=SUBSTITUTES)

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "contracts.json"
        contracts.save(path)
        contracts = Contracts.load(path)
        mined = contracts.tools["get_order"]
        print(f"mined get_order from {mined.samples} results; relations:")
        for relation in mined.affine:
            print(f"  {relation.formula()}")
        print(f"  status in {sorted(mined.domains['status'])}\n")

    fresh = recorded_order(rng)
    clean = review(
        contracts, "get_order", fresh["arguments"], fresh["result"], available_tools=AVAILABLE_TOOLS
    )
    show(f"clean result (changed={clean.changed})", clean.text)

    broken = json.loads(json.dumps(fresh["result"]))
    broken["status"] = "lost"
    broken["total"] = round(broken["total"] + 20, 2)
    outcome = review(
        contracts,
        "get_order",
        fresh["arguments"],
        json.dumps(broken),
        available_tools=AVAILABLE_TOOLS,
    )
    show("silent failure: what the model reads instead of the raw result", outcome.text)
    print("reported to the application (logger 'toolmend.contracts'):")
    for v in outcome.violations:
        print(f"  {v.code}: {v.path}: {v.detail}")
    print()

    page = "<html><head><title>503 Service Unavailable</title></head><body>busy</body></html>"
    outcome = review(
        contracts, "fetch_page", {"url": "/docs/9"}, page, available_tools=AVAILABLE_TOOLS
    )
    show("error page delivered as content", outcome.text)

    schema = return_schema(get_quote)
    assert schema is not None
    declared = Contracts().declare("get_quote", schema)
    outcome = review(declared, "get_quote", {"symbol": "AAPL"}, {"symbol": "AAPL", "price": "n/a"})
    show("declared from a pydantic return type", outcome.text)


if __name__ == "__main__":
    main()
