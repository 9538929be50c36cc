"""toolmend: make LLM agents recover from failed tool calls.

The public surface is small on purpose: classify a tool result, rewrite a
conversation into a delivery form, wrap a tool so that it fails soft under a
retry policy that never duplicates a side effect, and check outcomes against
contracts (:mod:`toolmend.contracts`).  What framework adapters and other
integrators need beyond this lives in :mod:`toolmend.integrations`.
"""

from __future__ import annotations

from . import contracts as contracts  # the subpackages, reachable after `import toolmend`
from . import integrations as integrations
from . import telemetry as telemetry
from ._types import Form, Kind
from .classify._detect import Verdict, classify_result
from .classify._raised import classify_exception
from .classify._rules import Rule, Rules, load_rules, set_rules
from .contracts import Contracts
from .deliver._context import ContextPolicy
from .deliver._forms import rewrite
from .run._effects import Effect, declare_effect
from .run._failure import ToolFailed, ToolFailure
from .run._loop import LoopGuard
from .run._retry import RetryPolicy, testing
from .run._wrapper import fail_soft

__all__ = [
    "ContextPolicy",
    "Contracts",
    "Effect",
    "Form",
    "Kind",
    "LoopGuard",
    "RetryPolicy",
    "Rule",
    "Rules",
    "ToolFailed",
    "ToolFailure",
    "Verdict",
    "classify_exception",
    "classify_result",
    "declare_effect",
    "fail_soft",
    "load_rules",
    "rewrite",
    "set_rules",
    "testing",
]
