"""Outcome contracts on the results of ``function_tool`` and MCP tools, through the core's review.

A result that violates its contract reaches the model as the core's receipt
(the raw result is inside it); a clean one, or one the core already judges a
failure, is returned exactly as the tool produced it.  The contracts are the
tool's own (``function_tool(contracts=...)``), else the run's
(``run_config(contracts=...)``), which the tool finds through the run config
the SDK hands it.
"""

from __future__ import annotations

import logging
from typing import Any

from agents.tool_context import ToolContext
from pydantic import BaseModel

from toolmend import Verdict
from toolmend.contracts import Contracts, review

from . import _report as report
from ._failure import model_arguments
from ._filter import InputFilter
from ._runs import RUNS

__all__ = ["apply_contracts", "available_tools", "receipt_for", "run_contracts"]

log = logging.getLogger("toolmend.openai_agents")


def run_contracts(ctx: Any) -> Contracts | None:
    """The contracts given to :func:`~toolmend_openai_agents.run_config` for this run."""
    config = ctx.run_config if isinstance(ctx, ToolContext) else None
    chosen = getattr(config, "call_model_input_filter", None)
    return chosen.contracts if isinstance(chosen, InputFilter) else None


def available_tools(ctx: Any) -> list[str] | None:
    """The names of the tools the current agent has (``None`` when unknown)."""
    agent = ctx.agent if isinstance(ctx, ToolContext) else None
    tools = getattr(agent, "tools", None)
    if not isinstance(tools, list):
        return None
    names = [getattr(tool, "name", None) for tool in tools]
    return [name for name in names if isinstance(name, str)] or None


def _value(result: Any) -> Any:
    """The result as the text or JSON value a contract reads; ``None`` if it is neither."""
    if isinstance(result, str | dict | list):
        return result
    if isinstance(result, BaseModel):
        return result.model_dump(mode="json")
    return None


def receipt_for(ctx: Any, tool: str, value: Any, own: Contracts | None) -> str | None:
    """The receipt the model should read in place of ``value``, if any.

    The receipt the model should read in place of ``value`` (a text or JSON value), or
    ``None`` to show the result as it is; each firing is reported.  Never raises.
    """
    try:
        contracts = own if own is not None else run_contracts(ctx)
        if contracts is None or value is None:
            return None
        arguments = model_arguments(ctx)
        outcome = review(contracts, tool, arguments, value, available_tools=available_tools(ctx))
        if not outcome.violations:
            return None
        call_id = ctx.tool_call_id if isinstance(ctx, ToolContext) else None
        report.contract_fired(call_id, tool, arguments, outcome)
        if not outcome.changed:
            return None
        if call_id is not None:
            # The receipt is a successful result: the input filter must not treat it as failed.
            RUNS.record(call_id, outcome.text, Verdict(False))
        return outcome.text
    except Exception:
        log.exception("toolmend: could not check the result of %s; returned as is", tool)
        return None


def apply_contracts(ctx: Any, tool: str, result: Any, own: Contracts | None) -> Any:
    """``result``, or the receipt the model should read in its place; never raises."""
    if own is None and run_contracts(ctx) is None:
        return result
    try:
        value = _value(result)
    except Exception:
        log.exception("toolmend: could not read the result of %s; returned as is", tool)
        return result
    shown = receipt_for(ctx, tool, value, own)
    return result if shown is None else shown
