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
from .context import ContextPolicy
from .contracts import Contracts
from .detect import Verdict, classify_result
from .effects import Effect, declare_effect
from .exceptions import classify_exception
from .failure import ToolFailed, ToolFailure
from .forms import rewrite
from .loop import LoopGuard
from .model import Form, Kind
from .retry import RetryPolicy, testing
from .rules import Rule, Rules, load_rules, set_rules
from .wrapper import fail_soft

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
