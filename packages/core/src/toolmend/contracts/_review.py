"""One call for adapters: check a result, and receipt it when it violates its contract."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..classify._detect import classify_result
from ._check import check
from ._contract import Contracts, Violation
from ._receipt import Receipt, receipt
from ._values import json_text

__all__ = ["Review", "review"]

log = logging.getLogger("toolmend.contracts")


@dataclass(frozen=True, slots=True)
class Review:
    """The text to deliver, the violations to report, and the receipt when there is one.

    Attributes:
        text: What the model reads: the receipt, or the result as it came.
        violations: What the result violated.
        receipt: The receipt, when one was made.
    """

    text: str
    violations: tuple[Violation, ...]
    receipt: Receipt | None

    @property
    def changed(self) -> bool:
        """Whether ``text`` differs from the result: adapters deliver it only then."""
        return self.receipt is not None

    def to_dict(self) -> dict[str, Any]:
        """This review as JSON-ready data."""
        return {
            "violations": [v.to_dict() for v in self.violations],
            "recovery_tools": list(self.receipt.recovery_tools) if self.receipt else [],
            "changed": self.changed,
        }


def review(
    contracts: Contracts | None,
    tool: str,
    arguments: Any,
    result: Any,
    *,
    available_tools: Iterable[str] | None = None,
    failed: bool | None = None,
) -> Review:
    """Check ``result`` of ``tool`` and receipt it; never raises.

    ``result`` is the raw result (a text or a JSON value); ``available_tools``
    the names the agent can call now, which bound the recovery tools listed.
    A failed result is handled as a failure, never receipted as well:
    ``failed`` is what the caller already knows about it (``None``: ask
    :func:`toolmend.classify_result`), and a failure comes back unchanged and unchecked.

    Args:
        contracts: The contracts (``None``: nothing to check).
        tool: The tool's name.
        arguments: The call's arguments.
        result: The raw result: a text or a JSON value.
        available_tools: The tools the agent can call now, which bound the recovery tools.
        failed: What the caller already knows about the result (``None``: ask the classifier).
    """
    if failed is None:
        failed = contracts is not None and tool in contracts.tools and _flagged(result)
    if failed:
        return _unchecked(result)
    violations = check(contracts, tool, arguments, result)
    try:
        text = result if isinstance(result, str) else json_text(result)
        if not violations or contracts is None:
            return Review(text, violations, None)
        made = receipt(
            tool,
            result,
            violations,
            available_tools=available_tools,
            substitutes=contracts.substitutes,
        )
        rendered = made.render() if made is not None else text
    except Exception:
        log.warning("toolmend.contracts: could not build a receipt for %s", tool, exc_info=True)
        return Review(result if isinstance(result, str) else repr(result), violations, None)
    if made is not None:
        log.info(
            "toolmend.contracts: receipt for %s: %s; recovery tools %s",
            tool, ", ".join(v.code.value for v in violations), list(made.recovery_tools),
        )  # fmt: skip
    return Review(rendered, violations, made)


def _flagged(result: Any) -> bool:
    try:
        return classify_result(result if isinstance(result, str) else json_text(result)).failed
    except Exception:
        return False


def _unchecked(result: Any) -> Review:
    try:
        text = result if isinstance(result, str) else json_text(result)
    except Exception:
        text = repr(result)
    return Review(text, (), None)
