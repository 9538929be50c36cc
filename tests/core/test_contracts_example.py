"""The offline example prints the receipts a model would read."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "contracts_receipt.py"


def test_the_example_shows_each_receipt(capsys: pytest.CaptureFixture[str]) -> None:
    runpy.run_path(str(EXAMPLE), run_name="__main__")
    out = capsys.readouterr().out
    sections = out.split("\n--- ")
    assert sections[0].splitlines() == [
        "mined get_order from 40 results; relations:",
        "  total = payment.amount",
        "  total = shipping + subtotal + tax",
        "  status in ['cancelled', 'delivered', 'pending', 'processed', 'shipped']",
    ]
    clean = sections[1].splitlines()
    assert clean[0] == "clean result (changed=False) ---"
    assert "outcome_contract" not in clean[1]
    receipt = json.loads(sections[2].splitlines()[1])
    assert receipt["tool_result"]["status"] == "lost"
    assert receipt["outcome_contract"]["admissible_recovery_tools"] == [
        "get_order_history",
        "get_order",
    ]
    assert [v["code"] for v in receipt["outcome_contract"]["violations"]] == [
        "unseen_category",
        "affine_relation_broken",
        "affine_relation_broken",
    ]
    page = sections[3].splitlines()
    assert page[5] == "Admissible recovery tools: fetch_page."
    declared = json.loads(sections[4].splitlines()[1])
    assert declared["outcome_contract"]["violations"][0]["code"] == "schema_violation"
