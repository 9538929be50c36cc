"""The adapter and integrator API: what a framework adapter needs beyond the user API.

``toolmend``'s top level is what an application calls (classify a result,
rewrite a conversation, wrap a tool, set a retry policy).  An adapter that
translates between a framework and the core needs more: the call runner
(:func:`execute`, :func:`aexecute`) and its context, the records a run keeps,
the checks of a malformed call, and the texts the model reads.  They are
exported here, with their own ``__all__``, so that adapters import only names
the core commits to; every other module of the package is implementation.
"""

from __future__ import annotations

from .attempts import AttemptRecord, Stop
from .classify import Classification, classify_text
from .context import add_context_options, context_from_options
from .contracts.values import cap as cap_value
from .detect import text_of
from .effects import effect_from_mcp, effect_of
from .exceptions import ExceptionInfo, ResultFailed, describe_exception
from .failure import validation_details
from .forms import Rewrite, pending_verdict
from .guidance import (
    GUIDANCE,
    VERIFY_FIRST,
    Note,
    cap_error,
    compose_note,
    format_arguments,
    runtime_note,
)
from .loop import Observation, stub_superseded_failures
from .malformed import argument_errors, check_call, parse_arguments, unknown_tool
from .model import Detection, Report, Source
from .options import Delegating, Recovery, RecoveryOptions
from .pileup import PILE_UP
from .records import CallRecord
from .retry import BudgetScope, CallContext, RetryBudget, run_budgets
from .runner import aexecute, execute
from .runs import RunRegistry, RunState, scoped, verdict_from_record, verdict_record
from .signature import ToolSignature, is_async

__all__ = [
    "GUIDANCE",
    "PILE_UP",
    "VERIFY_FIRST",
    "AttemptRecord",
    "BudgetScope",
    "CallContext",
    "CallRecord",
    "Classification",
    "Delegating",
    "Detection",
    "ExceptionInfo",
    "Note",
    "Observation",
    "Recovery",
    "RecoveryOptions",
    "Report",
    "ResultFailed",
    "RetryBudget",
    "Rewrite",
    "RunRegistry",
    "RunState",
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
    "execute",
    "format_arguments",
    "is_async",
    "parse_arguments",
    "pending_verdict",
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
