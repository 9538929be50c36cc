"""Tool calls under durable engines (LangGraph checkpointers, DBOS).

One key per step, "started" records in the engine's database, and what a replayed
step may do.

:mod:`toolmend.durable._steps` holds the keys, the record protocol and the replay
decision; :mod:`toolmend.durable._sql` the step store on SQLite and Postgres;
:mod:`toolmend.durable._outcomes` the outcome store (what followed each failure,
shared by many workers, read by ``toolmend learn --store`` and
:func:`~toolmend.integrations.learned_rules`).  Adapters import from here.
"""

from ._outcomes import OUTCOMES_SCHEMA, SqlOutcomeStore, open_outcomes, sqlite_outcomes
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
    "OUTCOMES_SCHEMA",
    "SCHEMA",
    "STOPPED_CAUSE",
    "Mark",
    "Recorded",
    "Replay",
    "SharedRetryBudget",
    "SqlOutcomeStore",
    "SqlStepStore",
    "StepRecord",
    "StepStore",
    "WorkerStopped",
    "arun_durably",
    "connection_of",
    "dbos_key",
    "langgraph_key",
    "on_replay",
    "open_outcomes",
    "run_durably",
    "sqlite_outcomes",
    "step_key",
    "stopped_failure",
]
