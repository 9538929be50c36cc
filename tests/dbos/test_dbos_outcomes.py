"""What followed each failed step, recorded with the workflow id as the run.

A worker process (forked, as in test_dbos_steps.py) launches DBOS on SQLite and
runs one workflow whose calls play an agent's: a call that fails and then
succeeds as it was, one that succeeds with another argument, one that fails
twice alike, and a read that the core retried inside its step.  The adapter
does not see a workflow end: the failures still waiting settle when the
recorder is replaced (here, at the worker's end), as the recorder's bound on
runs would settle them in a long-lived worker.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dbos import DBOS, SetWorkflowID
from test_dbos_steps import in_child

from outcome_rows import raised, recording
from toolmend import RetryPolicy
from toolmend_dbos import DurableTools


def cause(tool: str, error: str, marker: str) -> str:
    return raised(__file__, tool, error, marker)


def worker(url: str, out: Path) -> Callable[[], None]:
    """Workflow ``wf-7``'s calls under a recorder; the rows it settled go to ``out``."""

    def work() -> None:
        DBOS(config={"name": "toolmend-outcomes", "system_database_url": url})
        tools = DurableTools(url, retry=RetryPolicy(base=0.0))
        calls: list[str] = []

        @tools.tool(effect="write")
        def pay(invoice: str) -> str:
            calls.append(f"pay {invoice}")
            if invoice == "7" and calls.count("pay 7") == 1:
                raise ValueError("invoice 7 is locked")  # locked
            if invoice == "8":
                raise PermissionError("card declined")  # declined
            return f"paid {invoice}"

        @tools.tool(effect="read_only")
        def lookup(table: str) -> str:
            calls.append(f"lookup {table}")
            if table == "ordrs":
                raise LookupError("no such table: ordrs")  # no-table
            return "3 rows"

        @tools.tool(effect="read_only")
        def quote(invoice: str) -> int:
            calls.append(f"quote {invoice}")
            if calls.count(f"quote {invoice}") == 1:
                raise ConnectionResetError("connection reset by peer")
            return 12

        @DBOS.workflow(name="agent")
        def agent() -> Any:
            return [
                pay("7"), pay("7"), lookup("ordrs"), lookup("orders"),
                pay("8"), pay("8"), quote("7"),
            ]  # fmt: skip

        DBOS.launch()
        try:
            with recording() as sink:
                with SetWorkflowID("wf-7"):
                    DBOS.start_workflow(agent).get_result()
                during = len(sink.rows)
            out.write_text(json.dumps({"during": during, "rows": sink.rows}))
        finally:
            DBOS.destroy()

    return work


def test_each_failed_step_is_followed_in_its_workflow(tmp_path: Path) -> None:
    out = tmp_path / "rows.json"
    assert in_child(worker(f"sqlite:///{tmp_path / 'dbos.sqlite'}", out)) == 0
    found = json.loads(out.read_text())
    rows = found["rows"]
    brief = [(r["tool"], r["content"], r["arguments"], r["outcome"], r["run"]) for r in rows]
    declined = cause("pay", "PermissionError: card declined", "declined")
    assert brief == [
        ("pay", cause("pay", "ValueError: invoice 7 is locked", "locked"), {"invoice": "7"},
         "retry_succeeded", "wf-7"),
        ("lookup", cause("lookup", "LookupError: no such table: ordrs", "no-table"),
         {"table": "ordrs"}, "changed_arguments_succeeded", "wf-7"),
        ("quote", "ConnectionResetError: connection reset by peer", {"invoice": "7"},
         "retry_succeeded", "wf-7"),
        ("pay", declined, {"invoice": "8"}, "failed_again", "wf-7"),
        ("pay", declined, {"invoice": "8"}, "stopped", "wf-7"),
    ]  # fmt: skip
    assert found["during"] == 3  # the two declined payments wait for the run's end
