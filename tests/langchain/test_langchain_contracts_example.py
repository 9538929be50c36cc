"""examples/contracts_langchain.py: a receipt reaches the model through the middleware."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "contracts_langchain.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("contracts_langchain", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_model_reads_the_receipt_in_place_of_the_wrong_result() -> None:
    seen = _load().main()
    assert seen.status == "success"
    assert json.loads(str(seen.content)) == {
        "tool_result": {"symbol": "ACME", "price": -3.2, "currency": "EUR", "market": "open"},
        "outcome_contract": {
            "status": "inconsistent",
            "violations": [
                {
                    "code": "nonpositive_value",
                    "path": "price",
                    "expected": "> 0",
                    "observed": -3.2,
                    "detail": "nominally positive field price is not positive",
                },
                {
                    "code": "learned_echo_mismatch",
                    "path": "symbol",
                    "expected": "HOOLI",
                    "observed": "ACME",
                    "detail": "field symbol differs from call argument symbol",
                },
            ],
            "admissible_recovery_tools": ["get_quote_delayed"],
        },
    }
    record = seen.response_metadata["toolmend"]
    receipt = json.loads(str(seen.content))["outcome_contract"]
    assert (record["failed"], record["source"], record["receipt"]) == (False, "contract", receipt)
    assert record["violations"] == receipt["violations"]
