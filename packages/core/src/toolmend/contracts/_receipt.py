"""The advisory receipt: the raw result, the violated properties, and the recovery tools.

The receipt is nonbinding: it adds context and never hides or changes the raw
result, and it names only recovery tools the agent can actually call, since the
list of those tools is what carried most of the measured gain.  JSON results
are wrapped in the paper's envelope; text results get a plain-text block
appended, as in its text-result environments.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ._contract import Violation
from ._values import json_text, parse_result

__all__ = ["ADVISORY", "MAX_LISTED", "NONBINDING", "Receipt", "receipt", "recovery_tools"]

MAX_LISTED = 10
"""Violations listed in one receipt; the rest are only counted, so they cannot flood the context."""
ADVISORY = "[OUTCOME CONTRACT ADVISORY]"
NONBINDING = (
    "This advisory is nonbinding. Treat the result as unreliable and verify or recover "
    "using the available tools and task context before relying on it. "
    "All actions remain available."
)


def recovery_tools(
    tool: str,
    substitutes: Mapping[str, Iterable[str]] | None,
    available_tools: Iterable[str] | None,
) -> tuple[str, ...]:
    """The declared substitutes of ``tool`` that the agent has, in declared order.

    With ``available_tools`` unknown none is named: a receipt must never name a
    tool the agent cannot call.

    Args:
        tool: The tool's name.
        substitutes: Each tool's substitutes.
        available_tools: The tools the agent can call now (``None``: unknown).
    """
    if not substitutes or available_tools is None:
        return ()
    available = set(available_tools)
    return tuple(dict.fromkeys(t for t in substitutes.get(tool, ()) if t in available))


@dataclass(frozen=True, slots=True)
class Receipt:
    """What the model sees in place of a result that violated its contract.

    Attributes:
        tool: The tool's name.
        result: The result as it came.
        violations: What it violated.
        recovery_tools: The substitutes the agent can call instead.
    """

    tool: str
    result: Any
    violations: tuple[Violation, ...]
    recovery_tools: tuple[str, ...]

    @property
    def is_json(self) -> bool:
        """Whether the result is a JSON value (or a text holding one) and gets the envelope."""
        return not parse_result(self.result)[1]

    def outcome_contract(self) -> dict[str, Any]:
        """The receipt's body as the ``outcome_contract`` envelope (violations capped)."""
        listed = self.violations[:MAX_LISTED]
        body: dict[str, Any] = {
            "status": "inconsistent",
            "violations": [v.to_dict() for v in listed],
            "admissible_recovery_tools": list(self.recovery_tools),
        }
        if len(self.violations) > len(listed):
            body["more_violations"] = len(self.violations) - len(listed)
        return body

    def to_dict(self) -> dict[str, Any]:
        """The envelope; a text result holding JSON is embedded as its value."""
        value, _ = parse_result(self.result)
        return {"tool_result": value, "outcome_contract": self.outcome_contract()}

    def advisory(self) -> str:
        """The plain-text block appended to a text result."""
        lines = [
            f"{ADVISORY} The result from `{self.tool}` is inconsistent with a known "
            "invariant of its outcome contract."
        ]
        for v in self.violations[:MAX_LISTED]:
            lines.append(
                f"Violation: {v.code.value} at `{v.path}`; expected {json_text(v.expected)}, "
                f"observed {json_text(v.observed)}."
            )
        if len(self.violations) > MAX_LISTED:
            lines.append(f"({len(self.violations) - MAX_LISTED} more violations not listed.)")
        if self.recovery_tools:
            lines.append("Admissible recovery tools: " + ", ".join(self.recovery_tools) + ".")
        lines.append(NONBINDING)
        return "\n".join(lines)

    def render(self) -> str:
        """The text the model reads: the envelope as JSON, or the raw text with the block."""
        if self.is_json:
            return json_text(self.to_dict())
        raw = self.result if isinstance(self.result, str) else json_text(self.result)
        return f"{raw}\n\n{self.advisory()}"


def receipt(
    tool: str,
    result: Any,
    violations: Iterable[Violation],
    *,
    available_tools: Iterable[str] | None = None,
    substitutes: Mapping[str, Iterable[str]] | None = None,
) -> Receipt | None:
    """A receipt for a result with violations; ``None`` for a clean one, which stays unchanged.

    Args:
        tool: The tool's name.
        result: The result: a text or a JSON value.
        violations: What the result violated.
        available_tools: The tools the agent can call now (``None``: unknown).
        substitutes: Each tool's substitutes.
    """
    found = tuple(violations)
    if not found:
        return None
    return Receipt(tool, result, found, recovery_tools(tool, substitutes, available_tools))
