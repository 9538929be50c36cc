"""What the plugin reads from an ADK tool: its input schema, MCP annotations and siblings.

ADK resolves a call to a tool object before any callback runs.  A name that
resolves to nothing becomes a bare ``BaseTool`` placeholder, and the lookup
error reaches the error callbacks; the agent's real tools are listed through
its ``canonical_tools``, as ADK lists them to the model.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext

__all__ = ["annotations_of", "input_schema", "is_placeholder", "tool_names"]

log = logging.getLogger("toolmend.adk")


def is_placeholder(tool: BaseTool) -> bool:
    """Whether ``tool`` stands for a name the agent has no tool for.

    ADK answers such a call with a bare ``BaseTool``; every real tool is a subclass.
    """
    return type(tool) is BaseTool


def input_schema(tool: BaseTool) -> Mapping[str, Any] | None:
    """The JSON schema of the tool's arguments as the model was given it (``None``: unknown)."""
    try:
        declaration = tool._get_declaration()
    except Exception:
        log.debug("toolmend: no declaration for %s", tool.name, exc_info=True)
        return None
    if declaration is None:
        return None
    schema = declaration.parameters_json_schema
    if isinstance(schema, Mapping):
        return schema
    parameters = declaration.parameters
    if parameters is None:
        return None
    try:
        dumped: dict[str, Any] = parameters.json_schema.model_dump(mode="json", exclude_none=True)
    except Exception:
        return None
    return dumped


def annotations_of(tool: BaseTool) -> Any:
    """The MCP annotations of an ADK ``McpTool`` (``None`` for any other tool)."""
    raw = getattr(tool, "raw_mcp_tool", None)
    return getattr(raw, "annotations", None)


async def tool_names(tool_context: ToolContext) -> list[str] | None:
    """The names of the tools the current agent offers the model (``None``: unknown)."""
    invocation = getattr(tool_context, "_invocation_context", None)
    agent = getattr(invocation, "agent", None)
    canonical = getattr(agent, "canonical_tools", None)
    if invocation is None or canonical is None:
        return None
    try:
        tools = await canonical(ReadonlyContext(invocation))
    except Exception:
        log.debug("toolmend: could not list the agent's tools", exc_info=True)
        return None
    return [str(tool.name) for tool in tools]
