"""Outcome contracts on successful tool results, through the core's one-call review.

A result that violates its contract is delivered with the core's receipt in
place of the plain text, and the review goes into the call's record; a result
that satisfies it is left exactly as the tool returned it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest

from toolmend.contracts import Contracts, Review, review

__all__ = ["ContractCheck"]

log = logging.getLogger("toolmend.langchain")


def _available_tools(request: ToolCallRequest) -> list[str] | None:
    tools = getattr(request.runtime, "tools", None)
    if not isinstance(tools, list):
        return None
    names = [getattr(tool, "name", None) for tool in tools]
    return [name for name in names if isinstance(name, str)] or None


@dataclass(frozen=True)
class ContractCheck:
    """Checks the text result of a successful call against ``contracts``."""

    contracts: Contracts

    def apply(
        self,
        message: ToolMessage,
        tool: str,
        arguments: Mapping[str, Any],
        request: ToolCallRequest,
    ) -> tuple[ToolMessage, Review | None]:
        """``message`` as the model should read it, and the review when the result violates.

        The receipt takes the place of a violating result's text; the review goes
        into the call's record, which the tool side builds.

        Args:
            message: The successful result as the tool returned it.
            tool: The tool's name.
            arguments: The call's arguments.
            request: The call's request, for the tools the agent can call now.

        Returns:
            The message to deliver, and the review (``None`` when nothing was violated).
        """
        if not isinstance(message.content, str):
            return message, None
        outcome = review(
            self.contracts,
            tool,
            dict(arguments),
            message.content,
            available_tools=_available_tools(request),
            failed=False,
        )
        if not outcome.violations:
            return message, None
        log.info(
            "toolmend.langchain: %s result violates its contract: %s",
            tool, ", ".join(v.code.value for v in outcome.violations),
        )  # fmt: skip
        if outcome.changed:
            message = message.model_copy(update={"content": outcome.text})
        return message, outcome
