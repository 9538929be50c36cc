"""toolmend: make LLM agents recover from failed tool calls.

The public surface is small on purpose: classify a tool result, rewrite a
conversation into a delivery form, wrap a tool so that it fails soft under a
retry policy that never duplicates a side effect, and check outcomes against
contracts (:mod:`toolmend.contracts`).  What framework adapters and other
integrators need beyond this lives in :mod:`toolmend.integrations`.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

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

_RENAMED = {
    "inspect": "classify_result",
    "guard": "fail_soft",
}
"""Old top-level names of renamed functions (deprecated; removed in the next release)."""

_MOVED = frozenset(
    {
        "GUIDANCE",
        "VERIFY_FIRST",
        "CallContext",
        "Classification",
        "Detection",
        "ExceptionInfo",
        "Note",
        "Observation",
        "Report",
        "ResultFailed",
        "RetryBudget",
        "Rewrite",
        "RunRegistry",
        "RunState",
        "Source",
        "aexecute",
        "cap_error",
        "classify_text",
        "compose_note",
        "effect_from_mcp",
        "effect_of",
        "execute",
        "format_arguments",
        "runtime_note",
        "validation_details",
    }
)
"""Names that left the top level for :mod:`toolmend.integrations` (deprecated here)."""


if not TYPE_CHECKING:  # type checkers report the old names, which is the point

    def __getattr__(name: str) -> Any:
        """Old top-level names still work for one release, with a ``DeprecationWarning``."""
        if name in _RENAMED:
            new = _RENAMED[name]
            warnings.warn(
                f"toolmend.{name} is deprecated; use toolmend.{new}",
                DeprecationWarning,
                stacklevel=2,
            )
            return globals()[new]
        if name == "stub_superseded":
            warnings.warn(
                "toolmend.stub_superseded is deprecated; "
                "use toolmend.integrations.stub_superseded_failures",
                DeprecationWarning,
                stacklevel=2,
            )
            return integrations.stub_superseded_failures
        if name in _MOVED:
            warnings.warn(
                f"toolmend.{name} is deprecated; import it from toolmend.integrations",
                DeprecationWarning,
                stacklevel=2,
            )
            return getattr(integrations, name)
        raise AttributeError(f"module 'toolmend' has no attribute {name!r}")
