"""The adapter and integrator API: what a framework adapter needs beyond the user API.

``toolmend``'s top level is what an application calls (classify a result,
rewrite a conversation, wrap a tool, set a retry policy).  An adapter that
translates between a framework and the core needs more: the call runner
(:func:`execute`, :func:`aexecute`) and its context, the records a run keeps,
the checks of a malformed call, the exact texts the model reads (so that an
adapter's tests can assert them), and the switches for tests (:class:`SleepLog`,
:func:`reset_budgets`; :func:`toolmend.testing` makes time virtual).  They are
exported here, with their own ``__all__``, so that adapters import only names
the core commits to; every other module of the package is implementation.
"""

from __future__ import annotations

from ._types import Detection, Report, Source
from .classify._detect import text_of
from .classify._learn import (
    MIN_AGREEMENT,
    MIN_SUPPORT,
    OUTCOMES,
    Conflict,
    Learned,
    Observed,
    OutcomeSource,
    learn,
    learned_rules,
    read_outcomes,
)
from .classify._raised import ExceptionInfo, ResultFailed, describe_exception
from .classify._signatures import error_signature
from .classify._text import Classification, classify_text
from .contracts._values import cap as cap_value
from .deliver._context import add_context_options, context_from_options
from .deliver._forms import Rewrite, pending_verdict
from .deliver._guidance import (
    GUIDANCE,
    LEFT_OUT,
    VERIFY_FIRST,
    Note,
    cap_error,
    compose_note,
    format_arguments,
    runtime_note,
)
from .deliver._pileup import PILE_UP
from .run._attempts import AttemptRecord, Stop
from .run._effects import effect_from_mcp, effect_of
from .run._failure import BUDGET_SPENT, EXHAUSTED, LANDED, LATER, LOOP_BUDGET, validation_details
from .run._loop import ADVICE, REMEMBERED, REPEATED, STOPPED, Observation, stub_superseded_failures
from .run._malformed import argument_errors, check_call, parse_arguments, unknown_tool
from .run._options import Delegating, Recovery, RecoveryOptions
from .run._outcomes import (
    Outcomes,
    OutcomeSink,
    end_run,
    observe_call,
    outcome_row,
    record_outcomes,
    recording_outcomes,
)
from .run._records import CallRecord, follow_ups
from .run._registry import RunRegistry, RunState, scoped, verdict_from_record, verdict_record
from .run._retry import BudgetScope, CallContext, RetryBudget, SleepLog, reset_budgets, run_budgets
from .run._runner import aexecute, execute
from .run._signature import ToolSignature, is_async

__all__ = [
    "ADVICE",
    "BUDGET_SPENT",
    "EXHAUSTED",
    "GUIDANCE",
    "LANDED",
    "LATER",
    "LEFT_OUT",
    "LOOP_BUDGET",
    "MIN_AGREEMENT",
    "MIN_SUPPORT",
    "OUTCOMES",
    "PILE_UP",
    "REMEMBERED",
    "REPEATED",
    "STOPPED",
    "VERIFY_FIRST",
    "AttemptRecord",
    "BudgetScope",
    "CallContext",
    "CallRecord",
    "Classification",
    "Conflict",
    "Delegating",
    "Detection",
    "ExceptionInfo",
    "Learned",
    "Note",
    "Observation",
    "Observed",
    "OutcomeSink",
    "OutcomeSource",
    "Outcomes",
    "Recovery",
    "RecoveryOptions",
    "Report",
    "ResultFailed",
    "RetryBudget",
    "Rewrite",
    "RunRegistry",
    "RunState",
    "SleepLog",
    "Source",
    "Stop",
    "ToolSignature",
    "add_context_options",
    "aexecute",
    "argument_errors",
    "cap_error",
    "cap_value",
    "check_call",
    "classify_text",
    "compose_note",
    "context_from_options",
    "describe_exception",
    "effect_from_mcp",
    "effect_of",
    "end_run",
    "error_signature",
    "execute",
    "follow_ups",
    "format_arguments",
    "is_async",
    "learn",
    "learned_rules",
    "observe_call",
    "outcome_row",
    "parse_arguments",
    "pending_verdict",
    "read_outcomes",
    "record_outcomes",
    "recording_outcomes",
    "reset_budgets",
    "run_budgets",
    "runtime_note",
    "scoped",
    "stub_superseded_failures",
    "text_of",
    "unknown_tool",
    "validation_details",
    "verdict_from_record",
    "verdict_record",
]
