"""Malformed calls in the SDK: a call to a tool the agent does not have.

The SDK raises ``ModelBehaviorError`` and ends the run unless the run config
says ``tool_not_found_behavior="return_error_to_model"``; then it asks the
run's ``tool_error_formatter`` for the text.  The formatter knows the call but
not the agent, so the input filter, which sees the agent before every model
call, leaves it here for the turn that follows; the names are listed only when
a call actually misses.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

from agents import FunctionTool, RunContextWrapper, ToolErrorFormatterArgs

from toolmend import Form
from toolmend.integrations import unknown_tool

from . import _report as report
from ._runs import RUNS

__all__ = ["remember_agent", "tool_schema", "unknown_tool_text"]

log = logging.getLogger("toolmend.openai_agents")

_TURN: ContextVar[tuple[Any, Any] | None] = ContextVar("toolmend_oa_turn", default=None)


def remember_agent(agent: Any, context: Any) -> None:
    """The agent about to be called, and the run's context, for this turn's tool calls."""
    _TURN.set((agent, context))


def tool_schema(name: str) -> Mapping[str, Any] | None:
    """The parameter schema of this turn's function tool ``name``, if the agent has one.

    The SDK keeps a failed validation's details out of its error (they may hold
    tool data); the schema lets the core say which argument to change.
    """
    turn = _TURN.get()
    if turn is None:
        return None
    for tool in getattr(turn[0], "tools", None) or ():
        if isinstance(tool, FunctionTool) and tool.name == name:
            return tool.params_json_schema
    return None


async def _tool_names() -> list[str] | None:
    turn = _TURN.get()
    if turn is None:
        return None
    agent, context = turn
    try:
        tools = await agent.get_all_tools(RunContextWrapper(context))
    except Exception:
        log.debug("toolmend: could not list the agent's tools", exc_info=True)
        return None
    return [str(tool.name) for tool in tools]


async def unknown_tool_text(args: ToolErrorFormatterArgs[Any], form: Form) -> str:
    """What the model reads for a call to a tool the agent does not have.

    What the model reads for a call to a tool the agent does not have; recorded
    for the input filter like any other failure.
    """
    failure = unknown_tool(args.tool_name, await _tool_names())
    shown = failure.result_text(form)
    RUNS.record(args.call_id, shown, failure.verdict())
    report.failed(args.call_id, shown, failure, form=form, observed=False)
    return shown
