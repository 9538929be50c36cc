"""toolmend: make LLM agents recover from failed tool calls.

The public surface is small on purpose: detect and classify a failed result,
rewrite a conversation into a delivery form, run tool calls under a retry policy
that never duplicates a side effect, and check outcomes against contracts.
"""

from .classify import Classification, classify_text
from .detect import Verdict, inspect
from .forms import Rewrite, rewrite
from .guidance import (
    GUIDANCE,
    VERIFY_FIRST,
    Note,
    cap_error,
    compose_note,
    format_arguments,
    runtime_note,
)
from .model import Detection, Form, Kind, Report, Source
from .rules import Rule, Rules, load_rules, set_rules

__all__ = [
    "GUIDANCE",
    "VERIFY_FIRST",
    "Classification",
    "Detection",
    "Form",
    "Kind",
    "Note",
    "Report",
    "Rewrite",
    "Rule",
    "Rules",
    "Source",
    "Verdict",
    "cap_error",
    "classify_text",
    "compose_note",
    "format_arguments",
    "inspect",
    "load_rules",
    "rewrite",
    "runtime_note",
    "set_rules",
]

# -- retry, guard, exceptions (issue 3) --
from .effects import Effect, declare_effect, effect_from_mcp, effect_of
from .exceptions import ExceptionInfo, ResultFailed, classify_exception
from .execute import aexecute, execute
from .failure import ToolFailed, ToolFailure, validation_details
from .guard import guard
from .loop import LoopGuard, Observation, stub_superseded
from .retry import CallContext, RetryBudget, RetryPolicy, testing
from .runs import RunRegistry, RunState

__all__ += [
    "CallContext",
    "Effect",
    "ExceptionInfo",
    "LoopGuard",
    "Observation",
    "ResultFailed",
    "RetryBudget",
    "RetryPolicy",
    "RunRegistry",
    "RunState",
    "ToolFailed",
    "ToolFailure",
    "aexecute",
    "classify_exception",
    "declare_effect",
    "effect_from_mcp",
    "effect_of",
    "execute",
    "guard",
    "stub_superseded",
    "testing",
    "validation_details",
]

# -- contracts (issue 8) --
from . import contracts  # noqa: E402
from .contracts import Contracts  # noqa: E402

__all__ += ["Contracts", "contracts"]
