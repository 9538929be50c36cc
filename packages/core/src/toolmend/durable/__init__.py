"""Tool calls under durable engines (LangGraph checkpointers, DBOS).

One key per step, "started" records in the engine's database, and what a replayed
step may do.

:mod:`toolmend.durable._steps` holds the keys, the record protocol and the replay
decision; :mod:`toolmend.durable._sql` the step store on SQLite and Postgres.  Adapters
import from here.
"""

from ._sql import SCHEMA, SharedRetryBudget, SqlStepStore, connection_of
from ._steps import (
    LANDED_TEXT,
    STOPPED_CAUSE,
    Mark,
    Recorded,
    Replay,
    StepRecord,
    StepStore,
    WorkerStopped,
    arun_durably,
    dbos_key,
    langgraph_key,
    on_replay,
    run_durably,
    step_key,
    stopped_failure,
)

__all__ = [
    "LANDED_TEXT",
    "SCHEMA",
    "STOPPED_CAUSE",
    "Mark",
    "Recorded",
    "Replay",
    "SharedRetryBudget",
    "SqlStepStore",
    "StepRecord",
    "StepStore",
    "WorkerStopped",
    "arun_durably",
    "connection_of",
    "dbos_key",
    "langgraph_key",
    "on_replay",
    "run_durably",
    "step_key",
    "stopped_failure",
]
