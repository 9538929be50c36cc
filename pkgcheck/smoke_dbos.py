"""Smoke test of the installed ``toolmend-dbos`` wheel: a DBOS workflow on SQLite whose
read-only tool fails once and is retried inside its step, and whose write gets the key
derived from the workflow and step ids."""

from __future__ import annotations

import tempfile
from pathlib import Path

from dbos import DBOS, SetWorkflowID

from toolmend import RetryPolicy
from toolmend.durable import dbos_key
from toolmend_dbos import DurableTools

folder = Path(tempfile.mkdtemp(prefix="toolmend-dbos-smoke-"))
url = f"sqlite:///{folder / 'dbos.sqlite'}"
DBOS(config={"name": "toolmend-smoke", "system_database_url": url, "log_level": "WARNING"})
tools = DurableTools(url, retry=RetryPolicy(base=0.0))
runs: list[str] = []


@tools.tool(effect="read_only")
def quote(invoice: str) -> int:
    runs.append("quote")
    if runs.count("quote") == 1:
        raise ConnectionResetError("reset by peer")
    return 12


@tools.tool(effect="write", idempotency_key="key")
def pay(invoice: str, amount: int, key: str) -> str:
    runs.append(key)
    return f"paid {amount}"


@DBOS.workflow()
def turn(invoice: str) -> str:
    return str(pay(invoice, quote(invoice)))


DBOS.launch()
try:
    with SetWorkflowID("smoke-1"):
        result = DBOS.start_workflow(turn, "7").get_result()
finally:
    DBOS.destroy()
assert result == "paid 12", result
assert runs == ["quote", "quote", dbos_key("smoke-1", 2)], runs
print("toolmend-dbos:", result, runs[-1])
