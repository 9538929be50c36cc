"""Outcome contracts: catch tool results that look successful but are not.

Mine invariants from recorded successful results (or declare them from output
schemas), check each new result against them, and deliver an advisory receipt
that names the violated property and the recovery tools the agent can call.

    contracts = mine(records, substitutes={"get_quote": ["get_quote_backup"]})
    outcome = review(contracts, "get_quote", {"symbol": "AAPL"}, result,
                     available_tools=["get_quote", "get_quote_backup"])
    if outcome.changed:
        deliver(outcome.text)   # the receipt; the raw result is inside it
"""

from ._check import check
from ._contract import (
    FORMAT,
    VERSION,
    Affine,
    Code,
    Contracts,
    Echo,
    ObjectRule,
    ToolContract,
    Violation,
)
from ._mine import Miner, MiningOptions, mine
from ._receipt import Receipt, receipt, recovery_tools
from ._review import Review, review
from ._schema import declared, from_mcp_tools, return_schema, schema_of

__all__ = [
    "FORMAT",
    "VERSION",
    "Affine",
    "Code",
    "Contracts",
    "Echo",
    "Miner",
    "MiningOptions",
    "ObjectRule",
    "Receipt",
    "Review",
    "ToolContract",
    "Violation",
    "check",
    "declared",
    "from_mcp_tools",
    "mine",
    "receipt",
    "recovery_tools",
    "return_schema",
    "review",
    "schema_of",
]
