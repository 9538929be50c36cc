"""A worker process: a Pydantic AI agent under DBOS (``DBOSAgent``) that pays invoice 7.

``python pa_dbos_worker.py URL LEDGER SETUP DIE OUT``: launches DBOS on the system
database ``URL`` (SQLite), then starts workflow ``wf-1`` (or, when DBOS recovered
it at launch, waits for it).  The scripted model calls ``pay`` once, then answers.
``pay`` appends a row to the ``LEDGER`` SQLite file (the payment's effect) and, with
``DIE=after``, the first time only, kills this process with ``os._exit`` right after
the effect, before the tool's call can be recorded.  ``SETUP`` is ``stock`` (the bare
function toolset: DBOS runs function tools inline in the workflow), ``toolmend``
(``RecoveringToolset(..., durable=URL)``: each call a DBOS step) or ``verify`` (the
same with a verify hook that reads the ledger).  The tool results
the model read are written to ``OUT`` as JSON.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sqlite3
import sys
import warnings
from pathlib import Path
from typing import Any

from dbos import DBOS, SetWorkflowID
from pa_support import Script
from pydantic_ai import Agent, FunctionToolset
from pydantic_ai.durable_exec.dbos import DBOSAgent
from pydantic_ai.messages import ModelRequest, ToolReturnPart

from toolmend_pydantic_ai import RecoveringToolset

WORKFLOW = "wf-1"


def main(url: str, ledger: Path, setup: str, die: str, out: Path) -> None:
    with sqlite3.connect(ledger) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS ledger (invoice TEXT)")
        conn.execute("CREATE TABLE IF NOT EXISTS died (point TEXT)")

    tools: FunctionToolset[None] = FunctionToolset()

    @tools.tool_plain
    def pay(invoice: str) -> str:
        """Pay an invoice."""
        with sqlite3.connect(ledger) as conn:
            conn.execute("INSERT INTO ledger VALUES (?)", (invoice,))
            died = list(conn.execute("SELECT point FROM died"))
            if die == "after" and not died:
                conn.execute("INSERT INTO died VALUES ('after')")
                conn.commit()
                os._exit(9)  # the worker dies after the effect, before its step commits
        return f"paid {invoice}"

    def landed(call: Any, exc: BaseException) -> bool:
        with sqlite3.connect(ledger) as conn:
            rows = conn.execute(
                "SELECT 1 FROM ledger WHERE invoice = ?", (call.arguments["invoice"],)
            )
            return bool(list(rows))

    verify = {"pay": landed} if setup == "verify" else None
    toolset = (
        tools
        if setup == "stock"
        else RecoveringToolset(tools, effects={"pay": "write"}, verify=verify, durable=url)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DBOSAgent is deprecated for DBOSDurability
        agent = DBOSAgent(
            Agent(Script([[("pay", {"invoice": "7"})]]).model, name="payer", toolsets=[toolset])
        )

    DBOS(config={"name": "toolmend-pa-test", "system_database_url": url, "log_level": "WARNING"})
    DBOS.launch()

    async def turn() -> Any:
        status = await DBOS.get_workflow_status_async(WORKFLOW)
        if status is None:
            with SetWorkflowID(WORKFLOW):
                return await agent.run("Pay invoice 7")
        handle = await DBOS.retrieve_workflow_async(WORKFLOW)  # recovered at launch
        return await handle.get_result()

    result = asyncio.run(turn())
    results = [
        {"content": part.content, "outcome": part.outcome}
        for message in result.all_messages()
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    ]
    out.write_text(json.dumps({"output": result.output, "results": results}))
    DBOS.destroy()


if __name__ == "__main__":
    logging.disable(logging.WARNING)
    main(sys.argv[1], Path(sys.argv[2]), sys.argv[3], sys.argv[4], Path(sys.argv[5]))
