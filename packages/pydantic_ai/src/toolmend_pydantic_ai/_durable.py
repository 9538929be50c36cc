"""Tool calls of a Pydantic AI run inside a DBOS workflow: one DBOS step each, keyed by it.

Pydantic AI's DBOS integration (``DBOSAgent``, ``DBOSDurability``) makes the
model requests and MCP I/O steps but runs function tools inline in the
workflow: a worker that dies after a tool's effect, resumed, runs the tool
again.  Here each call becomes a DBOS step with DBOS's own retries off
(``toolmend_dbos.step_options``), and inside it the core's
``arun_durably`` commits a "started" record under
``dbos_key(workflow id, step id)`` in DBOS's system database before the tool
runs.  A step that DBOS re-runs after a crash finds that record and the core
decides: run again (repeatable tools), verify first, or report that the call
may have landed, without repeating it.

DBOS and ``toolmend-dbos`` are imported only when a store is given (the
``[dbos]`` extra), so the adapter does not need them otherwise.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from toolmend.durable import StepStore, dbos_key

__all__ = ["in_workflow", "resolve_store", "run_as_step", "step_key"]

T = TypeVar("T")


def resolve_store(durable: StepStore | str) -> StepStore:
    """The step store: ``durable`` itself, or the one in DBOS's system database at that URL.

    Args:
        durable: A step store, or DBOS's ``system_database_url``.
    """
    if not isinstance(durable, str):
        return durable
    from toolmend_dbos import store_for_url

    return store_for_url(durable)


def in_workflow() -> bool:
    """Whether the call runs in DBOS workflow code (not already inside a step)."""
    from dbos import DBOS

    return DBOS.workflow_id is not None and DBOS.step_id is None


def step_key() -> str:
    """The key of the DBOS step running now: the same on every recovery of the workflow."""
    from dbos import DBOS

    return dbos_key(str(DBOS.workflow_id), str(DBOS.step_id))


async def run_as_step(tool: str, body: Callable[[], Awaitable[T]]) -> T:
    """Run ``body`` as one DBOS step named after the tool, DBOS's retries off.

    Args:
        tool: The tool's name, the step's name.
        body: The step; its result is what DBOS checkpoints (it must pickle).
    """
    from dbos import DBOS

    from toolmend_dbos import step_options

    result: Any = await DBOS.run_step_async(step_options(tool), body)
    return result  # type: ignore[no-any-return]
