"""What the session knows about a server's tools: effect and declared output schema.

A tool's effect decides whether a retry is safe, so it comes only from the
user's declaration or, when the user says the server is trusted, from its
annotations, read by the core's :func:`toolmend.integrations.effect_from_mcp`.
The MCP spec calls annotations hints and tells clients not to rely on them
from untrusted servers; its defaults (destructive, not idempotent) are what an
absent hint means here too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp.types import Tool

from toolmend import Effect
from toolmend.integrations import Recovery

from ._compat import input_schema, output_schema

__all__ = ["Catalog", "ToolInfo"]


@dataclass(frozen=True, slots=True)
class ToolInfo:
    """One tool's effect, where that effect came from, and its output schema."""

    name: str
    effect: Effect
    effect_source: str
    """``declared``, ``annotations``, or ``default`` (neither: handled as a write)."""
    output_schema: Mapping[str, Any] | None = None
    listed: bool = False
    input_schema: Mapping[str, Any] | None = None
    """What the tool accepts: read with the arguments when a call fails."""


@dataclass(slots=True)
class Catalog:
    """The tools of one connection, read once and kept until the server says they changed."""

    recovery: Recovery
    """The session's settings, which decide each tool's effect."""
    tools: dict[str, Tool] = field(default_factory=dict)
    complete: bool = False
    """Whether ``tools`` holds a full listing; ``False`` means list again before use."""

    def load(self, tools: Iterable[Tool]) -> None:
        """Keep a full listing of the tools."""
        self.tools = {tool.name: tool for tool in tools}
        self.complete = True

    def invalidate(self) -> None:
        """Mark the listing stale; it is read again before the next use."""
        self.complete = False

    def schemas(self) -> dict[str, Mapping[str, Any] | None] | None:
        """Each listed tool's input schema, for the core's check of a call.

        Each listed tool's input schema, for the core's check of a call (``None``:
        no full listing, so no name can be called unknown).
        """
        if not self.complete:
            return None
        return {name: input_schema(tool) for name, tool in self.tools.items()}

    def info(self, name: str) -> ToolInfo:
        """What the session knows about ``name``: its effect and its output schema."""
        tool = self.tools.get(name)
        annotations = tool.annotations if tool is not None else None
        effect, source = self.recovery.effect(name, annotations=annotations)
        schema = output_schema(tool) if tool is not None else None
        accepts = input_schema(tool) if tool is not None else None
        return ToolInfo(name, effect, source, schema, tool is not None, accepts)
